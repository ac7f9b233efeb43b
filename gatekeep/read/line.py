"""What reading a line yields: its simple commands, their redirections, the functions it defines.

parse.py makes these from bashlex's tree and fallback.py from a conservative split of the raw
text; every later stage reads them.
"""

from __future__ import annotations

from gatekeep.core.records import record

_WRITE_OPS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}

# The problems of the commands fallback.py finds in a line the parser could not read: in its
# code (a deny rule denies the line), or where it may be only text (a deny rule makes it ask).
PROBLEM = "could not be parsed; found by a conservative scan of the raw text"
UNCERTAIN = "could not be parsed; found in quoted text, a heredoc's body or a comment, which may be only text"


class Redirect(record("Redirect", "op target dynamic body unsafe", defaults=(False, None, None))):
    """One redirection of a command: its operator and literal target.

    target is None when it is a file descriptor number; body is a heredoc's text
    (without its terminator line), which becomes standard input; unsafe says why
    expanding the target or an unquoted heredoc's body is not proven inert
    (shellwords.expansion_risk). Like every record of the hot path this is a
    named tuple, not a dataclass (see shellwords.Word).
    """

    __slots__ = ()

    @property
    def stdin_text(self) -> str | None:
        """What a here-string (`<<< WORD`) or heredoc feeds the command, if this is one."""
        return self.target if self.op == "<<<" else self.body

    @property
    def writes_file(self) -> bool:
        if self.op not in _WRITE_OPS or self.target is None:
            return False
        if self.op == ">&" and (self.target.isdigit() or self.target == "-"):
            return False  # 2>&1 duplicates a descriptor
        return True


class SimpleCommand(
    record(
        "SimpleCommand",
        "words assignments redirects pipeline position start problems",
        defaults=((), (), -1, 0, -1, ()),
    )
):
    """One simple command of a line: words, leading assignments, redirections and where it stands.

    words: Word tuple; assignments: leading NAME=value, quotes removed; pipeline:
    commands with the same pipeline id are joined by `|`; position: index within
    that pipeline; start: where the command begins in the line (-1: found by the
    fallback scan); problems: why this command must not be allowed, if anything.
    """

    __slots__ = ()

    @property
    def argv(self) -> list[str]:
        return [w.value for w in self.words]

    @property
    def text(self) -> str:
        """The command's words joined by single spaces; an assignment-only command shows its assignments."""
        return " ".join(self.argv) if self.words else " ".join(self.assignments)


class FunctionDef(record("FunctionDef", "name self_calls self_call_in_pipeline calls spawns", defaults=((), False))):
    """A function the line defines, and how its body calls itself.

    self_calls: how often its body runs a command of its own name; calls: the
    command names its body runs; spawns: its body runs some command twice at
    once, in a pipeline or twice.
    """

    __slots__ = ()

    @property
    def is_fork_bomb(self) -> bool:
        return self.self_calls >= 2 or self.self_call_in_pipeline


class ParseResult(
    record(
        "ParseResult",
        "line commands complete problems functions risks names loop_variables",
        defaults=(True, (), (), (), (), ()),
    )
):
    """Every simple command of a line; `complete` is False when the parse cannot be trusted.

    risks: why the line can never be allowed although it was read completely: a
    word outside any simple command (a `for` list, say) whose expansion is not
    proven inert. A word inside a command makes that command's problems instead.
    names: the Words outside any simple command (a `for` list, a `case` subject), which
    may name files the commands then read (`for f in ~/.ssh/*; do cat $f; done`);
    loop_variables: the variables of `for` loops over words known here (no `$`, no backquote),
    which therefore hold only what `names` shows.
    """

    __slots__ = ()
