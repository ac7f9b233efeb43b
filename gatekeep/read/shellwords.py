"""Quote removal for one shell word, computed from its source text.

bashlex's own `.word` is wrong for mixed quoting (`'it'\\''s'`, `"a"'b'`), for
`"a\\b"`, and it does not decode ANSI-C `$'\\x72m'` or `$"..."`. So gatekeep
recomputes every word from its source span here. Python's `shlex` is not used
because it knows neither ANSI-C quoting nor bash's backslash rules inside
double quotes.

A word is *dynamic* when bash would change it at run time: a parameter or
command substitution, an unquoted glob character, or a brace expansion. Its
value then keeps the expansion's source text.

A word is *inert* when expanding it can neither run code nor change the
shell's state, in bash or in zsh (issue 15). That is decided from an
allow-list, never a block-list: literal and quoted text, globs, brace lists,
tildes, command and process substitutions (whose commands the parser reads
and the gate decides one by one), and the parameter expansions in
`expansion_risk`'s list. Anything else (an assignment `${x:=v}`, a
transformation `${x@P}`, indirection `${!x}`, a subscript or offset bash
evaluates as arithmetic, arithmetic itself, zsh's flags and `$~x`, the
shell's own tables `BASH_ALIASES`, `functions`..., gatekeep's own names)
makes the word's `unsafe` say why, and a command holding such a word can
never be allowed: it asks, and deny rules still see it.
"""

from __future__ import annotations

from gatekeep.core.lazyre import lazy
from gatekeep.core.records import record

# Characters that follow `$` to start an expansion: `$name`, `${`, `$(`, `$[`, `$1`, `$@`, ...
_EXPANSION_START = lazy(r"[A-Za-z_0-9{(\[@*#?$!-]")
# `$~x`, `$=x`, `$^x`, `$+x`: literal text to bash, expansions with flags to zsh
_ZSH_FLAG_START = lazy(r"[~=^+](?:[A-Za-z_{]|$)")
_DOUBLE_QUOTE_ESCAPABLE = '$`"\\\n'
# (a word's source holds no unquoted blank: one inside braces is escaped or quoted, `{\ ,/}`, and bash expands it)
_BRACE_EXPANSION = lazy(r"\{[^{}]*(,|\.\.)[^{}]*\}")

_ANSI_C_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_C_NUMERIC = lazy(
    r"(?s)(?P<oct>[0-7]{1,3})|x(?P<hex>[0-9A-Fa-f]{1,2})|u(?P<u4>[0-9A-Fa-f]{1,4})"
    r"|U(?P<u8>[0-9A-Fa-f]{1,8})|c(?P<ctl>.)"
)


class Word(record("Word", "value dynamic unsafe", defaults=(False, None))):
    """A word's value after quote removal (str), whether bash would still expand it (bool), and
    why expanding it is not proven inert (str), or None when it is.

    The records of the hot path are named tuples, not dataclasses: importing
    dataclasses and generating their methods costs ~1x Python's start-up per check.
    """

    __slots__ = ()


# the characters after which a word's value can differ from its text, or be dynamic
_SPECIAL = frozenset("\\'\"$`<>*?[{")


def unquote(src: str) -> Word:
    """The value bash gives the word `src` after quote removal (expansions kept as text)."""
    if _SPECIAL.isdisjoint(src):  # most words: nothing to remove, nothing to expand
        return Word(src, False, _name_risk(src) if "__gatekeep" in src else None)
    out: list[str] = []
    dynamic = False
    unsafe = None
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            if src.startswith("\\\n", i):
                i += 2  # line continuation
            elif i + 1 < n:
                out.append(src[i + 1])
                i += 2
            else:
                out.append(c)
                i += 1
        elif c == "'":
            end = src.find("'", i + 1)
            end = n if end < 0 else end
            out.append(src[i + 1 : end])
            i = end + 1
        elif src.startswith("$'", i):
            value, i = _ansi_c(src, i + 2)
            out.append(value)
        elif c == '"' or src.startswith('$"', i):
            if c == "$":
                unsafe = unsafe or '`$"…"` is a translated string to bash, but `$` and a string to zsh and dash'
            value, i, dyn, risk = _double_quoted(src, i + (2 if c == "$" else 1))
            out.append(value)
            dynamic |= dyn
            unsafe = unsafe or risk
        elif (
            (c == "$" and i + 1 < n and _EXPANSION_START.match(src, i + 1))
            or c == "`"
            or (
                c in "<>" and src.startswith("(", i + 1)  # process substitution: becomes a /dev/fd path
            )
        ):
            end = expansion_end(src, i)
            out.append(src[i:end])
            dynamic = True
            unsafe = unsafe or expansion_risk(src[i:end]) or _subscript_risk(src, i, end)
            i = end
        elif c == "$" and _ZSH_FLAG_START.match(src, i + 1):
            unsafe = unsafe or f"`{src[i : i + 2]}` is an expansion with flags in zsh"
            dynamic = True
            out.append(c)
            i += 1
        else:
            if c in "*?" or (c == "[" and "]" in src[i + 1 :]):  # `[` with no `]` after it is literal: `[ -f x ]`
                dynamic = True
            elif c == "{" and _BRACE_EXPANSION.match(src, i):
                dynamic = True
            elif c == "~" and src.startswith("~[", i):
                unsafe = unsafe or "`~[...]` calls zsh's zsh_directory_name function"
            out.append(c)
            i += 1
    value = "".join(out)
    if unsafe is None and "__gatekeep" in value:
        unsafe = _name_risk(value)
    return Word(value, dynamic, unsafe)


