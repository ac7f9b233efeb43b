"""`gatekeep pending | approve | deny | watch`: answer approval requests from another terminal.

The requests come from `gatekeep check` under `approve: remote` or `both`
(approvals.py). The built-in policy asks before any of these commands is typed
into a gated shell, so an agent typing into its own terminal cannot answer
itself without the person seeing it.
"""

from __future__ import annotations

import json
import os
import sys
import time

import click

from gatekeep import approvals, audit
from gatekeep.display import visible
from gatekeep.errors import EXIT_ALLOW
from gatekeep.paths import get_paths


def pending(as_json: bool) -> int:
    requests = _open_requests()
    if as_json:
        click.echo(json.dumps(requests, ensure_ascii=False))
        return EXIT_ALLOW
    if not requests:
        click.echo("no open requests")
    for request in requests:
        click.echo(describe(request))
    return EXIT_ALLOW


def answer(request_id: str, given: str, as_json: bool = False) -> int:
    """Answer one waiting request; an id that matches none, or several, is an error (exit 2)."""
    request = approvals.give_answer(get_paths(), request_id, given, _who())
    if as_json:
        shown = {"id": request["id"], "answer": given, "command": request["command"], "cwd": request.get("cwd")}
        click.echo(json.dumps(shown, ensure_ascii=False))
    else:
        click.echo(f"{given}: {visible(request['command'])}  [{request['id'][:8]}]")
    return EXIT_ALLOW


def describe(request: dict, now: float | None = None) -> str:
    now = time.time() if now is None else now
    left = max(0, int(request["deadline"] - now))
    where = f"{request.get('tty') or 'no terminal'}, {request.get('cwd')}"
    lines = [f"{request['id'][:8]}  {left:>3} s left  {visible(where)}", f"    {visible(request['command'])}"]
    lines.append(f"    {visible(request.get('reason') or '')}")
    if request.get("suggestions"):
        lines.append(f"    always would add: {visible(', '.join(request['suggestions']))}")
    return "\n".join(lines)


def watch(poll_seconds: float = 0.25) -> int:
    """A line UI: shows each request as it arrives; a key answers the oldest one.

    o once, a always, d deny, n never, q quit. Keys typed before a request is
    shown are discarded, so a key meant for one request cannot answer the next.
    """
    import select
    import termios
    import tty

    fd = sys.stdin.fileno()
    if not os.isatty(fd):
        raise click.UsageError("gatekeep watch needs a terminal; use gatekeep pending / approve / deny instead")
    saved = termios.tcgetattr(fd)
    shown: object = ()  # what is on screen: a request id, None for "waiting", () for nothing yet
    keys = {"o": "once", "a": "always", "d": "deny", "n": "never"}
    click.echo("gatekeep watch: o once, a always, d deny, n never (the oldest request); q quits")
    try:
        tty.setcbreak(fd)
        while True:
            requests = _open_requests()
            current = requests[0]["id"] if requests else None
            if current != shown:
                termios.tcflush(fd, termios.TCIFLUSH)  # type-ahead was meant for what was on screen before
                shown = current
                click.echo(f"\n{describe(requests[0])}\n  [o/a/d/n] > " if requests else "\nwaiting for requests…")
            if not select.select([fd], [], [], poll_seconds)[0]:
                continue
            key = os.read(fd, 1).decode("latin-1")
            if key in ("q", "\x04"):
                return EXIT_ALLOW
            if key in keys and current is not None:
                try:
                    approvals.give_answer(get_paths(), current, keys[key], _who())
                    click.echo(f"{keys[key]}")
                except approvals.ApprovalError as e:
                    click.echo(f"gatekeep: {e}")
    except KeyboardInterrupt:
        return EXIT_ALLOW
    finally:
        termios.tcsetattr(fd, termios.TCSAFLUSH, saved)


def _open_requests() -> list[dict]:
    paths = get_paths()
    return approvals.open_requests(paths, on_gone=lambda request: _audit_gone(paths, request))


def _audit_gone(paths, request: dict) -> None:
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
    audit.append(paths.audit_log, record)


def _who() -> str:
    for fd in (0, 1, 2):
        try:
            return os.ttyname(fd)
        except OSError:
            continue
    return f"pid {os.getpid()}"
