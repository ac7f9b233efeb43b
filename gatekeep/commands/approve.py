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

    o once, a always, d deny, n never, q quit; keys are read as the question on
    the asking terminal reads them (keys.py): each on its own after a pause,
    always and never confirmed with y, and what was typed before a request
    appeared set aside, so a key meant for one request cannot answer the next.
    A request asked on this very terminal is not answered here.
    """
    import termios
    import tty

    from gatekeep.keys import Ended, Keys

    fd = sys.stdin.fileno()
    if not os.isatty(fd):
        raise click.UsageError("gatekeep watch needs a terminal; use gatekeep pending / approve / deny instead")
    here = _who()
    saved = termios.tcgetattr(fd)
    keys = {"o": "once", "a": "always", "d": "deny", "n": "never"}
    click.echo(f"gatekeep watch on {here}: o once, a always (then y), d deny, n never (then y); q quits")
    click.echo("  press each key on its own, after a pause; typing does not answer")

    def report(typed: str) -> None:
        click.echo(f"\n  not an answer: '{visible(typed)}' (typing; press one key on its own, after a pause)")

    try:
        tty.setcbreak(fd)
        while True:
            requests = _open_requests()
            current = requests[0] if requests else None
            shown = current["id"] if current else None
            own = current is not None and current.get("tty") == here
            if current is None:
                click.echo("\nwaiting for requests…")
            elif own:
                click.echo(f"\n{describe(current)}\n  asked on this terminal: answer it from another one, or q")
            else:
                click.echo(f"\n{describe(current)}\n  [o/a/d/n] > ", nl=False)

            def changed() -> str | None:
                oldest = _open_requests()
                return "changed" if (oldest[0]["id"] if oldest else None) != shown else None

            reader = Keys(fd, time.monotonic() + 24 * 3600, report, poll=changed, poll_seconds=poll_seconds)
            if typed := reader.set_aside():
                click.echo(f"\n  set aside: '{visible(typed)}' (typed before this request was shown)")
            try:
                key = reader.next({"q"} | (set(keys) if current is not None and not own else set()))
                if key in ("a", "n"):
                    rules = ", ".join(current.get("suggestions") or [])
                    click.echo(f"{keys[key]}: write the rules {visible(rules)}? [y] yes   [b] back > ", nl=False)
                    reader.restart()
                    if reader.next({"y", "b"}) != "y":
                        click.echo("back")
                        continue
            except Ended as ended:
                if ended.reason in ("interrupt", "eof"):
                    return EXIT_ALLOW
                continue  # the oldest request changed (answered elsewhere, withdrawn, a new one)
            if key == "q":
                return EXIT_ALLOW
            try:
                approvals.give_answer(get_paths(), shown, keys[key], here)
                click.echo(keys[key])
            except approvals.ApprovalError as e:
                click.echo(f"gatekeep: {e}")
    except KeyboardInterrupt:
        return EXIT_ALLOW
    finally:
        termios.tcsetattr(fd, termios.TCSAFLUSH, saved)


def console() -> int:
    """The approver console: `watch` on a terminal of its own, started as that terminal's program
    (a terminal profile whose command is `gatekeep console`, `xterm -e gatekeep console`,
    `tmux new-window gatekeep console`). It refuses to run on the terminal of a gated shell it
    was started from, where whatever types into that shell (an agent) could type into it too."""
    shell = _gated_shell_on_this_terminal()
    if shell is not None:
        raise click.UsageError(
            f"gatekeep console is running on the terminal of the gated shell it was typed into (pid {shell}), "
            "where whatever types into that shell could answer; start it on a terminal of its own: "
            "xterm -e gatekeep console, or a terminal profile whose command is gatekeep console"
        )
    return watch()


def _gated_shell_on_this_terminal() -> int | None:
    """The pid of a gated shell above this process on the same terminal, if any. GATEKEEP_HOOK
    names the shell that loaded the hook; an environment without it, or a shell on another
    terminal, is not one. When /proc cannot tell, it is assumed to be one."""
    hook = os.environ.get("GATEKEEP_HOOK", "").split()
    if len(hook) < 4 or not hook[3].isdigit():
        return None
    shell = int(hook[3])
    if not os.path.isdir("/proc/self"):
        return shell  # no way to tell (not Linux)
    try:
        return shell if _stat(shell)[4] == _stat(os.getpid())[4] else None  # the tty_nr field
    except (OSError, IndexError):
        return None  # that shell has ended: the variable was inherited from it


def _stat(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name (state, ppid, pgrp, session, tty_nr...)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


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