def _double_quoted(src: str, i: int) -> tuple[str, int, bool, str | None]:
    """Read a "..." body starting at `i`; return (value, index after the closing quote, dynamic, unsafe)."""
    out: list[str] = []
    dynamic = False
    unsafe = None
    n = len(src)
    while i < n:
        c = src[i]
        if c == '"':
            return "".join(out), i + 1, dynamic, unsafe
        if c == "\\" and i + 1 < n and src[i + 1] in _DOUBLE_QUOTE_ESCAPABLE:
            if src[i + 1] != "\n":
                out.append(src[i + 1])
            i += 2
        elif (c == "$" and i + 1 < n and _EXPANSION_START.match(src, i + 1)) or c == "`":
            end = expansion_end(src, i)
            out.append(src[i:end])
            dynamic = True
            unsafe = unsafe or expansion_risk(src[i:end]) or _subscript_risk(src, i, end)
            i = end
        elif c == "$" and _ZSH_FLAG_START.match(src, i + 1):
            unsafe = unsafe or f"`{src[i : i + 2]}` is an expansion with flags in zsh"
            dynamic = True
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out), n, dynamic, unsafe


def _ansi_c(src: str, i: int) -> tuple[str, int]:
    """Decode a $'...' body starting at `i`, as bash does."""
    out: list[str] = []
    n = len(src)
    while i < n:
        c = src[i]
        if c == "'":
            return "".join(out), i + 1
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = src[i + 1]
        if nxt in _ANSI_C_SIMPLE:
            out.append(_ANSI_C_SIMPLE[nxt])
            i += 2
            continue
        m = _ANSI_C_NUMERIC.match(src, i + 1)
        if m is None:
            out.append("\\" + nxt)
            i += 2
            continue
        if m["ctl"] is not None:
            code = ord(m["ctl"]) & 0x1F
        else:
            digits, base = next((m[k], b) for k, b in (("oct", 8), ("hex", 16), ("u4", 16), ("u8", 16)) if m[k])
            code = int(digits, base)
            code = code & 0xFF if base == 8 else min(code, 0x10FFFF)
        if code == 0:  # a NUL ends the string, as it does for bash: `$'rm\0x'` is rm
            end = _ansi_c(src, m.end())[1]
            return "".join(out), end
        out.append(chr(code))
        i = m.end()
    return "".join(out), n


