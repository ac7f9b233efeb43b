"""Approval from another terminal: real `gatekeep check` processes waiting, answered by real `gatekeep approve`,
`deny` and `watch` processes (pseudo-terminals where a terminal matters)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pexpect
import pytest

from gatekeep.core.paths import get_paths
from gatekeep.record import approvals, audit
from tests.conftest import write
from tests.shells import press_answer

pytestmark = pytest.mark.timeout(120)
GATEKEEP = [sys.executable, "-m", "gatekeep"]
LINE = "npm install left-pad"  # asks under the built-in policy


def gatekeep(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*GATEKEEP, *argv], capture_output=True, text=True, timeout=60, **kwargs)


def policy(text: str) -> None:
    write(get_paths().user_policy, text)


def asker(line: str = LINE) -> subprocess.Popen:
    """A `gatekeep check` with no terminal: under approve: remote it waits for another terminal."""
    return subprocess.Popen(
        [*GATEKEEP, "check", "--", line], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def wait_for_requests(count: int = 1) -> list[dict]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        requests = json.loads(gatekeep("pending", "--json").stdout)
        if len(requests) >= count:
            return requests
        time.sleep(0.1)
    raise AssertionError("no request was published")


def last_record() -> dict:
    return audit.read_last(get_paths().audit_log, 1)[0]


@pytest.mark.parametrize(
    "argv,code,answer",
    [
        (["approve"], 0, "once"),
        (["deny"], 1, "deny"),
        (["approve", "--always"], 0, "always"),
        (["deny", "--never"], 1, "never"),
    ],
)
def test_a_waiting_check_is_answered_from_another_process(argv, code, answer):
    policy("approve: remote\ntimeout: 60\n")
    check = asker()
    (request,) = wait_for_requests()
    assert request["command"] == LINE and request["suggestions"] == ["npm install *"]
    result = gatekeep(*argv, request["id"][:8])
    assert result.returncode == 0, result.stderr
    assert check.wait(timeout=30) == code
    record = last_record()
    assert (record["id"], record["answer"], record["answered_from"]) == (request["id"], answer, "remote")
    assert json.loads(gatekeep("pending", "--json").stdout) == []  # withdrawn
    rules = json.loads(gatekeep("rules", "list", "--json").stdout)["rules"]
    saved = {(r["verdict"], r["pattern"]) for r in rules if r["layer"] == "user"}
    assert saved == {"always": {("allow", "npm install *")}, "never": {("deny", "npm install *")}}.get(answer, set())


def test_an_answer_counts_once_and_a_late_one_is_refused():
    policy("approve: remote\n")
    check = asker()
    (request,) = wait_for_requests()
    assert gatekeep("deny", request["id"]).returncode == 0
    assert check.wait(timeout=30) == 1
    late = gatekeep("approve", request["id"])
    assert late.returncode == 2
    assert "no open request" in late.stderr
    assert last_record()["outcome"] == "deny"


@pytest.mark.parametrize("given,message", [("0000", "no open request"), ("ab", "at least 4 characters")])
def test_unknown_or_too_short_ids_are_refused(given, message):
    result = gatekeep("approve", given)
    assert result.returncode == 2 and message in result.stderr


def test_two_asks_get_distinct_ids_and_both_can_be_answered():
    policy("approve: remote\n")
    first, second = asker("npm install a"), asker("npm install b")
    requests = wait_for_requests(2)
    assert len({r["id"] for r in requests}) == 2
    by_line = {r["command"]: r["id"] for r in requests}
    assert gatekeep("approve", by_line["npm install a"]).returncode == 0
    assert gatekeep("deny", by_line["npm install b"]).returncode == 0
    assert (first.wait(timeout=30), second.wait(timeout=30)) == (0, 1)


def test_no_answer_in_time_denies_and_is_audited():
    policy("approve: remote\ntimeout: 1\n")
    check = asker()
    assert check.wait(timeout=30) == 1
    record = last_record()
    assert (record["answer"], record["timed_out"], record["outcome"]) == ("timeout", True, "deny")
    assert json.loads(gatekeep("pending", "--json").stdout) == []


def test_a_request_whose_asker_died_disappears_and_is_audited():
    policy("approve: remote\n")
    check = asker()
    (request,) = wait_for_requests()
    check.send_signal(signal.SIGKILL)
    check.wait(timeout=30)
    assert json.loads(gatekeep("pending", "--json").stdout) == []
    record = last_record()
    assert (record["id"], record["answer"], record["outcome"]) == (request["id"], "asker-gone", "deny")
    assert gatekeep("approve", request["id"]).returncode == 2


def spawn_check(line: str = LINE) -> pexpect.spawn:
    """`gatekeep check` on a real pseudo-terminal, as the hook runs it."""
    return pexpect.spawn(
        GATEKEEP[0], [*GATEKEEP[1:], "check", "--", line], encoding="utf-8", timeout=30, env=dict(os.environ)
    )


def test_with_approve_remote_the_terminal_itself_cannot_approve():
    policy("approve: remote\n")
    child = spawn_check()
    child.expect("only from another terminal: gatekeep approve ([0-9a-f]{8})")
    short_id = child.match.group(1)
    press_answer(child, "oa")  # the keys that approve elsewhere do nothing here
    time.sleep(0.5)
    assert child.isalive()
    assert gatekeep("approve", short_id).returncode == 0
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert last_record()["answered_from"] == "remote"


def test_with_approve_remote_the_terminal_can_still_deny():
    policy("approve: remote\n")
    child = spawn_check()
    child.expect("gatekeep approve")
    press_answer(child, "d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert (last_record()["answer"], "answered_from" in last_record()) == ("deny", False)


def test_with_approve_both_either_side_answers():
    policy("approve: both\n")
    child = spawn_check()
    child.expect("or from another terminal: gatekeep approve")
    press_answer(child, "o")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert last_record()["answer"] == "once"


def test_watch_shows_requests_and_answers_with_a_key():
    policy("approve: remote\n")
    watcher = pexpect.spawn(GATEKEEP[0], [*GATEKEEP[1:], "watch"], encoding="utf-8", timeout=30, env=dict(os.environ))
    watcher.expect("waiting for requests")
    check = asker("npm install from-watch")
    watcher.expect("npm install from-watch")
    watcher.expect(r"\[o/a/d/n\] >")
    press_answer(watcher, "o")
    assert check.wait(timeout=30) == 0
    watcher.expect("waiting for requests")
    press_answer(watcher, "q")
    watcher.expect(pexpect.EOF)
    assert last_record()["command"] == "npm install from-watch"


def spawn(*argv: str, env: dict | None = None) -> pexpect.spawn:
    return pexpect.spawn(GATEKEEP[0], [*GATEKEEP[1:], *argv], encoding="utf-8", timeout=30, env=env or dict(os.environ))


def test_watch_takes_no_typing_for_an_answer_and_always_needs_a_yes():
    policy("approve: remote\n")
    watcher = spawn("watch")
    watcher.expect("waiting for requests")
    check = asker("npm install from-watch")
    watcher.expect(r"\[o/a/d/n\] >")
    watcher.send("cat README.md\r")  # typed, not pressed on purpose
    watcher.expect("not an answer: 'cat README.md")
    press_answer(watcher, "a")
    watcher.expect(r"write the rules npm install \*\? \[y\] yes")
    assert check.poll() is None  # not answered yet
    press_answer(watcher, "y")
    assert check.wait(timeout=30) == 0
    assert last_record()["answer"] == "always"
    watcher.close(force=True)


def test_the_console_refuses_the_terminal_of_the_gated_shell_it_was_typed_into():
    # a bash on this pseudo-terminal that says it loaded the hook, running the console as a child
    command = f'GATEKEEP_HOOK="bash 5.2 ps0 $$ x" {GATEKEEP[0]} -m gatekeep console; echo "exit $?"'
    child = pexpect.spawn("bash", ["-c", command], encoding="utf-8", timeout=30, env=dict(os.environ))
    child.expect("running on the terminal of the gated shell it was typed into")
    child.expect("exit 2")


def test_the_console_runs_on_a_terminal_of_its_own():
    # the hook's variable, inherited from a shell on another terminal (here: this test, on none)
    console = spawn("console", env={**os.environ, "GATEKEEP_HOOK": f"bash 5.2 ps0 {os.getpid()} x"})
    console.expect("waiting for requests")
    press_answer(console, "q")
    console.expect(pexpect.EOF)


def test_a_request_is_published_when_its_question_is_on_screen():
    """Waiting for the terminal's lock does not use up the time the person has to answer."""
    policy("approve: both\ntimeout: 20\n")
    child = pexpect.spawn(
        "bash", ["-c", f"tty; read; exec {GATEKEEP[0]} -m gatekeep check -- '{LINE}'"], encoding="utf-8", timeout=30
    )
    child.expect(r"(/dev/pts/\d+)")
    lock = get_paths().lock_for(child.match.group(1))
    code = f"import filelock, time; held = filelock.FileLock({lock!r}); held.acquire(); print(1, flush=True)"
    code += "; time.sleep(3)"
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    holder.stdout.readline()
    child.sendline("")
    child.expect("waiting for another question on this terminal")
    time.sleep(1)
    assert json.loads(gatekeep("pending", "--json").stdout) == []  # not while it cannot be shown
    holder.wait()
    (request,) = wait_for_requests()
    assert request["deadline"] - time.time() > 18  # the whole 20 s, from when the question appeared
    press_answer(child, "d")
    child.expect(pexpect.EOF)


def test_the_built_in_policy_asks_before_answering_is_typed():
    for line in ("gatekeep approve 1234abcd", "gatekeep deny 1234abcd", "gatekeep watch", "gatekeep console"):
        result = json.loads(gatekeep("rules", "test", "--json", "--", line).stdout)
        assert result["decision"] == "ask", line


def test_request_files_are_private(paths):
    approvals.publish(paths, {"id": "f" * 36, "command": "x", "pid": os.getpid(), "deadline": time.time() + 60})
    directory = approvals.pending_dir(paths)
    assert os.stat(directory).st_mode & 0o777 == 0o700
    assert all(os.stat(os.path.join(directory, n)).st_mode & 0o777 == 0o600 for n in os.listdir(directory))


def test_an_expired_request_is_refused(paths):
    now = time.time()
    approvals.publish(paths, {"id": "e" * 36, "command": "x", "pid": os.getpid(), "deadline": now - 1})
    with pytest.raises(approvals.ApprovalError, match="expired"):
        approvals.give_answer(paths, "eeee", "once", "test", now=now)
    assert approvals.answer_of(paths, "e" * 36) is None
