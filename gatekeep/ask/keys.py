"""Reading a deliberate key from a terminal: typing is never an answer.

A person who types ahead (the next command, while the line before is still
being vetted) has not read the question yet. Measured on the old prompt, typing
`cat README.md` and Enter at the question for `mkdir -p build` answered
"always" with its `a` and wrote `mkdir *` into the policy. So a key counts as an
answer only when it is pressed on purpose, which from the terminal's side looks
like this:

* input already waiting when the question appears was typed before it: it is
  set aside (read and dropped, never run, never an answer) and reported, and
  the person was typing: the next key needs the pause after typing;
* several bytes in one read (a paste, an arrow key's escape sequence, a burst
  of typing the program read at once) never answer;
* a key answers only alone: the terminal was quiet for QUIET_BEFORE seconds
  before it (since the question appeared), or AFTER_TYPING seconds when other
  keys came before, and stays quiet for QUIET_AFTER seconds after it;
* Ctrl-C and Ctrl-D end the question at once: they can only deny;
* keys that did not count are reported as soon as the typing stops, and those
  typed as the question ends (finish()), so nothing typed is lost without a word.

Typing is 5-10 keys a second; a key that stands alone for a second and a half
is a decision. The cost is a short pause before answering, which the question
states.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable

QUIET_BEFORE = 0.5  # seconds of quiet needed before an answer, counted from the question appearing
AFTER_TYPING = 1.0  # ... counted from the last key when keys came before it
QUIET_AFTER = 0.3  # seconds no other key may follow it
INTERRUPT, EOF = b"\x03", b"\x04"
DRAIN_BYTES = 65536  # the most read at once of what is waiting (before the question, after it)


class Ended(Exception):
    """The question ended without a key: `reason` is timeout | interrupt | eof | remote (then
    `given`: what the poll returned)."""

    def __init__(self, reason: str, given: object = None):
        super().__init__(reason)
        self.reason = reason
        self.given = given


class Keys:
    """Deliberate keys from terminal `fd` (in non-canonical mode) until `deadline` (time.monotonic()).

    `poll`, if given, is asked every `poll_seconds` for an answer given elsewhere;
    `report` is told, once the typing stops, what was typed and did not count.
    """

    def __init__(
        self,
        fd: int,
        deadline: float,
        report: Callable[[str], None],
        poll: Callable[[], object] | None = None,
        poll_seconds: float = 0.1,
    ):
        self.fd, self.deadline, self.report = fd, deadline, report
        self.poll, self.poll_seconds = poll, poll_seconds
        self.quiet_since = time.monotonic()
        self.quiet_needed = QUIET_BEFORE
        self.ignored = b""

    def set_aside(self) -> str:
        """Read and return what was typed before the question (it is not run and does not answer)."""
        taken = self._drain(b"")
        self.quiet_since = time.monotonic()
        if taken:  # the person was typing when the question appeared: the pause after typing applies
            self.quiet_needed = AFTER_TYPING
        return taken.decode("utf-8", "replace")

    def finish(self) -> str:
        """The question has ended: what was typed and not yet reported, and what is still waiting to
        be read (the terminal's restore would throw it away), for the caller to report."""
        rest, self.ignored = self._drain(self.ignored), b""
        return rest.decode("utf-8", "replace")

    def _drain(self, taken: bytes) -> bytes:
        """`taken` and what is waiting to be read now, up to DRAIN_BYTES: a flood cannot hold it."""
        with contextlib.suppress(OSError):
            while len(taken) < DRAIN_BYTES and self._wait_input(0):
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    break
                taken += chunk
        return taken

    def restart(self) -> None:
        """A new question is on screen (a confirmation): the quiet before an answer starts again."""
        self._report()
        self.quiet_since = time.monotonic()
        self.quiet_needed = QUIET_BEFORE

    def next(self, allowed: str | frozenset[str] | set[str]) -> str:
        """The next deliberate key in `allowed`; raises Ended when the question ends first."""
        while True:
            chunk = self._read()
            now = time.monotonic()
            alone = len(chunk) == 1 and now - self.quiet_since >= self.quiet_needed
            self.quiet_since = now
            key = chunk.decode("latin-1")
            if alone and key in allowed and not self._wait_input(QUIET_AFTER):
                return key
            self.ignored += chunk
            self.quiet_needed = AFTER_TYPING

    def typed(self) -> str:
        """The next key typed on its own (a person typing a word): a paste or a burst read at
        once does not count and is reported; raises Ended when the question ends first."""
        while True:
            chunk = self._read()
            self.quiet_since = time.monotonic()
            if len(chunk) == 1:
                return chunk.decode("latin-1")
            self.ignored += chunk

    def _read(self) -> bytes:
        """The next input, as what one read returned; reports typing once it stops.
        Ctrl-C and Ctrl-D anywhere in it end the question."""
        while True:
            if self.poll is not None and (given := self.poll()) is not None:
                raise Ended("remote", given)
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise Ended("timeout")
            wait = remaining if self.poll is None else min(remaining, self.poll_seconds)
            if self.ignored:
                wait = min(wait, max(0.0, self.quiet_since + QUIET_AFTER - time.monotonic()))
            if self._wait_input(wait):
                try:
                    data = os.read(self.fd, 4096)
                except OSError:  # EIO: the terminal has gone away (its window was closed)
                    raise Ended("eof") from None
                if not data or EOF in data or INTERRUPT in data:
                    # what came with the key is not lost without a word: finish() hands it over
                    self.ignored += data.replace(EOF, b"").replace(INTERRUPT, b"")
                    raise Ended("eof" if not data or EOF in data else "interrupt")
                return data
            if self.ignored and time.monotonic() - self.quiet_since >= QUIET_AFTER:
                self._report()

    def _wait_input(self, seconds: float) -> bool:
        return bool(select.select([self.fd], [], [], seconds)[0])

    def _report(self) -> None:
        if self.ignored:
            ignored, self.ignored = self.ignored, b""
            self.report(ignored.decode("utf-8", "replace"))
