"""`gatekeep hook bash|zsh`: print the hook script, with this gatekeep's path baked in.

The hook runs `<this python> -I -c 'import sys; from gatekeep.main import main;
sys.exit(main())'`: -I (isolated mode) keeps the current directory, PYTHONPATH
and the user site out of sys.path, so a repository that ships its own
`gatekeep/` package, or an exported PYTHONPATH, cannot stand in for the real
gate. It calls main() directly rather than `-m gatekeep`, which would import
runpy and importlib.util first: about 0.4x Python's start-up, on every line.
-S skips the site module (its .pth files, ~0.3x start-up); the directories
gatekeep and its libraries were imported from when the hook was printed are
put on sys.path instead, after the standard library, as site would. If they
move (gatekeep reinstalled elsewhere) the import fails, and the hook blocks
the line with a message until the shell loads the new hook.
"""

from __future__ import annotations

import os
import shlex
import sys

import click

from gatekeep import resources
from gatekeep.errors import EXIT_ALLOW

SHELLS = ("bash", "zsh")


def hook_command() -> str:
    """How the hooks start gatekeep, as shell words."""
    code = f"import sys; sys.path += {import_dirs()!r}; from gatekeep.main import main; sys.exit(main())"
    return shlex.join([sys.executable, "-I", "-S", "-c", code])


def import_dirs() -> list[str]:
    """Where gatekeep and the libraries it may import come from, each once, in sys.path order.

    Found with find_spec, which locates a module without running it (importing
    bashlex would build its parser, on every shell start-up).
    """
    from importlib.util import find_spec

    homes = set()
    for module in ("gatekeep", "bashlex", "filelock", "platformdirs", "ruamel.yaml"):
        package_dir = os.path.dirname(os.path.abspath(find_spec(module).origin))
        homes.add(os.path.dirname(package_dir) if "." not in module else os.path.dirname(os.path.dirname(package_dir)))
    ordered = list(dict.fromkeys(d for d in sys.path if d in homes))  # sys.path may name one twice
    return ordered + sorted(homes - set(ordered))


def hook_script(shell: str) -> str:
    with open(os.path.join(resources.data_dir("shell"), f"gatekeep.{shell}"), encoding="utf-8") as f:
        template = f.read()
    return template.replace("__GATEKEEP_COMMAND__", hook_command())


def print_hook(shell: str) -> int:
    click.echo(hook_script(shell), nl=False)
    return EXIT_ALLOW
