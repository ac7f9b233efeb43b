"""`gatekeep install --shell bash|zsh` and `--agent NAME`: add (or remove) gatekeep's hook.

For a shell, a marked block at the end of the rc file, so running install again
replaces it instead of adding a second one, and `--remove` takes exactly it out.
It goes last in the file: the bash hook must run after anything else that sets
PROMPT_COMMAND. For a coding agent, gatekeep's entry in the host's settings
(agent_setup.py says where and what); the file is written only when that
changes something in it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

import click

from gatekeep.core.atomic import write_atomic
from gatekeep.core.errors import EXIT_ALLOW, FatalError
from gatekeep.core.paths import expand_home

BEGIN = "# >>> gatekeep >>>"
END = "# <<< gatekeep <<<"
_BLOCK = re.compile(rf"\n*{re.escape(BEGIN)}\n.*?{re.escape(END)}\n?", re.DOTALL)


def rc_file(shell: str) -> Path:
    home = Path(expand_home("~"))
    if shell == "zsh":
        return Path(os.environ.get("ZDOTDIR") or home) / ".zshrc"
    return home / ".bashrc"


def block(shell: str) -> str:
    from gatekeep.shells.hook import rc_lines  # the hook, or a fallback that blocks every line (hook.py)

    command = shlex.join([sys.executable, "-I", "-m", "gatekeep", "hook", shell])
    loads = rc_lines(shell, command, str(rc_file(shell)))
    return f"{BEGIN}\n# Vets every command line before it runs; keep this block last.\n{loads}{END}\n"


def install(shell: str, remove: bool, as_json: bool = False) -> int:
    """Write the block (or take it out); with `as_json`, one object: `shell`, `rc_file`, and `action`,
    "installed", "removed" or "absent" (--remove found no block: nothing changed)."""
    path = rc_file(shell)
    text = _read(path)
    kept = _BLOCK.sub("\n", text).rstrip("\n")
    new = (kept + "\n") if remove else (kept + "\n\n" if kept else "") + block(shell)
    if remove and kept == text.rstrip("\n"):
        action = "absent"
    else:
        _write(path, new)
        action = "removed" if remove else "installed"
    if as_json:
        click.echo(json.dumps({"shell": shell, "rc_file": str(path), "action": action}, ensure_ascii=False))
    elif action == "absent":
        click.echo(f"no gatekeep block in {path}")
    else:
        click.echo(f"{'removed the gatekeep block from' if remove else 'gatekeep hook installed in'} {path}")
        if not remove:
            click.echo(f"it takes effect in new {shell} sessions (or: source {path})")
    return EXIT_ALLOW


def install_agent(agent: str, remove: bool, as_json: bool = False) -> int:
    """Register (or take out) the hook with a coding agent; with `as_json`, one object: `agent`, `file`,
    and `action`: "installed", "unchanged" (already so), "removed" or "absent" (--remove found none)."""
    from gatekeep.agents.setup import SETUPS

    setup = SETUPS[agent]
    path = Path(setup.path())
    current = _read(path) if path.exists() else None
    new = setup.render(current, setup.start(), remove)
    if _same(current, new):
        action = "absent" if remove else "unchanged"
    else:
        if new is None:
            _delete(path)
        else:
            _write(path, new)
        action = "removed" if remove else "installed"
    if as_json:
        click.echo(json.dumps({"agent": agent, "file": str(path), "action": action}, ensure_ascii=False))
        return EXIT_ALLOW
    said = {
        "installed": f"gatekeep hook registered with {setup.title} in {path}",
        "unchanged": f"gatekeep hook already registered with {setup.title} in {path}; nothing changed",
        "removed": f"gatekeep hook removed from {setup.title}'s {path}",
        "absent": f"no gatekeep hook for {setup.title} in {path}; nothing changed",
    }
    click.echo(said[action])
    if not remove:
        for note in setup.notes:
            click.echo(note)
    return EXIT_ALLOW


def _same(current: str | None, new: str | None) -> bool:
    """Whether writing `new` would change nothing a host reads (a JSON file's own spacing aside)."""
    if current is None or new is None:
        return current is new
    if current == new:
        return True
    try:
        return json.loads(current) == json.loads(new)
    except ValueError:
        return False


def _delete(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as e:
        raise FatalError(f"cannot remove {path} ({e.strerror or e}); nothing changed") from None


# An rc file need not be UTF-8: its bytes go back as they came (surrogateescape), whatever they are.
def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape") if path.exists() else ""
    except OSError as e:
        raise FatalError(f"cannot read {path} ({e.strerror or e}); nothing changed") from None


def _write(path: Path, text: str) -> None:
    """Replace the file a link points to, not the link (rc files and settings kept in a dotfiles repository)."""
    try:
        write_atomic(os.path.realpath(path), text.encode("utf-8", "surrogateescape"), new_mode=0o644)
    except OSError as e:
        raise FatalError(f"cannot write {path} ({e.strerror or e}); nothing changed") from None
