"""`gatekeep uninstall [--purge]`: take out everything install put in, and stop the warm checker.

It takes gatekeep's block out of ~/.bashrc and ~/.zshrc, its hook out of every coding
agent's settings, its audit export service (export_unit.py; a managed one is root's) (install.change_shell and change_agent, as `install --remove` does, so the
user's own lines and settings stay), removing a file install made that then holds nothing
else; and it stops this user's warm checker. With --purge it also removes the user policy
and the state directory (audit log, caches, trust, locks), which hold the user's own rules and
records: that is asked for by name, never done by default. What `make user-install` links
outside gatekeep's knowledge (~/.local/bin/gatekeep, the bash completion) is for `make
user-uninstall`, which the message names.
"""

from __future__ import annotations

import json
import os
import shutil

import click

from gatekeep.core.errors import EXIT_ALLOW
from gatekeep.core.paths import get_paths

STOP_SECONDS = 3.0  # for a server to end after SIGTERM, before it is killed


def uninstall(purge: bool, as_json: bool = False) -> int:
    from gatekeep.agents.setup import SETUPS
    from gatekeep.commands.export_unit import change_export
    from gatekeep.commands.install import change_agent, change_login, change_shell

    changes = []
    for shell in ("bash", "zsh"):
        path, action = change_shell(shell, remove=True)
        changes.append({"what": f"{shell} hook", "file": str(path), "action": action})
    path, action = change_login(remove=True)
    changes.append({"what": "bash login shells' hook", "file": str(path), "action": action})
    for agent in SETUPS:
        path, action = change_agent(agent, remove=True)
        changes.append({"what": f"{agent} hook", "file": str(path), "action": action})
    from gatekeep.core.errors import FatalError

    try:
        path, action, _ = change_export(None, remove=True, managed=False)
        changes.append({"what": "audit export service", "file": str(path), "action": action})
    except FatalError:  # a unit of that name that install did not write: not ours to remove
        pass
    paths = get_paths()
    stopped = stop_servers(paths.server_dir)
    purged = []
    if purge:
        for target in (paths.user_policy, paths.state_dir, paths.config_dir):
            if _remove(target):
                purged.append(target)
    if as_json:
        click.echo(json.dumps({"changes": changes, "stopped": stopped, "purged": purged}, ensure_ascii=False))
        return EXIT_ALLOW
    for change in changes:
        if change["action"] != "absent":
            click.echo(f"removed the {change['what']} from {change['file']}")
    if stopped:
        click.echo(f"stopped the warm checker ({len(stopped)} process{'es' if len(stopped) > 1 else ''})")
    for target in purged:
        click.echo(f"removed {target}")
    if not purge:
        click.echo(f"kept your policy ({paths.user_policy}) and records ({paths.state_dir}): --purge removes them")
    click.echo("gatekeep is out of your shells and agents; `make user-uninstall` removes its link and completion")
    return EXIT_ALLOW


def stop_servers(server_dir: str) -> list[int]:
    """End every warm checker serving `server_dir` (its lock files hold their pids), with its
    workers: SIGTERM to its process group, SIGKILL after STOP_SECONDS. Only processes whose
    command line serves that directory are touched."""
    import signal
    import time

    pids = set()
    try:
        names = os.listdir(server_dir)
    except OSError:
        names = []
    for name in names:
        if name.endswith(".lock"):
            try:
                with open(os.path.join(server_dir, name), encoding="ascii") as f:
                    pids.add(int(f.read().strip() or 0))
            except (OSError, ValueError):
                pass
    serving = [pid for pid in pids if pid > 0 and _serves(pid, server_dir)]
    for pid in serving:
        _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while any(_alive(pid) for pid in serving) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in serving:
        if _alive(pid):
            _signal_group(pid, signal.SIGKILL)
    return sorted(serving)


def _serves(pid: int, server_dir: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f"serve({server_dir!r})".encode() in f.read()
    except OSError:
        return False


def _signal_group(pid: int, number: int) -> None:
    for send in (os.killpg, os.kill):  # a server leads its own session: its workers are in its group
        try:
            send(pid, number)
            return
        except (ProcessLookupError, PermissionError):
            continue


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _remove(target: str) -> bool:
    if os.path.isdir(target) and not os.path.islink(target):
        shutil.rmtree(target, ignore_errors=True)
        return not os.path.exists(target)
    try:
        os.unlink(target)
        return True
    except FileNotFoundError:
        return False
