"""The terminal prompt, on a real pseudo-terminal: keys, deadline, type-ahead and the per-terminal lock."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time

import pexpect
import pytest

from gatekeep import prompt
from gatekeep.gate import evaluate
from tests.conftest import policy_from

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def terminal():
    master, slave = os.openpty()
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


def verdict(line: str = "npm install left-pad"):
    return evaluate(line, policy_from(""))


def type_later(master: int, keys: bytes, delay: float = 0.3) -> threading.Thread:
    def send():
        time.sleep(delay)
        os.write(master, keys)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    "keys,answer",
    [
        (b"o", "once"),
        (b"a", "always"),
        (b"d", "deny"),
        (b"n", "never"),
        (b"\r\ny O\x1b[Ad", "deny"),  # Enter, y, space, upper case and arrow keys never answer
        (b"\x1bOA\x1b[1;5Dd", "deny"),
        (b"\x03", "interrupt"),
        (b"\x04", "eof"),
    ],
)
def test_keys(terminal, tmp_path, keys, answer):
    master, tty_path = terminal
    type_later(master, keys)
    result = prompt.ask("npm install left-pad", verdict(), 10, tmp_path / "tty.lock", tty_path)
    assert result == prompt.Answer(answer)
    assert result.approved is (answer in ("once", "always"))


def test_no_answer_in_time_denies(terminal, tmp_path):
    master, tty_path = terminal
    started = time.monotonic()
    result = prompt.ask("npm install", verdict(), 1, tmp_path / "tty.lock", tty_path)
    assert result == prompt.Answer("timeout", timed_out=True)
    assert time.monotonic() - started >= 1


def test_keys_typed_before_the_question_are_discarded(terminal, tmp_path):
    master, tty_path = terminal
    os.write(master, b"o")
    assert prompt.ask("npm install", verdict(), 1, tmp_path / "tty.lock", tty_path).answer == "timeout"


def test_always_and_never_are_offered_only_with_a_suggestion(terminal, tmp_path):
    master, tty_path = terminal
    type_later(master, b"ad")
    assert prompt.ask("$X run", verdict("$X run"), 10, tmp_path / "tty.lock", tty_path).answer == "deny"


def test_no_terminal_denies(tmp_path):
    assert prompt.ask("ls", verdict(), 1, tmp_path / "tty.lock", str(tmp_path / "no-such-tty")).answer == "no-tty"


def test_the_question_shows_everything_visibly():
    text = prompt.render("rm x\x1b[2K\u202eevil\u200b", verdict("rm x"), 300)
    assert "\x1b" not in text and "\u202e" not in text and "\u200b" not in text
    assert "rm x\\e[2K\\u{202e}evil\\u{200b}" in text
    assert "[o] run once" in text and "[a] always allow 'rm x'" in text and "300 s" in text


def hold_lock(path, seconds: float) -> subprocess.Popen:
    """Another process holds the terminal's lock for `seconds`."""
    code = (
        f"import time, filelock; lock = filelock.FileLock({str(path)!r}); lock.acquire();"
        f" print('held', flush=True); time.sleep({seconds})"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_busy_terminal_denies_after_the_bounded_wait(terminal, tmp_path, monkeypatch):
    master, tty_path = terminal
    monkeypatch.setattr(prompt, "LOCK_SECONDS", 0.3)
    holder = hold_lock(tmp_path / "tty.lock", 5)
    try:
        assert prompt.ask("ls", verdict(), 10, tmp_path / "tty.lock", tty_path).answer == "busy"
    finally:
        holder.kill()


def test_waiting_for_the_lock_does_not_eat_the_answer_time(terminal, tmp_path):
    master, tty_path = terminal
    holder = hold_lock(tmp_path / "tty.lock", 1.0)
    type_later(master, b"o", delay=1.6)  # later than 1 s after the start, within 1 s of getting the lock
    assert prompt.ask("ls", verdict(), 1, tmp_path / "tty.lock", tty_path).answer == "once"
    holder.wait()


def test_two_prompts_on_one_terminal_take_turns(tmp_path):
    command = f"{sys.executable} -m gatekeep check --json -- "
    script = f"{command}'touch first' </dev/tty & {command}'touch second' </dev/tty; wait"
    child = pexpect.spawn("bash", ["-c", script], encoding="utf-8", timeout=30, env=dict(os.environ))
    child.logfile_read = log = io.StringIO()
    child.expect_exact("means deny) > ")
    first = child.before
    child.send("d")
    child.expect_exact("means deny) > ")
    between = child.before
    child.send("o")
    child.expect(pexpect.EOF)
    assert first.count("this line needs your approval") == 1
    assert between.count("this line needs your approval") == 1
    assert between.index("deny") < between.index("this line needs your approval")  # the first answer came first
    outcomes = sorted(part[:7] for part in log.getvalue().split('"outcome": ')[1:])
    assert outcomes == ['"allow"', '"deny"}']


@pytest.mark.parametrize(
    "keys,answer",
    [
        (b"install\r", "once"),  # the last word of the name `npm install`
        (b"o", "timeout"),  # no single key approves
        (b"y\r\ryes\rinstal\r", "timeout"),  # nor a wrong word, nor Enter
        (b"instalx\x7fl\r", "once"),  # backspace works
        (b"INSTALL\rd\r", "deny"),
        (b"no\r", "deny"),
        (b"insta\x03", "interrupt"),
    ],
)
def test_confirm_word_takes_the_word_and_enter(terminal, tmp_path, keys, answer):
    master, tty_path = terminal
    type_later(master, keys)
    result = prompt.ask("npm install left-pad", verdict(), 2, tmp_path / "tty.lock", tty_path, confirm="word")
    assert result.answer == answer


def test_confirm_word_shows_the_word_to_type():
    text = prompt.render("npm install left-pad", verdict(), 30, word=prompt.confirm_word(verdict()))
    assert "type 'install' and Enter to run it once" in text and "[o]" not in text
