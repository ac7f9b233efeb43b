"""How often the normalized name is right, on tests/data/corpus.tsv (2,082 tldr-pages lines
labelled by hand; see tests/data/CORPUS.md).

Prints the share of exact matches, split into tools the arity table knows and
tools it does not (where the fallback decides), and the most common misses.
Pass --misses N to list N misses.
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
from pathlib import Path

from gatekeep.arity import load_table
from gatekeep.normalize import normalize
from gatekeep.parse import parse_line

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus.tsv"


def gatekeep_name(line: str) -> str:
    commands = parse_line(line).commands
    return normalize(commands[-1]).name if commands else ""  # the outer command follows its substitutions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--misses", type=int, default=15)
    args = parser.parse_args()
    # the arity table's cache goes to a throw-away state dir, never the user's
    scratch = tempfile.TemporaryDirectory(prefix="gatekeep-bench-")  # removed when main() returns
    os.environ["GATEKEEP_HOME"] = scratch.name
    table = load_table()
    rows = [line.rstrip("\n").split("\t") for line in CORPUS.open(encoding="utf-8")][1:]
    tally = collections.Counter()
    misses = []
    for command, expected, _source in rows:
        got = gatekeep_name(command)
        tool = expected.split()[0].rsplit("/", 1)[-1]
        group = "known" if tool in table.value_options or any(k.split()[0] == tool for k in table.arity) else "unknown"
        tally[group, got == expected] += 1
        if got != expected:
            misses.append((group, command, expected, got))
    total = len(rows)
    right = tally["known", True] + tally["unknown", True]
    print(f"names right: {right}/{total} = {right / total:.1%}")
    for group in ("known", "unknown"):
        n = tally[group, True] + tally[group, False]
        if n:
            print(f"  {group:<7} tools: {tally[group, True]}/{n} = {tally[group, True] / n:.1%}")
    for group, command, expected, got in misses[: args.misses]:
        print(f"  miss ({group}): {command!r}: expected {expected!r}, got {got!r}")


if __name__ == "__main__":
    main()
