"""The gate: parse -> normalize -> match -> decide, for one line under one policy.

This is the one place the pure stages are chained; `check` and `rules test`
both call it, then add prompt and audit, or an explanation, on top.
"""

from __future__ import annotations

from gatekeep.decide import LineVerdict, decide
from gatekeep.match import match_line
from gatekeep.normalize import normalize
from gatekeep.parse import parse_line
from gatekeep.policy import Policy


def evaluate(line: str, policy: Policy) -> LineVerdict:
    parsed = parse_line(line)
    normalized = [normalize(c) for c in parsed.commands]
    matches = match_line(normalized, policy.index)
    return decide(parsed, normalized, matches, policy)


def verdict_json(verdict: LineVerdict) -> dict:
    """The per-command part of `check --json` and `rules test --json`."""
    return {
        "decision": verdict.decision,
        "reason": verdict.reason,
        "rule": verdict.rule.pattern if verdict.rule else None,
        "commands": [
            {
                "argv": c.normalized.command.argv,
                "name": c.normalized.name,
                "decision": c.decision,
                "rule": c.rule.pattern if c.rule else None,
                "suggestion": c.normalized.suggestion,
            }
            for c in verdict.commands
        ],
        "suggestions": list(verdict.suggestions),
    }
