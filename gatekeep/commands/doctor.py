"""`gatekeep doctor`: is the gate working in this shell, and in the coding agents it is installed
for? Each problem comes with its fix (shells/health.py; agents/setup.py check_agents)."""

from __future__ import annotations

import json

import click

from gatekeep.core.errors import EXIT_ALLOW, EXIT_BLOCKED
from gatekeep.shells.health import run_checks


def doctor(as_json: bool) -> int:
    from gatekeep.agents.setup import check_agents
    from gatekeep.core.paths import current_directory

    checks = [*run_checks(), check_agents(current_directory())]
    ok = all(c.ok for c in checks)
    if as_json:
        click.echo(json.dumps({"ok": ok, "checks": [c._asdict() for c in checks]}))
        return EXIT_ALLOW if ok else EXIT_BLOCKED
    width = max(len(c.name) for c in checks)
    for c in checks:
        fix = f"; fix: {c.fix}" if c.fix else ""
        click.echo(f"{'ok' if c.ok else 'problem':7}  {c.name:{width}}  {c.detail}{fix}")
    problems = sum(not c.ok for c in checks)
    click.echo("all is well" if ok else f"{problems} problem{'s' if problems > 1 else ''}")
    return EXIT_ALLOW if ok else EXIT_BLOCKED
