"""Shell commands inside one-liners: what `python -c`, `node -e`, `perl -e` and `ruby -e`
code hands to a shell as a literal string.

`python3 -c 'import os; os.system("rm -rf ~")'` runs code gatekeep cannot read, so the line
asks (decide.py) whatever rule allows python. But the command inside is plain to see, and a
deny rule must meet it: this module finds the literal strings and lists that the language's
shell calls are given (the call names are data: `shell-calls` in tools/interpreters.toml),
and knowledge.scripts_in hands them on to be read as scripts of their own.

It reads string literals as the language does (quotes, escapes, raw strings, `+`/`.`
concatenation, Perl's q()/qx(), Ruby's %x()), and puts the unknown `"$INLINE_VALUE"`
where a value is computed (a variable, an f-string's `{x}`, `#{x}`): a deny rule that could
match some value still asks. It cannot see a command built by code (`chr(114)+…`, base64,
getattr): that line still asks, as all inline code does, but no deny rule meets it.
"""

from __future__ import annotations

from gatekeep.core.lazyre import lazy

UNKNOWN = '"$INLINE_VALUE"'
MAX_CODE = 20_000  # longer code is not searched: it asks anyway, as all inline code does
MAX_COMMANDS = 20
MAX_LITERALS = 200

_IDENT = lazy(r"[A-Za-z_$][A-Za-z_0-9$]*")
_PYTHON_PREFIX = lazy(r"(?i)(?:[rbuf]|rb|br|fr|rf)(?=['\"])")
_PERL_QUOTE = lazy(r"(q|qq|qx)\s*([^\sA-Za-z0-9_,;)])")
_RUBY_PERCENT = lazy(r"%([qQxw]?)([^\sA-Za-z0-9])")
_ESCAPE = lazy(
    r"\\(x\{[0-9A-Fa-f]{1,8}\}|u\{[0-9A-Fa-f]{1,8}\}|N\{[^}]*\}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{1,3}|.)",
    flags=16,  # re.DOTALL
)
_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_JS_NAME_ESCAPE = lazy(r"\\u\{([0-9A-Fa-f]{1,6})\}|\\u([0-9A-Fa-f]{4})")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "e": "\x1b", "f": "\f", "v": "\v"}


def shell_commands(code: str, language: str, calls) -> list[str]:
    """The shell commands `code` (in `language`: python, js, perl or ruby) passes as literals
    to one of `calls` (function names, matched as the last name of a call: `os.system`,
    `system`, `subp.run` all end in one), or runs in backticks (Perl and Ruby).

    Every place is tried, inside strings and comments too: reading too much only shows deny
    rules more, while a reader that skips what it takes for a string or a comment can be
    made to skip a real call (`x = /'/; exec("rm -rf ~")`)."""
    if len(code) > MAX_CODE:
        return []
    code = _names_as_read(code, language)
    reader = _Reader(code, language)
    found: list[str] = []
    for match in _IDENT.finditer(code):
        if match.group() in calls:
            # a call whose command cannot be read (a variable, a keyword argument, a comment
            # first) runs a command nobody knows, which any deny rule could be
            command = reader.arguments(match.end())
            if command is None and _called(code, match.end(), language):
                command = UNKNOWN
            if command:
                found.append(command)
        elif _backtick_quote(code, match.start(), language):
            at = match.start() - (language == "ruby")
            found.append(reader.literal(at)[0] or "")
        if len(found) >= MAX_COMMANDS:
            break
    if language in ("perl", "ruby"):
        at = code.find("`")
        while at >= 0 and len(found) < MAX_COMMANDS:
            found.append(reader.literal(at)[0] or "")
            at = code.find("`", at + 1)  # each backtick may open one: a stray one hides nothing
    return [command for command in found if command.strip()]


def _names_as_read(code: str, language: str) -> str:
    """`code` with its names spelled as the language reads them."""
    if language == "python":  # Python reads identifiers in NFKC: `os.ｓｙｓｔｅｍ` is os.system
        import unicodedata

        return unicodedata.normalize("NFKC", code)
    if language == "js":  # and JavaScript reads escapes in them: `exec\u0053ync` is execSync
        return _JS_NAME_ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), code)
    return code


def names_one_of(code: str, language: str, names) -> str | None:
    """The first of `names` that `code` holds as a name (anywhere: in strings and comments too,
    as shell_commands reads), or None; code longer than MAX_CODE holds one ("…")."""
    if len(code) > MAX_CODE:
        return "…"
    return next((m.group() for m in _IDENT.finditer(_names_as_read(code, language)) if m.group() in names), None)


