"""`gatekeep paths`: where the policy files, audit log, locks, caches and the warm checker live."""

from __future__ import annotations

import json

import click

from gatekeep.core.errors import EXIT_ALLOW
from gatekeep.core.paths import get_paths


def paths_show(as_json: bool) -> int:
    paths = get_paths()
    entries = {
        "user_policy": str(paths.user_policy),
        "system_policy": str(paths.system_policy),
        "audit_log": str(paths.audit_log),
        "lock_dir": str(paths.lock_dir),
        "error_log": str(paths.error_log),
        "cache_dir": str(paths.cache_dir),
        "server_dir": str(paths.server_dir),
    }
    if as_json:
        click.echo(json.dumps(entries))
    else:
        for key, value in entries.items():
            click.echo(f"{key.replace('_', ' ')}: {value}")
    return EXIT_ALLOW
