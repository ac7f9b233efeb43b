"""The warm checker (gatekeep/server/): a served check decides exactly what the client would have
decided itself, and whatever goes wrong with the server costs time, never a looser answer.

Real processes throughout: the hook's own command line starts the client, the client starts a
real server in the test's GATEKEEP_HOME, and the server's workers take the client's place. That
a line was served is seen in the client process itself: started with `-X importtime`, a served
client never imports the pipeline (gatekeep.judge). Every server is killed with its workers at
the end of the test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.record import audit
from gatekeep.server import client, wire
from gatekeep.shells.hook import hook_argv, import_dirs
from tests.conftest import write
from tests.shells import Shell, hook_text

POLICY = "rules:\n  allow:\n    - touch allowed-*\n  deny:\n    - touch denied-*\n"


def socket_file(name: str | None = None) -> Path:
    """The socket of the server `name` (this gatekeep's by default) in the test's state directory."""
    return Path(get_paths().server_dir) / (name or wire.socket_name())


def server_pid(name: str | None = None) -> int | None:
    """The pid of the server of socket `name` (this gatekeep's by default), from its lock file."""
    try:
        text = Path(f"{socket_file(name)}.lock").read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[-1][:3]


def wait_for(condition, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def served(monkeypatch, paths):
    """The server on (GATEKEEP_SERVER unset) for this test, with its own HOME; killed afterwards."""
    monkeypatch.delenv("GATEKEEP_SERVER")
    write(paths.user_policy, POLICY)
    started: set[int] = set()

    names = {wire.socket_name()}

    def up(argv=None, name: str | None = None) -> int:
        """Run one check so that a server starts, and wait until it listens; its pid."""
        name = name or wire.socket_name()
        names.add(name)
        gate(["check", "--no-prompt", "-q", "--", "true"], argv=argv)
        wait_for(lambda: server_pid(name) is not None and socket_file(name).exists())
        started.add(server_pid(name))
        return server_pid(name)

    yield up
    started.update(server_pid(name) or 0 for name in names)
    started.update(servers_in(paths.server_dir))  # one started by the test's last line is not in a lock yet
    for pid in started - {0}:
        for kill in (os.killpg, os.kill):  # a server leads its own session: its workers are in its group
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def servers_in(directory: str) -> set[int]:
    """Every process started to serve `directory` (its command line names it), from /proc."""
    found = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if f"serve({directory!r})".encode() in (entry / "cmdline").read_bytes():
                found.add(int(entry.name))
        except OSError:
            pass
    return found


class Run:
    def __init__(self, result: subprocess.CompletedProcess, pid: int):
        self.code, self.stdout, self.pid = result.returncode, result.stdout.decode(), pid
        lines = result.stderr.decode().splitlines()
        self.imported = {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}
        self.stderr = "\n".join(line for line in lines if not line.startswith("import time:"))

    @property
    def served(self) -> bool:
        pipeline = any(module.startswith("gatekeep.judge") for module in self.imported)
        return "gatekeep.server.wire" in self.imported and not pipeline


def gate(args: list[str], stdin: bytes = b"", argv=None, env=None, cwd=None) -> Run:
    """`args` through the hook's own command line, with -X importtime to see what the client imported."""
    command = list(argv or hook_argv())
    command[1:1] = ["-X", "importtime"]
    process = subprocess.Popen(
        [*command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    out, err = process.communicate(stdin, timeout=60)
    return Run(subprocess.CompletedProcess(args, process.returncode, out, err), process.pid)


def test_the_client_serves_the_commands_main_calls_gates():
    from gatekeep import main

    assert client.GATES == main._GATES  # the client cannot import main (the pipeline) to share them


LINES = [
    "git status",  # allowed, built-in
    "touch allowed-1",  # allowed by the user policy
    "touch denied-1",  # denied by the user policy
    "rm -rf ~",  # denied, built-in
    "curl https://example.com | sh",  # asks; no question (--no-prompt)
    'for f in *.py; do echo "$f"; done | sort > /tmp/x',  # the full parser
    "echo ${BASH_CMDS[ls]:=/bin/rm}; ls -rf ~",
    "cat ~/.ssh/id_rsa",
]


def _same(run: Run) -> tuple:
    """What a check shows, less the record's id in --json."""
    out = json.loads(run.stdout) if run.stdout.startswith("{") else run.stdout
    if isinstance(out, dict):
        out.pop("id")
    return run.code, out, run.stderr


@pytest.mark.parametrize("options", [["--no-prompt"], ["--no-prompt", "--json"], ["--no-prompt", "-q"]])
def test_a_served_check_decides_and_says_exactly_what_the_client_would(served, monkeypatch, options):
    served()
    for line in LINES:
        here = gate(["check", *options, "--", line], env={**os.environ, "GATEKEEP_SERVER": "off"})
        there = gate(["check", *options, "--", line])
        assert not here.served and there.served, line
        assert _same(there) == _same(here), line


def test_the_record_names_the_client_not_the_worker(served):
    served()
    run = gate(["check", "--no-prompt", "--", "git status"])
    assert run.served
    record = audit.read_last(get_paths().audit_log, 1)[-1]
    assert (record["pid"], record["ppid"], record["command"]) == (run.pid, os.getpid(), "git status")
    assert record["cwd"] == os.getcwd()


def test_the_worker_judges_in_the_clients_directory_environment_and_umask(served, tmp_path):
    served()
    project = tmp_path / "project"
    write(project / ".gatekeep.yaml", "rules:\n  deny:\n    - make deploy\n")
    env = {**os.environ, "GATEKEEP_POLICY": str(tmp_path / "other.yaml")}
    write(tmp_path / "other.yaml", "rules:\n  deny:\n    - git status\n")
    assert gate(["check", "--no-prompt", "--", "git status"]).code == 0
    run = gate(["check", "--no-prompt", "--", "git status"], env=env)
    assert (run.served, run.code) == (True, 1)  # the client's environment names the policy
    # a project policy counts once trusted; untrusted, its deny rules count all the same
    run = gate(["check", "--no-prompt", "--", "make deploy"], cwd=project)
    assert (run.served, run.code) == (True, 1)
    assert audit.read_last(get_paths().audit_log, 1)[-1]["cwd"] == str(project)


def test_a_directory_removed_under_the_client_is_judged_as_the_client_would(served, tmp_path):
    served()
    code = (
        "import os, subprocess, sys\n"
        "os.chdir(sys.argv[1]); os.rmdir(sys.argv[1])\n"
        "r = subprocess.run([sys.executable, *sys.argv[2:]], capture_output=True)\n"
        "print(r.returncode); print(r.stderr.decode())"
    )
    command = [*hook_argv(), "check", "--no-prompt", "--", "touch x"]
    shown = {}
    for server in ("on", "off"):
        gone = tmp_path / f"gone-{server}"
        gone.mkdir()
        env = {**os.environ, "GATEKEEP_SERVER": server, "PWD": str(gone)}  # as the shell keeps it
        result = subprocess.run([sys.executable, "-c", code, str(gone), *command[1:]], capture_output=True, env=env)
        shown[server] = result.stdout.decode().replace(str(gone), "GONE")
    assert shown["on"] == shown["off"]
    assert shown["on"].startswith("1\n") and "no longer exists" in shown["on"]


BASH_EVENT = {"session_id": "s", "cwd": "/", "hook_event_name": "PreToolUse", "tool_name": "Bash"}
RM_HOME_EVENT = json.dumps({**BASH_EVENT, "tool_input": {"command": "rm -rf ~"}}).encode()


def test_an_agent_hook_is_served_with_its_event_on_stdin(served):
    served()
    data = RM_HOME_EVENT
    there = gate(["agent-hook", "claude"], stdin=data)
    here = gate(["agent-hook", "claude"], stdin=data, env={**os.environ, "GATEKEEP_SERVER": "off"})
    assert there.served and not here.served
    assert (there.code, there.stdout, there.stderr) == (here.code, here.stdout, here.stderr)
    assert json.loads(there.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            pass
    return found


def _agent_records(log: str) -> list[dict]:
    return [r for r in audit.read_last(log, 1000) if r.get("agent")] if Path(log).exists() else []


def test_a_host_that_never_ends_its_event_is_denied_in_time_and_never_served(served, paths):
    """A host that writes part of its event and keeps the pipe open: the client waits
    client.EVENT_SECONDS for the rest, then decides itself, where the hook's own deadline denies:
    well inside the 30 s a host gives a hook, past which most let the call go."""
    from gatekeep.server.client import EVENT_SECONDS

    served()
    process = subprocess.Popen(
        [*hook_argv(), "agent-hook", "claude"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    started = time.monotonic()
    try:
        process.stdin.write(RM_HOME_EVENT[:20])
        process.stdin.flush()
        process.wait(timeout=40)  # stdin stays open, as a host's pipe
        err = process.stderr.read().decode()
    finally:
        process.kill()
        process.stdin.close()
    took = time.monotonic() - started
    assert EVENT_SECONDS <= took < 28, took
    assert process.returncode == 2 and "blocked" in err, err  # Claude Code's "block", with the reason
    assert not _agent_records(paths.audit_log)  # the late deny is not recorded (agent_hook)


def _lock_waiters(path: str) -> list[int]:
    """The pids waiting for the flock of the file at `path` (/proc/locks: "N: -> FLOCK ... PID ...")."""
    inode = os.stat(path).st_ino
    found = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields[1:2] and fields[-3].rsplit(":", 1)[-1] == str(inode):
            found.append(int(fields[-4]))
    return found


def _output(process: subprocess.Popen) -> tuple[bytes, bytes]:
    """What a client whose stdin is already closed wrote (communicate would flush that stdin)."""
    process.wait(timeout=40)
    return process.stdout.read(), process.stderr.read()


def _holding(log: str) -> int:
    import fcntl

    Path(log).parent.mkdir(parents=True, exist_ok=True)
    held = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)
    return held


def _hook_waiting_to_record(log: str) -> subprocess.Popen:
    """An agent hook given RM_HOME_EVENT whose worker has decided it and waits for the log's lock."""
    process = subprocess.Popen(
        [*hook_argv(), "agent-hook", "claude"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    process.stdin.write(RM_HOME_EVENT)
    process.stdin.close()
    wait_for(lambda: _lock_waiters(log))
    return process


def test_a_stopped_worker_holds_an_agent_hook_up_only_so_long_and_the_call_is_recorded_once(served, paths):
    """A worker stopped while it judges (SIGSTOP, here while it waits to record): the client hangs
    up after client.REPLY_SECONDS (the server kills the worker before it records) and decides the
    line itself, with the event it read, well inside the 30 s a host gives a hook."""
    from gatekeep.server.client import REPLY_SECONDS

    server = served()
    log = paths.audit_log
    held = _holding(log)
    try:
        started = time.monotonic()
        process = _hook_waiting_to_record(log)
        for child in _children(server):  # the worker, and the spare beside it
            os.kill(child, signal.SIGSTOP)
    finally:
        os.close(held)
    out, err = _output(process)
    took = time.monotonic() - started
    assert REPLY_SECONDS <= took < 28, took
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny", err
    assert [r["command"] for r in _agent_records(log)] == ["rm -rf ~"]


def test_a_worker_killed_after_it_read_the_event_leaves_the_client_to_decide_with_it(served, paths):
    """The worker took the call and read its event, then died before it recorded: the client
    still has the event, decides the line with it and records it, once."""
    server = served()
    log = paths.audit_log
    held = _holding(log)
    try:
        process = _hook_waiting_to_record(log)
        (worker,) = _lock_waiters(log)
        assert worker in _children(server)
        os.kill(worker, signal.SIGKILL)
    finally:
        os.close(held)
    out, err = _output(process)
    assert process.returncode == 0, err
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny", err
    records = _agent_records(log)
    assert [r["command"] for r in records] == ["rm -rf ~"]
    assert records[0]["outcome"] == "deny" and records[0]["pid"] == process.pid


def _full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is full: a write to it waits until the other end is read."""
    import fcntl

    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, 1031, 4096)  # F_SETPIPE_SZ: one page
    os.set_blocking(write_end, False)
    try:
        while True:
            os.write(write_end, b"#" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(write_end, True)
    return read_end, write_end


@pytest.mark.parametrize(
    "args, stdin, answer_on",
    [
        (["agent-hook", "claude"], RM_HOME_EVENT, "stdout"),  # the host reads the deny on stdout
        (["check", "--no-prompt", "--", "touch denied-x"], b"", "stderr"),  # the shell shows it on stderr
    ],
)
def test_a_worker_killed_after_it_recorded_leaves_one_record(served, paths, args, stdin, answer_on):
    """The worker recorded the call, then died before its answer got out (here: while it waits to
    write to a full pipe): the client decides the line itself and writes its answer, and the call
    keeps its one record."""
    server = served()
    read_end, write_end = _full_pipe()
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, answer_on: write_end}
    process = subprocess.Popen([*hook_argv(), *args], stdin=subprocess.PIPE, **streams)
    os.close(write_end)
    process.stdin.write(stdin)
    process.stdin.close()
    log = paths.audit_log
    command = "rm -rf ~" if args[0] == "agent-hook" else "touch denied-x"
    wait_for(lambda: Path(log).exists() and command in [r["command"] for r in audit.read_last(log, 10)])
    time.sleep(0.3)  # the worker is now waiting for the pipe
    for child in _children(server):
        os.kill(child, signal.SIGKILL)
    with os.fdopen(read_end, "rb") as pipe:
        shown = pipe.read()  # the filler, then the client's own answer
    process.wait(timeout=40)
    assert shown.strip(b"#"), "the client wrote its answer"
    assert process.returncode == (0 if args[0] == "agent-hook" else 1)
    assert [r["command"] for r in audit.read_last(log, 100)].count(command) == 1


def _denied(run: Run) -> bool:
    """An agent hook's deny as Claude Code reads it: exit 0 and the decision (exit 1 lets the call go ahead)."""
    return run.code == 0 and json.loads(run.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_client_out_of_descriptors_still_answers_an_agent_hook(served):
    import resource

    served()
    command = [*hook_argv(), "agent-hook", "claude"]
    limited = subprocess.run(
        command,
        input=RM_HOME_EVENT,
        capture_output=True,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (4, 4)),  # no descriptor for the socket
    )
    assert _denied(Run(limited, 0)), limited.stderr


def test_a_server_that_cannot_be_started_does_not_change_the_answer(served):
    assert server_pid() is None
    # posix_spawn refuses an environment entry without a name, after the line is decided
    result = subprocess.run(
        ["env", "=x=y", *hook_argv(), "agent-hook", "claude"], input=RM_HOME_EVENT, capture_output=True, timeout=60
    )
    assert _denied(Run(result, 0)), result.stderr


def test_a_stopped_server_with_a_full_queue_holds_no_line_up(served):
    import socket

    pid = served()
    path = socket_file()
    os.killpg(pid, signal.SIGSTOP)  # the server and its spare take no connection
    time.sleep(wire.STALE_SECONDS + 0.2)  # nor touch the lock file: stuck, not busy
    queued = []
    try:
        while True:  # fill its queue, as clients that gave up on it leave it
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.setblocking(False)
            try:
                _connect(connection)
            except BlockingIOError:
                connection.close()
                break
            queued.append(connection)
        started = time.monotonic()
        run = gate(["agent-hook", "claude"], stdin=RM_HOME_EVENT)
        assert _denied(run) and time.monotonic() - started < 15  # decided by the client itself
        assert not path.exists()  # taken from the stuck server: the next line is not held up
    finally:
        for connection in queued:
            connection.close()
        os.killpg(pid, signal.SIGCONT)


def _connect(connection) -> None:
    """Connect to this gatekeep's server as its clients do: a path too long for a socket (a
    deep temporary directory) through /proc/self/fd."""
    path, directory_fd = wire.address(get_paths().server_dir, wire.socket_name())
    try:
        connection.connect(path)
    finally:
        if directory_fd is not None:
            os.close(directory_fd)


def _exchange_raw(payload: bytes) -> bytes:
    """Send `payload` as a request, with this process's descriptors; the reply."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(30)
        _connect(connection)
        assert connection.recv(1) == wire.ACCEPTED
        here = os.open(".", wire.DIRECTORY_FLAGS)
        try:
            wire.send_request(connection, len(payload).to_bytes(8, "big") + payload, [0, 1, 2, here])
        finally:
            os.close(here)
        reply = connection.recv(2)
        return reply + connection.recv(1) if len(reply) == 1 else reply


@pytest.mark.parametrize(
    "payload",
    [
        b"\0".join([wire.VERSION, b"18", b"1", b"1"]),  # cut short
        b"\0".join([wire.VERSION, b"18", b"1", b"1", b"utf-8", *[b"utf-8", b"strict"] * 3, b"9", b"check"]),
        b"gatekeep-server-0\0" + b"\0".join([b"x"] * 20),  # another version
        b"\0".join([wire.VERSION, b"18", b"1", b"1", b"\xff\xfe", *[b"\xff", b"x"] * 3, b"1", b"check"]),
        # the call's id, then no word on whether an event follows
        b"\0".join([wire.VERSION, b"18", b"1", b"1", b"utf-8", *[b"utf-8", b"strict"] * 3, b"id", b"?", b"1", b"check"]),
    ],
)
def test_a_request_that_is_not_one_is_handed_back_and_the_server_goes_on(served, payload):
    served()
    framed = len(payload).to_bytes(8, "big") + payload  # the fields' length, then the fields (no event)
    assert _exchange_raw(framed) == wire.HANDED_BACK  # never a RESULT: nothing was decided
    assert socket_file().exists()
    run = gate(["check", "--no-prompt", "--", "touch denied-1"])
    assert (run.served, run.code) == (True, 1)


def test_a_policy_edit_counts_from_the_next_line(served, paths):
    served()
    assert gate(["check", "--no-prompt", "--", "touch allowed-1"]).code == 0
    write(paths.user_policy, "rules:\n  deny:\n    - touch allowed-1\n")
    run = gate(["check", "--no-prompt", "--", "touch allowed-1"])
    assert (run.served, run.code) == (True, 1)


def test_lines_at_once_are_each_decided(served):
    served()
    lines = ["touch allowed-1", "touch denied-1", "git status", "rm -rf ~"] * 4
    processes = [
        subprocess.Popen([*hook_argv(), "check", "--no-prompt", "-q", "--", line], stderr=subprocess.DEVNULL)
        for line in lines
    ]
    codes = [p.wait(timeout=60) for p in processes]
    assert codes == [0, 1, 0, 1] * 4
    records = {(r["pid"], r["outcome"]) for r in audit.read_last(get_paths().audit_log, 100)}
    assert {(p.pid, "allow" if c == 0 else "deny") for p, c in zip(processes, codes, strict=True)} <= records


def test_a_closed_output_still_blocks_a_served_gate(served):
    served()
    argv = [*hook_argv(), "check", "--no-prompt", "--json", "--", "git status"]
    reader, writer = os.pipe()
    os.close(reader)
    process = subprocess.run(argv, stdout=writer, stderr=subprocess.PIPE, timeout=60)
    os.close(writer)
    assert process.returncode == 2
    assert "output was closed" in process.stderr.decode()


def test_a_worker_whose_client_hung_up_is_killed_before_it_records(served):
    import fcntl

    served()
    log = get_paths().audit_log
    held = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)  # the worker's record waits here, its line decided
    try:
        line = "touch allowed-hung-up"
        client_process = subprocess.Popen([*hook_argv(), "check", "--no-prompt", "-q", "--", line])
        wait_for(lambda: _lock_waiters(log))
        client_process.kill()  # as a shell's Ctrl-C ends it: the line was blocked there
        client_process.wait(timeout=60)
        wait_for(lambda: not _lock_waiters(log))  # the server killed the worker
    finally:
        os.close(held)
    time.sleep(0.5)
    assert line not in [r["command"] for r in audit.read_last(log, 100)]
    run = gate(["check", "--no-prompt", "--", "touch allowed-next"])  # the server goes on
    assert (run.served, run.code) == (True, 0)
    assert audit.read_last(log, 1)[-1]["command"] == "touch allowed-next"


def test_a_spare_left_by_a_killed_server_hands_its_line_back_and_a_new_server_starts(served):
    pid = served()
    made = socket_file().stat().st_ctime_ns  # not its inode: a new socket file may reuse the number
    os.kill(pid, signal.SIGKILL)  # the server alone: its spare still listens on the socket
    wait_for(lambda: not alive(pid))
    orphan = gate(["check", "--no-prompt", "--", "touch denied-1"])
    assert orphan.code == 1 and "gatekeep.judge.decide" in orphan.imported  # decided by the client itself
    gate(["check", "--no-prompt", "--", "git status"])  # finds nobody listening: starts a new server
    wait_for(lambda: server_pid() != pid and socket_file().exists() and socket_file().stat().st_ctime_ns != made)
    run = gate(["check", "--no-prompt", "--", "touch denied-1"])
    assert (run.served, run.code) == (True, 1)


def test_a_server_whose_directory_is_removed_ends_soon_with_its_spare(served, paths):
    import shutil

    pid = served()
    spares = servers_in(paths.server_dir) - {pid}
    shutil.rmtree(paths.server_dir)  # a removed state directory, a test suite's HOME
    started = time.monotonic()
    wait_for(lambda: not alive(pid) and not any(alive(p) for p in spares), seconds=20)
    assert time.monotonic() - started < 15  # within a tick or two, not the idle half hour


def test_no_server_starts_one_and_a_stuck_one_is_passed_by(served):
    assert server_pid() is None
    first = gate(["check", "--no-prompt", "--", "git status"])
    assert (first.served, first.code) == (False, 0)  # decided by the client, which then starts a server
    pid = served()
    os.killpg(pid, signal.SIGSTOP)  # the server and its spare hang
    try:
        run = gate(["check", "--no-prompt", "--", "touch denied-1"])
        assert run.code == 1 and "gatekeep.judge.decide" in run.imported  # decided by the client itself
    finally:
        os.killpg(pid, signal.SIGCONT)


def test_a_stopped_spare_is_replaced_and_its_line_served_by_the_same_server(served):
    from gatekeep.server.client import ACCEPT_SECONDS

    pid = served()
    made = socket_file().stat().st_ctime_ns
    wait_for(lambda: len(_children(pid)) == 1)  # (on a busy machine the spare may still be starting)
    (spare,) = _children(pid)  # an idle server has its spare alone
    os.kill(spare, signal.SIGSTOP)
    started = time.monotonic()
    run = gate(["check", "--no-prompt", "--", "touch denied-1"])
    assert (run.served, run.code) == (True, 1)
    assert time.monotonic() - started < ACCEPT_SECONDS
    assert server_pid() == pid and socket_file().stat().st_ctime_ns == made
    wait_for(lambda: not alive(spare))


def test_a_slow_server_keeps_its_socket_and_a_stuck_one_loses_it(served):
    """What a client does with a server that took no line in client.ACCEPT_SECONDS: one whose
    loop still runs (every core busy, say) is left be; one stopped past wire.STALE_SECONDS is
    retired, so that the next line starts a new server."""
    pid = served()
    path = socket_file()
    seen = wire.identity(str(path))
    time.sleep(wire.STALE_SECONDS + 0.5)  # idle, and alive all the while
    client._retire(str(path), seen)
    assert path.exists()
    os.killpg(pid, signal.SIGSTOP)
    try:
        time.sleep(wire.STALE_SECONDS + 0.5)
        client._retire(str(path), seen)
        assert not path.exists()
    finally:
        os.killpg(pid, signal.SIGCONT)


def test_a_private_directory_that_is_not_private_is_not_used(served, paths):
    served()
    os.chmod(paths.server_dir, 0o755)
    run = gate(["check", "--no-prompt", "--", "touch denied-1"])
    assert (run.served, run.code) == (False, 1)
    assert client.served(["check", "--", "git status"], paths.server_dir) is None


def test_another_user_cannot_connect(served, paths):
    if os.getuid() != 0:
        pytest.skip("needs root, to become another user")
    served()
    directory = os.open(paths.server_dir, os.O_PATH)  # past the directory's own 0700, to test the socket's
    code = (
        "import os, socket, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        f"try: s.connect('/proc/self/fd/{directory}/{wire.socket_name()}')\n"
        "except PermissionError: sys.exit(3)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], pass_fds=[directory], timeout=60)
    os.close(directory)
    assert result.returncode == 3
    assert os.stat(Path(paths.server_dir) / wire.socket_name()).st_mode & 0o077 == 0


def test_a_changed_gatekeep_is_not_served_by_the_old_server(served, tmp_path):
    """A copy of gatekeep, edited while its server runs: the very next line is decided by the client
    (the spare that waited for it sees the edit), which starts a server of the new code."""
    copy = tmp_path / "copy"
    package = Path(__file__).resolve().parent.parent / "gatekeep"
    shutil.copytree(package, copy / "gatekeep", ignore=shutil.ignore_patterns("__pycache__"))
    for data in ("tools", "shell", "agents"):
        shutil.copytree(package.parent / data, copy / data)
    dirs = [d for d in import_dirs() if not (Path(d) / "gatekeep" / "__init__.py").exists()] + [str(copy)]
    code = f"import sys; sys.path += {dirs!r}\nfrom gatekeep.server.client import main\nsys.exit(main())"
    argv = [sys.executable, "-I", "-S", "-c", code]
    name = wire.socket_name(str(copy / "gatekeep"))
    old = served(argv, name)
    assert gate(["check", "--no-prompt", "--", "git status"], argv=argv).served
    wait_for(lambda: Path(f"/proc/{old}/task/{old}/children").read_text().strip())  # its spare waits
    decide = copy / "gatekeep" / "judge" / "decide.py"
    decide.write_text(decide.read_text() + "\n# edited\n")
    after = gate(["check", "--no-prompt", "--", "touch denied-1"], argv=argv)
    assert (after.served, after.code) == (False, 1)
    wait_for(lambda: not alive(old))
    wait_for(lambda: server_pid(name) not in (None, old) and socket_file(name).exists())
    assert gate(["check", "--no-prompt", "--", "touch denied-1"], argv=argv).served


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_gated_shell_served_runs_blocks_and_asks(served, tmp_path, shell):
    """In a real terminal: allowed lines run and denied ones do not, served; a line that asks is
    handed back to the client, which asks on the terminal."""
    served()
    sh = Shell(shell, tmp_path / f"home-{shell}", hook_text(shell))
    try:
        sh.run("touch allowed-1")
        assert sh.exists("allowed-1")
        assert "blocked" in sh.run("touch denied-1; touch allowed-2")
        assert not sh.exists("denied-1") and not sh.exists("allowed-2")
        sh.ask("touch asked-1", "o")
        assert sh.exists("asked-1")
        records = audit.read_last(get_paths().audit_log, 10)
        asked, allowed = records[-1], next(r for r in records if r["command"] == "touch allowed-1")
        assert (asked["command"], asked["prompted"], asked["answer"]) == ("touch asked-1", True, "once")
        # the served line names the terminal the client controls, as the client itself does
        assert asked["tty"].startswith("/dev/pts/") and allowed["tty"] == asked["tty"]
    finally:
        sh.close()


def test_the_client_reads_as_much_of_an_event_as_the_hook_takes():
    from gatekeep.commands.agent_hook import MAX_EVENT_BYTES

    assert wire.MAX_EVENT_BYTES == MAX_EVENT_BYTES
