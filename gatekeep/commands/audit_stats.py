"""`gatekeep audit stats`: what the gate decided over a period, and which rules would remove most asks.

Made for the roll-out: run with `mode: audit` for a while, then ask here
which rules to add before switching to enforce. The asked lines are decided
again under the current policy, so rules added since count.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta, timezone

import click

from gatekeep import audit
from gatekeep.best_rules import TOP_SUGGESTIONS, best_suggestions, removals
from gatekeep.display import visible
from gatekeep.errors import EXIT_ALLOW, FatalError, PolicyError
from gatekeep.gate import evaluate, read_line, write_context
from gatekeep.paths import get_paths
from gatekeep.policy import Policy, load_policy

TOP_NAMES = 10
# A record's `ts` is taken when the line arrives, but the record is appended once it is decided,
# after a prompt of up to 3600 s and a terminal lock wait of 60 s: the log is in time order only
# to within that, so reading backwards stops at the first record older than --since by more.
LATE_BY_AT_MOST = timedelta(hours=2)
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
DECISIONS = ("allow", "ask", "deny")


def audit_stats(since: str | None, as_json: bool) -> int:
    start = parse_since(since) if since is not None else None
    paths = get_paths()
    try:
        load_policy(paths)
        policy_for, policy_error = _policies(paths), None
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


def parse_since(value: str) -> datetime:
    """`30m`, `24h`, `7d`, `2w` before now, or an ISO date or time (UTC unless it names an offset)."""
    text = value.strip()
    amount = re.fullmatch(r"(\d{1,9})\s*([smhdw])", text)
    when = _parse_time(text)
    if amount:
        try:
            when = datetime.now(timezone.utc) - timedelta(**{UNITS[amount[2]]: int(amount[1])})
        except OverflowError:  # before the year 1, and so before any record
            when = datetime.fromtimestamp(0, timezone.utc)
    if when is None:
        raise FatalError(
            f"--since: cannot read {value!r}: give a duration (30m, 24h, 7d, 2w) "
            "or a UTC date or time (2026-11-22, 2026-11-22T15:00)"
        )
    return when


def read_records(path: str, since: datetime | None) -> Iterator[dict | None]:
    """The log's records (None for a line that is not a JSON object); with `since`, only the
    newer ones, read backwards, so a long log costs only the period asked for."""
    if not os.path.exists(path):
        return
    with open(path, "rb") as f:
        if since is None:
            yield from (audit._decode(raw) for raw in f if raw.strip())
            return
        stop = since - LATE_BY_AT_MOST
        for raw in audit.lines_backwards(f):
            record = audit._decode(raw)
            when = _parse_time(record.get("ts")) if record is not None else None
            if when is None:
                yield None  # cannot be placed in the period
            elif when >= since:
                yield record
            elif when < stop:
                return


def summarize(
    records: Iterable[dict | None],
    policy_for: Callable[[str | None], Policy] | None = None,
    top: int = TOP_NAMES,
) -> dict:
    """Counts by decision, outcome, mode and answer; the most asked names; and, with `policy_for`
    (a directory -> the policy in force there now), what the asked lines get now and the rules
    that would remove most of those that still ask.

    Anything in `records` that is not a dict with a string `command` counts as unreadable. A line
    blocked because the policy did not load counts under policy_errors, not as a decision; its
    outcome (deny) still counts.
    """
    decisions: collections.Counter = collections.Counter(dict.fromkeys(DECISIONS, 0))
    outcomes: collections.Counter = collections.Counter(dict.fromkeys(("allow", "deny"), 0))
    answers: collections.Counter = collections.Counter()
    names: collections.Counter = collections.Counter()
    now: collections.Counter = collections.Counter(dict.fromkeys(DECISIONS, 0))
    still_asked: list[tuple[str, ...]] = []
    count = unreadable = audit_mode = prompted = policy_errors = 0
    first = last = None
    recheck = _Recheck(policy_for)
    for record in records:
        if not isinstance(record, dict) or not isinstance(record.get("command"), str):
            unreadable += 1
            continue
        count += 1
        if is_policy_error(record):  # no decision was made: nothing to count as a deny
            policy_errors += 1
        else:
            decisions[_kind(record.get("decision"))] += 1
        outcomes[_kind(record.get("outcome"))] += 1
        audit_mode += record.get("mode") == "audit"
        prompted += record.get("prompted") is True
        if record.get("answer") is not None:
            answers[_kind(record["answer"])] += 1
        ts = record.get("ts")
        if isinstance(ts, str):
            first, last = min(first or ts, ts), max(last or ts, ts)
        if record.get("decision") == "ask":
            cwd = record.get("cwd") if isinstance(record.get("cwd"), str) else None
            decision, asked_names, suggestions = recheck(record["command"], cwd)
            names.update(asked_names)
            if decision is not None:
                now[decision] += 1
                if decision == "ask":
                    still_asked.append(suggestions)
    rules, removed = best_suggestions(still_asked, TOP_SUGGESTIONS)
    return {
        "records": count,
        "unreadable": unreadable,
        "first": first,
        "last": last,
        "audit_mode": audit_mode,
        "decisions": dict(decisions),
        "policy_errors": policy_errors,
        "outcomes": dict(outcomes),
        "prompted": prompted,
        "answers": dict(answers.most_common()),
        "top_names": [{"name": n, "asks": c} for n, c in sorted(names.items(), key=lambda i: (-i[1], i[0]))[:top]],
        "asks": {
            "total": decisions["ask"],
            "rechecked": policy_for is not None,
            "now_allowed": now["allow"],
            "now_denied": now["deny"],
            "still_ask": now["ask"],
            "no_rule": sum(1 for s in still_asked if not s),
        },
        "rules": [{"rule": r, "removes": n} for r, n in zip(rules, removals(still_asked, rules), strict=True)],
        "removed": removed,
    }


def is_policy_error(record: dict) -> bool:
    """A line blocked because the policy did not load (check's record_broken_policy): recorded as a deny,
    with no policy in force, which every decided record names (policy_sha256). Records written before
    policy_sha256 existed lack the key, and are not taken for one."""
    return record.get("decision") == "deny" and "policy_sha256" in record and record["policy_sha256"] is None


class _Recheck:
    """An asked line's verdict now, the names that asked, and its suggestions; each line and
    directory is decided once."""

    def __init__(self, policy_for: Callable[[str | None], Policy] | None):
        self.policy_for = policy_for
        self.seen: dict[tuple[str, str | None], tuple] = {}

    def __call__(self, line: str, cwd: str | None) -> tuple[str | None, list[str], tuple[str, ...]]:
        key = (line, cwd)
        if key not in self.seen:
            self.seen[key] = self._decide(line, cwd)
        return self.seen[key]

    def _decide(self, line: str, cwd: str | None):
        if self.policy_for is None:  # no policy to judge by: every command of the line
            return None, _distinct(n.name for n in read_line(line)[1]), ()
        verdict = evaluate(line, self.policy_for(cwd), context=write_context(cwd))
        if verdict.decision == "allow":  # what asked then is what a rule allows now, if one does
            names = _distinct(c.normalized.name for c in verdict.commands if c.rule is not None)
            names = names or _distinct(c.normalized.name for c in verdict.commands)
        else:
            names = _distinct(c.normalized.name for c in verdict.commands if c.decision != "allow")
        return verdict.decision, names, tuple(verdict.suggestions)


def _policies(paths) -> Callable[[str | None], Policy]:
    """The policy in force in each directory now (its project policy included), loaded once per directory."""
    loaded: dict[str | None, Policy] = {}

    def policy_for(cwd: str | None) -> Policy:
        if cwd not in loaded:
            loaded[cwd] = load_policy(paths, None, cwd)
        return loaded[cwd]

    return policy_for


def _distinct(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _kind(value: object) -> str:
    return value if isinstance(value, str) else "unknown"


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"  # fromisoformat reads Z only from Python 3.11
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _iso(when: datetime) -> str:
    return audit.timestamp(when.timestamp())


def _show(s: dict) -> None:
    period = f"audit log since {_short(s['since'])} UTC" if s["since"] else "audit log"
    if not s["records"]:
        click.echo(f"{period}: no records")
    else:
        click.echo(
            f"{period}: {s['records']:,} records, {_short(s['first'])} to {_short(s['last'])} UTC"
            + (f", {s['audit_mode']:,} in audit mode (nothing blocked)" if s["audit_mode"] else "")
        )
        click.echo(f"decision: {_counts(s['decisions'])}")
        if s["policy_errors"]:
            click.echo(f"policy errors: {s['policy_errors']:,} lines blocked because the policy did not load")
        click.echo(f"outcome:  {_counts(s['outcomes'])}")
        if s["answers"]:
            click.echo(f"answers:  {_counts(s['answers'])}")
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
