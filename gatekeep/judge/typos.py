"""Typos: a command word that names nothing the shell could run is not worth a question.

`gti status` asks by default like any command gatekeep does not know, yet it cannot run: bash
and zsh say "command not found" and nothing happens. A gated shell tells gatekeep which names it
would run beyond the files on PATH and its builtins (its aliases, functions and hashed commands,
and zsh's suffix aliases), and a command whose word is none of them is allowed, with a reason
that says so. Only when that is all that asks on the line: if anything else on it asks, the
line asks as before, typo and all (an approved `cp /bin/rm ~/bin/gti && gti -rf ~` would make
the typo a command); and only beside commands that only read: one allowed by a rule or a posture
may still make the word a command (`git checkout topic && gti`, where topic adds bin/gti and bin
is on PATH).

It never applies when gatekeep cannot see what the word will be: a word computed at run time or
holding a `/`, a PATH with a relative directory, a directory of that name (zsh's and bash's
autocd would cd there), a function the line defines, or a line that changes what names mean
(`alias`, `unalias`, `hash`, `enable`, `source`, `.`, `eval`, `builtin`, `command`, `exec`).
It never applies when the shell would run something for an unknown name: bash's
`command_not_found_handle` and zsh's `command_not_found_handler` are functions the names list;
the zsh hook passes no names while CORRECT or CORRECT_ALL is on (zsh would offer `git` for
`gti` after the gate). Agent hooks pass no names: their commands meet the rules as written.
"""

from __future__ import annotations

import os

NOT_A_COMMAND = "is no command here (not on PATH, no builtin, alias or function): the shell will say so"
HANDLERS = frozenset({"command_not_found_handle", "command_not_found_handler"})
# commands after which a name may mean something else on the same line
RENAMERS = frozenset({"alias", "unalias", "hash", "enable", "source", ".", "eval", "builtin", "command", "exec"})


def settle(
    verdicts: tuple, functions: frozenset[str], names: frozenset[str], cwd: str, builtins: frozenset[str]
) -> tuple:
    """`verdicts` with each asked command that cannot run allowed as such, when nothing else on
    the line asks or is denied; else `verdicts` as they were. `names`: what the shell runs by
    name beyond PATH and its `builtins` (and reserved words); `functions`: those the line defines."""
    if names & HANDLERS or any(next(iter(v.normalized.command.argv), None) in RENAMERS for v in verdicts):
        return verdicts
    path = os.environ.get("PATH", "")
    if any(not d.startswith("/") for d in path.split(":")):
        return verdicts  # ("" and "." are the directory the command runs in)
    from gatekeep.judge.readonly import is_read_only

    settled = []
    for verdict in verdicts:
        if verdict.decision == "allow" and is_read_only(verdict.normalized):
            settled.append(verdict)
            continue
        if verdict.decision != "ask" or not _cannot_run(verdict.normalized, functions | names, builtins, path, cwd):
            return verdicts
        settled.append(verdict._replace(decision="allow", rule=None, why=NOT_A_COMMAND, exact=False))
    return tuple(settled)


def _cannot_run(normalized, names: frozenset[str], builtins: frozenset[str], path: str, cwd: str) -> bool:
    command = normalized.command
    if not command.words or command.words[0].dynamic or command.assignments:
        return False
    word = command.words[0].value
    if not word or "/" in word or word in builtins or word in names:
        return False
    if "." in word and "*." + word.rsplit(".", 1)[1] in names:
        return False  # a zsh suffix alias (`alias -s py=python3`: `x.py` runs python3 x.py)
    import shutil  # (here: only a line that asks comes this far)

    if shutil.which(word, path=path) is not None:
        return False
    directories = normalized.directories or ("",)
    return None not in directories and not any(os.path.isdir(os.path.join(d or cwd, word)) for d in directories)
