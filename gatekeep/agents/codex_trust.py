"""Codex runs a hook only once it is trusted: its hash, recorded in config.toml (issue 37).

A new or changed entry in hooks.json is skipped, silently (`codex exec` says nothing), until the
user trusts it in Codex's /hooks screen; a reinstall that changes the command (another
virtualenv) needs it again. `gatekeep install --agent codex` records the trust itself, the way
that screen does, through Codex's own app server (`codex app-server`, JSON-RPC over stdio):
`hooks/list` gives each hook's key and current hash, and `config/value/write` puts the hash
under `hooks.state."KEY".trusted_hash` in the user's config.toml. Only gatekeep's own entry is
trusted, and only while its command is exactly the one install wrote. Codex writes its own
file, so nothing of the user's config.toml is lost or reformatted by gatekeep.

`status()` asks the same server whether the entry is trusted now (`gatekeep doctor`).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time

from gatekeep.core.errors import FatalError

SECONDS = 20  # for the whole exchange: the server starts in about a second


class CodexError(FatalError):
    """Codex's app server could not be asked."""


def _exchange(requests: list[dict], cwd: str) -> dict[int, dict]:
    """Send `requests` (after initialize) to a fresh `codex app-server`, each answer awaited
    before the next request; the answers by id. Bounded in time, and the server is killed after."""
    codex = shutil.which("codex")
    if codex is None:
        raise CodexError("codex is not on PATH")
    try:
        server = subprocess.Popen(
            [codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd
        )
    except OSError as e:
        raise CodexError(f"codex app-server did not start ({e.strerror or e})") from None
    deadline = time.monotonic() + SECONDS
    answers: dict[int, dict] = {}
    pending = b""
    try:
        opening = {"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "gatekeep", "version": "1"}}}
        for request in [opening, {"method": "initialized"}, *requests]:
            server.stdin.write(json.dumps(request).encode() + b"\n")
            server.stdin.flush()
            if "id" not in request:
                continue
            while request["id"] not in answers:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([server.stdout], [], [], left)[0]:
                    raise CodexError(f"codex app-server did not answer {request['method']} within {SECONDS} s")
                chunk = os.read(server.stdout.fileno(), 1 << 16)
                if not chunk:
                    raise CodexError(f"codex app-server ended before it answered {request['method']}")
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    try:
                        message = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(message, dict) and isinstance(message.get("id"), int):
                        answers[message["id"]] = message
            if "error" in answers[request["id"]]:
                error = answers[request["id"]]["error"]
                raise CodexError(f"codex app-server refused {request['method']}: {error.get('message', error)}")
    except OSError as e:
        raise CodexError(f"codex app-server failed ({e.strerror or e})") from None
    finally:
        server.kill()
        server.wait()
    return answers


def _ours(command: str, directory: str | None = None) -> list[dict]:
    """The hooks Codex lists whose command is exactly `command` (gatekeep's entry), for a session in
    `directory` (default: the home directory), whose project settings may turn hooks off."""
    answers = _exchange([{"id": 1, "method": "hooks/list", "params": {}}], directory or os.path.expanduser("~"))
    found = []
    for place in answers[1].get("result", {}).get("data", []):
        found += [h for h in place.get("hooks", []) if isinstance(h, dict) and h.get("command") == command]
    return found


def trust(command: str) -> str:
    """Record Codex's trust in the hook whose command is `command`; what was done, in a line."""
    hooks = _ours(command)
    if not hooks:
        raise CodexError("codex does not list gatekeep's hook")
    state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks if h.get("trustStatus") != "trusted"}
    if not state:
        return "Codex already trusts the hook"
    edit = {"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}
    _exchange([{"id": 1, "method": "config/value/write", "params": edit}], os.path.expanduser("~"))
    if any(h.get("trustStatus") != "trusted" for h in _ours(command)):
        raise CodexError("codex still does not trust the hook after gatekeep recorded its hash")
    return "Codex trusts the hook (its hash is recorded in Codex's config.toml)"


def status(command: str, directory: str | None = None) -> str | None:
    """None when Codex runs the hook whose command is `command` (in a session in `directory`, where
    given), trusted and enabled, else why it does not run."""
    try:
        hooks = _ours(command, directory)
    except CodexError as e:
        return f"it cannot be told whether Codex trusts the hook: {e}"
    if not hooks:
        where = f" in {directory}" if directory else ""
        return f"Codex does not list gatekeep's hook{where} (a setting there turns hooks off: [features] hooks = false)"
    if any(h.get("enabled") is False for h in hooks):
        return "Codex lists gatekeep's hook as disabled (hooks.state enabled = false in its config.toml)"
    if any(h.get("trustStatus") != "trusted" for h in hooks):
        return "Codex does not trust the hook yet, so it runs its commands ungated"
    return None
