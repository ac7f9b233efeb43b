"""With no configuration, how often does a look-only command of a popular tool ask?

Reads tests/data/tldr_examples.tsv (1,684 tldr-pages examples of ~100 popular tools,
labelled `look` when the description says the command only displays, lists or
shows, else `other`; see tests/data/CORPUS.md) and decides each `look` line with
the built-in policy alone: an empty user policy, no system policy, no project
policy, no approvals. Prints the share allowed / asked / denied, then the asked
lines grouped by tool (the line's first word): the 15 most-asked tools, each
with its asked/look count, one example and gatekeep's reason, then the rest by
count; and every denied line.

  --all               list every asked line (with its source page) instead
  --label other       measure the `other` rows instead
  --corpus heldout    measure tests/data/look_heldout.tsv instead (1,000 examples from
                      205 other tldr pages, built by the same rules; see CORPUS.md)
  --show-misses       with --corpus heldout, also print the asked and denied lines
  --posture P         decide with `posture: P` as the only user setting (strict, workspace, guard)

The held-out corpus is for reporting, not for tuning: nobody looks at its misses
while changing gatekeep, so that its figure stays an honest estimate for commands
gatekeep was not fitted to. With --corpus heldout the bench therefore prints only
the shares allowed / asked / denied and the row counts, never the asked or denied
lines or tools, unless --show-misses is given (and whoever gives it should no
longer tune on what they saw). The default, --corpus tuned, is the corpus above,
which is tuned on freely.

Evaluated in-process, in a throw-away set-up (nothing is written outside it):
GATEKEEP_HOME, HOME, the XDG dirs and GATEKEEP_SYSTEM_POLICY point into a
temporary directory, as tests/conftest.py isolates a test. Each line is decided
as if typed in a fresh git repository (`git init -q`, no commits) holding empty
files named like the corpus's commonest placeholders: WORKSPACE_FILES below
(file.txt, file1.txt, old.txt, src/, ...). The process's own current directory is
that repository too, since some checks look for a word as a relative path
(`git checkout file.txt`). No line is run.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "tldr_examples.tsv"
HELDOUT = ROOT / "tests" / "data" / "look_heldout.tsv"  # held out: report its figure, never tune on its misses
CORPORA = {"tuned": CORPUS, "heldout": HELDOUT}
DECISIONS = ("allow", "ask", "deny")
# the files the corpus's look lines name most (placeholders as substituted, see CORPUS.md)
WORKSPACE_FILES = (
    "README.md", "Makefile", "file.txt", "file1.txt", "file2.txt", "old.txt", "new.txt",
    "file.json", "file.yaml", "manifest.yaml", "file.bin", "file.md5", "file.pem", "file.crt",
    "archive.zip", "source.tar", "src/main.py", ".github/workflows/ci.yml",
)  # fmt: skip


class Row(tuple):
    """One corpus row: command, description, label, source."""

    __slots__ = ()
    command = property(lambda self: self[0])
    description = property(lambda self: self[1])
    label = property(lambda self: self[2])
    source = property(lambda self: self[3])


def read_rows(label: str | None = None, path: Path = CORPUS) -> list[Row]:
    """The rows of the corpus at `path` (the tuned corpus by default), those labelled `label` only if given."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == ["command", "description", "label", "source"], lines[0]
    rows = [Row(line.split("\t")) for line in lines[1:] if line]
    return [r for r in rows if label is None or r.label == label]


def make_workspace(directory: Path) -> Path:
    """A fresh git repository in `directory` holding WORKSPACE_FILES (empty)."""
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(directory)], check=True, stdin=subprocess.DEVNULL)
    for name in WORKSPACE_FILES:
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).touch()
    return directory


def decide_rows(rows: list[Row], posture: str | None = None) -> list[tuple[Row, object]]:
    """(row, LineVerdict) for each row, decided with the built-in policy and an empty user policy
    (or one that sets only `posture`), typed in a fresh workspace (make_workspace). The caller isolates gatekeep first: GATEKEEP_HOME
    must already name a throw-away directory (the tests' autouse fixture, or main() here)."""
    if not os.environ.get("GATEKEEP_HOME"):
        raise RuntimeError("set GATEKEEP_HOME to a temporary directory first")
    from gatekeep.judge.gate import evaluate, write_context
    from tests.conftest import policy_from

    policy = policy_from(f"posture: {posture}\n" if posture else "")
    before = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="gatekeep-look-") as tmp:
        cwd = str(make_workspace(Path(tmp) / "repo").resolve())
        try:
            os.chdir(cwd)
            context = write_context(cwd, policy)
            return [(row, evaluate(row.command, policy, cwd, context)) for row in rows]
        finally:
            os.chdir(before)


