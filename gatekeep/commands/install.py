"""`gatekeep install --shell bash|zsh` and `--agent NAME`: add (or remove) gatekeep's hook.

For a shell, a marked block at the end of the rc file, so running install again
replaces it instead of adding a second one, and `--remove` takes exactly it out.
It goes last in the file: the bash hook must run after anything else that sets
PROMPT_COMMAND. `--path DIR` also puts DIR on PATH in that block (before the
hook loads): the one way to change a start-up file from a gated shell, where
the built-in policy denies writes to them (`make user-install` and that denial
both point here). The block keeps its PATH lines when install runs again. For a coding agent, gatekeep's entry in the host's settings
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


PATH_MARK = "# gatekeep install --path"


def block(shell: str, on_path: tuple[str, ...] = ()) -> str:
    """The rc block: `on_path` directories put on PATH (each once), then the hook."""
    from gatekeep.shells.hook import rc_lines  # the hook, or a fallback that blocks every line (hook.py)

    command = shlex.join([sys.executable, "-I", "-m", "gatekeep", "hook", shell])
    loads = rc_lines(shell, command, str(rc_file(shell)))
    paths = "".join(path_line(directory) for directory in on_path)
    return f"{BEGIN}\n# Vets every command line before it runs; keep this block last.\n{paths}{loads}{END}\n"


def path_line(directory: str) -> str:
    """Put `directory` first on PATH unless it is on it already (POSIX sh: bash and zsh read it alike)."""
    quoted = shlex.quote(directory)
    inside = shlex.quote(f":{directory}:")
    return f'case ":$PATH:" in *{inside}*) ;; *) export PATH={quoted}":$PATH" ;; esac  {PATH_MARK}\n'


def _paths_in(text: str) -> list[str]:
    """The directories an earlier block put on PATH (its lines marked PATH_MARK)."""
    found = []
    for match in _BLOCK.finditer(text):
        for line in match.group(0).splitlines():
            if not line.endswith(PATH_MARK):
                continue
            try:
                words = shlex.split(line, comments=True)
            except ValueError:  # edited by hand past reading: not carried over
                continue
            for word in words:
                if word.startswith("PATH=") and word.endswith(":$PATH") and len(word) > len("PATH=:$PATH"):
                    found.append(word[len("PATH=") : -len(":$PATH")])
    return found


def install(shell: str, remove: bool, as_json: bool = False, on_path: str | None = None) -> int:
    """Write the block (or take it out); with `as_json`, one object: `shell`, `rc_file`, and `action`,
    "installed", "removed" or "absent" (--remove found no block: nothing changed). `on_path`: a
    directory the block also puts on PATH."""
    if on_path is not None:
        home_relative = on_path == "~" or on_path.startswith("~/")
        on_path = os.path.abspath(expand_home(on_path) if home_relative else on_path)
    path, action = change_shell(shell, remove, on_path)
    login = change_login(remove) if shell == "bash" else None
    if as_json:
        data = {"shell": shell, "rc_file": str(path), "action": action}
        if login is not None:
            data.update(login_file=str(login[0]), login_action=login[1])
        click.echo(json.dumps(data, ensure_ascii=False))
        return EXIT_ALLOW
    if action == "absent":
        click.echo(f"no gatekeep block in {path}")
    else:
        click.echo(f"{'removed the gatekeep block from' if remove else 'gatekeep hook installed in'} {path}")
    if login is not None and login[1] in ("installed", "removed"):
        what = "login shells no longer load it from" if remove else "login shells load it too, from"
        click.echo(f"{what} {login[0]}")
    if on_path is not None:
        click.echo(f"{on_path} is on PATH in new {shell} sessions")
    if not remove and action != "absent":
        click.echo(f"it takes effect in new {shell} sessions (or: source {path})")
        click.echo(posture_note())
    return EXIT_ALLOW


def posture_note() -> str:
    """Which posture is in force for lines outside any project, and how to change it."""
    from gatekeep.commands.rules import posture_line
    from gatekeep.core.errors import PolicyError
    from gatekeep.core.paths import get_paths
    from gatekeep.judge.policy import load_policy

    paths = get_paths()
    try:
        policy = load_policy(paths)
    except PolicyError as e:
        return f"the policy does not load ({e}): every line asks until it is fixed"
    return f"posture in force: {posture_line(policy)} ({paths.user_policy}; docs/policy.md#postures)"


# A bash login shell (tmux's default, a macOS terminal, some ssh logins) reads the first of these
# and not ~/.bashrc. A login file that does not load ~/.bashrc gets a block that does, for
# interactive shells only, in POSIX sh: ~/.profile is also read by sh at a graphical login.
LOGIN_BLOCK = (
    f"{BEGIN}\n# bash login shells read this file, not ~/.bashrc: load gatekeep's hook from there too\n"
    'case $- in *i*) if [ -n "${BASH_VERSION-}" ] && [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi ;; esac\n'
    f"{END}\n"
)


def change_login(remove: bool) -> tuple[Path, str]:
    """Make bash login shells load ~/.bashrc (and so the hook), or take that out again: the login
    file and "installed", "unchanged" (it loads ~/.bashrc already), "removed" or "absent"."""
    from gatekeep.shells.hook import login_file

    path = Path(login_file())
    if remove:
        return path, _take_out(path)
    text = _read(path)
    kept = _BLOCK.sub("\n", text).rstrip("\n")
    if kept != text.rstrip("\n"):
        return path, "unchanged"  # our block is there already
    if ".bashrc" in kept:
        return path, "unchanged"  # it loads ~/.bashrc itself (as Debian's ~/.profile does)
    _write(path, (kept + "\n\n" if kept else "") + LOGIN_BLOCK)
    return path, "installed"


def change_shell(shell: str, remove: bool, on_path: str | None = None) -> tuple[Path, str]:
    """Write the block (with the directories an earlier one put on PATH, and `on_path`), or take
    it out: the rc file and "installed", "removed" or "absent". An rc file gatekeep made (it did
    not exist) and that holds nothing else once the block is out is removed, as it was."""
    path = rc_file(shell)
    if remove:
        return path, _take_out(path)
    text = _read(path)
    directories = _paths_in(text)
    if on_path is not None and on_path not in directories:
        directories.append(on_path)
    kept = _BLOCK.sub("\n", text).rstrip("\n")
    _write(path, (kept + "\n\n" if kept else "") + block(shell, tuple(directories)))
    return path, "installed"


def _take_out(path: Path) -> str:
    """Take gatekeep's marked block out of `path`: "removed", or "absent" when it holds none. A
    file install made (_made_by_us) that holds nothing else then is removed, as it was."""
    text = _read(path)
    kept = _BLOCK.sub("\n", text).rstrip("\n")
    if kept == text.rstrip("\n"):
        return "absent"
    if not kept.strip() and _made_by_us(path):
        _delete(path)
    else:
        _write(path, kept + "\n")
    return "removed"


def change_agent(agent: str, remove: bool, managed: bool = False) -> tuple[Path, str]:
    """Register the hook with a coding agent, or take it out: its settings file and "installed",
    "unchanged", "removed" or "absent". A settings file gatekeep made that holds nothing else
    once the hook is out (`{}`) is removed, as it was. `managed`: in the host's managed settings
    (Setup.managed_path), for every user of the machine."""
    from gatekeep.agents.setup import SETUPS

    setup = SETUPS[agent]
    where = setup.managed_path() if managed else setup.path()
    if where is None:
        raise FatalError(f"{setup.title} has no managed settings gatekeep can write; run it without --managed")
    path = Path(where)
    current = _read(path) if path.exists() else None
    if remove and current is None:
        return path, "absent"
    new = setup.render(current, setup.start(managed), remove, managed)
    if _same(current, new):
        return path, "absent" if remove else "unchanged"
    if new is None or remove and _only_ours(setup, new) and _made_by_us(path):
        _delete(path)
    else:
        _write(path, new)
    return path, "removed" if remove else "installed"


def _only_ours(setup, text: str) -> bool:
    """Whether settings hold nothing but what install writes around its hook (`{}`, Cursor's
    `{"version": 1}`): what is left of a file install made, once the hook is out."""
    made = setup.render(None, setup.start(), False)
    left = setup.render(made, setup.start(), True) if made is not None else None
    try:
        return json.loads(text) in ({}, [], json.loads(left) if left else {})
    except ValueError:
        return False


def install_agent(agent: str, remove: bool, as_json: bool = False, managed: bool = False) -> int:
    """Register (or take out) the hook with a coding agent; with `as_json`, one object: `agent`, `file`,
    `action`: "installed", "unchanged" (already so), "removed" or "absent" (--remove found none),
    and `notes`: what was done or must still be done for the host to run it (Setup.after_install).

    `managed` writes the machine's managed settings, which takes root: without it the write fails
    with the sudo line to run. The user's own entry may stay (a host runs one command once); the
    posture note is left out, as under sudo it would name root's policy."""
    from gatekeep.agents.setup import SETUPS

    setup = SETUPS[agent]
    try:
        path, action = change_agent(agent, remove, managed)
    except FatalError as e:
        if managed and os.geteuid() != 0:
            again = f"sudo {shlex.quote(sys.argv[0])} install --agent {agent} --managed" + (" --remove" if remove else "")
            raise FatalError(f"{e}; the managed settings are the machine's: run {again}") from None
        raise
    # (Codex: its trust, recorded; OpenCode: no SDK to fetch)
    notes = setup.after_remove() if remove else setup.after_install(setup.start(managed), managed)
    if as_json:
        said = {"agent": agent, "file": str(path), "action": action, "notes": notes}
        click.echo(json.dumps(said, ensure_ascii=False))
        return EXIT_ALLOW
    said = {
        "installed": f"gatekeep hook registered with {setup.title} in {path}",
        "unchanged": f"gatekeep hook already registered with {setup.title} in {path}; nothing changed",
        "removed": f"gatekeep hook removed from {setup.title}'s {path}",
        "absent": f"no gatekeep hook for {setup.title} in {path}; nothing changed",
    }
    _report(said[action], notes)
    if not remove:
        if managed:
            click.echo(f"every user's {setup.title} runs it, and no project or user setting can turn it off")
        else:
            click.echo(posture_note())
    return EXIT_ALLOW


