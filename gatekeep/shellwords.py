"""Quote removal for one shell word, computed from its source text.

bashlex's own `.word` is wrong for mixed quoting (`'it'\\''s'`, `"a"'b'`), for
`"a\\b"`, and it does not decode ANSI-C `$'\\x72m'` or `$"..."`. So gatekeep
recomputes every word from its source span here. Python's `shlex` is not used
because it knows neither ANSI-C quoting nor bash's backslash rules inside
double quotes.

A word is *dynamic* when bash would change it at run time: a parameter or
command substitution, an unquoted glob character, or a brace expansion. Its
value then keeps the expansion's source text; it is never trusted for allow.
"""

from __future__ import annotations

from gatekeep.lazyre import lazy
from gatekeep.records import record

# Characters that follow `$` to start an expansion: `$name`, `${`, `$(`, `$1`, `$@`, ...
_EXPANSION_START = lazy(r"[A-Za-z_0-9{(@*#?$!-]")
_DOUBLE_QUOTE_ESCAPABLE = '$`"\\\n'
_BRACE_EXPANSION = lazy(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")

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


class Word(record("Word", "value dynamic", defaults=(False,))):
    """A word's value after quote removal (str), and whether bash would still expand it (bool).

    The records of the hot path are named tuples, not dataclasses: importing
    dataclasses and generating their methods costs ~1x Python's start-up per check.
    """

    __slots__ = ()


# the characters after which a word's value can differ from its text, or be dynamic
_SPECIAL = frozenset("\\'\"$`<>*?[{")


def unquote(src: str) -> Word:
    """The value bash gives the word `src` after quote removal (expansions kept as text)."""
    if _SPECIAL.isdisjoint(src):  # most words: nothing to remove, nothing to expand
        return Word(src, False)
    out: list[str] = []
    dynamic = False
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
            value, i, dyn = _double_quoted(src, i + (2 if c == "$" else 1))
            out.append(value)
            dynamic |= dyn
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
            i = end
        else:
            if c in "*?[":
                dynamic = True
            elif c == "{" and _BRACE_EXPANSION.match(src, i):
                dynamic = True
            out.append(c)
            i += 1
    return Word("".join(out), dynamic)


def _double_quoted(src: str, i: int) -> tuple[str, int, bool]:
    """Read a "..." body starting at `i`; return (value, index after the closing quote, dynamic)."""
    out: list[str] = []
    dynamic = False
    n = len(src)
    while i < n:
        c = src[i]
        if c == '"':
            return "".join(out), i + 1, dynamic
        if c == "\\" and i + 1 < n and src[i + 1] in _DOUBLE_QUOTE_ESCAPABLE:
            if src[i + 1] != "\n":
                out.append(src[i + 1])
            i += 2
        elif (c == "$" and i + 1 < n and _EXPANSION_START.match(src, i + 1)) or c == "`":
            end = expansion_end(src, i)
            out.append(src[i:end])
            dynamic = True
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out), n, dynamic


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
            out.append(chr(ord(m["ctl"]) & 0x1F))
        else:
            digits, base = next((m[k], b) for k, b in (("oct", 8), ("hex", 16), ("u4", 16), ("u8", 16)) if m[k])
            code = int(digits, base)
            out.append(chr(code & 0xFF if base == 8 else min(code, 0x10FFFF)))
        i = m.end()
    return "".join(out), n


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
