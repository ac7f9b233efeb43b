"""`gatekeep hook bash|zsh`: print the hook script (shells/hook.py)."""

from __future__ import annotations

import click

from gatekeep.core.errors import EXIT_ALLOW
from gatekeep.shells.hook import hook_script


def print_hook(shell: str) -> int:
    click.echo(hook_script(shell), nl=False)
    return EXIT_ALLOW
