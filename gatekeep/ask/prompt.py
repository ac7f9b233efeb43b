"""Prompt stage: ask the person at the terminal, with a deadline, failing closed.

gatekeep owns /dev/tty for the question: it shows the line with every control
character, escape, bidi override and zero-width character made visible (a line
longer than SHOWN_CHARS is shortened, and `v` shows it whole), the reason, the
command names, and the choices:

    o  run once        a  always (adds the suggested allow rules)
    d  deny            n  never  (adds the same patterns as deny rules)
    c  run it contained (offered when the caller can: gatekeep run --sandbox, judge/gate.py)

An answer must be given on purpose (keys.py): a key counts only when pressed on
its own, after a pause, and not followed at once by another; what was typed
before the question appeared is set aside and reported, and so is typing that
did not count. "always" and "never" write the policy, so they take a second
deliberate key, `y`, to confirm. Enter, space, upper case and arrow keys never
answer. No answer within the policy's timeout, end of file, Ctrl-C or Ctrl-D,
no terminal at all, a terminal that goes away, or SIGTERM/SIGHUP (the terminal's
mode is restored first): deny.

Prompts on one terminal never interleave: each takes a lock for its terminal
(named by the terminal device: terminal.terminal_name) first. Waiting for that lock is
bounded by LOCK_SECONDS, said on screen, and does not count against the time
the person has to answer.

With `confirm: word`, no single key approves: the person types a word of the
command (the last word of its name: `install` for `npm install x`) and Enter
to run it once; `d` or `n` and Enter deny, and anything else is asked again.
A paste never types the word. "always" is then given with `gatekeep rules add`.

With `approve: remote` or `both` (approvals.py), the question can also be
answered from another terminal: `remote` is published when the question is on
screen (its time to answer starts then) and polled while the prompt waits.
With `remote` alone the keys here can only deny (d, Ctrl-C, Ctrl-D): whatever
types into this terminal cannot approve.

With a reviewer (`review:` in the policy, review/reviewer.py), the question is on
screen at once and the reviewer runs beside it: the first of a deliberate answer
and a verdict of the reviewer's that decides the line wins, and the screen says
which. A person who answers first ends the reviewer.

Colour marks the question when the terminal has it (TERM is not dumb) and
NO_COLOR is unset or empty.
"""

from __future__ import annotations

import contextlib
import os
import signal
import termios
import threading
import time
import tty
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gatekeep.ask.keys import Ended, Keys
from gatekeep.core.display import visible
from gatekeep.judge.decide import LineVerdict

LOCK_SECONDS = 60
POLL_SECONDS = 0.1  # how often an answer from another terminal is looked for
SHOWN_CHARS = 400  # a longer line is shown shortened in the question; `v` shows it whole
CHOICES = {"o": "once", "a": "always", "d": "deny", "n": "never", "c": "contained"}
APPROVING = ("once", "always")
CONFIRM = "y"  # confirms always/never; b goes back to the question, other keys are typing
VIEW = "v"


@dataclass(frozen=True)
class Remote:
    """Where an answer from another terminal may come from: `poll()` returns it, or None.
    `shown(deadline)` is called when the question is on screen, with its deadline (time.time())."""

    short_id: str  # what to type: gatekeep approve SHORT_ID
    poll: Callable[[], str | None]
    here: bool  # may this terminal approve too (approve: both)?
    shown: Callable[[float], None] = lambda deadline: None


@dataclass(frozen=True)
class Reviewer:
    """A reviewer running beside the question: `poll()` returns its answer ("once" or "deny")
    and its reason once it has a verdict that decides the line, else None; `name` is shown."""

    name: str
    poll: Callable[[], tuple[str, str] | None]


