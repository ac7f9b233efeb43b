"""Reading a sed script the way GNU sed does, for the commands that run or write something.

`e COMMAND` and the `e` flag of `s` run a shell command; `w FILE`, `W FILE`
and the `w FILE` flag of `s` write a file; `r FILE` and `R FILE` read one into the output. They may follow any address
(`1`, `$`, `/re/`, `\\%re%`, `first~step`, `a,b`, `!`), sit inside `{ }`
blocks, and be separated by `;` or newlines. A script this reader cannot
follow is reported as such, and the caller treats it as one that runs code.
"""

from __future__ import annotations

from gatekeep.core.records import record


class SedScript(record("SedScript", "runs writes unreadable reads")):
    """runs: whether a command or flag runs a shell command; writes: the files it writes;
    unreadable: the script did not parse as sed (so either may be true); reads: the files it
    reads into its output (`r`, `R`)."""

    __slots__ = ()


# commands whose argument runs to the end of the line (a file name, a label, a command)
_TO_END_OF_LINE = frozenset("rRwWe:btTv")
_TEXT = frozenset("aic")  # text to the end of the line, or on the following lines after `\`
_SIMPLE = frozenset("=dDgGhHlnNpPqQxzFL")


def read(script: str) -> SedScript:
    reader = _Reader(script)
    try:
        reader.commands()
    except _Unreadable:
        return SedScript(True, tuple(reader.writes), True, tuple(reader.reads))
    return SedScript(reader.runs, tuple(reader.writes), False, tuple(reader.reads))


class _Unreadable(Exception):
    pass


class _Reader:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0
        self.runs = False
        self.writes: list[str] = []
        self.reads: list[str] = []
        self.label_end = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip_blanks(self, newlines: bool = False) -> None:
        while self.peek() in (" \t\n;" if newlines else " \t") and self.peek():
            self.i += 1

    def rest_of_line(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i : end], end
        return text

    def commands(self) -> None:
        while True:
            self.skip_blanks(newlines=True)
            if not self.peek():
                return
            if self.peek() == "#":
                self.rest_of_line()
                continue
            self.address()
            self.skip_blanks()
            while self.peek() == "!":
                self.i += 1
                self.skip_blanks()
            self.command()

    def address(self) -> None:
        if self.one_address():
            self.skip_blanks()
            if self.peek() == ",":
                self.i += 1
                self.skip_blanks()
                if self.peek() in ("+", "~"):
                    self.i += 1
                if not self.one_address():
                    raise _Unreadable

    def one_address(self) -> bool:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit() or self.peek() == "~":
                self.i += 1
            return True
        if c == "$":
            self.i += 1
            return True
        if c in ("/", "\\"):
            if c == "\\":
                self.i += 1
            self.delimited(self.peek())
            while self.peek() in ("I", "M"):
                self.i += 1
            return True
        return False

    def delimited(self, delimiter: str, regex: bool = True) -> str:
        """The text between `delimiter` here and its next unescaped occurrence (in a regular
        expression, not inside a bracket expression: `s/[/]/x/`)."""
        if not delimiter or delimiter in "\n\\":
            raise _Unreadable
        self.i += 1
        start = self.i
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "[" and regex:
                close = self.s.find("]", self.i + (3 if self.s.startswith("[^]", self.i) else 2 if self.s.startswith("[]", self.i) else 1))
                if close < 0:
                    raise _Unreadable
                self.i = close + 1
                continue
            if c == delimiter:
                self.i += 1
                return self.s[start : self.i - 1]
            self.i += 1
        raise _Unreadable

    def command(self) -> None:
        c = self.peek()
        if not c:
            raise _Unreadable
        self.i += 1
        if c in "{}":
            return
        if c == "s":
            delimiter = self.peek()
            self.delimited(delimiter)
            self.i -= 1  # the closing delimiter of the pattern opens the replacement
            self.delimited(delimiter, regex=False)
            self.flags()
        elif c == "y":
            delimiter = self.peek()
            self.delimited(delimiter, regex=False)
            self.i -= 1
            self.delimited(delimiter, regex=False)
        elif c in _TEXT:
            self.rest_of_line()
            while self.s[: self.i].endswith("\\") and self.peek() == "\n":
                self.i += 1
                self.rest_of_line()
        elif c in _TO_END_OF_LINE:
            start = self.i
            argument = self.rest_of_line().strip()
            semicolon = self.s.find(";", start, self.i)
            self.label_end = self.i if semicolon < 0 else semicolon
            if c == "e":
                self.runs = True
            elif c in "wW":
                self.writes.append(argument)
            elif c in "rR":
                self.reads.append(argument)
            elif c in ":btTv":  # GNU sed ends a label, and v's version, at `;`: what follows is more commands
                self.i = self.label_end
        elif c in _SIMPLE:
            self.skip_blanks()
            while self.peek().isdigit():  # `q 5`, `l 70`
                self.i += 1
        else:
            raise _Unreadable

    def flags(self) -> None:
        while self.peek() and self.peek() not in ";\n}":
            c = self.peek()
            self.i += 1
            if c == "e":
                self.runs = True
            elif c == "w":
                self.writes.append(self.rest_of_line().strip())
                return
            elif not (c in "gpiImM" or c.isdigit() or c in " \t"):
                raise _Unreadable
