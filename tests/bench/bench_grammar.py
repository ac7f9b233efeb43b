"""Does gatekeep read every line bash can run? Lines of a real agent, against `bash -n` (issue 35).

Reads a JSONL file of agent command lines (a `command` key per object, as published agent
trajectories give them: pass its path). For each line bash accepts (`bash -n`, which parses
without running anything), gatekeep's reader must read it whole:

  unreadable   lines bash accepts that gatekeep could not read (a "could not be parsed" ask)  goal 0
  misread deny lines bash accepts that are denied only from a line gatekeep could not read     goal 0
               (the fallback's conservative scan found a denied command)

Lines bash rejects are counted, not judged (an agent's broken line). The lines are split once, by
a hash of their text, into a tuning part (3 in 4) and a held-out part (1 in 4), as in
bench_agent_lines.py: only the tuning part's unreadable lines can be listed (`--misses N`, the N
commonest reasons); the held-out part only ever gives its figures.

  python tests/bench/bench_grammar.py LINES.jsonl [--limit N] [--misses N]
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_agent_lines import held_out, read_lines  # noqa: E402


def bash_accepts(line: str) -> bool:
    done = subprocess.run(["bash", "-n", "-c", line], capture_output=True, timeout=30)
    return done.returncode == 0


def judge(lines: list[str]) -> list[dict]:
    from gatekeep.judge.gate import evaluate
    from gatekeep.judge.policy import combine, read_layer
    from gatekeep.core.resources import DEFAULT_POLICY
    from gatekeep.read.parse import parse_line

    policy = combine([read_layer("built-in", DEFAULT_POLICY, required=True)])
    results = []
    for line in lines:
        row = {"line": line, "bash": bash_accepts(line)}
        if row["bash"]:
            parsed = parse_line(line)
            row["read"] = parsed.complete
            row["problem"] = parsed.problems[0] if parsed.problems else ""
            row["misread_deny"] = not parsed.complete and evaluate(line, policy, "/tmp").decision == "deny"
        results.append(row)
    return results


def figures(rows: list[dict]) -> str:
    accepted = [r for r in rows if r["bash"]]
    unreadable = sum(1 for r in accepted if not r["read"])
    denied = sum(1 for r in accepted if r["misread_deny"])
    return (
        f"{len(rows):>6} lines, bash accepts {len(accepted):>6}: unreadable {unreadable:>4}"
        f" ({100 * unreadable / (len(accepted) or 1):.2f}%), misread denies {denied:>3}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a JSONL file of agent command lines")
    parser.add_argument("--limit", type=int, help="only the first N lines")
    parser.add_argument("--misses", type=int, default=0, help="the N commonest reasons the tuning part is unreadable")
    args = parser.parse_args()
    rows = judge(read_lines(args.path, args.limit))
    tuning = [r for r in rows if not held_out(r["line"])]
    held = [r for r in rows if held_out(r["line"])]
    print(f"tuning    {figures(tuning)}")
    print(f"held-out  {figures(held)}")
    if args.misses:
        import re

        reasons = collections.Counter(
            re.sub(r"column \d+", "column N", r["problem"]) for r in tuning if r["bash"] and not r["read"]
        )
        for reason, count in reasons.most_common(args.misses):
            print(f"  {count:>5}  {reason}")
    failed = any(r["bash"] and (not r["read"] or r["misread_deny"]) for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