def literals(code: str, language: str) -> list[str] | None:
    """The string literals of `code`, as the language reads them, tried at every quote (between
    two literals too: reading too much only shows the caller more); None when there are more
    than MAX_LITERALS or the code is longer than MAX_CODE (the caller cannot vouch for it)."""
    if len(code) > MAX_CODE:
        return None
    reader = _Reader(code, language)
    starts = "'\"`" + ("q%" if language in ("perl", "ruby") else "") + ("rbufRBUF" if language == "python" else "")
    found: list[str] = []
    for i, c in enumerate(code):
        if c in starts:
            value, _ = reader.literal(i)
            if value is not None:
                found.append(value)
                if len(found) > MAX_LITERALS:
                    return None
    return found


def _called(code: str, i: int, language: str) -> bool:
    """Whether the name that ends at i is called: `(` follows, or in Perl and Ruby a variable
    after a space (`system $cmd`)."""
    j = _skip_space(code, i)
    if j < len(code) and code[j] == "(":
        return True
    return language in ("perl", "ruby") and j > i and j < len(code) and code[j] in "$@"


def _backtick_quote(code: str, i: int, language: str) -> bool:
    """Perl's qx(...) and Ruby's %x(...) (found at the `x`): a command in other quotes."""
    if language == "perl" and code.startswith("qx", i):
        return _PERL_QUOTE.match(code, i) is not None
    if language == "ruby" and code.startswith("x", i) and i > 0 and code[i - 1] == "%":
        return _RUBY_PERCENT.match(code, i - 1) is not None
    return False