# The shell's own tables: assigning to one redefines what a command word runs (an alias, a hashed
# path, a function, a hook), in bash (BASH_ALIASES, BASH_CMDS) or zsh (zsh/parameter's arrays).
# A word that so much as names one in an expansion is not inert.
SHELL_TABLES = frozenset(
    "BASH_ALIASES BASH_CMDS aliases galiases saliases dis_aliases dis_galiases dis_saliases functions "
    "dis_functions builtins dis_builtins commands reswords dis_reswords nameddirs userdirs "
    "options widgets keymaps precmd_functions preexec_functions chpwd_functions "
    "periodic_functions zshaddhistory_functions zshexit_functions zsh_directory_name_functions".split()
)
# Integer variables (zsh's, and OPTIND in bash): an assignment to one is arithmetic, which
# evaluates any variable its value names, and that variable's subscripts.
INTEGER_VARIABLES = frozenset(
    "OPTIND HISTSIZE SAVEHIST SECONDS RANDOM COLUMNS LINES KEYTIMEOUT LISTMAX MAILCHECK PERIOD TMOUT SHLVL "
    "ERRNO TRY_BLOCK_ERROR TRY_BLOCK_INTERRUPT ZLE_RPROMPT_INDENT DIRSTACKSIZE LOGCHECK BAUD".split()
)
_PARAMETER = lazy(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!0-]")
_INERT_SUBSCRIPT = lazy(r"@|\*|-?[0-9]+")
_INERT_OFFSET = lazy(r":[ \t]*-?[0-9]+(?::[ \t]*-?[0-9]+)?")
_INERT_ARITHMETIC = lazy(r"[\s0-9+*/%<>=!&|^~?:,()-]*")
# operators of ${NAME OP WORD} whose WORD is only expanded, never assigned or evaluated
_WORD_OPERATORS = (":-", ":+", "-", "+", "##", "#", "%%", "%", "//", "/#", "/%", "/")


def expansion_risk(text: str) -> str | None:
    """None when expanding `text` (one expansion, as expansion_end cuts it) can neither run
    code nor change the shell's state, in bash or zsh; otherwise why it may.

    Command and process substitutions count as inert here: the parser reads their
    commands, and the gate decides those one by one.
    """
    if text[0] in "`<>" or (text.startswith("$(") and not text.startswith("$((")):
        return None
    if text.startswith(("$((", "$[")):
        body = text[3:-2] if text.startswith("$((") else text[2:-1]
        return arithmetic_risk(body, shown=text)
    if not text.startswith("${"):
        return _name_risk(text[1:])
    body = text[2:-1] if text.endswith("}") else text[2:]
    if any(c in body for c in "'\"\\`"):
        return f"`{text}` has quotes inside `${{...}}`, which bash and zsh read differently"
    if body[:1] == "#" and len(body) > 1:  # a length: ${#x}, ${#a[@]}
        body = body[1:]
        if body.endswith(("[@]", "[*]")):
            body = body[:-3]
        m = _PARAMETER.fullmatch(body)
        return _name_risk(body) if m else f"`{text}` is not an expansion gatekeep knows to be inert"
    if body[:1] == "(":
        return f"`{text}` has zsh expansion flags, which can evaluate or look up its value"
    if body[:1] in ("~", "=", "^", "+"):
        return f"`{text}` is a zsh expansion with flags"
    if body[:1] == "!" and len(body) > 1:
        return f"`{text}` is indirection, which evaluates the subscripts of the name it finds"
    m = _PARAMETER.match(body)
    if m is None:
        return f"`{text}` is not an expansion gatekeep knows to be inert"
    risk = _name_risk(m.group())
    if risk:
        return risk
    rest = body[m.end() :]
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0 or not _INERT_SUBSCRIPT.fullmatch(rest[1:close]):
            return f"`{text}` has a subscript, which bash and zsh evaluate as arithmetic"
        rest = rest[close + 1 :]
    if not rest:
        return None
    if rest.startswith((":=", "::=", "=")):
        return f"`{text}` assigns a value as it expands"
    if rest.startswith(":") and not rest.startswith((":-", ":+", ":?")):
        if _INERT_OFFSET.fullmatch(rest):
            return None
        return f"`{text}` has an offset, which bash and zsh evaluate as arithmetic"
    if rest.startswith("@"):
        return f"`{text}` is a transformation; `@P` runs the commands its value holds"
    for operator in _WORD_OPERATORS:
        if rest.startswith(operator):
            inner = unquote(rest[len(operator) :])
            return inner.unsafe
    return f"`{text}` is not an expansion gatekeep knows to be inert"


