"""The terminal prompt, on a real pseudo-terminal: keys, deadline, type-ahead and the per-terminal lock."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time

import pexpect
import pytest

from gatekeep.ask import keys, prompt
from gatekeep.core.display import visible
from gatekeep.judge.gate import evaluate
from tests.conftest import policy_from
from tests.shells import PAUSE, QUESTION, press_answer

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def no_colour(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")


def verdict(line: str = "npm install left-pad"):
    return evaluate(line, policy_from("posture: strict\n"))  # a line that asks, wherever the test runs


def ask(terminal, tmp_path, line: str = "npm install left-pad", timeout: int = 10, **options) -> prompt.Answer:
    return prompt.ask(line, verdict(line), timeout, tmp_path / "tty.lock", terminal.path, **options)


@pytest.mark.parametrize(
    "presses,answer",
    [
        ((b"o",), "once"),
        ((b"d",), "deny"),
        ((b"a", b"y"), "always"),  # always and never write the policy: a second deliberate key confirms
        ((b"n", b"y"), "never"),
        ((b"a", b"b", b"d"), "deny"),  # b goes back to the question
        ((b"\r", b"\n", b"y", b" ", b"O", b"\x1b", b"\x1b[A", b"d"), "deny"),  # Enter, y, space, upper case...
        ((b"\x1bOA", b"\x1b[1;5D", b"d"), "deny"),  # ...and arrow keys never answer
        ((b"\x03",), "interrupt"),
        ((b"\x04",), "eof"),
    ],
)
def test_keys_pressed_on_purpose_answer(terminal, tmp_path, presses, answer):
    terminal.press(*presses)
    result = ask(terminal, tmp_path)
    assert result == prompt.Answer(answer)
    assert result.approved is (answer in ("once", "always"))


def test_no_answer_in_time_denies(terminal, tmp_path):
    started = time.monotonic()
    result = ask(terminal, tmp_path, timeout=1)
    assert result == prompt.Answer("timeout", timed_out=True)
    assert time.monotonic() - started >= 1


def test_keys_typed_before_the_question_are_set_aside_and_reported(terminal, tmp_path):
    os.write(terminal.master, b"o")
    os.write(terminal.master, b"cat README.md\r")
    assert ask(terminal, tmp_path, timeout=2).answer == "timeout"
    assert "set aside, not run: 'ocat README.md\\n' (typed before this question" in terminal.output()  # ICRNL


@pytest.mark.parametrize(
    "typing",
    [
        b"cat README.md\r",  # the case: its `a` wrote `mkdir *` into the policy
        b"jobs\r",  # its `o` ran the line once
        b"cd ..\r",  # its `d` denied
        b"a",  # a key too soon after the question appeared
    ],
)
def test_typing_never_answers_and_is_reported(terminal, tmp_path, typing):
    terminal.type(typing, first=0.1)
    assert ask(terminal, tmp_path, timeout=3).answer == "timeout"
    shown = terminal.output()
    typed = visible(typing.decode().replace("\r", "\n"))  # as the terminal hands it over (ICRNL)
    assert f"not an answer: '{typed}' (typing; press one key on its own" in shown
    assert "always allow" in shown.split("not an answer")[1]  # the choices are shown again


def test_a_paste_never_answers(terminal, tmp_path):
    terminal.press(b"oooo", b"o\r", b"dd")  # bursts that arrive in one read
    assert ask(terminal, tmp_path, timeout=3).answer == "timeout"


def test_a_key_followed_at_once_by_another_does_not_answer(terminal, tmp_path):
    terminal.press(b"o", b"x", gap=0.1)
    terminal.press(b"d", first=2 * PAUSE + 0.1)
    assert ask(terminal, tmp_path).answer == "deny"


def test_after_typing_a_longer_pause_is_needed(terminal, tmp_path):
    terminal.press(b"x", b"o", first=PAUSE, gap=keys.QUIET_BEFORE + 0.1)  # paused, but not as long as after typing
    assert ask(terminal, tmp_path, timeout=3).answer == "timeout"


def test_always_and_never_are_offered_only_with_a_suggestion(terminal, tmp_path):
    terminal.press(b"a", b"n", b"d")
    assert ask(terminal, tmp_path, "$X run").answer == "deny"


def test_no_terminal_denies(tmp_path):
    assert prompt.ask("ls", verdict(), 1, tmp_path / "tty.lock", str(tmp_path / "no-such-tty")).answer == "no-tty"


def test_the_question_shows_everything_visibly():
    text = prompt.render("rm x\x1b[2K\u202eevil\u200b", verdict("rm x"), 300)
    assert "\x1b" not in text and "\u202e" not in text and "\u200b" not in text
    assert "rm x\\e[2K\\u{202e}evil\\u{200b}" in text
    assert "[o] run once" in text and "[a] always allow 'rm x'" in text and "300 s" in text


def test_a_long_line_is_shortened_and_v_shows_it_whole(terminal, tmp_path):
    line = "echo " + "x" * 100_000 + " END"
    terminal.press(b"v", b"d")
    assert prompt.ask(line, verdict("npm install x"), 10, tmp_path / "tty.lock", terminal.path).answer == "deny"
    question, whole = terminal.output().split("the whole line: ")
    assert "100,009 characters in all; v shows the whole line" in question and " END" in question
    assert len(question) < 2_000
    assert whole.startswith(line) and whole.count("x") >= 100_000


def test_colour_marks_the_question_unless_the_terminal_or_the_user_says_no(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert prompt._colour() and "\x1b[1;33m" in prompt.render("rm x", verdict("rm x"), 300, colour=True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not prompt._colour()
    monkeypatch.setenv("NO_COLOR", "")
    monkeypatch.setenv("TERM", "dumb")
    assert not prompt._colour()
    assert "\x1b" not in prompt.render("rm x", verdict("rm x"), 300, colour=False)


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
    monkeypatch.setattr(prompt, "LOCK_SECONDS", 0.3)
    holder = hold_lock(tmp_path / "tty.lock", 5)
    try:
        assert ask(terminal, tmp_path, "ls").answer == "busy"
    finally:
        holder.kill()
    shown = terminal.output()
    assert "waiting for another question on this terminal to be answered (at most 0.3 s)" in shown
    assert "held this terminal too long; denied" in shown


def test_waiting_for_the_lock_does_not_eat_the_answer_time(terminal, tmp_path):
    holder = hold_lock(tmp_path / "tty.lock", 1.0)
    # later than 2 s after the start, within 2 s of getting the lock
    terminal.press(b"o", first=1.0 + PAUSE + 0.4, on_question=False)
    assert ask(terminal, tmp_path, timeout=2).answer == "once"
    holder.wait()


def test_two_prompts_on_one_terminal_take_turns(tmp_path):
    command = f"{sys.executable} -m gatekeep check --json -- "
    script = f"{command}'npm install first' </dev/tty & {command}'npm install second' </dev/tty; wait"
    child = pexpect.spawn("bash", ["-c", script], encoding="utf-8", timeout=30, env=dict(os.environ))
    child.logfile_read = log = io.StringIO()
    child.expect_exact(QUESTION)
    first = child.before
    press_answer(child, "d")
    child.expect_exact(QUESTION)
    between = child.before
    press_answer(child, "o")
    child.expect(pexpect.EOF)
    assert first.count("this line needs your approval") == 1
    assert between.count("this line needs your approval") == 1
    assert between.index("deny") < between.index("this line needs your approval")  # the first answer came first
    outcomes = sorted(part[:7] for part in log.getvalue().split('"outcome": ')[1:])
    assert outcomes == ['"allow"', '"deny"}']


@pytest.mark.parametrize(
    "typed,answer",
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
def test_confirm_word_takes_the_word_and_enter(terminal, tmp_path, typed, answer):
    terminal.type(typed)
    assert ask(terminal, tmp_path, timeout=3, confirm="word").answer == answer


def test_confirm_word_is_not_typed_by_a_paste(terminal, tmp_path):
    terminal.press(b"install\r", first=0.5)
    assert ask(terminal, tmp_path, timeout=2, confirm="word").answer == "timeout"
    assert "not an answer: 'install\\n'" in terminal.output()


def test_confirm_word_shows_the_word_to_type():
    text = prompt.render("npm install left-pad", verdict(), 30, word=prompt.confirm_word(verdict()))
    assert "type 'install' and Enter to run it once" in text and "[o]" not in text


def test_the_record_names_the_real_terminal_when_every_stream_is_dev_tty(tmp_path):
    """The hooks hand check /dev/tty, whose name is the same in every terminal: the lock, `pending`
    and the audit must name the terminal itself, or two windows would share one lock."""
    from gatekeep.core.paths import get_paths
    from gatekeep.record import audit

    command = f"{sys.executable} -m gatekeep check --quiet -- ls </dev/tty >/dev/tty 2>/dev/tty; tty"
    child = pexpect.spawn("bash", ["-c", command], encoding="utf-8", timeout=30, env=dict(os.environ))
    child.expect(r"(/dev/pts/\d+)")
    terminal = child.match.group(1)
    child.expect(pexpect.EOF)
    assert audit.read_last(get_paths().audit_log, 1)[0]["tty"] == terminal


def test_a_stream_from_another_terminal_does_not_name_the_terminal_asked_on(terminal):
    """The question opens /dev/tty: check <&- </dev/pts/K asks on its own terminal, so it must
    lock and record that one, not pts/K (it could take another terminal's lock)."""
    from gatekeep.core.paths import get_paths
    from gatekeep.record import audit

    command = f"{sys.executable} -m gatekeep check --quiet -- ls <{terminal.path}; tty"
    child = pexpect.spawn("bash", ["-c", command], encoding="utf-8", timeout=30, env=dict(os.environ))
    child.expect(r"(/dev/pts/\d+)")
    own = child.match.group(1)
    child.expect(pexpect.EOF)
    assert own != terminal.path
    assert audit.read_last(get_paths().audit_log, 1)[0]["tty"] == own
