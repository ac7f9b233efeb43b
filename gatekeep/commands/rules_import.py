"""`gatekeep rules import FILE`: add the Bash rules of a Claude Code settings file to the user policy.

All rules go in under one lock and one write (policy_edit.add_rules). A pattern
the policy already has under another verdict stays where it is: importing
never loosens a rule the user wrote, and since deny entries are added first,
Claude's deny also wins over its own allow for the same pattern.
"""

from __future__ import annotations

import json

import click

from gatekeep.agents.claude_rules import Converted, convert_settings
from gatekeep.core.display import visible
from gatekeep.core.errors import EXIT_ALLOW, FatalError
from gatekeep.core.paths import get_paths


def rules_import(source: str, dry_run: bool, policy_file: str | None, as_json: bool = False) -> int:
    """Add the settings file's rules (or, with `dry_run`, only say what would be added).

    With `as_json`, one object: `source`, `policy`, `dry_run`, `entries` (one per settings entry:
    `entry`, `verdict`, `pattern`, `protect` (read/write, or null for a rule), `result` (added,
    present, kept or skipped) and `why` (why it was skipped, or the verdict it is kept under)),
    and `counts` by result.
    """
    from gatekeep.record.policy_edit import add_rules

    converted = convert_settings_file(source)
    target = policy_file or get_paths().user_policy
    wanted = [(c.pattern, c.verdict) for c in converted if c.pattern is not None and c.action is None]
    protect = [(c.action, c.verdict, c.pattern) for c in converted if c.pattern is not None and c.action]
    results = iter(add_rules(get_paths(), target, wanted, move=False, write=not dry_run, protect=protect))
    converted = [c for c in converted if c.action is None] + [c for c in converted if c.action]  # in results' order
    counts = {"added": 0, "present": 0, "kept": 0, "skipped": 0}
    entries = []
    for entry in converted:
        result = None if entry.pattern is None else next(results)
        kind, line = _describe(entry, result, dry_run)
        counts[kind] += 1
        entries.append(_entry_json(entry, kind, result))
        if not as_json:
            click.echo(line)
    if as_json:
        summary = {"source": source, "policy": target, "dry_run": dry_run, "entries": entries, "counts": counts}
        click.echo(json.dumps(summary, ensure_ascii=False))
        return EXIT_ALLOW
    would = "would be " if dry_run else ""
    summary = (
        f"{counts['added']} {would}added, {counts['present']} already present, "
        f"{counts['kept']} kept under another verdict, {counts['skipped']} skipped"
    )
    where = f"from {source} into {target}"
    click.echo(f"dry run, nothing written: {summary} ({where})" if dry_run else f"{summary} ({where})")
    return EXIT_ALLOW


def convert_settings_file(source: str) -> list[Converted]:
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise FatalError(f"cannot import {source}: the file does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise FatalError(f"cannot import {source}: cannot read it ({e})") from None
    try:
        settings = json.loads(text)
    except ValueError as e:
        raise FatalError(f"cannot import {source}: it is not JSON ({e})") from None
    try:
        return convert_settings(settings)
    except ValueError as e:
        raise FatalError(f"cannot import {source}: {e}") from None


def _entry_json(entry: Converted, kind: str, result: str | None) -> dict:
    why = entry.skipped if kind == "skipped" else result.removeprefix("kept as ") if kind == "kept" else None
    return {
        "entry": entry.entry,
        "verdict": entry.verdict,
        "pattern": entry.pattern,
        "protect": entry.action,
        "result": kind,
        "why": why,
    }


def _describe(entry: Converted, result: str | None, dry_run: bool) -> tuple[str, str]:
    """(what happened, one line saying so) for one settings entry."""
    source = visible(entry.entry if isinstance(entry.entry, str) else json.dumps(entry.entry))
    if result is None:
        return "skipped", f"skipped {entry.verdict} {source}: {entry.skipped}"
    rule = f"{entry.verdict} rule '{visible(entry.pattern)}' (from {source})"
    if entry.action:
        rule = f"protect.{entry.action}.{entry.verdict} '{visible(entry.pattern)}' (from {source})"
    if result == "added":
        return "added", f"{'would add' if dry_run else 'added'} {rule}"
    if result == "exists":
        return "present", f"already present: {rule}"
    return "kept", f"not added: {rule}; the policy already has it under {result.removeprefix('kept as ')}, and it stays"
