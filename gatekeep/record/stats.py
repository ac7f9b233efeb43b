"""Reading the audit log back: the records of a period, and what they add up to under the policy now.

`gatekeep audit stats` shows it. The asked lines are decided again under the current policy, so
rules added since count; best_rules.py says which rules would remove the most asks.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta, timezone

from gatekeep.core.errors import FatalError
from gatekeep.judge.gate import evaluate, read_line, write_context
from gatekeep.judge.policy import Policy, load_policy
from gatekeep.record import audit
from gatekeep.record.best_rules import TOP_SUGGESTIONS, best_suggestions, removals

TOP_NAMES = 10
# A record's `ts` is taken when the line arrives, but the record is appended once it is decided,
# after a prompt of up to 3600 s and a terminal lock wait of 60 s: the log is in time order only
# to within that, so reading backwards stops at the first record older than --since by more.
LATE_BY_AT_MOST = timedelta(hours=2)
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
DECISIONS = ("allow", "ask", "deny")


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
    """The records of the log and its rotated files (None for a line that is not a JSON object),
    oldest first; with `since`, only the newer ones, newest first, read backwards, so a long log
    costs only the period asked for."""
    if since is None:
        for name in reversed(audit.log_files(path)):
            try:
                with open(name, "rb") as f:
                    yield from (audit._decode(raw) for raw in f if raw.strip())
            except FileNotFoundError:  # rotated away meanwhile
                continue
        return
    stop = since - LATE_BY_AT_MOST
    for raw in audit.lines_backwards_across(path):
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
    (a directory -> the policy in force there now), what the asked lines get now, the rules
    that would remove most of those that still ask, and how many of them each looser posture
    would allow.

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
    looser: collections.Counter = collections.Counter()  # posture -> how many still-asked lines it allows
    count = unreadable = audit_mode = audit_blocked = prompted = policy_errors = 0
    reviewed: collections.Counter = collections.Counter()  # the reviewer: asked, answered, overruled, failed
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
        audit_blocked += record.get("mode") == "audit" and record.get("outcome") != "allow"  # even so: firm denies
        prompted += record.get("prompted") is True
        if record.get("answer") is not None:
            answers[_kind(record["answer"])] += 1
        reviewed.update(_reviewed(record))
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
                    looser.update(recheck.looser_postures(record["command"], cwd))
    rules, removed = best_suggestions(still_asked, TOP_SUGGESTIONS)
    return {
        "records": count,
        "unreadable": unreadable,
        "first": first,
        "last": last,
        "audit_mode": audit_mode,
        "audit_blocked": audit_blocked,
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
        "postures": [{"posture": p, "removes": n} for p, n in sorted(looser.items(), key=lambda i: -i[1])],
        "review": {k: reviewed[k] for k in ("asked", "answered", "allowed", "denied", "overruled", "failed")},
    }


def _reviewed(record: dict) -> tuple[str, ...]:
    """What the reviewer did for this record (review/reviewer.py): asked; answered (allowed or
    denied: its verdict decided the line); overruled (a person answered against its verdict); or
    failed (no verdict: it could not start, hung, said something else)."""
    review = record.get("review")
    if not isinstance(review, dict):
        return ()
    said = review.get("decision")
    if record.get("answered_from") == "reviewer":
        return ("asked", "answered", "allowed" if record.get("outcome") == "allow" else "denied")
    if review.get("error") is not None and review.get("error") != "the question was answered first":
        return ("asked", "failed")
    person = record.get("answer")
    if record.get("prompted") is True and said in ("allow", "deny") and person is not None:
        approved = person in ("once", "always", "contained")
        if approved != (said == "allow"):
            return ("asked", "overruled")
    return ("asked",)


def is_policy_error(record: dict) -> bool:
    """A line blocked because the policy did not load (decision.record_broken_policy): recorded as a deny,
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

    def looser_postures(self, line: str, cwd: str | None) -> list[str]:
        """The postures looser than the one in force in `cwd` under which `line`, which asks, would
        be allowed; each line and directory is decided once."""
        key = ("looser", line, cwd)
        if key not in self.seen:
            from gatekeep.judge.policy import POSTURES

            policy = self.policy_for(cwd)  # (loaded once per directory by policies_now)
            found = []
            for posture in POSTURES[: POSTURES.index(policy.posture)] if policy.default == "ask" else ():
                looser = policy._replace(posture=posture)
                if evaluate(line, looser, context=write_context(cwd, looser)).decision == "allow":
                    found.append(posture)
            self.seen[key] = found
        return self.seen[key]

    def _decide(self, line: str, cwd: str | None):
        if self.policy_for is None:  # no policy to judge by: every command of the line
            return None, _distinct(n.name for n in read_line(line)[1]), ()
        policy = self.policy_for(cwd)
        verdict = evaluate(line, policy, context=write_context(cwd, policy))
        if verdict.decision == "allow":  # what asked then is what a rule allows now, if one does
            names = _distinct(c.normalized.name for c in verdict.commands if c.rule is not None)
            names = names or _distinct(c.normalized.name for c in verdict.commands)
        else:
            names = _distinct(c.normalized.name for c in verdict.commands if c.decision != "allow")
        return verdict.decision, names, tuple(verdict.suggestions)


def policies_now(paths) -> Callable[[str | None], Policy]:
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
