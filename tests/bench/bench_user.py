"""Issue 18's goals that are whole processes, measured in a user's configuration (userenv.py).

  claude-hook            one PreToolUse event to `agent-hook claude`, run as
                         `gatekeep install --agent claude` registers it (through
                         /bin/sh, started as the shell hooks start gatekeep:
                         `python -I -S -c …`, without site and pip's wrapper,
                         which imports re), and through the console script;  goal ≤ 2.0×
  first check after an   `git status` as the hooks run it, each sample after a
  edit                   comment was appended to the user policy:
                           1,000 rules                                   goal ≤ 4×
                           10,000 rules                                  goal ≤ 10×
  two policies in turn   the user policy and GATEKEEP_POLICY=other.yaml
                         in turn, against the user policy alone:         goal ≤ 1.1×
  lines, as the hooks    plain lines and lines that need the full parser, one
  run gatekeep           process each (bench_hook.py types them into real shells,
                         which is what the goals are about; these are the process
                         alone, for finding where time goes)

Ratios are to `python -c pass` in the same run, min / median / max of the samples.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from userenv import (
    RUNS,
    Figure,
    agent_hook_command,
    check_argv,
    floor_time,
    gatekeep_executable,
    heading,
    paired,
    policy_file,
    rules,
    run_timed,
    user_environment,
    verdict,
)

PLAIN = ["git status", "ls -la", "git log --oneline | head -5", "npm run build", "cd src && make test"]
PARSER = [
    "git log --format='%h %s' | head",
    'echo "$HOME"',
    "for f in *.py; do wc -l $f; done",
    "ls $(pwd)",
    'find . -name "*.py" | xargs wc -l',
]
EXTRA_ALLOW = ("npm run build *", "make test *")


def claude_event(command: str, cwd: str) -> bytes:
    event = {
        "session_id": "bench",
        "transcript_path": "/dev/null",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    return json.dumps(event).encode()


def lines(env: dict, title: str, chosen: list[str]) -> list[Figure]:
    heading(title)
    figures = []
    for line in chosen:
        figure = paired(env, check_argv(line, env))
        figures.append(figure)
        print(f"  {line:<56} {figure.shown()}")
    return figures


def cold(tmp: Path, count: int, goal: float) -> bool:
    home = tmp / f"cold{count}"
    env = user_environment(home, rules(count))
    edits = iter(range(10**6))

    def edit() -> None:
        with open(policy_file(home), "a") as f:
            f.write(f"# edit {next(edits)}\n")

    figure = paired(env, check_argv("git status", env), runs=max(5, RUNS // 2), before=edit)
    print(f"  {f'{count:,} rules':<56} {figure.shown()}  {verdict(goal, figure.median)}")
    return figure.median <= goal


def two_policies(tmp: Path) -> bool:
    """One policy alone, then two in turn (GATEKEEP_POLICY switches the user policy, as `--policy`
    or claude-hook's own policy would); each sample after a floor run."""
    home = tmp / "two"
    env = user_environment(home, rules(200, EXTRA_ALLOW))
    other = home / "other.yaml"
    other.write_text(rules(300, EXTRA_ALLOW))
    env_other = {**env, "GATEKEEP_POLICY": str(other)}
    argv = check_argv("git status", env)
    single = paired(env, argv)
    run_timed(argv, env_other)
    turns, floors = [], []
    for i in range(RUNS):
        floors.append(floor_time(env))
        turns.append(run_timed(argv, env_other if i % 2 else env)[0])
    both = Figure(turns, floors)
    ratio = both.median / single.median
    print(f"  {'one policy':<56} {single.shown()}")
    print(f"  {'two policies in turn':<56} {both.shown()}")
    print(f"  {'two in turn / one (medians)':<56} {ratio:5.2f}×  {verdict(1.1, ratio)}")
    return ratio <= 1.1


def main() -> int:
    print(f"gatekeep as users run it: {sys.executable}; {RUNS} samples a figure; ratios to `python -c pass`")
    missed = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = user_environment(tmp / "home", rules(200, EXTRA_ALLOW))
        (tmp / "home" / "src").mkdir()

        heading("agent-hook claude with one Bash event (`git status`)")
        event = claude_event("git status", str(tmp))
        registered = ["/bin/sh", "-c", agent_hook_command(env, "claude")]
        for title, argv in (
            ("as `install --agent claude` registers it", registered),
            ("console script", [gatekeep_executable(), "agent-hook", "claude"]),
        ):
            figure = paired(env, argv, stdin=event)
            print(f"  {title:<56} {figure.shown()}  {verdict(2.0, figure.median)}")
            missed += figure.median > 2.0

        heading("first check after an edit of the user policy")
        missed += not cold(tmp, 1_000, 4.0)
        missed += not cold(tmp, 10_000, 10.0)

        heading("two policies used in turn")
        missed += not two_policies(tmp)

        lines(env, "plain lines, one `check` process as the hooks start it", PLAIN)
        lines(env, "lines that need the full parser, one process each", PARSER)
    print(f"\n{'all goals met' if not missed else f'{missed} goal(s) missed'} (goals for typed lines: bench_hook.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
