"""`gatekeep audit stats`: what the gate decided over a period, and which rules would remove most asks.

Made for the roll-out: run with `mode: audit` for a while, then ask here
which rules to add before switching to enforce. The asked lines are decided
again under the current policy, so rules added since count.
"""

from __future__ import annotations

import json
import shlex
from datetime import datetime

import click

from gatekeep.core.display import visible
from gatekeep.core.errors import EXIT_ALLOW, PolicyError
from gatekeep.core.paths import get_paths
from gatekeep.judge.policy import load_policy
from gatekeep.record import audit
from gatekeep.record.stats import parse_since, policies_now, read_records, summarize


def audit_stats(since: str | None, as_json: bool) -> int:
    start = parse_since(since) if since is not None else None
    paths = get_paths()
    try:
        load_policy(paths)
        policy_for, policy_error = policies_now(paths), None
    except PolicyError as e:  # the counts are still worth showing; only the re-check needs a policy
        policy_for, policy_error = None, str(e)
    summary = {
        "since": _iso(start) if start else None,
        **summarize(read_records(paths.audit_log, start), policy_for),
        "policy_error": policy_error,
    }
    if as_json:
        click.echo(json.dumps(summary, ensure_ascii=False))
    else:
        _show(summary)
    return EXIT_ALLOW


def _audit_blocked(count: int) -> str:
    """Audit mode blocks only what holds even then (the built-in policy's denies, a policy that
    does not load, a line that ran out of time)."""
    return "nothing blocked" if not count else f"{count:,} blocked even so"


def _iso(when: datetime) -> str:
    return audit.timestamp(when.timestamp())


def _show(s: dict) -> None:
    period = f"audit log since {_short(s['since'])} UTC" if s["since"] else "audit log"
    if not s["records"]:
        click.echo(f"{period}: no records")
    else:
        click.echo(
            f"{period}: {s['records']:,} records, {_short(s['first'])} to {_short(s['last'])} UTC"
            + (f", {s['audit_mode']:,} in audit mode ({_audit_blocked(s['audit_blocked'])})" if s["audit_mode"] else "")
        )
        click.echo(f"decision: {_counts(s['decisions'])}")
        if s["policy_errors"]:
            click.echo(f"policy errors: {s['policy_errors']:,} lines blocked because the policy did not load")
        click.echo(f"outcome:  {_counts(s['outcomes'])}")
        if s["answers"]:
            click.echo(f"answers:  {_counts(s['answers'])}")
    review = s["review"]
    if review["asked"]:
        click.echo(
            f"reviewer: asked about {review['asked']:,} questions, answered {review['answered']:,}"
            f" ({review['allowed']:,} allowed, {review['denied']:,} denied); overruled by you {review['overruled']:,};"
            f" no verdict (failed, timed out) {review['failed']:,}"
        )
    if s["unreadable"]:
        click.echo(f"unreadable lines skipped: {s['unreadable']:,}")
    if s["top_names"]:
        click.echo("most asked:")
        for entry in s["top_names"]:
            click.echo(f"  {entry['asks']:>6,}  {visible(entry['name'])}")
    asks = s["asks"]
    if s["policy_error"]:
        click.echo(f"the asks were not decided again: {s['policy_error']}")
    elif asks["total"]:
        click.echo(
            f"under the current policy, of the {asks['total']:,} asks: {asks['now_allowed']:,} would now be allowed, "
            f"{asks['now_denied']:,} denied, {asks['still_ask']:,} would still ask"
            + (f" ({asks['no_rule']:,} that no rule can allow)" if asks["no_rule"] else "")
        )
    for entry in s.get("postures", ()):
        click.echo(
            f"`posture: {entry['posture']}` would remove {entry['removes']:,} of the {asks['still_ask']:,} that still ask"
            " (what it lets through: docs/policy.md#postures)"
        )
    if s["rules"]:
        commands = [f"gatekeep rules add {visible(shlex.quote(r['rule']))}" for r in s["rules"]]
        share = f"{s['removed'] / asks['still_ask']:.0%}"
        click.echo(f"these {len(commands)} rules would remove {s['removed']:,} of them ({share}):")
        width = max(map(len, commands))
        for command, rule in zip(commands, s["rules"], strict=True):
            click.echo(f"  {command:<{width}}  # removes {rule['removes']:,}")


def _counts(counter: dict) -> str:
    return ", ".join(f"{n:,} {kind}" for kind, n in counter.items())


def _short(ts: str | None) -> str:
    """`2026-11-22T15:39:30.123Z` as `2026-11-22 15:39`."""
    return visible(str(ts))[:16].replace("T", " ")