# Names whose value bash and zsh keep a number whatever is assigned to them, and the special
# parameters that are numbers: arithmetic that names them evaluates nothing more.
NUMERIC_NAMES = frozenset({"RANDOM", "SECONDS", "LINENO", "PPID", "UID", "EUID"})
_ARITHMETIC_ASSIGNMENT = lazy(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*=(?!=)(.*)")


def arithmetic_risk(body: str, shown: str | None = None, known: frozenset[str] = frozenset()) -> str | None:
    """Why evaluating the arithmetic `body` (of `$(( ))`, `(( ))` or `for (( ))`) is not inert, or
    None. Inert: numbers and operators, the numeric parameters (NUMERIC_NAMES, `$#`, `$?`...),
    inert arithmetic inside it, and the `known` names (a `for (( ))`'s counter, which holds only
    numbers: parse.py says when). Any other name is evaluated, and its value too: a value like
    'a[$(cmd)]' runs cmd. Command substitutions are judged as commands, but their output is
    evaluated here, so they are not inert either."""
    shown = shown or f"(( {body.strip()} ))"
    inner = _INNER_ARITHMETIC.sub(lambda m: " 0 " if arithmetic_risk(m.group(1)) is None else m.group(0), body)
    names = [m.group(1) or m.group(2) or m.group(3) for m in _ARITHMETIC_TOKEN.finditer(inner)]
    rest = _ARITHMETIC_TOKEN.sub(" ", inner).replace(";", " ")
    if not _INERT_ARITHMETIC.fullmatch(rest):
        return f"`{shown}` is arithmetic, which evaluates any variable it names as more arithmetic"
    for name in names:
        if name not in NUMERIC_NAMES and name not in ("#", "?", "$", "!") and name not in known:
            return f"`{shown}` is arithmetic, which evaluates any variable it names ({name}) as more arithmetic"
    return None


def counters(header: str) -> list[str]:
    """The names the first clause of a `for (( ))` header sets to a literal number (`i=0, j=1`)."""
    found = []
    for clause in header.split(";", 1)[0].split(","):
        m = _ARITHMETIC_ASSIGNMENT.fullmatch(clause)
        if m and m.group(2).strip().isdigit():
            found.append(m.group(1))
    return found


_INNER_ARITHMETIC = lazy(r"\$\(\(((?:[^()]|\([^()]*\))*)\)\)")
# a name, `$name`, `${name}` or a special parameter in arithmetic (anything else is left for _INERT_ARITHMETIC)
_ARITHMETIC_TOKEN = lazy(r"\$\{([A-Za-z_][A-Za-z_0-9]*|[#?$!])\}|\$([#?$!])|\$?([A-Za-z_][A-Za-z_0-9]*)")


def text_risk(text: str) -> str | None:
    """Why expanding `text` as bash expands an unquoted heredoc's body (quotes are literal there;
    `$`, backticks and backslashes are not) is not proven inert, or None."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif (c == "$" and i + 1 < n and _EXPANSION_START.match(text, i + 1)) or c == "`":
            end = expansion_end(text, i)
            risk = expansion_risk(text[i:end]) or _subscript_risk(text, i, end)
            if risk:
                return risk
            i = end
        elif c == "$" and _ZSH_FLAG_START.match(text, i + 1):
            return f"`{text[i : i + 2]}` is an expansion with flags in zsh"
        else:
            i += 1
    return None


def assignment_risk(assignment: str) -> str | None:
    """Why the assignment `NAME=value` (quotes removed) is not inert although its words are: an
    integer variable given anything but a literal number evaluates it as arithmetic."""
    name, _, value = assignment.partition("=")
    name = name.removesuffix("+")
    if name in INTEGER_VARIABLES and not value.lstrip("+-").isdigit():
        return f"it assigns {name}, an integer variable, so {value or 'its value'} is evaluated as arithmetic"
    if value.startswith("(") and "[" in value:  # `a=([k]=v)`: an indexed array evaluates k as arithmetic
        for subscript in _COMPOUND_SUBSCRIPT.findall(value):
            if not _INERT_SUBSCRIPT.fullmatch(subscript):
                return f"it assigns the array {name} at [{subscript}], which bash evaluates as arithmetic"
    return None


_COMPOUND_SUBSCRIPT = lazy(r"[(\s]\[([^\]]*)\]\+?=")


def _name_risk(text: str) -> str | None:
    """Why naming `text` (a parameter name, or a word's value) in a line is not inert, if it is not."""
    if "__gatekeep" in text:
        return "it reaches gatekeep's own shell names (`__gatekeep...`), which only the hook may touch"
    if text in SHELL_TABLES:
        return f"it reaches `{text}`, a table of the shell's own aliases, functions or commands"
    return None


def _subscript_risk(src: str, start: int, end: int) -> str | None:
    """zsh reads `$name[...]` as a subscript (evaluated as arithmetic); bash as a glob after `$name`."""
    if end >= len(src) or src[end] != "[" or src[start + 1 : start + 2] in ("{", "(", "["):
        return None
    close = src.find("]", end)
    if close < 0 or _INERT_SUBSCRIPT.fullmatch(src[end + 1 : close]):
        return None
    return f"`{src[start : close + 1]}` is a subscript to zsh, which evaluates it as arithmetic"


def expansion_end(src: str, i: int) -> int:
    """Index just after the expansion at `src[i]`: `$x`, `${..}`, `$(..)`, `` `..` ``, `<(..)`, `>(..)`.

    Bounded and approximate by design: the value of a dynamic word is never
    trusted, this only decides where the literal text resumes.
    """
    n = len(src)
    if src[i] == "`":
        j = i + 1
        while j < n and src[j] != "`":
            j += 2 if src[j] == "\\" else 1
        return min(j + 1, n)
    if i + 1 >= n:
        return n
    opener = src[i + 1]
    if src[i] in "<>":
        return _balanced_end(src, i + 1, "(", ")")
    if opener == "[":  # $[ ] is bash's old arithmetic
        return _balanced_end(src, i + 1, "[", "]")
    if opener in "({":
        return _balanced_end(src, i + 1, opener, ")" if opener == "(" else "}")
    if opener.isalpha() or opener == "_":
        j = i + 1
        while j < n and (src[j].isalnum() or src[j] == "_"):
            j += 1
        return j
    return i + 2  # $1, $@, $?, ...


def _balanced_end(src: str, i: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    n = len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and open_ch == "(":
            end = src.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


MAX_BRACE_WORDS = 256


def expand_braces(word: str, limit: int = MAX_BRACE_WORDS) -> list[str] | None:
    """The words bash's brace expansion makes of `word` (`a{b,c}d` -> abd acd, `{1..3}`, nested
    lists), in order; None when there would be more than `limit`. Quoting is not known here
    (the word is a value), so a quoted brace expands too: the caller gets more candidates, never fewer."""
    found = _expand_braces(word, limit)
    return found if found is not None and len(found) <= limit else None


def _expand_braces(word: str, limit: int) -> list[str] | None:
    start = 0
    while True:
        open_at = word.find("{", start)
        if open_at < 0:
            return [word]
        parts, close_at = _brace_parts(word, open_at)
        if parts is not None:
            break
        start = open_at + 1
    prefix, suffixes = word[:open_at], _expand_braces(word[close_at + 1 :], limit)
    if suffixes is None:
        return None
    found: list[str] = []
    for part in parts:
        expanded = _expand_braces(part, limit)
        if expanded is None:
            return None
        found += [prefix + e + suffix for e in expanded for suffix in suffixes]
        if len(found) > limit:
            return None
    return found


def _brace_parts(word: str, open_at: int) -> tuple[list[str] | None, int]:
    """The alternatives of the brace expression at `open_at` and where it closes; (None, -1) if
    it is not one (no top-level comma and no valid sequence, or no closing brace)."""
    depth, commas, i = 0, [], open_at
    while i < len(word):
        c = word[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                body = word[open_at + 1 : i]
                if commas:
                    cuts = [open_at, *commas, i]
                    return [word[a + 1 : b] for a, b in zip(cuts, cuts[1:])], i
                sequence = _sequence(body)
                return (sequence, i) if sequence is not None else (None, -1)
        elif c == "," and depth == 1:
            commas.append(i)
        i += 1
    return None, -1


def _sequence(body: str) -> list[str] | None:
    """`1..5`, `a..e`, `01..10..3`: bash's sequence expression, or None if the body is not one."""
    parts = body.split("..")
    if len(parts) not in (2, 3):
        return None
    step_text = parts[2] if len(parts) == 3 else "1"
    try:
        step = abs(int(step_text)) or 1
    except ValueError:
        return None
    a, b = parts[0], parts[1]
    if len(a) == 1 and len(b) == 1 and a.isalpha() and b.isalpha():
        first, last = ord(a), ord(b)
        values = range(first, last + 1, step) if first <= last else range(first, last - 1, -step)
        return [chr(v) for v in values][: MAX_BRACE_WORDS + 1]
    try:
        first, last = int(a), int(b)
    except ValueError:
        return None
    width = max(len(a), len(b)) if a.lstrip("-").startswith("0") or b.lstrip("-").startswith("0") else 0
    values = range(first, last + 1, step) if first <= last else range(first, last - 1, -step)
    if len(values) > MAX_BRACE_WORDS:
        return [str(first)] * (MAX_BRACE_WORDS + 1)  # too many: the caller sees the count, not the words
    return [str(v).zfill(width) if width else str(v) for v in values]
