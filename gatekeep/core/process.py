"""The process a decision is for: this one, or the client a warm checker's worker answers.

The audit records the pid and parent pid of the process the shell (or agent)
started, and the terminal that process controls. A worker of the warm checker
(gatekeep/server/) answers for a client process, so it names the client here.
"""

from __future__ import annotations

import os

_client: tuple[int, int] | None = None


def ids() -> tuple[int, int]:
    """(pid, parent pid) of the process the decision is for."""
    return _client or (os.getpid(), os.getppid())


def answer_for(pid: int, ppid: int) -> None:
    """From now on this process answers for client `pid` (a worker's first act; it never goes back)."""
    global _client
    _client = (pid, ppid)
