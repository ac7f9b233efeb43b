"""What a person waits for per line: lines typed into a real gated bash and zsh (issue 18).

Each shell is set up as a user sets it up (userenv.py): a temporary HOME, the user
policy in its default place, and `gatekeep install --shell SHELL` adding the hook to
~/.bashrc or ~/.zshrc. The same lines are typed, in rounds, into that shell and into
one whose rc file has no gatekeep block; a line's cost is its time in the gated shell
less its median time in the plain one, divided by the floor (`python -c pass`, run
between rounds). The commands on the lines are shell functions that do nothing, so
that what is measured is the gate, not git or ls.

  plain lines              words and | && || ; only (gatekeep's own fast reader)   goal ≤ 1.6×
  full-parser lines        quotes, $, loops, substitutions (bashlex)               goal ≤ 2.5×
  shell side               the hook with gatekeep replaced by `true`: what the
                           hook itself adds in the shell (no goal; for finding where time goes)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect
from bench_user import EXTRA_ALLOW, PARSER, PLAIN
from userenv import Figure, floor_time, gatekeep_executable, heading, rules, user_environment, verdict

from gatekeep.shells.hook import hook_command, hook_script

ROUNDS = 6
PROMPT = "BENCH> "
STUBS = ("git", "ls", "npm", "make", "wc", "find", "xargs", "head")
GOALS = {"plain lines": (PLAIN, 1.6), "lines that need the full parser": (PARSER, 2.5)}


def rc_text(shell: str) -> str:
    stubs = "\n".join(f"{name}() {{ :; }}" for name in STUBS)
    prompt = f"PS1='{PROMPT}'" if shell == "bash" else f"PROMPT='{PROMPT}'; RPROMPT=''"
    return f"{prompt}\n{stubs}\n"


def start(shell: str, home: Path, gated: bool, hook_command: str | None = None) -> pexpect.spawn:
    """An interactive `shell` for the user whose HOME is `home`, with gatekeep installed if `gated`
    (with the hook's gatekeep replaced by `hook_command`, if given)."""
    env = user_environment(home, rules(200, EXTRA_ALLOW))
    env["TERM"] = "dumb"
    (home / "src").mkdir(exist_ok=True)
    rc = home / (".bashrc" if shell == "bash" else ".zshrc")
    rc.write_text(rc_text(shell))
    if gated and hook_command is None:
        subprocess.run([gatekeep_executable(), "install", "--shell", shell], env=env, check=True, capture_output=True)
    elif gated:
        (home / "hook.sh").write_text(_replace_command(hook_script(shell), hook_command))
        rc.write_text(rc_text(shell) + f"source {home / 'hook.sh'}\n")
    argv = ["--noprofile", "-i"] if shell == "bash" else ["-i"]
    child = pexpect.spawn(shell, argv, env=env, cwd=str(home), encoding="utf-8", dimensions=(40, 200))
    child.delaybeforesend = None
    child.expect_exact(PROMPT, timeout=30)
    return child


def _replace_command(hook_text: str, command: str) -> str:
    real = hook_command()  # made in this process, so it is the very text in hook_script's output
    if real not in hook_text:
        raise SystemExit("bench_hook: the hook no longer contains the command it starts gatekeep with")
    return hook_text.replace(real, command)


def timed(child: pexpect.spawn, line: str) -> float:
    start_time = time.perf_counter()
    child.sendline(line)
    child.expect_exact(PROMPT, timeout=30)
    elapsed = time.perf_counter() - start_time
    if "gatekeep" in child.before:
        raise SystemExit(f"bench_hook: gatekeep said something on {line!r}: {child.before.strip()[:300]}")
    return elapsed


def measure(shell: str, tmp: Path) -> None:
    plain = start(shell, tmp / f"{shell}-plain", gated=False)
    gated = start(shell, tmp / f"{shell}-gated", gated=True)
    shell_side = start(shell, tmp / f"{shell}-shell-side", gated=True, hook_command="true")
    everything = [line for lines, _ in GOALS.values() for line in lines]
    samples: dict[tuple[str, str], list[float]] = {}
    floors = []
    for child in (plain, gated, shell_side):
        for line in everything:
            timed(child, line)  # warm compiled files, gatekeep's caches and the shells' hashes
    for _ in range(ROUNDS):
        floors += [floor_time(user_environment(tmp / "floor")) for _ in range(3)]
        for line in everything:
            for kind, child in (("plain", plain), ("gated", gated), ("shell", shell_side)):
                samples.setdefault((kind, line), []).append(timed(child, line))
    for child in (plain, gated, shell_side):
        child.close(force=True)
    base = {line: statistics.median(samples[("plain", line)]) for line in everything}
    for title, (lines, goal) in GOALS.items():
        heading(f"{shell}: {title}, typed")
        costs = []
        for line in lines:
            figure = Figure([s - base[line] for s in samples[("gated", line)]], floors)
            costs += figure.samples
            print(f"  {line:<56} {figure.shown()}")
        whole = Figure(costs, floors)
        print(f"  {'all of them':<56} {whole.shown()}  {verdict(goal, whole.median)}")
    hook_costs = [s - base[line] for line in everything for s in samples[("shell", line)]]
    print(f"  {'shell side (the hook, gatekeep replaced by true)':<56} {Figure(hook_costs, floors).shown()}")


def main() -> int:
    print(f"lines typed into gated shells, as installed by `gatekeep install`; {ROUNDS} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        for shell in ("bash", "zsh"):
            measure(shell, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
