"""Audit records as OpenTelemetry log records, sent over OTLP/HTTP (protobuf).

It uses the OpenTelemetry Python SDK and its OTLP/HTTP exporter, the optional extra
`gatekeep[otlp]`; without them `gatekeep audit export` says so and what to install. The SDK is
used only to encode and send: there is no logging provider and no batch processor, so a
record counts as sent only when the collector took the request it was in (export.py keeps the
checkpoint). The exporter honours the standard variables (OTEL_EXPORTER_OTLP_HEADERS for an
authentication header, OTEL_EXPORTER_OTLP_CERTIFICATE, OTEL_RESOURCE_ATTRIBUTES, ...).

One log record per audit record, its event name `gatekeep.tool_decision`. Where Claude Code's
`tool_decision` event has a name for a field, it is used, with its values where they fit, so
one query finds the decisions of both:

    event.name     "tool_decision"
    decision       "accept" (the command ran, or ran contained) or "reject"
    source         "config" (the policy decided; no one was asked), "user_temporary" (allowed
                   once), "user_permanent" ("always"), "user_reject" (denied, or "never"),
                   "user_abort" (no answer: timed out, no terminal, ended), "reviewer"
    tool_name      the agent's tool (Bash, shell, run_shell_command, write, ...); "shell" for
                   a line no agent sent (a gated shell's, or `gatekeep check`'s caller's)
    session.id     the agent's session; tool_use_id, the agent's call, where the host gave one

and gatekeep's own, under `gatekeep.`: id (the audit record's: a collector can drop a repeat),
verdict (allow, ask or deny: what the policy said), outcome (allow, deny, contained), rule,
layer, posture, policy_sha256, agent (the agent host), terminal, shell, user, cwd, reason,
answer, answered_from, mode, and command. The resource says `service.name` gatekeep, its
version, and `host.name`.

Command lines go `whole`, `redacted` (redact.py; the default) or not at all (`none`: no
command, no cwd). The reason quotes the command's words with their quotes removed (`mysql
--password S3 cret` for `--password 'S3 cret'`), which redact.py cannot read right: unless
`whole`, each quoted command in it is replaced by `…` (the command itself is in
`gatekeep.command`), and a reason whose quoting a backquote in the line could confuse is not
sent at all.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable

from gatekeep import __version__
from gatekeep.core.errors import FatalError
from gatekeep.record.redact import redact

EVENT = "gatekeep.tool_decision"
COMMAND_MODES = ("redacted", "whole", "none")
_QUOTED = re.compile(r"`[^`]*`")
_SOURCES = {"once": "user_temporary", "always": "user_permanent", "deny": "user_reject", "never": "user_reject"}
MISSING = "sending OTLP needs the OpenTelemetry SDK and its OTLP/HTTP exporter: pip install 'gatekeep[otlp]'"


def sender(url: str, commands: str, timeout: float = 10.0) -> Callable[[list[dict]], bool]:
    """A function that sends a batch of audit records to `url` (an OTLP/HTTP logs endpoint,
    `http://collector:4318/v1/logs`) and says whether the collector took it."""
    try:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import ReadableLogRecord
        from opentelemetry.sdk._logs.export import LogRecordExportResult
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    except ImportError:
        raise FatalError(MISSING) from None
    exporter = OTLPLogExporter(endpoint=url, timeout=timeout)
    resource = Resource.create({"service.name": "gatekeep", "service.version": __version__, "host.name": socket.gethostname()})
    scope = InstrumentationScope("gatekeep.audit", __version__)

    def send(records: list[dict]) -> bool:
        batch = [ReadableLogRecord(log_record(r, commands), resource, scope) for r in records]
        return exporter.export(batch) == LogRecordExportResult.SUCCESS

    return send


def log_record(record: dict, commands: str):
    """The OTLP log record (the API's LogRecord) of one audit record."""
    from opentelemetry._logs import LogRecord, SeverityNumber

    outcome = record.get("outcome")
    accepted = outcome in ("allow", "contained")
    nanos = _nanoseconds(record.get("ts"))
    return LogRecord(
        timestamp=nanos,
        observed_timestamp=nanos,
        severity_number=SeverityNumber.INFO if accepted else SeverityNumber.WARN,
        severity_text="INFO" if accepted else "WARN",
        body=f"{'accept' if accepted else 'reject'}: {_reason(record, commands) or ''}".rstrip(": "),
        attributes=attributes(record, commands),
        event_name=EVENT,
    )


def attributes(record: dict, commands: str) -> dict:
    """The log record's attributes (module docstring); None values are left out."""
    outcome = record.get("outcome")
    found = {
        "event.name": "tool_decision",
        "decision": "accept" if outcome in ("allow", "contained") else "reject",
        "source": _source(record),
        "tool_name": record.get("tool") or (None if record.get("agent") else "shell"),
        "session.id": record.get("session_id"),
        "tool_use_id": record.get("tool_use_id"),
        "gatekeep.id": record.get("id"),
        "gatekeep.verdict": record.get("decision"),
        "gatekeep.outcome": outcome,
        "gatekeep.rule": record.get("rule"),
        "gatekeep.layer": record.get("layer"),
        "gatekeep.posture": record.get("posture"),
        "gatekeep.policy_sha256": record.get("policy_sha256"),
        "gatekeep.agent": record.get("agent"),
        "gatekeep.terminal": record.get("tty"),
        "gatekeep.shell": record.get("shell"),
        "gatekeep.user": record.get("user"),
        "gatekeep.answer": record.get("answer"),
        "gatekeep.answered_from": record.get("answered_from"),
        "gatekeep.mode": record.get("mode"),
        "gatekeep.reason": _reason(record, commands),
    }
    if commands != "none":
        found["gatekeep.command"] = _text(record.get("command"), commands)
        found["gatekeep.cwd"] = record.get("cwd")
    return {key: value for key, value in found.items() if isinstance(value, (str, bool, int, float))}


def _source(record: dict) -> str:
    """Who decided, in the words of Claude Code's `source` where they fit."""
    if record.get("answered_from") == "reviewer":
        return "reviewer"
    if not record.get("prompted"):
        return "config"
    answer = record.get("answer")
    return _SOURCES.get(answer, "user_abort")


def _text(text, commands: str) -> str | None:
    if not isinstance(text, str):
        return None
    return text if commands == "whole" else redact(text)


def _reason(record: dict, commands: str) -> str | None:
    """The reason, its quoted commands left out unless `whole` (module docstring)."""
    text = record.get("reason")
    if not isinstance(text, str) or commands == "whole":
        return text if isinstance(text, str) else None
    command = record.get("command")
    if "`" in str(command) or text.count("`") % 2:
        return None  # a backquote of the line's own would pair with the reason's quoting
    return redact(_QUOTED.sub("`…`", text))


def _nanoseconds(ts) -> int | None:
    """`2026-11-22T15:39:30.123Z` in nanoseconds since the epoch, or None."""
    import calendar
    import time

    if not isinstance(ts, str):
        return None
    try:
        whole, _, rest = ts.rstrip("Z").partition(".")
        seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
        fraction = int((rest + "000000000")[:9]) if rest.isdigit() else 0
    except ValueError:
        return None
    return seconds * 1_000_000_000 + fraction