def install_export(url: str, remove: bool, managed: bool, as_json: bool = False) -> int:
    """The export service (export_unit.py); with `as_json`, one object: `unit`, `action` and `notes`."""
    from gatekeep.commands.export_unit import change_export

    try:
        path, action, notes = change_export(url, remove, managed)
    except FatalError as e:
        if managed and os.geteuid() != 0:
            raise FatalError(f"{e}; the managed unit is the machine's: run it with sudo") from None
        raise
    if as_json:
        click.echo(json.dumps({"unit": str(path), "action": action, "notes": notes}, ensure_ascii=False))
        return EXIT_ALLOW
    said = {
        "installed": f"the audit export to {url} is a service: {path}",
        "unchanged": f"the audit export service is already so: {path}",
        "removed": f"removed the audit export service {path}",
        "absent": f"no audit export service in {path.parent}; nothing changed",
    }
    _report(said[action], notes)
    return EXIT_ALLOW


def _report(said: str, notes: list[str]) -> None:
    """What install did, then its notes (a WARNING on stderr)."""
    click.echo(said)
    for note in notes:
        click.echo(note, err=note.startswith("WARNING"))


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
    """Replace the file a link points to, not the link (rc files and settings kept in a dotfiles
    repository). A file that did not exist is remembered as gatekeep's (_made_by_us)."""
    target = os.path.realpath(path)
    made = not os.path.lexists(target)
    try:
        write_atomic(target, text.encode("utf-8", "surrogateescape"), new_mode=0o644)
    except OSError as e:
        raise FatalError(f"cannot write {path} ({e.strerror or e}); nothing changed") from None
    if made:
        _remember_made(target)


def _made_file() -> str:
    from gatekeep.core.paths import get_paths

    return os.path.join(get_paths().state_dir, "made-by-install.json")


def _made() -> list[str]:
    """The files install created (they did not exist before it wrote them)."""
    try:
        with open(_made_file(), encoding="utf-8") as f:
            made = json.load(f)
    except (OSError, ValueError):
        return []
    return [p for p in made if isinstance(p, str)] if isinstance(made, list) else []


def _remember_made(target: str) -> None:
    made = _made()
    if target not in made:
        try:
            write_atomic(_made_file(), json.dumps([*made, target], ensure_ascii=False) + "\n")
        except OSError:
            pass  # then uninstall leaves the file, emptied of gatekeep: never worse than today


def _made_by_us(path: Path) -> bool:
    return os.path.realpath(path) in _made()
