"""`gatekeep audit tail`: the latest decisions, as a table or JSON lines."""

from __future__ import annotations

import json

import click

from gatekeep.core.display import visible
from gatekeep.core.errors import EXIT_ALLOW
from gatekeep.core.paths import get_paths
from gatekeep.record import audit


def audit_tail(count: int, follow: bool, as_json: bool, outcome: str | None) -> int:
    path = get_paths().audit_log

    def keep(record: dict) -> bool:
        return outcome is None or record.get("outcome") == outcome

    show = _json_line if as_json else _table_row
    if not as_json:
        click.echo(f"{'TIME (UTC)':<19}  {'OUTCOME':<7}  {'FROM':<8}  {'COMMAND':<40}  RULE")
    for record in audit.read_last(path, count, keep):
        click.echo(show(record))
    if follow:
        try:
            for record in audit.follow(path):
                if record is not None and keep(record):
                    click.echo(show(record))
        except KeyboardInterrupt:
            pass
    return EXIT_ALLOW


def _json_line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False)


def _table_row(record: dict) -> str:
    ts = str(record.get("ts", ""))[:19].replace("T", " ")
    command = visible(str(record.get("command", "")))
    if len(command) > 40:
        command = command[:39] + "…"
    rule = visible(str(record.get("rule") or "-"))
    source = visible(str(record.get("agent") or record.get("shell") or "-"))[:8]  # the agent, or the shell
    return f"{ts:<19}  {record.get('outcome', '?'):<7}  {source:<8}  {command:<40}  {rule}"
