"""Per-line cost of the shell hooks, shell side and whole, against `python3 -c pass`.

For each shell, one interactive session per configuration runs LINES lines of
`:` through a pseudo-terminal, and the time per line is the median over
ROUNDS rounds:
  plain  - no hook: the cost of the round trip itself;
  shell  - the hook, with gatekeep replaced by `true`: what the hook adds in the shell;
  full   - the hook with the real gatekeep: what a person waits for per line.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

from gatekeep.commands.hook import hook_command, hook_script

LINES = 40
ROUNDS = 5
PROMPT = "BENCH> "


def python_floor(runs: int = 20) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def hook(shell: str, command: str | None) -> str:
    text = hook_script(shell)  # in this process, so that hook_command() below is the very text in it
    if command is not None:
        assert hook_command() in text
        text = text.replace(hook_command(), command)
    return text


def per_line(shell: str, hook_text: str | None, home: Path) -> float:
    home.mkdir(parents=True, exist_ok=True)
    rc = f"PS1='{PROMPT}'\n"
    if hook_text is not None:
        (home / "hook.sh").write_text(hook_text)
        rc += f"source {home / 'hook.sh'}\n"
    env = {**os.environ, "HOME": str(home), "TERM": "dumb", "GATEKEEP_HOME": str(home / "gk")}
    if shell == "bash":
        (home / "bashrc").write_text(rc)
        child = pexpect.spawn(
            "bash", ["--noprofile", "--rcfile", str(home / "bashrc"), "-i"], env=env, encoding="utf-8"
        )
    else:
        (home / ".zshrc").write_text(rc)
        child = pexpect.spawn("zsh", ["-i"], env={**env, "ZDOTDIR": str(home)}, encoding="utf-8")
    child.delaybeforesend = None
    child.expect_exact(PROMPT, timeout=30)
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(LINES):
            child.sendline(":")
            child.expect_exact(PROMPT, timeout=30)
        rounds.append((time.perf_counter() - start) / LINES)
    child.close(force=True)
    return statistics.median(rounds)


def main() -> None:
    floor = python_floor()
    print(f"hook overhead per line ({os.cpu_count()} cores); floor: python3 -I -c pass = {floor * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        for shell in ("bash", "zsh"):
            plain = per_line(shell, None, Path(tmp) / f"{shell}-plain")
            shell_side = per_line(shell, hook(shell, "true"), Path(tmp) / f"{shell}-shell")
            full = per_line(shell, hook(shell, None), Path(tmp) / f"{shell}-full")
            hook_ms, full_ms = (shell_side - plain) * 1000, (full - plain) * 1000
            print(
                f"  {shell:<4}  hook, shell side: {hook_ms:6.2f} ms ({hook_ms / 1000 / floor:.2f}x floor)"
                f"   whole line with gatekeep: {full_ms:6.1f} ms ({full_ms / 1000 / floor:.2f}x floor)"
            )


if __name__ == "__main__":
    main()
