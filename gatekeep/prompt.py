"""Prompt stage: ask the person at the terminal, with a deadline, failing closed.

gatekeep owns /dev/tty for the question: it shows the line with every control
character, escape, bidi override and zero-width character made visible, the
reason, the command names, and the choices. One keypress answers:

    o  run once        a  always (adds the suggested allow rules)
    d  deny            n  never  (adds the same patterns as deny rules)

Enter, y, space, upper case, escape sequences (arrow keys) and anything else
are ignored, so an accidental keypress cannot approve. Input typed before the question appears is discarded. No answer
within the policy's timeout, end of file, Ctrl-C or Ctrl-D, or no terminal at
all: deny.

Prompts on one terminal never interleave: each takes a lock for its terminal
first. Waiting for that lock is bounded by LOCK_SECONDS and does not count
against the time the person has to answer.

With `confirm: word`, no single key approves: the person types a word of the
command (the last word of its name: `install` for `npm install x`) and Enter
to run it once; `d` or `n` and Enter deny, and anything else is asked again.
"always" is then given with `gatekeep rules add`.

With `approve: remote` or `both` (approvals.py), the question can also be
answered from another terminal: `remote` is polled while the prompt waits.
With `remote` alone the keys here can only deny (d, Ctrl-C, Ctrl-D): whatever
types into this terminal cannot approve.
"""

from __future__ import annotations

import contextlib
import os
import select
import termios
import time
import tty
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gatekeep.decide import LineVerdict
from gatekeep.display import visible

LOCK_SECONDS = 60
POLL_SECONDS = 0.1  # how often an answer from another terminal is looked for
CHOICES = {"o": "once", "a": "always", "d": "deny", "n": "never"}
APPROVING = ("once", "always")


@dataclass(frozen=True)
class Remote:
    """Where an answer from another terminal may come from: `poll()` returns it, or None."""

    short_id: str  # what to type: gatekeep approve SHORT_ID
    poll: Callable[[], str | None]
    here: bool  # may this terminal approve too (approve: both)?


@dataclass(frozen=True)
class Answer:
    """What the user answered at the prompt, or why there was no answer."""

    answer: str  # once | always | deny | never | timeout | eof | interrupt | no-tty | busy
    timed_out: bool = False
    source: str = "tty"  # where the answer came from: tty | remote

    @property
    def approved(self) -> bool:
        return self.answer in APPROVING


