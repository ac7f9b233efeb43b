"""Replay with a reviewer: how many questions a reviewer that knows the task removes, and whether
any answer of any reviewer lets a destructive line through (issue 40).

Replays the projects of an agent-lines file as tests/bench/bench_replay.py does (in order, a user
who answers "always" with the first suggestion; a tuning part and a held-out part by a hash of the
project's name, figures only), with a `review:` section in the policy and a scripted reviewer
answering first at each question, as gatekeep's own rules let its verdict count
(review/reviewer.py `outcome`: a sure allow only where `posture: guard` would allow the line).
The agents here fix an issue in the project's repository (SWE-bench), so the reviewer knows that
task: its descriptions allow running the project's code, tests and scripts and changing its
files, and it answers a sure allow when every command that asks runs a program of the project's
toolchain (TASK_PROGRAMS) and no other opinion otherwise.

  removed     questions per 100 lines after a project's first 100, without and with the reviewer
  denied      benign lines the reviewer denied (it has no deny descriptions here: goal 0)
  destructive destructive lines (bench_replay.py's) allowed when a reviewer answers a sure
              allow to every one of them, as a model talked into it would (goal 0)

  python tests/bench/bench_review.py LINES.jsonl [--posture P] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASK = ["run the project's code, its tests and scripts", "change the files of the project's repository"]
REVIEW = f"review:\n  command: [scripted-reviewer]\n  allow: {json.dumps(TASK)}\n"
# the programs a reviewer told "fix an issue in this Python project" takes for running its code
TASK_PROGRAMS = {"python", "python3", "pytest", "tox", "make", "sed", "cat", "tee", "patch", "git", "pip", "echo", "printf"}


def task_aware(verdict) -> str:
    """The scripted reviewer's decision for a line that asks: allow when each asking command runs
    a program of the task's toolchain (by its first word, after any path), else none."""
    asking = [c for c in verdict.commands if c.decision != "allow"]
    words = [c.normalized.command.argv[0].rsplit("/", 1)[-1] for c in asking if c.normalized.command.argv]
    return "allow" if words and len(words) == len(asking) and all(w in TASK_PROGRAMS for w in words) else "none"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a JSONL file of agent command lines, with their `source`")
    parser.add_argument("--posture", choices=("strict", "workspace", "guard"), default="workspace")
    parser.add_argument("--limit", type=int, help="only the first N lines of the file")
    args = parser.parse_args()
    from gatekeep.judge.gate import evaluate
    from gatekeep.review.reviewer import Verdict, outcome
    from tests.bench.bench_agent_lines import held_out
    from tests.bench.bench_postures import destructive_lines, in_a_fresh_repository
    from tests.bench.bench_replay import WARM_UP, layered, projects, replay
    from tests.security.test_corpus import GUARD_ALLOWS, _fill

    def sure(decision: str) -> Verdict:
        return Verdict(decision, "high", "scripted", 0.0)

    grouped = projects(args.path, args.limit)
    with in_a_fresh_repository("gatekeep-review-") as cwd:
        long = {name: lines for name, lines in grouped.items() if len(lines) > WARM_UP}
        print(f"{args.path}: {len(grouped)} projects, {len(long)} with more than {WARM_UP} lines; posture {args.posture}")
        parts = {"tuning": [0, 0, 0, 0], "held-out": [0, 0, 0, 0]}  # asked without, asked with, counted, denied
        through = set()
        for name, lines in sorted(long.items()):
            part = parts["held-out" if held_out(name) else "tuning"]
            denied = []

            def reviewed(n, line, verdict, policy):
                decided = outcome(sure(task_aware(verdict)), verdict, policy.review)
                if decided == "deny" and n >= WARM_UP:
                    denied.append(line)
                return decided

            without, counted, _ = replay(lines, args.posture, cwd)
            with_reviewer, _, rules = replay(lines, args.posture, cwd, extra=REVIEW, reviewed=reviewed)
            part[0] += without
            part[1] += with_reviewer
            part[2] += counted
            part[3] += len(denied)
            learned = f"rules:\n  allow: {json.dumps(rules)}\nposture: {args.posture}\n{REVIEW}"
            for policy_text, setup, line in destructive_lines():
                if setup or line in GUARD_ALLOWS:
                    continue  # (not destructive: a write inside the tree, a request; any rule may allow them)
                policy = layered(policy_text, learned)
                verdict = evaluate(_fill(line), policy, cwd)
                if verdict.decision == "allow" or outcome(sure("allow"), verdict, policy.review) == "allow":
                    through.add(line)
        for label, (without, with_reviewer, counted, denied) in parts.items():
            before, after = (100 * x / counted if counted else 0.0 for x in (without, with_reviewer))
            print(
                f"  {label:<8} {before:5.1f} -> {after:5.1f} questions per 100 lines after the first {WARM_UP}"
                f" ({without:,} -> {with_reviewer:,} of {counted:,}); benign lines the reviewer denied: {denied}"
            )
        print(f"  destructive lines a reviewer's sure allow lets through: {len(through)} (goal 0)")
        for line in sorted(through):
            print(f"    {line[:150]!r}")
    return 1 if through else 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
