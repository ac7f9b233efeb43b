"""The errors gatekeep reports to the user as one line and an exit code."""

from __future__ import annotations

# Exit codes, shared by every command. For `check`, anything but ALLOW blocks the line.
EXIT_ALLOW = 0
EXIT_BLOCKED = 1
EXIT_ERROR = 2  # usage, policy or internal error: gatekeep could not decide
EXIT_NAMES = 3  # `check --names-on-request`: ask again with the shell's names (judge/typos.py)
EXIT_CONTAIN = 4  # `check --can-contain`: run the line contained (`gatekeep run --sandbox`), not as typed


class FatalError(Exception):
    """An error the user can fix; its message is shown as it is."""


class PolicyError(FatalError):
    """A policy file that does not load, with where the problem is."""

    def __init__(self, path: object, message: str, line: int | None = None, key: str | None = None):
        self.path = path
        self.line = line
        self.key = key
        where = f"{path}"
        if line is not None:
            where += f", line {line}"
        if key is not None:
            where += f", key {key!r}"
        super().__init__(f"policy error in {where}: {message}")


class OutputClosed(Exception):
    """A BrokenPipeError from a command run by click, carried past click (which would exit 1) to main.py.

    Deliberately not an OSError: click catches those with errno EPIPE itself.
    """


class HandBack(BaseException):  # noqa: N818 - not an error: the line goes back to the process that asked
    """A check that would ask a question, in a warm checker's worker (gatekeep/server/), which has no
    terminal of its own: the process the shell started decides the line itself, and asks.

    A BaseException, like KeyboardInterrupt, so that no `except Exception` turns it into a block."""
