"""The audit record of one decision: its fields known before the decision, and writing it.

A record that cannot be written blocks the line (FatalError): a decision must never go unrecorded.
`gatekeep check` and the agents' hooks both write through here.
"""

from __future__ import annotations

import os
import sys

from gatekeep.ask.terminal import terminal_name
from gatekeep.core import process
from gatekeep.core.display import visible
from gatekeep.core.errors import FatalError, PolicyError
from gatekeep.core.paths import current_directory
from gatekeep.record import audit


def new_record(line: str, cwd: str | None, shell: str | None) -> dict:
    """The audit record's fields known before the decision (`claude-hook` builds on it too); its
    id is the call's, when a warm checker's client chose one (process.take_call)."""
    return {
        "id": process.take_call() or audit.new_id(),
        "ts": audit.timestamp(),
        "command": line,
        "cwd": cwd or current_directory(),  # never raises: the directory may have been removed
        "tty": terminal_name(),
        "pid": process.ids()[0],
        "ppid": process.ids()[1],
        "user": user_name(),
        "shell": shell,
    }


def record_broken_policy(path: str, record: dict, error: PolicyError, way_out: bool = False) -> None:
    """A policy that does not load blocks the line (but the way out: check.WAY_OUT); the audit log says so."""
    verdict = "allow" if way_out else "deny"
    record.update(
        decision=verdict,
        outcome=verdict,
        rule=None,
        reason=f"{error}; " + ("the way out of a broken policy" if way_out else "fix the policy to unblock"),
        prompted=False,
        answer=None,
        timed_out=False,
        policy_sha256=None,
    )
    append_record(path, record)


def save_record(path: str, record: dict, syslog: str | None, rotation: tuple[int, int] | None = None) -> None:
    """Append the decided record to the audit log (or block: FatalError), then send it to syslog
    if set; `rotation`: the policy's (max_bytes, keep) for the log."""
    if append_record(path, record, rotation) and syslog:
        send_to_syslog(syslog, record)


def append_record(path: str, record: dict, rotation: tuple[int, int] | None = None) -> bool:
    """Append `record` (False: its call was recorded already, by a worker that died before it
    answered: the record is written exactly once)."""
    rotate = audit.DEFAULT_ROTATION if rotation is None else audit.Rotation(*rotation)
    try:
        if process.may_be_recorded(record["id"]):
            return audit.append_once(path, record, rotation=rotate)
        audit.append(path, record, rotation=rotate)
        return True
    except OSError as e:
        raise FatalError(unwritable("the audit log", path, e)) from None


def unwritable(what: str, path: str, error: OSError) -> str:
    """One line: what cannot be written and why, that the line is blocked, and the way out."""
    return (
        f"cannot write {what} {visible(path)} ({error.strerror or error}); the line is blocked:"
        f" make {visible(os.path.dirname(path))} a directory you can write, or set GATEKEEP_HOME to one"
    )


def ready_to_record(paths) -> None:
    """Before a question: the audit log takes a record and the lock directory exists. An answer
    (and an "always" rule written to the policy) for a line then blocked unrecorded would ask
    the person for nothing; so a log that cannot be written blocks the line before it asks."""
    try:
        audit.ready(paths.audit_log)
    except OSError as e:
        raise FatalError(unwritable("the audit log", paths.audit_log, e)) from None
    try:
        os.makedirs(paths.lock_dir, mode=0o700, exist_ok=True)
        if not os.access(paths.lock_dir, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as e:
        raise FatalError(unwritable("the lock directory", paths.lock_dir, e)) from None


def send_to_syslog(address: str, record: dict) -> None:
    """The decision is already in the audit log, which is the source of truth: a system log
    that cannot be reached is reported, not a reason to block the line."""
    try:
        audit.send_to_syslog(address, record)
    except OSError as e:
        print(f"gatekeep: could not send the audit record to syslog at {address} ({e})", file=sys.stderr)


def user_name() -> str | None:
    """What getpass.getuser() returns, without importing getpass (~0.3x Python's start-up)."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if os.environ.get(name):
            return os.environ[name]
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return None


def record_asker_gone(path: str, request: dict) -> None:
    """The asker died before it could record its decision: record it here, as blocked."""
    record = {
        "id": request["id"],
        "ts": audit.timestamp(),
        "command": request.get("command"),
        "cwd": request.get("cwd"),
        "tty": request.get("tty"),
        "pid": request.get("pid"),
        "user": request.get("user"),
        "shell": None,
        "decision": "ask",
        "outcome": "deny",
        "rule": None,
        "reason": "the asking gatekeep ended before an answer; nothing ran",
        "prompted": True,
        "answer": "asker-gone",
        "timed_out": False,
        "policy_sha256": None,
    }
    append_record(path, record)
