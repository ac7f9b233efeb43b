"""`gatekeep install --shell bash|zsh`: add (or remove) the hook's block at the end of the rc file.

The block is marked, so running install again replaces it instead of adding a
second one, and `--remove` takes exactly it out. It goes last in the file: the
bash hook must run after anything else that sets PROMPT_COMMAND.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import click

from gatekeep.atomic import write_atomic
from gatekeep.errors import EXIT_ALLOW

BEGIN = "# >>> gatekeep >>>"
END = "# <<< gatekeep <<<"
_BLOCK = re.compile(rf"\n*{re.escape(BEGIN)}\n.*?{re.escape(END)}\n?", re.DOTALL)


def rc_file(shell: str) -> Path:
    home = Path(os.environ.get("HOME", "~")).expanduser()
    if shell == "zsh":
        return Path(os.environ.get("ZDOTDIR") or home) / ".zshrc"
    return home / ".bashrc"


def block(shell: str) -> str:
    command = shlex.join([sys.executable, "-I", "-m", "gatekeep", "hook", shell])
    return f'{BEGIN}\n# Vets every command line before it runs; keep this block last.\neval "$({command})"\n{END}\n'


def install(shell: str, remove: bool) -> int:
    path = rc_file(shell)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    kept = _BLOCK.sub("\n", text).rstrip("\n")
    new = (kept + "\n") if remove else (kept + "\n\n" if kept else "") + block(shell)
    if remove and kept == text.rstrip("\n"):
        click.echo(f"no gatekeep block in {path}")
        return EXIT_ALLOW
    write_atomic(path, new, new_mode=0o644)
    click.echo(f"{'removed the gatekeep block from' if remove else 'gatekeep hook installed in'} {path}")
    if not remove:
        click.echo(f"it takes effect in new {shell} sessions (or: source {path})")
    return EXIT_ALLOW
