"""Faults under load: 1, 8, 32 and 64 clients at once while the warm checker is hurt (issue 38).

As users run gatekeep (userenv.py: a temporary HOME, no GATEKEEP_HOME, the warm checker on),
each client runs gates one after another, for --seconds, through the hooks' own command lines: typed lines
(`gatekeep check`) and Claude Code's agent hook with its event on stdin, each line unique, each
verdict known in advance (the user policy allows `touch allowed-*` and denies `touch denied-*`;
a line no rule decides asks, which `--no-prompt` and Claude Code's hook answer as they always
do). Meanwhile a fault is injected every FAULT_EVERY seconds, at random (seeded):

  kill -9 the server              kill -9 a worker or spare       SIGSTOP a worker 1 s, then SIGCONT
  SIGSTOP the server 1 s          take the server's socket away   hold the audit log's lock 1 s
  and the audit log, at a 64 KiB limit, rotates all the while

Then, per level:

  wrong verdicts     a gate that answered other than its line's verdict             goal 0
  lost / doubled     a line answered with no audit record, or with two              goal 0
  torn lines         lines of the audit log and its rotated files that are not JSON goal 0
  longest wait       the slowest gate, start to exit                                goal ≤ 5 s (CPU not saturated)
  strays             processes of gatekeep left once its state directory is gone    goal 0
                     (TICK_SECONDS later: servers end when their directory goes)

"CPU saturated" is when the clients' and servers' CPU time over the level's wall time reaches
the cores there are: lines then wait for a core, not for gatekeep. A worker stopped for good (a
fault not injected here) holds its client up for client.REPLY_SECONDS by design: see
tests/test_server.py.

    .venv/bin/python tests/bench/bench_reliability.py [--levels 1,8,32,64] [--seconds 15]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from userenv import agent_hook_command, hook_argv, user_environment

from gatekeep.server.daemon import TICK_SECONDS

LEVELS = (1, 8, 32, 64)
FAULT_EVERY = 0.4
POLICY = (
    "audit: {max_size: 64K, keep: 1000}\n"
    "rules:\n  allow: ['touch allowed-*']\n  deny: ['touch denied-*']\n"
)
KINDS = ("allowed", "denied", "asked")
CHECK_CODES = {"allowed": 0, "denied": 1, "asked": 1}  # --no-prompt: a question is a block
CLAUDE = {"allowed": "allow", "denied": "deny", "asked": "ask"}  # Claude Code asks its user itself


class Level:
    def __init__(self, clients: int) -> None:
        self.clients = clients
        self.calls: list[dict] = []
        self.lock = threading.Lock()
        self.faults: dict[str, int] = {}


def event(line: str, cwd: str) -> bytes:
    data = {
        "session_id": "bench",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": line},
        "cwd": cwd,
        "permission_mode": "default",
    }
    return json.dumps(data).encode()


def one_call(level: Level, env: dict, work: str, agent_argv: list[str], number: int, rng: random.Random) -> None:
    kind = rng.choice(KINDS)
    line = f"touch {kind}-{level.clients}-{number}" if kind != "asked" else f"mkdir made-{level.clients}-{number}"
    agent = rng.random() < 0.5
    argv = agent_argv if agent else [*hook_argv(env), "check", "--no-prompt", "-q", "--", line]
    stdin = event(line, work) if agent else b""
    started = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=work, input=stdin, capture_output=True, timeout=120)
    took = time.monotonic() - started
    if agent:
        try:
            got = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] if done.stdout else "block"
        except (ValueError, KeyError):
            got = "garbled"
        if done.returncode == 2:
            got = "block"
        right = got == CLAUDE[kind]
    else:
        got, right = done.returncode, done.returncode == CHECK_CODES[kind]
    with level.lock:
        level.calls.append({"line": line, "right": right, "got": got, "took": took, "err": done.stderr[-300:]})


def client(level: Level, env: dict, work: str, agent_argv: list[str], until: float, seed: int) -> None:
    rng = random.Random(seed)
    number = 0
    while time.monotonic() < until:
        one_call(level, env, work, agent_argv, seed * 100_000 + number, rng)
        number += 1


def server_pid(server_dir: Path) -> int | None:
    for lock in server_dir.glob("*.sock.lock"):
        try:
            return int(lock.read_text().strip())
        except (OSError, ValueError):
            return None
    return None


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            pass
    return found


def signal_for(pid: int, sig: int, seconds: float = 0.0) -> None:
    try:
        os.kill(pid, sig)
        if sig == signal.SIGSTOP:
            time.sleep(seconds)
            os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


def inject(level: Level, paths: dict, stop: threading.Event, rng: random.Random) -> None:
    server_dir = Path(paths["server_dir"])
    while not stop.wait(FAULT_EVERY):
        fault = rng.choice(("kill server", "kill worker", "stop worker", "stop server", "take socket", "hold log"))
        server = server_pid(server_dir)
        workers = children(server) if server else []  # and the spare
        if fault == "kill server" and server:
            signal_for(server, signal.SIGKILL)
        elif fault == "kill worker" and workers:
            signal_for(rng.choice(workers), signal.SIGKILL)
        elif fault == "stop worker" and workers:
            signal_for(rng.choice(workers), signal.SIGSTOP, 1.0)
        elif fault == "stop server" and server:
            signal_for(server, signal.SIGSTOP, 1.0)
        elif fault == "take socket":
            for sock in server_dir.glob("*.sock"):
                sock.unlink(missing_ok=True)
        elif fault == "hold log" and Path(paths["audit_log"]).exists():
            fd = os.open(paths["audit_log"], os.O_WRONLY | os.O_APPEND)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                time.sleep(1.0)
            finally:
                os.close(fd)
        else:
            continue
        level.faults[fault] = level.faults.get(fault, 0) + 1


def log_lines(audit_log: str) -> list[bytes]:
    directory = Path(audit_log).parent
    lines = []
    for path in directory.glob(Path(audit_log).name + "*"):
        lines += [line for line in path.read_bytes().split(b"\n") if line]
    return lines


def gatekeep_processes(marker: str) -> list[int]:
    """Processes whose command line names `marker` (the user's state directory: servers, workers)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return [pid for pid in found if pid != os.getpid()]


def cpu_seconds() -> float:
    """CPU time of every process of this machine (from /proc/stat), to see saturation."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    busy = sum(int(v) for i, v in enumerate(fields) if i not in (3, 4))  # all but idle and iowait
    return busy / os.sysconf("SC_CLK_TCK")


def run_level(clients: int, seconds: float, seed: int) -> dict:
    home = Path(tempfile.mkdtemp(prefix="gk-rel-"))
    env = user_environment(home / "home", POLICY)
    work = home / "home" / "work"
    work.mkdir()
    shown = subprocess.run([sys.executable, "-m", "gatekeep", "paths", "--json"], env=env, capture_output=True)
    paths = json.loads(shown.stdout)
    agent_argv = ["sh", "-c", agent_hook_command(env, "claude")]
    subprocess.run([*hook_argv(env), "check", "--no-prompt", "-q", "--", "true"], env=env, cwd=work)  # a server
    time.sleep(1.0)
    level = Level(clients)
    stop = threading.Event()
    faults = threading.Thread(target=inject, args=(level, paths, stop, random.Random(seed)), daemon=True)
    cpu_before, started = cpu_seconds(), time.monotonic()
    threads = [
        threading.Thread(target=client, args=(level, env, str(work), agent_argv, started + seconds, seed + i + 1))
        for i in range(clients)
    ]
    faults.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    faults.join()
    wall = time.monotonic() - started
    busy = (cpu_seconds() - cpu_before) / wall / (os.cpu_count() or 1)
    time.sleep(1.5)  # a worker that answered is still writing nothing; a stopped one was continued
    lines = log_lines(paths["audit_log"])
    records, torn = [], 0
    for raw in lines:
        try:
            records.append(json.loads(raw))
        except ValueError:
            torn += 1
    counts: dict[str, int] = {}
    for record in records:
        counts[record.get("command")] = counts.get(record.get("command"), 0) + 1
    answered = [call for call in level.calls]
    lost = sum(1 for call in answered if counts.get(call["line"], 0) == 0)
    doubled = sum(1 for call in answered if counts.get(call["line"], 0) > 1)
    wrong = [call for call in answered if not call["right"]]
    state = str(Path(paths["server_dir"]).parent)
    subprocess.run(["rm", "-rf", str(home)], check=True)
    time.sleep(TICK_SECONDS + 2)
    strays = gatekeep_processes(state)
    for pid in strays:
        signal_for(pid, signal.SIGKILL)
    return {
        "clients": clients,
        "calls": len(answered),
        "wrong": len(wrong),
        "wrong_examples": [{k: c[k] for k in ("line", "got", "err")} for c in wrong[:3]],
        "lost": lost,
        "doubled": doubled,
        "torn": torn,
        "longest_wait": max(call["took"] for call in answered),
        "median_wait": sorted(call["took"] for call in answered)[len(answered) // 2],
        "cpu_busy": busy,
        "strays": len(strays),
        "faults": level.faults,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--levels", default=",".join(map(str, LEVELS)))
    parser.add_argument("--seconds", type=float, default=15.0, help="how long each level's clients go on starting gates")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    results = []
    print(f"{'clients':>7} {'calls':>5} {'wrong':>5} {'lost':>4} {'doubled':>7} {'torn':>4} "
          f"{'longest':>8} {'median':>7} {'CPU':>5} {'strays':>6}  faults")  # fmt: skip
    failed = False
    for clients in (int(n) for n in options.levels.split(",")):
        result = run_level(clients, options.seconds, options.seed + clients)
        results.append(result)
        saturated = result["cpu_busy"] >= 0.9
        slow = result["longest_wait"] > 5.0 and not saturated
        bad = any(result[key] for key in ("wrong", "lost", "doubled", "torn", "strays")) or slow
        failed |= bad
        faults = ", ".join(f"{name} ×{count}" for name, count in sorted(result["faults"].items()))
        print(
            f"{clients:>7} {result['calls']:>5} {result['wrong']:>5} {result['lost']:>4} {result['doubled']:>7}"
            f" {result['torn']:>4} {result['longest_wait']:>7.2f}s {result['median_wait']:>6.2f}s"
            f" {result['cpu_busy']:>4.0%}{'*' if saturated else ' '} {result['strays']:>6}  {faults}"
            f"{'  MISSED' if bad else ''}"
        )
        for example in result["wrong_examples"]:
            print(f"        wrong: {example}")
    print("goals: wrong, lost, doubled, torn, strays 0; longest wait ≤ 5 s unless the CPU is saturated (*)")
    if options.json:
        print(json.dumps(results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
