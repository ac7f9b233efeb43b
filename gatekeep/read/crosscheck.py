"""An independent reading of the raw line, to catch what bashlex silently hides.

bashlex 0.18 "succeeds" on inputs whose commands it does not report
(measured against bash; tests/test_parse.py has each case): substitutions inside words that start and end
with a quote, `<( )` after a double-quoted part, anything inside `${...}`,
substitutions in unquoted heredoc bodies, heredoc bodies read a line late,
and text after the first newline inside `$( )`.

This module scans the raw text with bash's quoting rules and records:
  * every position where bash would start a command or process substitution;
  * every heredoc body, whether bash expands it, and whether it holds a substitution;
  * comments, so that a coverage check can skip them.
`parse.py` then requires that the tree accounts for each of these, and that
every other non-blank character lies inside some node of the tree. Any
mismatch makes the parse incomplete: the line can then never be allowed.
The scanner is deliberately simple and errs towards finding *more*.
"""

from __future__ import annotations

from gatekeep.core.records import record
from gatekeep.read.shellwords import expansion_end, unquote

_METACHARS = " \t\n;&|()<>"
_WORD_START = " \t\n;&|()"


class Heredoc(record("Heredoc", "body_start end quoted expands_substitution")):
    """One heredoc as bash reads it: where its body lies (`end`: of the terminator line, exclusive,
    as bashlex's HeredocNode.pos) and whether it expands. A record, not a dataclass: dataclasses
    imports inspect, which cost every line that needs the full parser ~15 ms (issue 18)."""

    __slots__ = ()


class RawFacts:
    """What the raw scan found that the parse tree must account for."""

    def __init__(self) -> None:
        self.substitutions: set[int] = set()  # positions of `$(`, `` ` ``, `<(`, `>(`
        self.heredocs: list[Heredoc] = []
        self.comments: list[tuple[int, int]] = []

    def blank_or_comment(self, line: str) -> bool:
        covered = bytearray(len(line))
        for start, end in self.comments:
            covered[start:end] = b"\x01" * (end - start)
        return all(covered[i] or line[i].isspace() for i in range(len(line)))


def scan(line: str) -> RawFacts:
    facts = RawFacts()
    _Scanner(line, facts).run()
    return facts


