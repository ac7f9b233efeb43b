"""With no configuration, how often do a coding agent's ordinary command lines ask?

Reads a JSONL file of agent command lines (one object a line with a `command`
key, as published agent trajectories give them: pass its path) and decides
each line with the built-in policy alone, in a fresh git repository as
tests/bench/bench_look_only.py does. Prints the share allowed / asked / denied.

The lines are split once, by a hash of their text, into a tuning part (3 in 4)
and a held-out part (1 in 4). Only the tuning part's asked lines can be listed
(`--misses N`, the N commonest reasons); the held-out part only ever gives its
figure, so that nobody tunes gatekeep on it.

  python tests/bench/bench_agent_lines.py LINES.jsonl [--limit N] [--misses N]
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECISIONS = ("allow", "ask", "deny")


def held_out(command: str) -> bool:
    """One line in four, by its text: the same lines whatever the file's order."""
    return hashlib.sha256(command.encode("utf-8", "surrogatepass")).digest()[0] % 4 == 0


def read_lines(path: str, limit: int | None = None) -> list[str]:
    lines = []
    with open(path, encoding="utf-8") as stream:
        for raw in stream:
            if raw.strip():
                lines.append(json.loads(raw)["command"])
    return lines[:limit] if limit else lines


def decide(lines: list[str]) -> list[tuple[str, object]]:
    """(line, LineVerdict) for each line, decided as bench_look_only decides its rows."""
    from tests.bench.bench_look_only import Row, decide_rows

    return [(row.command, verdict) for row, verdict in decide_rows([Row((line, "", "", "")) for line in lines])]


def figure(results: list[tuple[str, object]]) -> str:
    counts = collections.Counter(verdict.decision for _, verdict in results)
    total = len(results) or 1
    return "   ".join(f"{d} {counts[d]} = {100 * counts[d] / total:.1f}%" for d in DECISIONS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a JSONL file of agent command lines")
    parser.add_argument("--limit", type=int, help="only the first N lines")
    parser.add_argument("--misses", type=int, default=0, help="the N commonest reasons the tuning part asks")
    args = parser.parse_args()
    from tests.bench.bench_look_only import isolated

    lines = read_lines(args.path, args.limit)
    with isolated():
        results = decide(lines)
    tuning = [(line, v) for line, v in results if not held_out(line)]
    held = [(line, v) for line, v in results if held_out(line)]
    print(f"{args.path}: {len(results)} lines, built-in policy, no user configuration")
    print(f"  tuning part   ({len(tuning)}): {figure(tuning)}")
    print(f"  held-out part ({len(held)}): {figure(held)}")
    if args.misses:
        print_misses(tuning, args.misses)
    return 0


def print_misses(tuning: list[tuple[str, object]], count: int, indent: str = "  ") -> None:
    """The `count` commonest reasons the lines of the tuning part ask (never the held-out part's)."""
    reasons: collections.Counter = collections.Counter()
    example = {}
    for line, verdict in tuning:
        if verdict.decision != "allow":
            key = verdict.reason.split(":", 1)[0][:100]
            reasons[key] += 1
            example.setdefault(key, line)
    for key, n in reasons.most_common(count):
        print(f"{indent}{n:>5}  {key}\n{indent}       e.g. {example[key][:150]!r}")


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
