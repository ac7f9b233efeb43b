"""`gatekeep pending | approve | deny | watch`: answer approval requests from another terminal.

The requests come from `gatekeep check` under `approve: remote` or `both`
(approvals.py). The built-in policy asks before any of these commands is typed
into a gated shell, so an agent typing into its own terminal cannot answer
itself without the person seeing it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

import click

from gatekeep.ask.terminal import asked_on, gated_shell_on_this_terminal, multiplexer, terminal_of_streams, terminals_of
from gatekeep.core.display import visible
from gatekeep.core.errors import EXIT_ALLOW
from gatekeep.core.paths import get_paths
from gatekeep.record import approvals
from gatekeep.record.decision import record_asker_gone


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
    request = approvals.give_answer(get_paths(), request_id, given, terminal_of_streams())
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
    When a request on screen goes away without an answer from here (answered
    elsewhere, withdrawn: an agent can withdraw its own), the next key answers
    nothing: it may have been meant for the request that went away.
    A request asked on this very terminal is not answered here, and does not
    hold up the ones behind it.
    """
    import termios
    import tty

    from gatekeep.ask.keys import Ended, Keys
    from gatekeep.ask.prompt import ignored_note

    fd = sys.stdin.fileno()
    if not os.isatty(fd):
        raise click.UsageError("gatekeep watch needs a terminal; use gatekeep pending / approve / deny instead")
    here, terminals = terminal_of_streams(), terminals_of(fd)
    saved = termios.tcgetattr(fd)
    keys = {"o": "once", "a": "always", "d": "deny", "n": "never"}
    click.echo(f"gatekeep watch on {here}: o once, a always (then y), d deny, n never (then y); q quits")
    click.echo("  press each key on its own, after a pause; typing does not answer")

    def report(typed: str) -> None:
        click.echo(f"\n  {ignored_note(typed)}")

    def answerable() -> tuple[dict | None, list[dict]]:
        """The oldest request this console may answer, and those asked on its own terminal."""
        requests = _open_requests()
        own = [r for r in requests if asked_on(r.get("tty"), terminals)]
        others = [r for r in requests if r not in own]
        return (others[0] if others else None), own

    unsettled = False  # a request on screen went away without an answer from here
    try:
        tty.setcbreak(fd)
        while True:
            current, own = answerable()
            shown = current["id"] if current else None
            for request in own:
                click.echo(f"\n{describe(request)}\n  asked on this terminal: answer it from another one")
            if current is None:
                click.echo("\nwaiting for requests…")
            else:
                click.echo(f"\n{describe(current)}\n  [o/a/d/n] > ", nl=False)

            def changed() -> str | None:
                return "changed" if (answerable()[0] or {}).get("id") != shown else None

            reader = Keys(fd, time.monotonic() + 24 * 3600, report, poll=changed, poll_seconds=poll_seconds)
            if typed := reader.set_aside():
                click.echo(f"\n  set aside: '{visible(typed)}' (typed before this request was shown)")
            try:
                key = reader.next({"q"} | (set(keys) if current is not None else set()))
                if key != "q" and unsettled:
                    unsettled = False
                    click.echo(
                        f"{key}\n  not an answer: the request on screen changed just before (answered elsewhere"
                        " or withdrawn); read this one, then press the key again"
                    )
                    continue
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
                # the oldest request changed (answered elsewhere, withdrawn, a new one)
                unsettled = unsettled or shown is not None
                if shown is not None:
                    click.echo("\n  the request on screen changed (answered elsewhere or withdrawn)")
                continue
            finally:
                if rest := reader.finish():
                    report(rest)
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
        with contextlib.suppress(termios.error, OSError):  # a terminal that has gone away has no mode
            termios.tcsetattr(fd, termios.TCSAFLUSH, saved)


def console() -> int:
    """The approver console: `watch` on a terminal of its own, started as that terminal's program
    (a terminal profile whose command is `gatekeep console`, `xterm -e gatekeep console`). It
    refuses to run on the terminal of a gated shell it was started from, where whatever types
    into that shell (an agent) could type into it too; in tmux or screen it warns (send-keys)."""
    shell = gated_shell_on_this_terminal()
    if shell is not None:
        raise click.UsageError(
            f"gatekeep console is running on the terminal of the gated shell it was typed into (pid {shell}), "
            "where whatever types into that shell could answer; start it on a terminal of its own: "
            "xterm -e gatekeep console, or a terminal profile whose command is gatekeep console"
        )
    if inside := multiplexer():
        # its windows take keys from any program of yours that runs `tmux send-keys` / `screen -X stuff`,
        # an agent that drives its own terminal that way included
        click.echo(
            f"gatekeep console: warning: inside {inside}, any program that can run {inside}'s"
            " send-keys can press keys here; a terminal window of its own (xterm -e gatekeep console) cannot be"
        )
    return watch()


def _open_requests() -> list[dict]:
    paths = get_paths()
    return approvals.open_requests(paths, on_gone=lambda request: record_asker_gone(paths.audit_log, request))
