"""A conservative split of a line the parser could not read, for deny rules only.

When bashlex fails, times out, or hides part of the line, gatekeep still
applies deny rules to every command-like piece of the raw text. The line's
code is cut at every shell operator, bracket and substitution opener: a piece
found there is a command as surely as the parser would have found it, and a
deny rule that matches it denies the line. Text that may be only text (inside
quotes, a heredoc's body, a comment) is cut too, also at quote characters and
backslashes, so `bash -c 'rm -rf /'` yields `rm -rf /`; but a piece found there
is marked UNCERTAIN, and a deny rule that matches it makes the line ask, saying
so, instead of denying it: a file written through a heredoc (`cat > a.ts <<'EOF'
… EOF`) is data, and its lines are no commands. No piece found here is ever
allowed: the line asks at least, as every line the parser could not read.
"""

from __future__ import annotations

import re

from gatekeep.read.line import PROBLEM, UNCERTAIN, SimpleCommand
from gatekeep.read.shellwords import Word, unquote

# Operators, brackets and substitution openers; a backslash-newline is a line continuation.
_OPERATORS = re.compile(r"\$\(|[<>]\(|\$\{|[;&|(){}`\n]")
_QUOTES = re.compile(r"['\"\\]")
_NOT_PIPES = re.compile(r"\|\||&&|\$\(|[<>]\(|\$\{|[;&(){}`\n]")
_FIRST_PIPELINE = 100_000
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\+?=")
_KEYWORDS = {
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "while",
    "until",
    "for",
    "in",
    "case",
    "esac",
    "select",
    "function",
    "coproc",
    "time",
    "!",
    "{",
    "}",
    "[[",
    "]]",
}



def candidate_commands(line: str) -> list:
    # what bash never runs as a command: the inside of arithmetic (`$(( rm -rf /x ))` is an error,
    # not a command), and whatever follows a quote that is never closed (the line is incomplete)
    text = _mask_arithmetic(_before_unclosed_quote(line.replace("\\\n", "")))
    code, texts = _code_and_text(text)
    seen: set[tuple[str, ...]] = set()
    commands = []
    words_of: dict[str, tuple[Word, ...]] = {}  # a piece's words, read once (most pieces come twice or more)

    def words(piece: str) -> tuple[Word, ...]:
        found = words_of.get(piece)
        if found is None:
            found = words_of[piece] = tuple(Word(w, False, None) for w in _argv(piece))
        return found

    sources = [(code, _pieces(code), PROBLEM)]
    sources += [(t, _pieces(t), UNCERTAIN) for t in texts]
    for _, pieces, problem in sources:
        for piece in pieces:
            argv = words(piece)
            if argv and argv not in seen:
                seen.add(argv)
                commands.append(SimpleCommand(argv, (), (), -1, 0, -1, (problem,)))
    # Pipelines again, with their positions, so that pipeline rules (`curl * | sh`) match too.
    # Their ids start high, away from those of the commands the parse tree did find.
    pipeline = _FIRST_PIPELINE
    for chunks, problem in [(_NOT_PIPES.split(code), PROBLEM), *((_NOT_PIPES.split(t), UNCERTAIN) for t in texts)]:
        for chunk in chunks:
            pipeline += 1
            segments = [words(s) for s in _PIPE.split(chunk)] if "|" in chunk else ()
            if len(segments) > 1 and all(segments):
                commands += [
                    SimpleCommand(argv, (), (), pipeline, position, -1, (problem,))
                    for position, argv in enumerate(segments)
                ]
    return commands


