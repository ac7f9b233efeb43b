"""The hook script `gatekeep hook bash|zsh` prints, with this gatekeep's path baked in.

The hook runs `<this python> -I -S -c '...; from gatekeep.server.client import main; sys.exit(main())'`
(the client: the warm checker decides the line when one runs, else the process itself; server/):
-I (isolated mode) keeps the current directory, PYTHONPATH and the user site out
of sys.path, so a repository that ships its own `gatekeep/` package, or an
exported PYTHONPATH, cannot stand in for the real gate. It calls main() directly
rather than `-m gatekeep`, which would import runpy and importlib.util first:
about 0.4x Python's start-up, on every line. -S skips the site module (its .pth
files, ~0.3x start-up); the directories gatekeep and its libraries were imported
from when the hook was printed are put on sys.path instead, after the standard
library, as site would. If the interpreter goes (the virtualenv moved or was
deleted), every line is blocked with the way out; if only those directories
move (gatekeep reinstalled elsewhere), the import fails with a one-line reason
(exit 2) and the line is blocked, until the shell loads the new hook.

`rc_lines` is what `gatekeep install` writes into the rc file: the hook is
loaded when it can be printed, and otherwise (gatekeep gone since install) a
fallback is, which blocks every line of that shell and says why, at start-up and
on each line. A shell must never start ungated without a word. Nothing typed can
switch the fallback off, since no typed line runs; the way out is a shell
started without the rc file (`bash --norc`, `zsh -f`) by the terminal itself,
or repairing the install there.
"""

from __future__ import annotations

import os
import shlex
import sys

from gatekeep.core import jsontext, resources
from gatekeep.core.paths import server_dir  # baked in: where the warm checker meets the hook's checks

SHELLS = ("bash", "zsh")
SHELL_REINSTALL = "open a new shell (or one without the hook: bash --norc, zsh -f)"


def hook_command(after_reinstall: str = SHELL_REINSTALL) -> str:
    """How the hooks start gatekeep, as shell words (hook_argv, quoted)."""
    return shlex.join(hook_argv(after_reinstall))


def hook_argv(after_reinstall: str = SHELL_REINSTALL, any_user: bool = False) -> list[str]:
    """How the hooks start gatekeep: this interpreter and its arguments; `after_reinstall` says how to
    load the hook again. The code has no single quote, so as shell words it stays one plain '...'
    (agents' settings show it). The warm checker's directory is written in, as finding it costs
    time at each start; `any_user`: for an entry every user of the machine runs (an agent's
    managed settings), it is found at each start instead, in the home of whoever runs it."""
    dirs = _literal(import_dirs())
    code = (
        f"import sys; sys.path += {dirs}\n"
        "try: from gatekeep.server.client import main\n"
        "except ImportError as e: sys.exit(f\"gatekeep: cannot import gatekeep from {sys.path[-1]} ({e}); "
        f"blocked. Reinstall it, then {after_reinstall}\")\n"
        f"sys.exit(main({_literal(None if any_user else server_dir())}))"
    )
    return [sys.executable, "-I", "-S", "-c", code]


def _literal(value) -> str:
    """`value` (None, or strings in lists) as a Python literal without a single quote: JSON's
    strings are Python's."""
    return "None" if value is None else jsontext.dumps(value).replace("'", "\\u0027")


def import_dirs() -> list[str]:
    """Where gatekeep and the libraries it may import come from, each once, in sys.path order.

    Found with find_spec, which locates a module without running it (importing
    bashlex would build its parser, on every shell start-up).
    """
    from importlib.util import find_spec

    homes = set()
    for module in ("gatekeep", "bashlex", "filelock", "ruamel.yaml"):
        package_dir = os.path.dirname(os.path.abspath(find_spec(module).origin))
        homes.add(os.path.dirname(package_dir) if "." not in module else os.path.dirname(os.path.dirname(package_dir)))
    ordered = list(dict.fromkeys(d for d in sys.path if d in homes))  # sys.path may name one twice
    return ordered + sorted(homes - set(ordered))


def hook_script(shell: str) -> str:
    with open(os.path.join(resources.data_dir("shell"), f"gatekeep.{shell}"), encoding="utf-8") as f:
        template = f.read()
    return template.replace("__GATEKEEP_COMMAND__", hook_command())


