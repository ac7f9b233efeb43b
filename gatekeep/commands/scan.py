"""`gatekeep scan`: what the policy would say about every line of a history file.

Never prompts and writes no audit record. Identical lines are decided once.
"""

from __future__ import annotations

import collections
import json
import sys
import uuid
from pathlib import Path

import click

from gatekeep.display import visible
from gatekeep.errors import EXIT_ALLOW
from gatekeep.gate import evaluate, verdict_json
from gatekeep.history import command_lines, null_separated
from gatekeep.paths import get_paths
from gatekeep.policy import load_policy

TOP_SUGGESTIONS = 5
PROGRESS_EVERY = 1000


def scan(source: str, policy_file: Path | None, as_json: bool, null: bool) -> int:
    policy = load_policy(get_paths(), policy_file)
    lines = list(_read(source, null))
    cache: dict = {}
    tally: collections.Counter = collections.Counter()
    denied: list[str] = []
    asked: list[tuple[str, ...]] = []
    show_progress = not as_json and sys.stderr.isatty() and len(lines) > PROGRESS_EVERY
    for n, line in enumerate(lines, 1):
        verdict = cache.get(line)
        if verdict is None:
            verdict = cache[line] = evaluate(line, policy)
        tally[verdict.decision] += 1
        if as_json:
            outcome = "allow" if verdict.decision == "allow" else "deny"
            record = {"id": str(uuid.uuid4()), "command": line, **verdict_json(verdict), "outcome": outcome}
            click.echo(json.dumps(record, ensure_ascii=False))
        elif verdict.decision == "deny":
            denied.append(line)
        elif verdict.decision == "ask":
            asked.append(verdict.suggestions)
        if show_progress and n % PROGRESS_EVERY == 0:
            click.echo(f"\rscanned {n:,}/{len(lines):,} lines", err=True, nl=False)
    if show_progress:
        click.echo(err=True)
    if not as_json:
        _summary(len(lines), tally, denied, asked)
    return EXIT_ALLOW


def _read(source: str, null: bool):
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8", errors="replace")
    return null_separated(text) if null else command_lines(text.splitlines())


def best_suggestions(asked: list[tuple[str, ...]], count: int = TOP_SUGGESTIONS) -> tuple[list[str], int]:
    """Greedily pick the rules that would stop the most prompts; a line stops asking once all its
    suggestions are picked. Returns the rules and how many asked lines they cover."""
    chosen: list[str] = []
    open_lines = [set(s) for s in asked if s]
    for _ in range(count):
        gains = collections.Counter()
        for needed in open_lines:
            remaining = needed.difference(chosen)
            if remaining:
                for suggestion in remaining:
                    gains[suggestion] += 1 / len(remaining)
        if not gains:
            break
        chosen.append(max(gains, key=lambda s: (gains[s], s)))
    covered = sum(1 for needed in open_lines if needed <= set(chosen))
    return chosen, covered


def _summary(total: int, tally, denied: list[str], asked: list[tuple[str, ...]]) -> None:
    click.echo(f"{total:,} lines: {tally['allow']:,} allowed, {tally['ask']:,} would ask, {tally['deny']:,} denied")
    if denied:
        click.echo("denied:")
        for line in dict.fromkeys(denied):
            click.echo(f"  {visible(line)}")
    rules, covered = best_suggestions(asked)
    if rules and asked:
        share = f"{covered / len(asked):.0%} of the asks ({covered:,} of {len(asked):,})"
        click.echo(f"these {len(rules)} rules would remove {share}:")
        for rule in rules:
            click.echo(f"  gatekeep rules add '{visible(rule)}'")
