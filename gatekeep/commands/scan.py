"""`gatekeep scan`: what the policy would say about every line of a history file.

Never prompts and writes no audit record. Identical lines are decided once.
"""

from __future__ import annotations

import collections
import json
import os
import sys
from pathlib import Path

import click

from gatekeep.audit import new_id
from gatekeep.best_rules import best_suggestions
from gatekeep.display import visible
from gatekeep.errors import EXIT_ALLOW
from gatekeep.gate import evaluate, verdict_json, write_context
from gatekeep.history import command_lines, null_separated
from gatekeep.paths import get_paths
from gatekeep.policy import load_policy

PROGRESS_EVERY = 1000
PARALLEL_FROM = 2_000  # distinct lines
MAX_WORKERS = 8
CHUNK = 200


def scan(source: str, policy_file: str | None, as_json: bool, null: bool) -> int:
    global _policy, _context
    _policy = load_policy(get_paths(), policy_file, os.getcwd())
    _context = write_context(None)
    lines = list(_read(source, null))
    distinct = list(dict.fromkeys(lines))  # identical lines are decided once
    show_progress = not as_json and sys.stderr.isatty() and len(distinct) > PROGRESS_EVERY
    decided: dict[str, tuple] = {}
    for n, (line, result) in enumerate(zip(distinct, _decide_all(distinct), strict=True), 1):
        decided[line] = result
        if show_progress and n % PROGRESS_EVERY == 0:
            click.echo(f"\rscanned {n:,}/{len(distinct):,} distinct lines", err=True, nl=False)
    if show_progress:
        click.echo(err=True)
    if as_json:
        out = []
        for line in lines:
            decision, _, fields = decided[line]
            outcome = "allow" if decision == "allow" else "deny"
            # as json.dumps({"id", "command", **fields, "outcome"}) writes it; `fields` came encoded
            out.append(f'{{"id": "{new_id()}", "command": {json.dumps(line, ensure_ascii=False)}, {fields}, ')
            out.append(f'"outcome": "{outcome}"}}\n')
        sys.stdout.write("".join(out))
        return EXIT_ALLOW
    tally: collections.Counter = collections.Counter(decided[line][0] for line in lines)
    denied = [line for line in lines if decided[line][0] == "deny"]
    asked = [decided[line][1] for line in lines if decided[line][0] == "ask"]
    _summary(len(lines), tally, denied, asked)
    return EXIT_ALLOW


# Set before the worker processes fork, so each has the policy without pickling it.
_policy = None
_context = None


def _decide(line: str) -> tuple[str, tuple[str, ...], str]:
    """The verdict, its suggestions, and its JSON fields, encoded here: in a worker process, where
    encoding is spread over the cores and the text travels back cheaper than the objects."""
    verdict = evaluate(line, _policy, context=_context)
    return verdict.decision, verdict.suggestions, json.dumps(verdict_json(verdict), ensure_ascii=False)[1:-1]


def _decide_all(lines: list[str]):
    """The lines' verdicts in order; spread over one process per core when there are many.

    Each line is independent, and parsing is pure Python, so processes (not
    threads) are what make a long history fast: they fork with the policy
    loaded and send back only the small results. Fewer lines than
    PARALLEL_FROM are not worth the start-up.
    """
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if workers < 2 or len(lines) < PARALLEL_FROM:
        yield from map(_decide, lines)
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield from pool.imap(_decide, lines, chunksize=CHUNK)


def _read(source: str, null: bool):
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8", errors="replace")
    return null_separated(text) if null else command_lines(text.splitlines())


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
