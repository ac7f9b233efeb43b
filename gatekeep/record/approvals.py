"""Approval requests answered from another terminal (policy `approve: remote | both`).

A y/n prompt on the terminal a line was typed in can be answered by whatever
types into that terminal, the agent included. So an asking `gatekeep check`
can publish its question instead, and wait for an answer given elsewhere with
`gatekeep approve ID`, `gatekeep deny ID` or `gatekeep watch`.

Both sides are plain files in `<state dir>/pending/` (mode 0700; files 0600):

    ID.json      the request: line, cwd, tty, asker's pid, reason, suggestions,
                 deadline; written atomically (temporary file, then rename)
    ID.answer    the answer, created once: written to a temporary file, then
                 hard-linked into place, which fails if an answer exists, so
                 two answers can never both count and a reader never sees half

ID is the audit record's UUID, so a request, its answer and its audit record
share one id; a unique prefix of it is enough to answer. An answer to an
unknown, expired or already-answered request is refused and changes nothing.
A request whose asker died is claimed (renamed: only one process can) by
whoever lists the requests next, removed, and audited as `asker-gone`; the
asker itself records its own timeout. The 300 s deadline still denies.

Files in the state directory are protected from typed lines like the policy
(writes.py), but another program running as the same user can write them: this
raises the bar for an agent typing into a terminal; it is not a sandbox.
"""

from __future__ import annotations

import json
import os
import time

from gatekeep.core.errors import FatalError
from gatekeep.core.paths import Paths

ANSWERS = ("once", "always", "deny", "never")
APPROVING = ("once", "always")


class ApprovalError(FatalError):
    """An answer that cannot be given: unknown, ambiguous, expired or already answered."""


def pending_dir(paths: Paths) -> str:
    return os.path.join(paths.state_dir, "pending")


def _request_path(paths: Paths, request_id: str) -> str:
    return os.path.join(pending_dir(paths), f"{request_id}.json")


def _answer_path(paths: Paths, request_id: str) -> str:
    return os.path.join(pending_dir(paths), f"{request_id}.answer")


def publish(paths: Paths, request: dict) -> None:
    """Make `request` (with at least id, command, pid and deadline) visible to `pending` and `watch`."""
    from gatekeep.core.atomic import write_atomic

    os.makedirs(pending_dir(paths), mode=0o700, exist_ok=True)
    write_atomic(_request_path(paths, request["id"]), json.dumps(request, ensure_ascii=False), new_mode=0o600)


def withdraw(paths: Paths, request_id: str) -> None:
    """The asker is done (answered, timed out or interrupted): remove its request and answer."""
    for path in (_request_path(paths, request_id), _answer_path(paths, request_id)):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def answer_of(paths: Paths, request_id: str) -> dict | None:
    """The answer given to the request, or None while there is none."""
    try:
        with open(_answer_path(paths, request_id), encoding="utf-8") as f:
            data = json.load(f)
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("answer") in ANSWERS else None


def open_requests(paths: Paths, now: float | None = None, on_gone=None) -> list[dict]:
    """The requests still waiting for an answer, oldest first.

    A request whose asker is gone or whose deadline passed more than a few
    seconds ago (its asker is then stuck) is removed; `on_gone(request)` is
    called once for each, by whichever process removed it.
    """
    now = time.time() if now is None else now
    try:
        names = sorted(n for n in os.listdir(pending_dir(paths)) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        request = _read_request(os.path.join(pending_dir(paths), name))
        if request is None:
            continue
        if _asker_alive(request) and now <= request["deadline"] + 5:
            if answer_of(paths, request["id"]) is None:
                found.append(request)
            continue
        if _claim(paths, request["id"]) and on_gone is not None:
            on_gone(request)
    return sorted(found, key=lambda r: r.get("created", 0))


def give_answer(paths: Paths, id_prefix: str, answer: str, answered_by: str, now: float | None = None) -> dict:
    """Answer the open request whose id starts with `id_prefix`; returns that request."""
    assert answer in ANSWERS
    now = time.time() if now is None else now
    prefix = id_prefix.strip().lower()
    if len(prefix) < 4:
        raise ApprovalError("give at least 4 characters of the request id (`gatekeep pending` lists them)")
    candidates = [r for r in open_requests(paths, now) if r["id"].startswith(prefix)]
    if not candidates:
        raise ApprovalError(f"no open request {prefix}: unknown, expired or already answered (`gatekeep pending`)")
    if len(candidates) > 1:
        raise ApprovalError(f"{prefix} is the start of {len(candidates)} request ids; give more of it")
    request = candidates[0]
    if now > request["deadline"]:
        raise ApprovalError(f"request {prefix} has expired")
    data = {"answer": answer, "by": answered_by, "pid": os.getpid(), "time": now}
    _create_once(_answer_path(paths, request["id"]), json.dumps(data))
    return request


def _create_once(path: str, text: str) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".answer.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # atomic, and fails if an answer is already there
        except FileExistsError:
            raise ApprovalError("the request was answered already; this answer changes nothing") from None
    finally:
        os.unlink(tmp)


def _claim(paths: Paths, request_id: str) -> bool:
    """Take a stale request out of the list; only one process succeeds."""
    source = _request_path(paths, request_id)
    try:
        os.rename(source, source + ".gone")
    except FileNotFoundError:
        return False
    os.unlink(source + ".gone")
    withdraw(paths, request_id)
    return True


def _read_request(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (FileNotFoundError, ValueError):
        return None
    fields_ok = isinstance(data, dict) and isinstance(data.get("id"), str) and isinstance(data.get("pid"), int)
    return data if fields_ok and isinstance(data.get("deadline"), int | float) else None


def _asker_alive(request: dict) -> bool:
    try:
        os.kill(request["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, another user's: not ours to judge
    return True