# The fallback: what an interactive shell loads when `gatekeep hook SHELL` cannot run. Every line is
# stopped the way the hook stops a denied one, with nothing a line could change first: bash, by PS0's
# SIGINT (PS0 readonly, promptvars on, no INT trap, the editing commands that run text without PS0
# unbound, and in PS0's subshell the functions that could stand in for kill and printf cleared);
# zsh, by TRAPDEBUG before every top-level command (a function definition and an assignment
# included), with the widgets that would run a `$( )` of the line being typed refusing. The bodies
# are defined with alias expansion off.
_BASH_FALLBACK = """\
    builtin printf '%s\\n' {why} >&2
    builtin trap - INT
    builtin shopt -s promptvars
    for __gatekeep_keymap in emacs-standard emacs-meta emacs-ctlx vi-command vi-insert; do
        builtin bind -m "$__gatekeep_keymap" -u edit-and-execute-command 2>/dev/null
        builtin bind -m "$__gatekeep_keymap" -u shell-expand-line 2>/dev/null
    done
    builtin unset __gatekeep_keymap
    PS0={ps0}${{PS0-}}
    builtin declare -r PS0 __gatekeep_loaded=fallback
"""
_ZSH_FALLBACK = """\
    print -ru2 -- {why}
    typeset -g __gatekeep_aliases_were=${{options[aliases]}}
    options[aliases]=off
    options[debugbeforecmd]=on
    functions[TRAPDEBUG]={trap}
    functions[__gatekeep_refuse]={refuse}
    for __gatekeep_widget in {widgets}; do
        (( ${{+widgets[$__gatekeep_widget]}} )) && zle -N $__gatekeep_widget __gatekeep_refuse
    done
    options[aliases]=$__gatekeep_aliases_were
    unset __gatekeep_widget __gatekeep_aliases_were
    typeset -gr __gatekeep_loaded=fallback
"""
def _zsh_widgets() -> str:
    """The widgets that expand or complete the line being typed: the zsh hook's own list
    (__gatekeep_widgets in gatekeep.zsh), written once."""
    import re

    with open(os.path.join(resources.data_dir("shell"), "gatekeep.zsh"), encoding="utf-8") as f:
        found = re.search(r"^typeset -gra __gatekeep_widgets=\(([^)]*)\)", f.read(), re.MULTILINE)
    if found is None:
        raise RuntimeError("gatekeep.zsh no longer defines __gatekeep_widgets")
    return " ".join(found.group(1).split())


# A bash login shell (tmux's default, a macOS terminal, an ssh login) reads the first of these
# there is, and not ~/.bashrc (install.change_login makes it load ~/.bashrc)
LOGIN_FILES = (".bash_profile", ".bash_login", ".profile")


def login_file() -> str:
    """The file a bash login shell reads: the first of LOGIN_FILES there is, else ~/.bash_profile."""
    from gatekeep.core.paths import expand_home

    home = expand_home("~")
    found = (os.path.join(home, name) for name in LOGIN_FILES if os.path.exists(os.path.join(home, name)))
    return next(found, os.path.join(home, LOGIN_FILES[0]))


def rc_lines(shell: str, command: str, rc_path: str) -> str:
    """The rc lines that load the hook `command` prints, or the fallback when it cannot be printed."""
    q = shlex.quote
    way_out = "bash --norc" if shell == "bash" else "zsh -f"
    why = (
        f"gatekeep: the hook could not be loaded ({command} failed), so this shell blocks every line. "
        f"Reinstall gatekeep and run `gatekeep install --shell {shell}`, or take its block out of {rc_path}, "
        f"in a shell without the hook: have your terminal start `{way_out}` (typed here, it is blocked too). "
        "Ctrl-D exits"
    )
    line = "gatekeep: blocked: this shell could not load the gatekeep hook (see the message at its start); Ctrl-D exits"
    if shell == "bash":
        # quoted command words: bash parses PS0's `$( )` again on every line, with the aliases of then
        say = f"\\builtin printf '%s\\n' {q(line)} >&2"
        ps0 = f"$(POSIXLY_CORRECT=1; \\unset -f builtin printf kill; {say}; \\builtin kill -INT $$)"
        fallback = _BASH_FALLBACK.format(why=q(why), ps0=q(ps0))
        interactive = "[[ $- == *i* ]]"
    else:
        trap = (
            f'if [[ ${{zsh_eval_context[*]}} == "toplevel shfunc" ]]; then print -ru2 -- {q(line)}; '
            "options[errexit]=on; (( 0 )); else (( 1 )); fi"
        )
        refuse = f"zle -M {q(line)}; return 1"
        fallback = _ZSH_FALLBACK.format(why=q(why), trap=q(trap), refuse=q(refuse), widgets=_zsh_widgets())
        interactive = "[[ -o interactive ]]"
    # eval's text is read before it runs, so the variable that holds it can go at once (the hook may
    # return early: an older bash, or a hook already loaded).
    return (
        f"if {interactive}; then\n"
        f"  if __gatekeep_hook=$({command}) && [[ $__gatekeep_hook == *__gatekeep_loaded* ]]; then\n"
        f'    eval "unset __gatekeep_hook; $__gatekeep_hook"\n'
        f"  else\n"
        f"    unset __gatekeep_hook\n"
        f"{fallback}"
        f"  fi\n"
        f"fi\n"
    )
