"""A conservative split of a line the parser could not read, for deny rules only.

When bashlex fails, times out, or hides part of the line, gatekeep still
applies deny rules to every command-like piece of the raw text. The split
errs towards finding too many commands: it cuts at every shell operator,
bracket and substitution opener even inside quotes, and a second pass also
cuts at quote characters and backslashes, so `bash -c 'rm -rf /'` yields `rm -rf /`. A piece
found here can only make the verdict stricter: these commands are never
allowed, they exist so a deny rule can match them.
"""

from __future__ import annotations

import re

from gatekeep.shellwords import Word, unquote

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

PROBLEM = "could not be parsed; found by a conservative scan of the raw text"


def candidate_commands(line: str) -> list:
    from gatekeep.parse import SimpleCommand  # parse imports this module

    text = line.replace("\\\n", "")
    seen: set[tuple[str, ...]] = set()
    commands = []
    for piece in _pieces(text):
        argv = _argv(piece)
        if argv and tuple(argv) not in seen:
            seen.add(tuple(argv))
            commands.append(SimpleCommand(tuple(Word(w) for w in argv), problems=(PROBLEM,)))
    # Pipelines again, with their positions, so that pipeline rules (`curl * | sh`) match too.
    # Their ids start high, away from those of the commands the parse tree did find.
    for pipeline, chunk in enumerate(_NOT_PIPES.split(text), start=_FIRST_PIPELINE):
        segments = [_argv(s) for s in re.split(r"(?<!\|)\|(?!\|)", chunk)]
        if len(segments) > 1 and all(segments):
            commands += [
                SimpleCommand(tuple(Word(w) for w in argv), (), (), pipeline, position, problems=(PROBLEM,))
                for position, argv in enumerate(segments)
            ]
    return commands


def _pieces(text: str) -> list[str]:
    pieces = _OPERATORS.split(text)
    return pieces + [p for piece in pieces for p in _QUOTES.split(piece)]


def _argv(piece: str) -> list[str]:
    words = [unquote(w).value for w in piece.split()]
    while words and (words[0] in _KEYWORDS or _ASSIGNMENT.match(words[0])):
        words.pop(0)
    return [w for w in words if w]
