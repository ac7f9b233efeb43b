"""The process a decision is for: this one, or the client a warm checker's worker answers.

The audit records the pid and parent pid of the process the shell (or agent)
started, and the terminal that process controls. A worker of the warm checker
(gatekeep/server/) answers for a client process, so it names the client here.

A served call also has an id, chosen by the client and sent with its request:
the worker's record takes it, and should the worker die before the client has
its answer, the client decides the line again with the same id and records it
only if the worker had not (audit.append_once). So one call is
recorded exactly once, whichever process got as far as recording it.
"""

from __future__ import annotations

import os

_client: tuple[int, int] | None = None
_call: str | None = None  # the next record's id, chosen by a warm checker's client
_again: str | None = None  # the id of a call a worker may have recorded before it died


def ids() -> tuple[int, int]:
    """(pid, parent pid) of the process the decision is for."""
    return _client or (os.getpid(), os.getppid())


def answer_for(pid: int, ppid: int) -> None:
    """From now on this process answers for client `pid` (a worker's first act; it never goes back)."""
    global _client
    _client = (pid, ppid)


def answer_call(call_id: str, again: bool = False) -> None:
    """The next record is call `call_id`'s; `again`: a worker had the call and may have recorded it."""
    global _call, _again
    _call, _again = call_id, (call_id if again else None)


def take_call() -> str | None:
    """The id for this call's record, once (a second record of the same process gets an id of its own)."""
    global _call
    found, _call = _call, None
    return found


def may_be_recorded(record_id: str) -> bool:
    """Whether the record `record_id` may be in the log already (answer_call's `again`)."""
    return _again is not None and record_id == _again


def ancestors(pid: int, limit: int = 8) -> list[tuple[int, list[str]]]:
    """(pid, argv) of `pid` and its parents, nearest first, as /proc shows them; it stops at pid
    1, after `limit`, or where /proc cannot be read (another user's process, no /proc)."""
    found = []
    while pid > 1 and len(found) < limit:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0")[:-1]]
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            break
        found.append((pid, argv))
        try:
            pid = int(stat[stat.rindex(b")") + 2 :].split()[1])  # the name in ( ) may hold spaces
        except (ValueError, IndexError):
            break
    return found


def reads_a_terminal(pid: int) -> bool | None:
    """Whether process `pid`'s standard input is a terminal; None when that cannot be read."""
    try:
        target = os.readlink(f"/proc/{pid}/fd/0")
    except OSError:
        return None
    return target.startswith(("/dev/pts/", "/dev/tty", "/dev/console"))
