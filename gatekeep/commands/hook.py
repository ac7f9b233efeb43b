"""`gatekeep hook bash|zsh`: print the hook script, with this gatekeep's path baked in.

The hook runs `<this python> -I -c 'import sys; from gatekeep.main import main;
sys.exit(main())'`: -I (isolated mode) keeps the current directory, PYTHONPATH
and the user site out of sys.path, so a repository that ships its own
`gatekeep/` package, or an exported PYTHONPATH, cannot stand in for the real
gate. It calls main() directly rather than `-m gatekeep`, which would import
runpy and importlib.util first: about 0.4x Python's start-up, on every line.
"""

from __future__ import annotations

import shlex
import sys

import click

from gatekeep import resources
from gatekeep.errors import EXIT_ALLOW

SHELLS = ("bash", "zsh")


def hook_command() -> str:
    """How the hooks start gatekeep, as shell words."""
    return shlex.join([sys.executable, "-I", "-c", "import sys; from gatekeep.main import main; sys.exit(main())"])


def hook_script(shell: str) -> str:
    template = (resources.data_dir("shell") / f"gatekeep.{shell}").read_text(encoding="utf-8")
    return template.replace("__GATEKEEP_COMMAND__", hook_command())


def print_hook(shell: str) -> int:
    click.echo(hook_script(shell), nl=False)
    return EXIT_ALLOW