def shares(results: list[tuple[Row, object]]) -> dict[str, float]:
    """Percent of the rows per decision (allow, ask, deny)."""
    counts = collections.Counter(verdict.decision for _, verdict in results)
    return {d: 100 * counts[d] / len(results) if results else 0.0 for d in DECISIONS}


def tool(command: str) -> str:
    return command.split()[0] if command.split() else ""


@contextlib.contextmanager
def isolated():
    """GATEKEEP_HOME, HOME, XDG dirs and the system policy in a temporary directory (conftest's _isolate)."""
    import pytest

    with tempfile.TemporaryDirectory(prefix="gatekeep-bench-") as tmp, pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("GATEKEEP_HOME", str(Path(tmp) / "gatekeep"))  # before gatekeep is imported
        from tests.conftest import _isolate

        _isolate(monkeypatch, Path(tmp))
        yield


def report_shares(results: list[tuple[Row, object]], label: str, path: Path = CORPUS) -> None:
    """The row count and the share allowed / asked / denied, nothing about which lines."""
    share = shares(results)
    counts = collections.Counter(verdict.decision for _, verdict in results)
    print(f"`{label}` rows of {path.relative_to(ROOT)}, built-in policy, no user configuration: {len(results)}")
    print("  " + "   ".join(f"{d} {counts[d]} = {share[d]:.1f}%" for d in DECISIONS))


def report(results: list[tuple[Row, object]], label: str, show_all: bool, limit: int = 15, path: Path = CORPUS) -> None:
    """The shares, then the asked lines: `limit` tools with an example each (two lines per tool), or all."""
    report_shares(results, label, path)
    asked = [(row, verdict) for row, verdict in results if verdict.decision == "ask"]
    if show_all:
        print(f"\nasked ({len(asked)}):")
        for row, verdict in asked:
            print(f"  {row.command}    [{row.source}]\n      {verdict.reason}")
    else:
        per_tool = collections.Counter(tool(r.command) for r, _ in results)
        groups: dict[str, list] = {}
        for row, verdict in asked:
            groups.setdefault(tool(row.command), []).append((row, verdict))
        ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
        print(f"\nasked, by tool ({len(asked)} lines, {len(groups)} tools; asked/{label} rows, one example):")
        for name, items in ranked[:limit]:
            row, verdict = items[0]
            print(f"  {name:<11} {len(items):>3}/{per_tool[name]:<3} {row.command}\n{'':>22}{verdict.reason}")
        if len(ranked) > limit:
            rest = ", ".join(f"{name} {len(items)}" for name, items in ranked[limit:])
            print(
                textwrap.fill(f"and {rest} (--all lists every line)", 118, initial_indent="  ", subsequent_indent="  ")
            )
    denied = [(row, verdict) for row, verdict in results if verdict.decision == "deny"]
    if denied:
        print(f"\ndenied ({len(denied)}):")
        for row, verdict in denied:
            print(f"  {row.command}\n      {verdict.reason}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="print every asked line")
    parser.add_argument("--label", choices=("look", "other"), default="look")
    parser.add_argument(
        "--corpus", choices=tuple(CORPORA), default="tuned", help="tuned: tldr_examples.tsv; heldout: look_heldout.tsv"
    )
    parser.add_argument(
        "--show-misses", action="store_true", help="with --corpus heldout, also print the asked and denied lines"
    )
    parser.add_argument(
        "--posture", choices=("strict", "workspace", "guard"), help="set this posture in the user policy"
    )
    args = parser.parse_args()
    path = CORPORA[args.corpus]
    with isolated():
        results = decide_rows(read_rows(args.label, path), args.posture)
    if args.corpus == "heldout" and not args.show_misses:
        report_shares(results, args.label, path)
        rows = read_rows(path=path)
        looks, pages = sum(row.label == "look" for row in rows), len({row.source for row in rows})
        print(f"  ({len(rows)} rows in all: {looks} look, {len(rows) - looks} other, from {pages} pages)")
        print("  held out: its asked and denied lines are hidden (--show-misses shows them; then stop tuning on them)")
        return 0
    report(results, args.label, args.all, path=path)
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True  # no __pycache__ for tests/ from a benchmark run
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # for tests.conftest
    sys.exit(main())
