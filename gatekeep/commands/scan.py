"""`gatekeep scan`: what the policy would say about every line of a history file.

Never prompts and writes no audit record. Identical lines are decided once.

What it reads: FILE, or standard input with `-`. With neither, standard input
when it is a pipe or a file (`history | gatekeep scan`, `gatekeep scan < f`),
otherwise (a terminal, /dev/null) the user's history file, found by
history.default_history_file: $HISTFILE, then the file of the shell $SHELL
names (zsh: ${ZDOTDIR:-$HOME}/.zsh_history; bash: ~/.bash_history), then the
other shell's. Which one it read is said on stderr.
"""

from __future__ import annotations

import collections
import json
import os
import shlex
import stat
import sys

import click

from gatekeep.core.display import visible
from gatekeep.core.errors import EXIT_ALLOW, FatalError
from gatekeep.core.paths import current_directory, get_paths
from gatekeep.judge.gate import evaluate, verdict_json, write_context
from gatekeep.judge.policy import load_policy
from gatekeep.record.audit import new_id
from gatekeep.record.best_rules import best_suggestions, removals
from gatekeep.record.history import command_lines, decode, default_history_file, null_separated

PROGRESS_EVERY = 1000
PARALLEL_FROM = 2_000  # distinct lines
MAX_WORKERS = 8
CHUNK = 200
TOP_RULES = 10  # the most rules suggested, by default (--top)
# A rule is suggested only if it is worth at least this many asked lines: one that would stop a
# single line from asking is no reason to widen the policy.
MIN_GAIN = 2
DENIED_SHOWN = 20  # distinct denied lines listed; --json has them all
SHOWN_WIDTH = 200  # characters of a line shown in the summary


def scan(source: str | None, policy_file: str | None, as_json: bool, null: bool, top: int = TOP_RULES) -> int:
    global _policy, _context
    _policy = load_policy(get_paths(), policy_file, current_directory())
    _context = write_context(None, _policy)
    text = decode(_read_source(source))
    lines = list(null_separated(text) if null else command_lines(text.splitlines()))
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
    denied = collections.Counter(line for line in lines if decided[line][0] == "deny")
    asked = [decided[line][1] for line in lines if decided[line][0] == "ask"]
    counts = f"{tally['allow']:,} allowed, {tally['ask']:,} would ask, {tally['deny']:,} denied"
    click.echo(f"{len(lines):,} lines: {counts}")
    _show_denied(denied)
    if top:  # (--top 0: no suggestion of any kind)
        _show_postures([line for line in lines if decided[line][0] == "ask"])
    _show_suggestions(asked, top)
    return EXIT_ALLOW


def _show_postures(asked_lines: list[str]) -> None:
    """For each posture looser than the one in force, how many of the asked lines it would have
    allowed (they are decided again under it, in the directory scan runs in)."""
    from gatekeep.judge.policy import POSTURES

    if not asked_lines or _policy.default != "ask":
        return
    distinct = collections.Counter(asked_lines)
    for posture in reversed(POSTURES[: POSTURES.index(_policy.posture)]):  # the nearest first
        policy = _policy._replace(posture=posture)
        context = write_context(None, policy)
        removed = sum(n for line, n in distinct.items() if evaluate(line, policy, context=context).decision == "allow")
        if removed:
            click.echo(
                f"`posture: {posture}` would have removed {removed:,} of the {len(asked_lines):,} asks"
                " (what it lets through: docs/policy.md#postures)"
            )


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


def _read_source(source: str | None) -> bytes:
    """The bytes of FILE, of stdin for `-`, or, with no source, of stdin if it is piped, else of the user's history."""
    if source is None and _stdin_is_piped():
        click.echo("gatekeep: scanning standard input (give a FILE to scan that instead)", err=True)
        source = "-"
    elif source is None:
        path, why = default_history_file()
        click.echo(f"gatekeep: scanning {path} ({why}; give a FILE, or - for standard input)", err=True)
        source = str(path)
    elif source == "-" and sys.stdin.isatty():
        click.echo("gatekeep: reading command lines from the terminal; end with Ctrl-D", err=True)
    if source == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        return stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
    try:
        with open(source, "rb") as f:
            return f.read()
    except OSError as e:
        raise FatalError(f"cannot read {source} ({e.strerror or e})") from None


def _stdin_is_piped() -> bool:
    """A pipe, socket or regular file: something sent on purpose. A terminal or /dev/null is not."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # closed, or not a real descriptor
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISREG(mode)


def _show_denied(denied: collections.Counter) -> None:
    """Each denied line once, with how often it came, most frequent first (then in history order)."""
    if not denied:
        return
    total, distinct = sum(denied.values()), len(denied)
    click.echo(f"denied: {total:,} {_plural(total, 'line')}, {distinct:,} distinct, most frequent first:")
    for line, count in denied.most_common(DENIED_SHOWN):
        click.echo(f"  {count:>6,}  {_shorten(visible(line))}")
    if distinct > DENIED_SHOWN:
        click.echo(f"  and {distinct - DENIED_SHOWN:,} more (--json lists every line)")


def _show_suggestions(asked: list[tuple[str, ...]], top: int) -> None:
    """The rules, up to `top`, each worth at least MIN_GAIN asked lines; none if no rule is."""
    if not asked or top == 0:
        return
    rules, covered = best_suggestions(asked, top, min_gain=MIN_GAIN)
    if not rules:
        click.echo(f"no rule suggested: none would remove {MIN_GAIN} or more of the asks")
        return
    share = f"{covered / len(asked):.0%} of the asks ({covered:,} of {len(asked):,})"
    these = "this rule" if len(rules) == 1 else f"these {len(rules)} rules"
    click.echo(f"{these} would remove {share}:")
    commands = [f"gatekeep rules add {visible(shlex.quote(rule))}" for rule in rules]
    width = max(map(len, commands))
    for command, removed in zip(commands, removals(asked, rules), strict=True):
        click.echo(f"  {command:<{width}}  # removes {removed:,}")


def _shorten(text: str) -> str:
    return text if len(text) <= SHOWN_WIDTH else text[: SHOWN_WIDTH - 1] + "…"


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"
