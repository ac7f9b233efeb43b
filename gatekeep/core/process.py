"""The process a decision is for: this one, or the client a warm checker's worker answers.

The audit records the pid and parent pid of the process the shell (or agent)
started, and the terminal that process controls. A worker of the warm checker
(gatekeep/server/) answers for a client process, so it names the client here.

A served call also has an id, chosen by the client and sent with its request:
the worker's record takes it, and should the worker die before the client has
its answer, the client decides the line again with the same id and records it
only if the worker had not (audit.append's `unless_present`). So one call is
recorded exactly once, whichever process got as far as recording it.
"""

from __future__ import annotations

import os

_client: tuple[int, int] | None = None
_call: tuple[str, bool] | None = None  # the call's record id; whether a worker may have recorded it


def ids() -> tuple[int, int]:
    """(pid, parent pid) of the process the decision is for."""
    return _client or (os.getpid(), os.getppid())


def answer_for(pid: int, ppid: int) -> None:
    """From now on this process answers for client `pid` (a worker's first act; it never goes back)."""
    global _client
    _client = (pid, ppid)


def answer_call(call_id: str, again: bool = False) -> None:
    """The next record is call `call_id`'s; `again`: a worker had the call and may have recorded it."""
    global _call
    _call = (call_id, again)


def take_call() -> tuple[str | None, bool]:
    """The id for this call's record and whether it may be in the log already; once (a second
    record of the same process gets an id of its own)."""
    global _call
    found, _call = _call, None
    return found or (None, False)
