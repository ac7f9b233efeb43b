"""`gatekeep audit export --otlp URL [--follow]`: the audit log to an OpenTelemetry collector.

Never on the path of a check: it reads the log the checks write (record/export.py), as its own
process, by hand, from cron, or as the service `gatekeep install --export` writes.
"""

from __future__ import annotations

import os
import signal
import sys

import click

from gatekeep.core.errors import EXIT_ALLOW, EXIT_BLOCKED, FatalError
from gatekeep.core.hashing import sha256
from gatekeep.core.paths import get_paths
from gatekeep.record import export


def checkpoint_path(url: str) -> str:
    """One checkpoint per collector: two exports to two places each send everything once."""
    digest = sha256(url.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(get_paths().state_dir, "export", f"otlp-{digest}.json")


def audit_export(url: str, follow: bool, commands: str, checkpoint: str | None, timeout: float) -> int:
    from gatekeep.record.otlp import sender

    if not url.startswith(("http://", "https://")):
        raise FatalError(f"--otlp takes an OTLP/HTTP logs endpoint, http(s)://HOST:4318/v1/logs, not {url!r}")
    send = sender(url, commands, timeout)
    stop = []

    def stopping(signum, _frame) -> None:
        stop.append(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stopping)
    place = checkpoint or checkpoint_path(url)
    try:
        sent, complete = export.run(
            get_paths().audit_log,
            place,
            send,
            follow=follow,
            stopped=lambda: bool(stop),
            about={"url": url},
            say=lambda text: print(f"gatekeep: audit export: {text}", file=sys.stderr, flush=True),
        )
    except ValueError as e:  # a checkpoint that cannot be read
        raise FatalError(str(e)) from None
    if not complete:
        click.echo(f"gatekeep: audit export: {sent} records sent; the collector did not take the rest (they are sent next time)", err=True)
        return EXIT_BLOCKED
    if not follow:
        click.echo(f"{sent} records sent to {url}", err=True)
    return EXIT_ALLOW
