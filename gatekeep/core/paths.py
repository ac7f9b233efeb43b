"""Every file gatekeep reads or writes is named here, and only here.

`GATEKEEP_HOME` moves all of them under one directory (the tests use it);
otherwise they are the user's config and state directories as the XDG base
directory specification names them (user_dirs: what platformdirs returns,
found without importing it, which cost every check 18 ms and 60 modules).
`GATEKEEP_POLICY` names another user policy. `GATEKEEP_SYSTEM_POLICY` names another
system policy (default /etc/gatekeep/policy.yaml) and `GATEKEEP_MANAGED_DIR` another
directory of managed policy files (default /etc/gatekeep/policy.d), both only on a machine
that has neither at its default place: where an organization put either, an environment
variable, which any user or agent can set, must neither switch it off nor bring in a file of
the user's as a system layer, whose allow rules a managed lock lets through (the tests run on
machines without them).

Paths are plain strings: `gatekeep check` runs before every line, and pathlib
(which imports urllib.parse, ipaddress and re) costs it ~0.25x Python's
start-up. Commands off that path wrap them in `Path` where they need one.
"""

from __future__ import annotations

import os

from gatekeep.core.records import record

SYSTEM_POLICY = "/etc/gatekeep/policy.yaml"
MANAGED_DIR = "/etc/gatekeep/policy.d"


class Paths(record("Paths", "config_dir state_dir user_policy system_policy managed_dir")):
    """The directories and files gatekeep uses, as found from the environment (all str)."""

    __slots__ = ()

    @property
    def audit_log(self) -> str:
        return os.path.join(self.state_dir, "audit.jsonl")

    @property
    def error_log(self) -> str:
        return os.path.join(self.state_dir, "errors.log")

    @property
    def cache_dir(self) -> str:
        """Compiled policy and tools' tables (cache.py); safe to delete."""
        return os.path.join(self.state_dir, "cache")

    @property
    def trust_dir(self) -> str:
        """One file per trusted version of a project policy (project.py)."""
        return os.path.join(self.state_dir, "trust")

    @property
    def lock_dir(self) -> str:
        return os.path.join(self.state_dir, "locks")

    @property
    def server_dir(self) -> str:
        """The warm checker's socket and lock (gatekeep/server/), private to the user (0700)."""
        return os.path.join(self.state_dir, "server")

    @property
    def sandbox_nothing(self) -> str:
        """An empty file no one may open (mode 000): the sandbox binds it over files it hides."""
        return os.path.join(self.state_dir, "sandbox", "nothing")

    @property
    def sandbox_empty(self) -> str:
        """An empty directory no one may write (mode 555): the sandbox holds a missing settings
        directory with it (contain/sandbox.py)."""
        return os.path.join(self.state_dir, "sandbox", "empty")

    def lock_for(self, path: str | os.PathLike) -> str:
        """The lock file that guards writes to `path` (one per file, wherever it lives)."""
        from gatekeep.core.hashing import sha256

        digest = sha256(os.path.realpath(path).encode()).hexdigest()[:16]
        return os.path.join(self.lock_dir, f"{os.path.basename(path)}.{digest}.lock")


GONE = "/nonexistent/gatekeep: the current directory no longer exists"


def current_directory() -> str:
    """The process's directory; when another process has removed it, where the shell says it is.

    os.getcwd() then fails (FileNotFoundError) while the shell stays in the removed directory.
    The shell's own $PWD names it (bash and zsh export it; the hooks could pass it as
    --cwd "$PWD"), and `cd ..` is taken from it, so it comes first; else Linux's
    /proc/self/cwd, which reads "DIR (deleted)"; else GONE, a directory that does not exist.
    Never an existing directory by guess: a line is judged from a directory that no longer
    exists as one whose files cannot be known (gate.read_line), so `cd /` and lines that only
    look pass, and what a line writes there asks.
    """
    try:
        return os.getcwd()
    except OSError:
        pass
    pwd = os.environ.get("PWD", "")
    if pwd.startswith("/"):
        return os.path.normpath(pwd)
    try:
        link = os.readlink("/proc/self/cwd")
    except OSError:
        return GONE
    return link.removesuffix(" (deleted)") if link.startswith("/") else GONE


def upward(directory: str):
    """`directory` and every directory above it, nearest first, up to the root (as written: no
    symlink is resolved)."""
    while True:
        yield directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        directory = parent


def removed(cwd: str) -> bool:
    """Whether `cwd`, the line's directory, is one another process has removed while the shell
    stays in it: it does not exist, and neither does this process's own, which it inherited
    from the shell (a --cwd that names no directory, typed by hand, is judged as usual)."""
    if os.path.isdir(cwd):
        return False
    try:
        os.getcwd()
    except OSError:
        return True
    return False


def server_dir() -> str | None:
    """The warm checker's directory in this environment (Paths.server_dir); None when there is
    no home to put it in, and checks then run without it."""
    from gatekeep.core.errors import FatalError

    try:
        return get_paths().server_dir
    except FatalError:
        return None


def get_paths() -> Paths:
    home = os.environ.get("GATEKEEP_HOME")
    if home:
        config_dir = os.path.join(home, "config")
        state_dir = os.path.join(home, "state")
    else:
        config_dir, state_dir = user_dirs()
    user_policy = os.environ.get("GATEKEEP_POLICY") or os.path.join(config_dir, "policy.yaml")
    system_policy = _system_place("GATEKEEP_SYSTEM_POLICY", SYSTEM_POLICY)
    managed_dir = _system_place("GATEKEEP_MANAGED_DIR", MANAGED_DIR)
    return Paths(config_dir, state_dir, user_policy, system_policy, managed_dir)


def _system_place(variable: str, default: str) -> str:
    """`default`, or where `variable` moves it on a machine with no system or managed policy
    at their default places (module docstring)."""
    moved = os.environ.get(variable)
    if not moved or os.path.lexists(SYSTEM_POLICY) or os.path.lexists(MANAGED_DIR):
        return default
    return moved


def user_dirs(app: str = "gatekeep") -> tuple[str, str]:
    """The user's config and state directories for `app`, as platformdirs (4.x) finds them.

    $XDG_CONFIG_HOME and $XDG_STATE_HOME count when they are absolute paths; otherwise
    ~/.config and ~/.local/state, or on macOS ~/Library/Application Support for both.
    A relative or empty $HOME counts as unset (the password database names the home);
    a home that cannot be found is a FatalError, not a directory relative to wherever
    the line was typed. tests/test_paths.py compares this with platformdirs itself.
    """
    import sys

    if sys.platform == "darwin":
        config_default = state_default = "~/Library/Application Support"
    else:
        config_default, state_default = "~/.config", "~/.local/state"
    return (
        os.path.join(absolute_env("XDG_CONFIG_HOME") or expand_home(config_default), app),
        os.path.join(absolute_env("XDG_STATE_HOME") or expand_home(state_default), app),
    )


def absolute_env(variable: str) -> str | None:
    """The directory an environment variable names, if it names it by an absolute path."""
    path = os.environ.get(variable, "")
    return path if path.startswith("/") else None


def expand_home(path: str) -> str:
    """`~/...` under the home directory: $HOME when it is absolute, else the password database's."""
    home = os.environ.get("HOME", "")
    if not home.startswith("/"):
        try:
            import pwd

            home = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError):
            home = ""
    if not home.startswith("/"):
        from gatekeep.core.errors import FatalError

        raise FatalError("cannot find the home directory: set HOME (or GATEKEEP_HOME) to an absolute path")
    return home.rstrip("/") + path[1:]