class _Reader:
    def __init__(self, code: str, language: str) -> None:
        self.code, self.language = code, language

    def arguments(self, i: int) -> str | None:
        """After a call's name: its literal arguments as one shell command, or None.

        One string is a command line (os.system, exec, system "…"); several arguments, or a
        list, are an argv (subprocess.run([...]), spawn("rm", [...]), system("rm", "-rf", …)),
        joined as a shell would need them written.
        """
        code = self.code
        i = _skip_space(code, i)
        if self.language == "js" and code.startswith("`", i):
            return self.literal(i)[0]  # a tagged template: zx's and Bun's $`CMD`
        parenthesized = i < len(code) and code[i] == "("
        if parenthesized:
            i += 1
        elif self.language not in ("perl", "ruby"):  # `system "cmd"`: only these call without ( )
            return None
        words: list[tuple[str, bool]] = []  # (text, known)
        first = True
        while True:
            i = _skip_space(code, i)
            if i < len(code) and code[i] == "[":
                items, i = self._list(i + 1)
                words += items
            else:
                value, i = self._expression(i)
                if value is None:
                    if first:
                        return None  # `run(cmd)`: nothing literal to read
                    break  # `shell=True`, `{cwd: x}`: the command is read
                words.append(value)
            first = False
            i = _skip_space(code, i)
            if i < len(code) and code[i] == ",":
                i += 1
                continue
            break
        if len(words) == 1:
            return words[0][0]  # one string: a command line
        return " ".join(_quoted(text) if known else text for text, known in words)

    def _list(self, i: int) -> tuple[list[tuple[str, bool]], int]:
        items: list[tuple[str, bool]] = []
        while True:
            i = _skip_space(self.code, i)
            if i < len(self.code) and self.code[i] == "]":
                return items, i + 1
            value, i = self._expression(i)
            items.append(value if value is not None else (UNKNOWN, False))
            if value is None:
                i = self._skip_value(i)
            i = _skip_space(self.code, i)
            if i < len(self.code) and self.code[i] == ",":
                i += 1
                continue
            end = self.code.find("]", i)
            return items, (len(self.code) if end < 0 else end + 1)

    def _skip_value(self, i: int) -> int:
        depth = 0
        while i < len(self.code):
            c = self.code[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    return i
                depth -= 1
            elif c == "," and depth == 0:
                return i
            i += 1
        return i

    def _expression(self, i: int) -> tuple[tuple[str, bool] | None, int]:
        """Literals joined by `+`, `.` (Perl) or nothing (Python): (text, whether all of it is
        known), with UNKNOWN for each part that is not a literal; None when no part is one."""
        parts: list[str] = []
        known = True
        seen_literal = False
        while True:
            i = _skip_space(self.code, i)
            value, end = self.literal(i)
            if value is None:
                end = self._operand_end(i)
                if end == i:
                    if parts:  # `"rm -rf " + ("~")`: a part it cannot read is one nobody knows
                        parts.append(UNKNOWN)
                        known = False
                    break
                parts.append(UNKNOWN)
                known = False
            else:
                parts.append(value)
                seen_literal = True
                known = known and UNKNOWN not in value
            i = _skip_space(self.code, end)
            joiner = self.code[i : i + 1]
            if joiner == "+" or (joiner == "." and self.language == "perl"):
                i += 1
                continue
            if self.language == "python" and self.literal(i)[0] is not None:
                continue  # "rm " "-rf": adjacent literals are one
            break
        if not seen_literal:
            return None, i
        return ("".join(parts), known), i

    def _operand_end(self, i: int) -> int:
        """The end of a name, a call or an attribute chain standing where a literal could."""
        match = _IDENT.match(self.code, i)
        if match is None:
            return i
        end = match.end()
        while end < len(self.code) and self.code[end] in ".([":
            if self.code[end] == ".":
                nxt = _IDENT.match(self.code, end + 1)
                if nxt is None:
                    break
                end = nxt.end()
            else:
                end = self._skip_value(end + 1) + 1
        return end

    def literal(self, i: int) -> tuple[str | None, int]:
        """The string literal starting at i, as the language reads it, and the index after it."""
        code, language = self.code, self.language
        raw = interpolate = False
        if language == "python":
            prefix = _PYTHON_PREFIX.match(code, i)
            if prefix:
                raw = "r" in prefix.group().lower()
                interpolate = "f" in prefix.group().lower()
                i = prefix.end()
        elif language == "perl":
            quote = _PERL_QUOTE.match(code, i)
            if quote and (i == 0 or not code[i - 1].isalnum()):
                opener = quote.group(2)
                body, end = _delimited(code, quote.end(), opener, _CLOSERS.get(opener, opener))
                if body is None:
                    return None, i
                single = quote.group(1) == "q"
                return (_perl_single(body) if single else _interpolated(_unescape(body), "perl")), end
        elif language == "ruby":
            quote = _RUBY_PERCENT.match(code, i)
            if quote and quote.group(1) != "w":
                opener = quote.group(2)
                body, end = _delimited(code, quote.end(), opener, _CLOSERS.get(opener, opener))
                if body is None:
                    return None, i
                return (body if quote.group(1) == "q" else _interpolated(_unescape(body), "ruby")), end
        if i >= len(code) or code[i] not in "'\"`":
            return None, i
        quote = code[i]
        if language == "js" and quote == "`":
            interpolate = True
        elif quote == "`" and language not in ("perl", "ruby"):
            return None, i
        if language == "python" and code.startswith(quote * 3, i):
            end = code.find(quote * 3, i + 3)
            if end < 0:
                return None, i
            body, after = code[i + 3 : end], end + 3
        else:
            body, after = _delimited(code, i + 1, quote, quote)
            if body is None:
                return None, i
        if raw or (quote == "'" and language in ("perl", "ruby")):
            value = _perl_single(body) if not raw else body
        else:
            value = _unescape(body)
            if quote in "\"`" and language in ("perl", "ruby", "js") or interpolate:
                value = _interpolated(value, "python" if interpolate and language == "python" else language)
        return value, after


def _delimited(code: str, i: int, opener: str, closer: str) -> tuple[str | None, int]:
    """The body up to the matching closer (nested pairs counted, backslash escapes kept)."""
    depth = 0
    start = i
    while i < len(code):
        c = code[i]
        if c == "\\":
            i += 2
            continue
        if c == closer and depth == 0:
            return code[start:i], i + 1
        if opener != closer:
            depth += (c == opener) - (c == closer)
        i += 1
    return None, i


def _unescape(body: str) -> str:
    def one(match) -> str:
        escape = match.group(1)
        if escape == "\n":
            return ""  # a backslash before a newline joins the lines (Python, JavaScript, Perl "…")
        if escape.startswith("N{"):
            return UNKNOWN  # a character by its name: read as one nobody knows
        if escape[0] in "xuU" and len(escape) > 1:
            digits = escape[1:].strip("{}")
            code = int(digits, 16)
            return chr(code) if code <= 0x10FFFF else UNKNOWN
        if escape[0] in "01234567":
            return chr(int(escape, 8))
        return _SIMPLE.get(escape, escape)

    return _ESCAPE.sub(one, body)


def _perl_single(body: str) -> str:
    return body.replace("\\\\", "\\").replace("\\'", "'")


_INTERPOLATION = {
    "python": lazy(r"\{[^{}]*\}"),
    "js": lazy(r"\$\{[^{}]*\}"),
    "ruby": lazy(r"#\{[^{}]*\}|#[@$][A-Za-z_]\w*"),
    "perl": lazy(r"[$@]\{[^}]*\}|[$@][A-Za-z_][\w:]*(?:->)?(?:\[[^\]]*\]|\{[^}]*\})*"),
}


def _interpolated(value: str, language: str) -> str:
    """A value with each interpolated part (`{x}`, `${x}`, `#{x}`, `$x`) as UNKNOWN."""
    pattern = _INTERPOLATION.get(language)
    return pattern.sub(UNKNOWN, value) if pattern is not None else value


def _skip_space(code: str, i: int) -> int:
    while i < len(code) and code[i] in " \t\r\n":
        i += 1
    return i


def _quoted(word: str) -> str:
    import shlex  # here: shlex imports re, which typical lines never need

    return shlex.quote(word)