def _code_and_text(text: str) -> tuple[str, list[str]]:
    """`text` with what may be only text blanked (same length): heredoc bodies, comments, and
    quoted parts but for the substitutions in double quotes, which run; and those parts."""
    from gatekeep.read.crosscheck import body_substitutions, scan

    facts = scan(text)
    blank = bytearray(len(text))
    for start, end in facts.comments:
        blank[start:end] = b"\x01" * (end - start)
    for heredoc in facts.heredocs:  # data, but for the substitutions of an unquoted one, which run
        start, end = heredoc.body_start, heredoc.end
        blank[start:end] = b"\x01" * (end - start)
        for at, close in () if heredoc.quoted else body_substitutions(text, start, end):
            blank[at:close] = bytes(close - at)
    i, n = 0, len(text)
    while i < n:
        if blank[i]:
            i += 1
            continue
        c = text[i]
        if c == "\\":
            i += 2
        elif text.startswith("${", i):  # quotes inside do not keep bash from running a `$( )` there
            i = _expansion_end(text, i)
        elif c == "'":
            ansi = text[i - 1 : i] == "$"
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if ansi and text[j] == "\\" else 1
            blank[i : j + 1] = b"\x01" * (min(j + 1, n) - i)
            i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 2
                elif text.startswith(("$(", "`"), j):
                    blank[i:j] = b"\x01" * (j - i)
                    j = i = _expansion_end(text, j)
                    continue
                else:
                    j += 1
            blank[i : j + 1] = b"\x01" * (min(j + 1, n) - i)
            i = j + 1
        else:
            i += 1
    code = "".join(" " if blank[k] else ch for k, ch in enumerate(text))
    texts, k = [], 0
    while k < n:
        if blank[k]:
            start = k
            while k < n and blank[k]:
                k += 1
            texts.append(text[start:k])
        else:
            k += 1
    return code, texts


def _expansion_end(text: str, i: int) -> int:
    from gatekeep.read.shellwords import expansion_end

    return max(expansion_end(text, i), i + 1)


_PIPE = re.compile(r"(?<!\|)\|(?!\|)")


def _pieces(text: str) -> list[str]:
    pieces = _OPERATORS.split(text)
    return pieces + [p for piece in pieces for p in _QUOTES.split(piece)]


def _argv(piece: str) -> list[str]:
    words = [unquote(w).value for w in piece.split()]
    while words and (words[0] in _KEYWORDS or _ASSIGNMENT.match(words[0])):
        words.pop(0)
    return [w for w in words if w]


def _before_unclosed_quote(text: str) -> str:
    """The text up to a quote that is never closed (`echo "find . -delete`): bash reads the rest
    as the inside of a string, and, the line being incomplete, runs none of it."""
    if "<<" in text:
        return text  # a quote in a heredoc's body is text: keep every line for the deny rules
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;&|()"):  # a comment, to the end of its line
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in "'\"":
            quote = "'" if c == "'" and not text.startswith("$'", i - 1) else c
            j = i + 1
            while j < n and text[j] != quote:
                j += 2 if text[j] == "\\" and (quote == '"' or c == "'" and text.startswith("$'", i - 1)) else 1
            if j >= n:
                return text[:i]
            i = j + 1
        else:
            i += 1
    return text


def _mask_arithmetic(text: str) -> str:
    """`$(( … ))` and `(( … ))` with their insides blanked, but for the command substitutions
    there (`$(( a[$(cmd)] ))` runs cmd): bash evaluates the rest as arithmetic, not as commands.

    Every paren's partner is found in one pass first: looking for each `((`'s end anew took
    time quadratic in the line (`((` 4,000 times: 9 s)."""
    if "((" not in text:
        return text
    partner = _partners(text)
    out, i = [], 0
    at = text.find("((")
    while at >= 0:
        close = _arithmetic_end(text, at, partner)
        if close < 0:  # not arithmetic: the next `((` may start one (`(((`)
            at = text.find("((", at + 1)
            continue
        inside = text[at + 2 : close]
        kept = "".join(m.group(0) for m in _SUBSTITUTION.finditer(inside))
        out.append(text[i : at + 2] + " " + kept + " " + "))")
        i = close + 2
        at = text.find("((", i)
    out.append(text[i:])
    return "".join(out)


_SUBSTITUTION = re.compile(r"\$\([^()]*\)|`[^`]*`")


def _partners(text: str) -> dict[int, int]:
    """Each `(` that is closed: where its `)` is (parens counted as they stand, quotes or not)."""
    partner, open_at = {}, []
    for m in _PARENS.finditer(text):
        if m.group() == "(":
            open_at.append(m.start())
        elif open_at:
            partner[open_at.pop()] = m.start()
    return partner


_PARENS = re.compile(r"[()]")


def _arithmetic_end(text: str, start: int, partner: dict[int, int]) -> int:
    """Where the `))` that closes the `((` at `start` begins, or -1 if it does not close that way:
    the inner `(` closes just before the outer one."""
    close = partner.get(start + 1, -1)
    return close if close >= 0 and partner.get(start) == close + 1 else -1
