"""`gatekeep trust [DIR] [--revoke]`: let a project policy's allow rules apply, or stop them."""

from __future__ import annotations

import json
import os

import click

from gatekeep.core.display import visible
from gatekeep.core.errors import EXIT_ALLOW, EXIT_BLOCKED, FatalError
from gatekeep.core.paths import get_paths
from gatekeep.judge import project
from gatekeep.judge.policy import load_policy, parse_layer, read_project_text


def trust(directory: str | None, revoke: bool, as_json: bool = False) -> int:
    """Trust the nearest project policy as it is now, or (`revoke`) forget every trusted version of it.

    With `as_json`, success prints one object: `path`, `trusted` (true after trust, false after
    --revoke), and `allow` (the rules trusted) or `revoked` (how many versions were forgotten).
    """
    start = directory or os.getcwd()
    path = project.find_project_file(start)
    if path is None:
        raise FatalError(f"no {project.FILE_NAME} in {start} or above it")
    paths = get_paths()
    if revoke:
        revoked = project.revoke(paths, path)
        if revoked == 0:
            click.echo(f"gatekeep: {path} was not trusted", err=True)
            return EXIT_BLOCKED
        if as_json:
            click.echo(json.dumps({"path": path, "trusted": False, "revoked": revoked}, ensure_ascii=False))
        else:
            click.echo(f"revoked trust in {path}: its allow rules no longer apply")
        return EXIT_ALLOW
    locked = load_policy(paths).trust_locked_by
    if locked is not None:
        why = f"the managed policy ({locked.path}) says no project may be trusted (lock: trust_projects: false)"
        raise FatalError(f"{why}: the allow rules of {path} do not apply here")
    from pathlib import Path

    text = read_project_text(path)  # bounded, and never waiting on a FIFO put in the file's place
    if not isinstance(text, str):
        raise text
    layer = parse_layer("project", Path(path), text)  # a file that does not load is never trusted
    allow = [pattern for verdict, pattern, _ in layer.rules if verdict == "allow"]
    project.trust(paths, path, text)  # the text just read and checked, not what the file holds later
    if as_json:
        click.echo(json.dumps({"path": path, "trusted": True, "allow": allow}, ensure_ascii=False))
        return EXIT_ALLOW
    click.echo(f"trusted {path} as it is now; editing it revokes the trust")
    for pattern in allow:
        click.echo(f"  allow {visible(pattern)}")
    if not allow:
        click.echo("  (it has no allow rules: its deny and ask rules apply with or without trust)")
    return EXIT_ALLOW