class _Scanner:
    """A quote-aware walk over the line with a stack of open contexts."""

    def __init__(self, line: str, facts: RawFacts):
        self.s = line
        self.facts = facts
        self.stack: list[str] = []  # "(" (subshell or substitution), "((" (arithmetic), '"', "`", "{" (parameter expansion)
        self.pending: list[tuple[str, bool, bool]] = []  # heredocs waiting for the next newline

    @property
    def context(self) -> str:
        return self.stack[-1] if self.stack else ""

    def run(self) -> None:
        i = 0
        while i < len(self.s):
            i = self.step(i)

    def step(self, i: int) -> int:
        s = self.s
        c = s[i]
        ctx = self.context
        if c == "\\":
            return i + 2
        if ctx == '"':
            if c == '"':
                self.stack.pop()
                return i + 1
            return self.expansion(i) or i + 1
        if c == "'" and ctx == "{":
            return i + 1  # inside ${...} (an array subscript, say) bash may still run a $( ) between quotes
        if c == "'":
            if s.startswith("$'", i - 1) and i > 0 and s[i - 1] == "$":
                return self._skip_ansi_c(i + 1)
            end = s.find("'", i + 1)
            return len(s) if end < 0 else end + 1
        if c == '"':
            self.stack.append('"')
            return i + 1
        if ctx == "`" and c == "`":
            self.stack.pop()
            return i + 1
        if ctx == "{" and c == "}":
            self.stack.pop()
            return i + 1
        j = self.expansion(i)
        if j:
            return j
        if ctx == "((" and s.startswith("))", i):
            self.stack.pop()
            return i + 2
        if c in "<>" and s.startswith("(", i + 1) and ctx != "((":  # (arithmetic has no `<(`)
            self.facts.substitutions.add(i)
            self.stack.append("(")
            return i + 2
        if c == "(":
            self.stack.append("(")
            return i + 1
        if c == ")":
            if ctx == "(":
                self.stack.pop()
            return i + 1
        if ctx == "((":  # arithmetic: no comments, no heredocs (`<<` shifts)
            return i + 1
        if c == "#" and (i == 0 or s[i - 1] in _WORD_START):
            end = s.find("\n", i)
            end = len(s) if end < 0 else end
            self.facts.comments.append((i, end))
            return end
        if c == "<" and s.startswith("<<", i) and not s.startswith("<<<", i):
            return self.heredoc_operator(i)
        if c == "\n" and self.pending:
            return self.heredoc_bodies(i + 1)
        return i + 1

    def expansion(self, i: int) -> int:
        """Record and enter `$(`, backticks and `${`; return the next index, or 0 if none starts here."""
        s = self.s
        if s.startswith("``", i):  # an empty substitution: it runs nothing
            return i + 2
        if s[i] == "`":
            self.facts.substitutions.add(i)
            self.stack.append("`")
            return i + 1
        if s.startswith("$((", i):  # arithmetic, up to its `))`
            self.facts.substitutions.add(i)
            self.stack.append("((")
            return i + 3
        if s.startswith("$(", i):
            self.facts.substitutions.add(i)
            self.stack.append("(")
            return i + 2
        if s.startswith("${", i):
            self.stack.append("{")
            return i + 2
        return 0

    def _skip_ansi_c(self, i: int) -> int:
        s, n = self.s, len(self.s)
        while i < n:
            if s[i] == "\\":
                i += 2
            elif s[i] == "'":
                return i + 1
            else:
                i += 1
        return n

    def heredoc_operator(self, i: int) -> int:
        s, n = self.s, len(self.s)
        j = i + 2
        strip_tabs = s.startswith("-", j)
        if strip_tabs:
            j += 1
        while j < n and s[j] in " \t":
            j += 1
        start = j
        while j < n and s[j] not in _METACHARS:
            if s[j] in "'\"":
                end = s.find(s[j], j + 1)
                j = n if end < 0 else end + 1
            elif s[j] == "\\":
                j += 2
            else:
                j += 1
        raw = s[start:j]
        if raw:
            quoted = any(q in raw for q in "'\"\\")
            self.pending.append((unquote(raw).value, strip_tabs, quoted))
        return j

    def heredoc_bodies(self, i: int) -> int:
        """Consume the bodies of the pending heredocs, which start at `i`; return where scanning
        resumes: the newline after the last terminator (a separator), or the end of the line."""
        s, n = self.s, len(self.s)
        resume = n
        backquoted = bool(self.stack) and self.stack[-1] == "`"  # bash reads the backquoted text apart:
        for delim, strip_tabs, quoted in self.pending:  # its end ends a body too (`… <<EOF\n…\nEOF`)
            body_start, end, resume = i, n, n
            while i < n:
                eol = s.find("\n", i)
                eol = n if eol < 0 else eol
                text = s[i:eol]
                line = text.lstrip("\t") if strip_tabs else text
                if line == delim:
                    end = resume = eol
                    i = eol + 1  # (the next heredoc's body starts on the next line)
                    break
                if backquoted and line.startswith(delim + "`"):
                    end = resume = eol - len(line) + len(delim)
                    break
                i = eol + 1
            body = s[body_start:end]
            expands = not quoted and _body_has_substitution(body)
            self.facts.heredocs.append(Heredoc(body_start, end, quoted, expands))
        self.pending.clear()
        return resume


def body_substitutions(text: str, start: int, end: int, end_of=None):
    """Where the `$( )` and backquotes bash runs in the unquoted heredoc body `text[start:end]`
    stand, as (start, end) pairs: inside `$(( ))` and `${ }` too; quotes do not protect.
    `end_of(text, i)` says where the one at `i` ends (expansion_end, which is approximate, unless
    the parser's is given)."""
    end_of = end_of or expansion_end
    i = start
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
        elif text.startswith("$((", i) or text.startswith("${", i):
            i += 3 if text[i + 1] == "(" else 2  # arithmetic, a parameter: look inside
        elif text.startswith("$(", i) or c == "`":
            close = min(max(end_of(text, i), i + 1), end)
            yield i, close
            i = close
        else:
            i += 1


def _body_has_substitution(body: str) -> bool:
    """In an unquoted heredoc body bash expands `$( )`, backticks and `${ }`; quotes do not protect."""
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "`" or body.startswith("$(", i) or body.startswith("${", i):
            return True
        i += 1
    return False
