"""`gatekeep normalize`: the name of every simple command in a line, one per line."""

from __future__ import annotations

import json

import click

from gatekeep.core.errors import EXIT_ALLOW
from gatekeep.judge.gate import read_line


def normalize_line(line: str, as_json: bool) -> int:
    parsed, names = read_line(line)
    if as_json:
        entries = [{"argv": n.command.argv, "name": n.name, "suggestion": n.suggestion} for n in names]
        click.echo(json.dumps({"command": line, "complete": parsed.complete, "commands": entries}, ensure_ascii=False))
    else:
        for n in names:
            click.echo(n.name)
    return EXIT_ALLOW