def ask(
    line: str,
    verdict: LineVerdict,
    timeout: int,
    lock_path: str | Path,
    tty_path: str = "/dev/tty",
    remote: Remote | None = None,
    confirm: str = "key",
) -> Answer:
    """Ask on the terminal; `remote`, if given, is also polled for an answer from elsewhere."""
    try:
        fd = os.open(tty_path, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return Answer("no-tty")
    try:
        with _terminal_lock(lock_path) as locked:
            if not locked:
                _write(fd, "gatekeep: another gatekeep prompt holds this terminal; denied\n")
                return Answer("busy")
            return _question(fd, line, verdict, timeout, remote, confirm)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _terminal_lock(lock_path: str | Path):
    from filelock import FileLock, Timeout

    Path(lock_path).parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(lock_path)
    try:
        lock.acquire(timeout=LOCK_SECONDS)
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def confirm_word(verdict: LineVerdict) -> str:
    """The word to type under `confirm: word`: the last word of the first asked command's name."""
    asked = [c for c in verdict.commands if c.decision != "allow"] or list(verdict.commands)
    name = asked[0].normalized.name if asked else ""
    return (name or "yes").split()[-1].rsplit("/", 1)[-1] or "yes"


def render(line: str, verdict: LineVerdict, timeout: int, remote: Remote | None = None, word: str = "") -> str:
    names = ", ".join(dict.fromkeys(c.normalized.name for c in verdict.commands if c.decision != "allow"))
    here = remote is None or remote.here
    if word and here:
        choices = [f"type '{visible(word)}' and Enter to run it once", "d and Enter: deny"]
        lines = ["", "gatekeep: this line needs your approval", f"  command: {visible(line)}"]
        lines += [f"  reason:  {visible(verdict.reason)}", "  " + "   ".join(choices)]
        return "\n".join([*lines, f"  (no answer in {timeout} s means deny) > "])
    choices = ["[o] run once"] if here else []
    if verdict.suggestions and here:
        patterns = ", ".join(f"'{visible(s)}'" for s in verdict.suggestions)
        choices.append(f"[a] always allow {patterns}")
    choices.append("[d] deny")
    if verdict.suggestions and here:
        choices.append("[n] never: deny them from now on")
    lines = [
        "",
        "gatekeep: this line needs your approval",
        f"  command: {visible(line)}",
        f"  reason:  {visible(verdict.reason)}",
    ]
    if names:
        lines.append(f"  names:   {visible(names)}")
    if remote is not None:
        where = "or" if here else "only"
        lines.append(f"  {where} from another terminal: gatekeep approve {remote.short_id} (or gatekeep watch)")
    lines += ["  " + "   ".join(choices), f"  (no answer in {timeout} s means deny) > "]
    return "\n".join(lines)  # the terminal (OPOST) turns \n into \r\n


def _question(
    fd: int, line: str, verdict: LineVerdict, timeout: int, remote: Remote | None = None, confirm: str = "key"
) -> Answer:
    allowed = {"o", "d"} | ({"a", "n"} if verdict.suggestions else set())
    if remote is not None and not remote.here:
        allowed = {"d"}
    word = confirm_word(verdict) if confirm == "word" and "o" in allowed else ""
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        return Answer("no-tty")
    try:
        mode = termios.tcgetattr(fd)
        mode[tty.LFLAG] &= ~(termios.ICANON | termios.ECHO | termios.ISIG)  # Ctrl-C arrives as a byte
        mode[tty.CC][termios.VMIN] = 1
        mode[tty.CC][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, mode)
        termios.tcflush(fd, termios.TCIFLUSH)  # discard anything typed ahead of the question
        _write(fd, render(line, verdict, timeout, remote, word))
        deadline = time.monotonic() + timeout
        answer = _read_word(fd, word, deadline, remote) if word else _read_choice(fd, allowed, deadline, remote)
        _write(fd, f"{answer.answer}\n")
        return answer
    except KeyboardInterrupt:
        return Answer("interrupt")
    finally:
        termios.tcsetattr(fd, termios.TCSAFLUSH, saved)


def _read_choice(fd: int, allowed: set[str], deadline: float, remote: Remote | None = None) -> Answer:
    key = _next_key(fd, allowed, deadline, remote)
    return key if isinstance(key, Answer) else Answer(CHOICES[key])


def _next_key(fd: int, allowed, deadline: float, remote: Remote | None) -> str | Answer:
    """The next key in `allowed`, or the Answer that ends the question first (timeout, Ctrl-C,
    Ctrl-D, an answer from another terminal); other keys and escape sequences are skipped."""
    while True:
        if remote is not None and (given := remote.poll()) is not None:
            return Answer(given, source="remote")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return Answer("timeout", timed_out=True)
        ready, _, _ = select.select([fd], [], [], remaining if remote is None else min(remaining, POLL_SECONDS))
        if not ready:
            continue
        data = os.read(fd, 1)
        if not data or data == b"\x04":
            return Answer("eof")
        if data == b"\x03":
            return Answer("interrupt")
        if data == b"\x1b":  # an escape sequence (arrow keys...): its letters are not answers
            _skip_escape_sequence(fd)
            continue
        key = data.decode("latin-1")
        if key in allowed:
            return key


def _read_word(fd: int, word: str, deadline: float, remote: Remote | None) -> Answer:
    """Read typed text up to Enter: `word` runs the line once, d/n/no/deny deny it; else ask again."""
    typed = ""
    while True:
        char = _next_key(fd, _TYPABLE, deadline, remote)
        if isinstance(char, Answer):
            return char
        if char in ("\r", "\n"):
            if typed == word:
                return Answer("once")
            if typed.lower() in ("d", "n", "no", "deny"):
                return Answer("deny")
            typed = ""
            _write(fd, f"\n  type '{visible(word)}' and Enter to run it, or d and Enter to deny > ")
        elif char in ("\x7f", "\b"):
            if typed:
                typed = typed[:-1]
                _write(fd, "\b \b")
        else:
            typed += char
            _write(fd, visible(char))


_TYPABLE = frozenset(chr(c) for c in range(0x20, 0x7F)) | {"\r", "\n", "\x7f", "\b"}


def wait_remote(timeout: int, remote: Remote) -> Answer:
    """No terminal to ask on: wait for an answer from another terminal only."""
    deadline = time.monotonic() + timeout
    try:
        while (given := remote.poll()) is None:
            if time.monotonic() >= deadline:
                return Answer("timeout", timed_out=True)
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        return Answer("interrupt")
    return Answer(given, source="remote")


def _skip_escape_sequence(fd: int) -> None:
    """Consume the rest of ESC [ params final, ESC O x, or ESC x."""

    def next_byte() -> bytes:
        return os.read(fd, 1) if select.select([fd], [], [], 0.05)[0] else b""

    kind = next_byte()
    if kind == b"O":
        next_byte()
    elif kind == b"[":
        while (byte := next_byte()) and not 0x40 <= byte[0] <= 0x7E:
            pass


def _write(fd: int, text: str) -> None:
    os.write(fd, text.encode("utf-8", "replace"))
