"""Attacks on the question and the approver console, on real pseudo-terminals: a person typing ahead,
a request swapped under the person's key, a question killed or cut off, consoles started around the
refusal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import termios
import threading
import time
import uuid

import pexpect
import pytest

from gatekeep.ask import keys, prompt
from gatekeep.core.paths import get_paths
from gatekeep.record import approvals
from tests.shells import PAUSE, press_answer
from tests.test_approvals import GATEKEEP, asker, last_record, policy, spawn, wait_for_requests
from tests.test_prompt import verdict

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def no_colour(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")


def ask(terminal, tmp_path, timeout: int = 10, **options) -> prompt.Answer:
    line = "npm install left-pad"
    return prompt.ask(line, verdict(line), timeout, tmp_path / "tty.lock", terminal.path, **options)


# -- a person typing ------------------------------------------------------------------------------


def test_typing_that_runs_across_the_question_needs_the_pause_after_typing(terminal, tmp_path):
    """`git pu` typed before the question, a hesitation, then `o` and the rest of `git push -u origin`:
    the person was typing, so the `o` needs the pause after typing (1 s), not the 0.5 s after a question."""
    os.write(terminal.master, b"git pu")
    terminal.press(b"o", b"rigin\r", first=keys.QUIET_BEFORE + 0.2, gap=keys.QUIET_AFTER + 0.15)
    assert ask(terminal, tmp_path, timeout=3).answer == "timeout"


@pytest.mark.parametrize("how", ["timeout", "remote"])
def test_typing_cut_off_by_the_end_of_the_question_is_reported(terminal, tmp_path, how):
    """Keys typed just before the question ends (time is up, or an answer came from elsewhere) are
    not run and are not an answer: they are reported, not dropped without a word."""
    ended_at = time.monotonic() + 2
    remote = None
    if how == "remote":
        remote = prompt.Remote("abcd1234", lambda: "deny" if time.monotonic() > ended_at else None, here=True)
    terminal.press(*(bytes([b]) for b in b"make test"), first=1.7, gap=0.06)  # runs past the end
    answer = ask(terminal, tmp_path, timeout=2 if how == "timeout" else 10, remote=remote)
    assert answer.answer in ("timeout", "deny")
    time.sleep(0.5)
    shown = terminal.output()
    assert "not run, not an answer: 'make" in shown, shown[-400:]


def test_keys_pressed_with_ctrl_c_are_reported(terminal, tmp_path):
    terminal.type(b"rm -rf build\x03", first=0.2)
    assert ask(terminal, tmp_path, timeout=5).answer == "interrupt"
    assert "not run, not an answer: 'rm -rf build'" in terminal.output()


# -- the terminal's state -------------------------------------------------------------------------

ASKER = """
import sys
from gatekeep.ask import prompt
from gatekeep.judge.gate import evaluate
from gatekeep.judge.policy import load_policy
from gatekeep.core.paths import get_paths
line = "npm install left-pad"
answer = prompt.ask(line, evaluate(line, load_policy(get_paths())), 30, sys.argv[2], sys.argv[1])
print(answer.answer, flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_question_killed_while_asking_leaves_the_terminal_as_it_was(tmp_path, sig):
    """A raw terminal (no echo, no Ctrl-C) left behind would be the shell's and its next commands'."""
    master, slave = os.openpty()
    try:
        before = termios.tcgetattr(slave)
        child = subprocess.Popen(
            [sys.executable, "-c", ASKER, os.ttyname(slave), str(tmp_path / "tty.lock")],
            stdout=subprocess.PIPE,
            text=True,
        )
        shown = b""
        while b"> " not in shown:
            shown += os.read(master, 65536)
        child.send_signal(sig)
        out = child.communicate(timeout=10)[0]
        assert termios.tcgetattr(slave)[3] == before[3], "local modes (ICANON, ECHO, ISIG) not restored"
        assert child.returncode != 0 or out.strip() in ("interrupt", "eof")
    finally:
        os.close(slave)
        os.close(master)


def test_a_terminal_that_goes_away_denies(tmp_path):
    """The terminal window is closed while the question waits (reads fail with EIO): deny, no traceback."""
    master, slave = os.openpty()
    path = os.ttyname(slave)
    os.close(slave)
    closer = threading.Thread(target=lambda: (time.sleep(0.5), os.read(master, 65536), os.close(master)))
    closer.start()
    answer = prompt.ask("npm install left-pad", verdict(), 10, tmp_path / "tty.lock", path)
    closer.join()
    assert answer.answer in ("eof", "no-tty") and not answer.approved


# -- the approver console -------------------------------------------------------------------------


def fake_request(tty: str, command: str, created: float | None = None) -> dict:
    """A request as an asker on terminal `tty` publishes it (this test process stands in for the asker)."""
    now = time.time()
    request = {
        "id": str(uuid.uuid4()),
        "command": command,
        "cwd": "/tmp",
        "tty": tty,
        "pid": os.getpid(),
        "user": "me",
        "reason": "asks",
        "names": [command.split()[0]],
        "suggestions": [],
        "created": now if created is None else created,
        "deadline": now + 60,
    }
    approvals.publish(get_paths(), request)
    return request


def test_a_key_meant_for_a_withdrawn_request_does_not_answer_the_next(tmp_path):
    """An agent queues two requests, a harmless one first; while the person reads it and reaches for
    `o`, the agent withdraws it (kills its asker): the key must not approve the request behind it."""
    policy("approve: remote\ntimeout: 60\n")
    watcher = spawn("watch")
    watcher.expect("waiting for requests")
    harmless = asker("npm install left-pad")
    watcher.expect("npm install left-pad")
    harmful = asker("npm install evil-pad")
    wait_for_requests(2)
    time.sleep(0.5)  # the person reads the first one...
    harmless.kill()
    harmless.wait()
    watcher.expect("npm install evil-pad")
    press_answer(watcher, "o")  # ...and presses the key meant for it
    watcher.expect("changed just before")
    time.sleep(1)
    assert harmful.poll() is None, "the key meant for the withdrawn request approved the next one"
    press_answer(watcher, "d")  # pressed again, now that the person has seen it: it counts
    assert harmful.wait(timeout=30) == 1
    watcher.close(force=True)


def test_a_request_from_the_consoles_own_terminal_does_not_block_the_others():
    """A request the console may not answer (asked on its own terminal) is listed, not a wall in front
    of the requests behind it until it expires."""
    policy("approve: remote\ntimeout: 60\n")
    watcher = spawn("watch")
    watcher.expect(r"gatekeep watch on (/dev/pts/\d+)")
    fake_request(watcher.match.group(1), "npm install blocker", created=time.time() - 10)
    check = asker("npm install behind")
    watcher.expect("npm install behind")
    watcher.expect(r"\[o/a/d/n\] >")
    press_answer(watcher, "o")
    assert check.wait(timeout=30) == 0
    assert last_record()["command"] == "npm install behind"
    watcher.close(force=True)


def test_watch_reading_dev_tty_still_knows_its_own_terminal():
    """watch given /dev/tty as its input (its name is the same in every terminal) must still see that a
    request was asked on the terminal it reads, and not answer it."""
    command = f"tty; read; exec {GATEKEEP[0]} -m gatekeep watch </dev/tty"
    watcher = pexpect.spawn("bash", ["-c", command], encoding="utf-8", timeout=30, env=dict(os.environ))
    watcher.expect(r"(/dev/pts/\d+)")
    fake_request(watcher.match.group(1), "npm install from-here")
    watcher.sendline("")
    watcher.expect("npm install from-here")
    watcher.expect("asked on this terminal")
    watcher.close(force=True)


def test_the_console_refuses_a_gated_terminal_even_when_detached_from_it():
    """`setsid gatekeep console` has no controlling terminal but still reads the gated shell's."""
    command = f'GATEKEEP_HOOK="bash 5.2 ps0 $$ x" setsid -w {GATEKEEP[0]} -m gatekeep console; echo "exit $?"'
    child = pexpect.spawn("bash", ["-c", command], encoding="utf-8", timeout=30, env=dict(os.environ))
    index = child.expect(["running on the terminal of the gated shell", "waiting for requests"])
    child.close(force=True)
    assert index == 0, "setsid got the console onto the gated shell's terminal"


@pytest.mark.parametrize("variable,name", [("TMUX", "tmux"), ("STY", "screen")])
def test_the_console_in_a_multiplexer_says_that_send_keys_can_reach_it(variable, name):
    """`tmux send-keys -t console o`, after a pause, answers from any program of the user's (measured:
    it approved `npm install evil`): the console says so, as it cannot tell who sends the keys."""
    env = {**os.environ, variable: "/tmp/tmux-0/default,1,0"}
    env.pop("GATEKEEP_HOOK", None)
    console = spawn("console", env=env)
    console.expect(f"inside {name}, any program that can run {name}'s send-keys can press keys here")
    console.expect("waiting for requests")
    console.close(force=True)


def test_pause_constant_is_what_the_tests_assume():
    assert PAUSE > keys.AFTER_TYPING
