"""`gatekeep install --export URL`: a systemd user service that runs `gatekeep audit export --follow`.

The unit is `gatekeep-export.service`, written where systemd looks for a user's own units
(`$XDG_CONFIG_HOME/systemd/user/`, ~/.config by default) and enabled as `systemctl --user
enable` does it, with its link in `default.target.wants/`: it starts with the user's systemd,
at login (or at boot with lingering, `loginctl enable-linger`). With `--managed` (as root) it
goes to `/etc/systemd/user/`, enabled for every user as `systemctl --global enable` does: each
user's own service sends that user's audit log, which lives in their home.

After writing it, install asks the user's systemd to load and start it, where one runs; where
none does (a container, a session without systemd) it says what to run. `--remove` stops it
where it can and takes out the link and the unit, only while the unit is the one it wrote (its
first line says so). An authentication header for the collector goes in a drop-in the user
writes (`systemctl --user edit gatekeep-export`: `Environment=OTEL_EXPORTER_OTLP_HEADERS=...`),
not in the unit, which install may rewrite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from gatekeep.core.atomic import write_atomic
from gatekeep.core.errors import FatalError
from gatekeep.core.paths import expand_home

UNIT = "gatekeep-export.service"
MARK = "# Written by `gatekeep install --export`"
MANAGED_DIR = "/etc/systemd/user"
WANTED_BY = "default.target"


def unit_dir(managed: bool) -> Path:
    if managed:
        return Path(os.environ.get("GATEKEEP_SYSTEMD_MANAGED_DIR") or MANAGED_DIR)
    config = os.environ.get("XDG_CONFIG_HOME") or expand_home("~/.config")
    return Path(config) / "systemd" / "user"


def unit_text(url: str, commands: str) -> str:
    argv = [sys.executable, "-I", "-m", "gatekeep", "audit", "export", "--otlp", url, "--follow", "--commands", commands]
    return f"""{MARK}; `gatekeep install --export --remove` takes it out.
[Unit]
Description=gatekeep: send the audit log to an OpenTelemetry collector

[Service]
Type=simple
ExecStart={" ".join(_quoted(word) for word in argv)}
# a collector that is down is waited for by the export itself; this restarts it if it ends
Restart=always
RestartSec=10
# SIGTERM: the batch in flight is finished and its checkpoint written before it ends
KillSignal=SIGTERM
TimeoutStopSec=30
NoNewPrivileges=yes

[Install]
WantedBy={WANTED_BY}
"""


def _quoted(word: str) -> str:
    """A word of ExecStart= as systemd reads it (systemd.service(5), "Command lines"): in double
    quotes, with backslash and quote escaped, `%` as `%%` (a specifier) and `$` as `$$`."""
    if any(c in word for c in "\n\r\0"):
        raise FatalError(f"{word!r} cannot go on a systemd command line")
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def change_export(url: str | None, remove: bool, managed: bool, commands: str = "redacted") -> tuple[Path, str, list[str]]:  # noqa: E501
    """Write (or take out) the unit and its link; the unit's path, what was done ("installed",
    "unchanged", "removed", "absent") and notes: what was started, or what to run."""
    if not remove and (not url or not url.startswith(("http://", "https://")) or any(c.isspace() for c in url)):
        raise FatalError(f"--export takes the collector's OTLP/HTTP logs endpoint, http(s)://HOST:4318/v1/logs, not {url!r}")
    directory = unit_dir(managed)
    path = directory / UNIT
    link = directory / f"{WANTED_BY}.wants" / UNIT
    current = _read(path)
    if current is not None and not current.startswith(MARK):
        raise FatalError(f"{path} was not written by gatekeep: move it away first")
    if remove:
        if current is None:
            return path, "absent", []
        notes = _systemctl(managed, "disable", "--now")
        if link.is_symlink():
            link.unlink()
        path.unlink()
        return path, "removed", notes
    text = unit_text(url, commands)
    action = "unchanged" if current == text and link.is_symlink() else "installed"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text, new_mode=0o644)  # every user's systemd reads a managed one; it holds no secret
        link.parent.mkdir(exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(path)
    except OSError as e:
        raise FatalError(f"cannot write {path} ({e.strerror or e})") from None
    return path, action, _systemctl(managed, "daemon-reload") or _systemctl(managed, "restart")


def _systemctl(managed: bool, *args: str) -> list[str]:
    """Ask systemd to act on the unit now: [] when it did, else a note of what to run. The
    managed unit is every user's: each one's systemd starts it at their next login."""
    verb = " ".join(args)
    command = ["systemctl", "--user", *args] + ([] if args == ("daemon-reload",) else [UNIT])
    if managed:
        return [f"every user's systemd starts it at their next login (or now: systemctl --user {verb} {UNIT})"]
    if shutil.which("systemctl") is None:
        return [f"no systemctl here: it starts with your systemd, or run `{' '.join(command)}` where one runs"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return [f"systemctl did not answer ({e}); run: {' '.join(command)}"]
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["it failed"])[-1]
        return [f"your systemd did not take it ({why}); it starts at your next login, or run: {' '.join(command)}"]
    return []


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