@dataclass(frozen=True)
class Answer:
    """What the user answered at the prompt, or why there was no answer."""

    answer: str  # once | always | deny | never | contained | timeout | eof | interrupt | no-tty | busy
    timed_out: bool = False
    source: str = "tty"  # where the answer came from: tty | remote | reviewer
    note: str = ""  # the reviewer's reason, when it answered

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
    reviewer: Reviewer | None = None,
) -> Answer:
    """Ask on the terminal; `remote`, if given, is also polled for an answer from elsewhere, and
    `reviewer` for its verdict."""
    try:
        fd = os.open(tty_path, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return Answer("no-tty")
    try:
        with _terminal_lock(lock_path, lambda: _write(fd, _waiting_note())) as locked:
            if not locked:
                _write(fd, "gatekeep: another gatekeep question held this terminal too long; denied\n")
                return Answer("busy")
            return _question(fd, line, verdict, timeout, remote, confirm, reviewer)
    finally:
        os.close(fd)


def _waiting_note() -> str:
    return f"gatekeep: waiting for another question on this terminal to be answered (at most {LOCK_SECONDS} s)\n"


@contextlib.contextmanager
def _terminal_lock(lock_path: str | Path, waiting: Callable[[], None]):
    """Hold the terminal's lock; `waiting()` is called once if another question holds it now."""
    from filelock import FileLock, Timeout

    Path(lock_path).parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(lock_path)
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            waiting()
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


def shown_line(line: str) -> str:
    """The line as the question shows it: visible, and shortened past SHOWN_CHARS."""
    if len(line) <= SHOWN_CHARS:
        return visible(line)
    head, tail = line[: SHOWN_CHARS * 3 // 4], line[-SHOWN_CHARS // 5 :]
    return f"{visible(head)} [… {len(line):,} characters in all; {VIEW} shows the whole line …] {visible(tail)}"


def _colour() -> bool:
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM", "dumb") not in ("", "dumb")


def _paint(text: str, style: str, colour: bool) -> str:
    return f"\x1b[{style}m{text}\x1b[0m" if colour else text


def choices_text(verdict: LineVerdict, remote: Remote | None = None, colour: bool = False) -> str:
    """The line of choices, ending in the prompt."""
    here = remote is None or remote.here
    choices = [f"{_paint('[o]', '1', colour)} run once"] if here else []
    if verdict.suggestions and here:
        patterns = ", ".join(f"'{visible(s)}'" for s in verdict.suggestions)
        choices.append(f"{_paint('[a]', '1', colour)} always allow {patterns}")
    if verdict.contain and here:
        choices.append(f"{_paint('[c]', '1', colour)} run it contained")
    choices.append(f"{_paint('[d]', '1', colour)} deny")
    if verdict.suggestions and here:
        choices.append(f"{_paint('[n]', '1', colour)} never: deny them from now on")
    return "  " + "   ".join(choices) + " > "


def render(
    line: str,
    verdict: LineVerdict,
    timeout: int,
    remote: Remote | None = None,
    word: str = "",
    set_aside: str = "",
    colour: bool = False,
    reviewer: Reviewer | None = None,
) -> str:
    names = ", ".join(dict.fromkeys(c.normalized.name for c in verdict.commands if c.decision != "allow"))
    here = remote is None or remote.here
    lines = ["", _paint("gatekeep: this line needs your approval", "1;33", colour)]
    if set_aside:
        lines.append(f"  {set_aside_note(set_aside)}")
    lines += [f"  command: {shown_line(line)}", f"  reason:  {visible(verdict.reason)}"]
    if word and here:
        choices = [f"type '{visible(word)}' and Enter to run it once", "d and Enter: deny"]
        return "\n".join([*lines, "  " + "   ".join(choices), f"  (no answer in {timeout} s means deny) > "])
    if names:
        lines.append(f"  names:   {visible(names)}")
    if remote is not None:
        where = "or" if here else "only"
        lines.append(f"  {where} from another terminal: gatekeep approve {remote.short_id} (or gatekeep console)")
    if reviewer is not None:
        lines.append(f"  the reviewer ({visible(reviewer.name)}) is looking at it too: a sure verdict of its may answer")
    lines.append(f"  (press one key on its own, after a pause; no answer in {timeout} s means deny)")
    lines.append(choices_text(verdict, remote, colour))
    return "\n".join(lines)  # the terminal (OPOST) turns \n into \r\n


def set_aside_note(text: str) -> str:
    return f"set aside, not run: '{shown_line(text)}' (typed before this question; type it again afterwards)"


def unused_note(text: str) -> str:
    return f"not run, not an answer: '{shown_line(text)}' (typed as the question ended; type it again)"


def ignored_note(text: str) -> str:
    return f"not an answer: '{shown_line(text)}' (typing; press one key on its own, after a pause)"


def _question(
    fd: int,
    line: str,
    verdict: LineVerdict,
    timeout: int,
    remote: Remote | None = None,
    confirm: str = "key",
    reviewer: Reviewer | None = None,
) -> Answer:
    allowed = {"o", "d"} | ({"a", "n"} if verdict.suggestions else set()) | ({"c"} if verdict.contain else set())
    if remote is not None and not remote.here:
        allowed = {"d"}
    word = confirm_word(verdict) if confirm == "word" and "o" in allowed else ""
    colour = _colour()
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        return Answer("no-tty")
    previous = _on_kill(_interrupted)  # killed while asking: the terminal is restored (finally), the line denied
    try:
        mode = termios.tcgetattr(fd)
        mode[tty.LFLAG] &= ~(termios.ICANON | termios.ECHO | termios.ISIG)  # Ctrl-C arrives as a byte
        mode[tty.CC][termios.VMIN] = 1
        mode[tty.CC][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, mode)
        deadline = time.monotonic() + timeout
        prompt = "  > " if word else choices_text(verdict, remote, colour)
        keys = Keys(
            fd,
            deadline,
            report=lambda typed: _write(fd, f"\n  {ignored_note(typed)}\n{prompt}"),
            poll=_either(remote, reviewer),
            poll_seconds=POLL_SECONDS,
        )
        set_aside = keys.set_aside()
        _write(fd, render(line, verdict, timeout, remote, word, set_aside, colour, reviewer))
        if remote is not None:
            remote.shown(time.time() + timeout)
        try:
            if word:
                answer = _read_word(fd, keys, word)
            else:
                answer = _read_choice(fd, keys, line, verdict, allowed, prompt)
        except Ended as ended:
            answer = _ended(ended)
        _write(fd, f"{answer.answer}\n")
        if answer.source == "reviewer":
            _write(fd, f"  answered by the reviewer ({visible(reviewer.name)}): {visible(answer.note)}\n")
        if rest := keys.finish():
            _write(fd, f"  {unused_note(rest)}\n")
        return answer
    except KeyboardInterrupt:
        return Answer("interrupt")
    finally:
        with contextlib.suppress(termios.error, OSError):  # a terminal that has gone away has no mode
            termios.tcsetattr(fd, termios.TCSAFLUSH, saved)
        _on_kill(previous)


KILLS = (signal.SIGTERM, signal.SIGHUP)


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def _on_kill(handler) -> dict:
    """Set `handler` (or, given a dict, the handlers in it) for KILLS; returns the previous ones.
    Only the main thread may set handlers: elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    handlers = handler if isinstance(handler, dict) else dict.fromkeys(KILLS, handler)
    return {sig: signal.signal(sig, how) for sig, how in handlers.items() if how is not None}


def _either(remote: Remote | None, reviewer: Reviewer | None) -> Callable[[], tuple | None] | None:
    """One poll for an answer given elsewhere: (source, answer, note), from another terminal or the reviewer."""
    if remote is None and reviewer is None:
        return None

    def poll() -> tuple | None:
        if remote is not None and (given := remote.poll()) is not None:
            return "remote", given, ""
        if reviewer is not None and (given := reviewer.poll()) is not None:
            return "reviewer", *given
        return None

    return poll


def _ended(ended: Ended) -> Answer:
    if ended.reason == "remote":
        source, given, note = ended.given  # (_either's)
        return Answer(given or "deny", source=source, note=note)
    return Answer(ended.reason, timed_out=ended.reason == "timeout")


def _read_choice(fd: int, keys: Keys, line: str, verdict: LineVerdict, allowed: set[str], prompt: str) -> Answer:
    """A deliberate o/a/d/n/c; a/n (they write the policy) then need a deliberate `y`."""
    viewable = {VIEW} if len(line) > SHOWN_CHARS else set()
    while True:
        key = keys.next(allowed | viewable)
        if key == VIEW:
            _write(fd, f"{VIEW}\n  the whole line: {visible(line)}\n{prompt}")
            keys.restart()
            continue
        if key not in ("a", "n"):
            return Answer(CHOICES[key])
        what = "allow" if key == "a" else "deny"
        rules = ", ".join(f"'{visible(s)}'" for s in verdict.suggestions)
        _write(fd, f"{CHOICES[key]}\n  {what} {rules} from now on, in your policy? [{CONFIRM}] yes   [b] back > ")
        keys.restart()
        if keys.next({CONFIRM, "b"}) == CONFIRM:
            return Answer(CHOICES[key])
        _write(fd, f"back\n{prompt}")
        keys.restart()


def _read_word(fd: int, keys: Keys, word: str) -> Answer:
    """Read typed text up to Enter: `word` runs the line once, d/n/no/deny deny it; else ask again."""
    typed = ""
    while True:
        char = keys.typed()
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
        elif " " <= char <= "~":
            typed += char
            _write(fd, char)


def wait_remote(timeout: int, remote: Remote, reviewer: Reviewer | None = None) -> Answer:
    """No terminal to ask on: wait for an answer from another terminal (or the reviewer) only."""
    deadline = time.monotonic() + timeout
    remote.shown(time.time() + timeout)
    poll = _either(remote, reviewer)
    try:
        while (given := poll()) is None:
            if time.monotonic() >= deadline:
                return Answer("timeout", timed_out=True)
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        return Answer("interrupt")
    source, answer, note = given
    return Answer(answer, source=source, note=note)


def _write(fd: int, text: str) -> None:
    # a terminal that has gone away (EIO) cannot be written to; reading it fails too, which denies
    with contextlib.suppress(OSError):
        os.write(fd, text.encode("utf-8", "replace"))
