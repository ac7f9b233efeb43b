"""`gatekeep claude-hook`: the gate for Claude Code's Bash tool, as a PreToolUse hook (issue 8).

Claude Code runs its tools itself, not through a terminal with the shell hook,
so it asks this command before each tool call: the event comes as JSON on
stdin. For the Bash tool, the command is decided as `gatekeep check` decides a
typed line (same policy, same gate, one audit record with shell "claude-code"),
and the answer goes back on stdout as a permission decision. "ask" is passed
on as it is: Claude Code then asks its own user, so gatekeep never prompts
here, and the record says outcome "ask", not who answered. Other tools pass
through: no output, no record.

It fails closed. Claude Code reads exit 2 as "block, and show stderr to
Claude", but exit 1, like any other failure, as "go ahead". So every problem
(an event that is not what Claude Code sends, a broken policy, an audit log
that cannot be written, a bug, Ctrl-C) exits 2 with one line on stderr, and
nothing reaches stdout before the decision is recorded.
"""

from __future__ import annotations

import os
import sys

from gatekeep.commands.check import new_record, record_broken_policy, save_record
from gatekeep.display import visible
from gatekeep.errors import EXIT_ALLOW, EXIT_ERROR, FatalError, PolicyError
from gatekeep.gate import evaluate
from gatekeep.jsontext import dumps, loads
from gatekeep.paths import current_directory, get_paths
from gatekeep.policy import load_policy

EVENT = "PreToolUse"
SHELL = "claude-code"  # the audit record's `shell`
HEADLINES = {"allow": "gatekeep", "ask": "gatekeep: needs approval", "deny": "gatekeep: blocked (deny)"}


class BadEvent(FatalError):
    """The input is not a PreToolUse event for the Bash tool as Claude Code sends it."""


def claude_hook(policy_file: str | None = None, stdin=None) -> int:
    """Answer the event on `stdin` (binary; default: sys.stdin's); exit 0 with the decision, or 2: never 1."""
    try:
        return _answer((sys.stdin.buffer if stdin is None else stdin).read(), policy_file)
    except FatalError as e:
        print(f"gatekeep: blocked: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        print("gatekeep: interrupted; blocked", file=sys.stderr)
    except Exception as e:  # a bug: block, one line, traceback in the error log, as main() does
        from gatekeep.main import _internal_error

        _internal_error(e)
    return EXIT_ERROR


def _answer(data: bytes, policy_file: str | None) -> int:
    event = read_event(data)
    if event["tool_name"] != "Bash":
        return EXIT_ALLOW  # not a shell command: no decision, Claude Code goes on as usual
    command, cwd = bash_command(event)
    paths = get_paths()
    record = new_record(command, cwd, SHELL)
    session = event.get("session_id")
    record["session_id"] = session if isinstance(session, str) else None
    try:
        policy = load_policy(paths, policy_file, cwd)
    except PolicyError as e:
        record_broken_policy(paths.audit_log, record, e)
        raise
    verdict = evaluate(command, policy, cwd)
    record.update(
        decision=verdict.decision,
        outcome=verdict.decision,
        rule=verdict.rule.pattern if verdict.rule else None,
        reason=verdict.reason,
        prompted=False,
        answer=None,
        timed_out=False,
        policy_sha256=policy.sha256,
    )
    save_record(paths.audit_log, record, policy.syslog)
    errors = [layer.error for layer in policy.layers if layer.error]
    reason = _reason(verdict.decision, verdict.reason, verdict.suggestions, errors)
    sys.stdout.write(dumps(decision_json(verdict.decision, reason)) + "\n")
    sys.stdout.flush()  # here, where a failure still exits 2, not at interpreter exit
    return EXIT_ALLOW


def read_event(data: bytes) -> dict:
    """The event, checked as far as the answer depends on it."""
    try:
        event = loads(data)
    except ValueError as e:  # UnicodeDecodeError included
        raise BadEvent(f"the hook event on stdin is not JSON ({e})") from None
    if not isinstance(event, dict):
        raise BadEvent(f"the hook event on stdin is a JSON {type(event).__name__}, not an object")
    name = event.get("hook_event_name")
    if name != EVENT:
        raise BadEvent(f"expected a {EVENT} event, got {name!r}: register `gatekeep claude-hook` under {EVENT}")
    if not isinstance(event.get("tool_name"), str):
        raise BadEvent("the hook event has no tool_name")
    return event


def bash_command(event: dict) -> tuple[str, str]:
    """The Bash tool's command, and the absolute directory it runs in (ours, if the event has none)."""
    tool_input = event.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        raise BadEvent("the Bash event has no tool_input.command string")
    if not command.strip():
        raise BadEvent("the Bash command is empty")
    cwd = event.get("cwd") or current_directory()
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise BadEvent(f"the hook event's cwd is not an absolute path: {visible(repr(cwd))}")
    return command, cwd


def decision_json(decision: str, reason: str) -> dict:
    return {
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def _reason(decision: str, reason: str, suggestions: tuple[str, ...], errors: list[str]) -> str:
    """One line for Claude (deny) or for the user's prompt (ask), with the rule that would allow it."""
    text = f"{HEADLINES[decision]}: {reason}"
    for error in errors:
        text += f"; {error}; every line asks until it is fixed"
    if decision != "allow" and suggestions:
        text += "; to allow it from now on: " + " ; ".join(f"gatekeep rules add '{s}'" for s in suggestions)
    return visible(text)
