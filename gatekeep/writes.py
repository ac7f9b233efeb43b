"""Where a redirection writes, and whether the built-in policy lets it.

A write (`>`, `>>`, `&>`, `>|`, `<>`) is **denied** when it lands on a file
that runs code or holds secrets or the gate itself: shell start-up files,
`~/.ssh`, `~/.config`, `/etc`, anything inside a repository's `.git` (its config and hooks run
code), and gatekeep's
own policy, audit log, locks and hook files. It **asks** when it lands outside
the current directory tree, or when its target is computed at run time and so
cannot be known. `/dev/null`, `/dev/stdout`, `/dev/stderr` and `/dev/tty` are
always fine.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
RC_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".inputrc",
    ".envrc",
)
_HOME_PREFIX = re.compile(r"^(~|\$HOME|\$\{HOME\})(?=/|$)")
_CWD_PREFIX = re.compile(r"^(~\+|\$PWD|\$\{PWD\})(?=/|$)")  # another user's home (~root) stays unknown


@dataclass(frozen=True)
class WriteContext:
    """Where a line runs and which paths no line may write."""

    cwd: str
    home: str
    protected: tuple[str, ...] = ()  # gatekeep's own directories and files

    @classmethod
    def here(cls, cwd: str | None, protected: tuple[str, ...] = ()) -> WriteContext:
        return cls(cwd or os.getcwd(), os.path.expanduser("~"), protected)


def judge(target: str, dynamic: bool, ctx: WriteContext) -> tuple[str, str] | None:
    """("deny" | "ask", why) for a write to `target`, or None when it is fine."""
    if target in HARMLESS:
        return None
    literal = _HOME_PREFIX.sub(ctx.home.replace("\\", "\\\\"), target)
    literal = _CWD_PREFIX.sub(ctx.cwd.replace("\\", "\\\\"), literal)
    if literal.startswith("~") or (dynamic and any(c in literal for c in "$`*?[")):
        return "ask", f"writes to {target}, a path computed at run time"
    path = PurePosixPath("/" + os.path.normpath(os.path.join(ctx.cwd, literal)).lstrip("/"))  # `//etc` is /etc
    home = PurePosixPath(ctx.home)
    protected = [PurePosixPath(p) for p in ctx.protected]
    sensitive = [home / name for name in RC_FILES] + [home / ".ssh", home / ".config", PurePosixPath("/etc")]
    for place in sensitive + protected:
        if path == place or place in path.parents:
            return "deny", f"writes to {path}, which is protected by the built-in policy"
    if ".git" in path.parts[:-1]:
        return "deny", f"writes into {path.parent}, inside a repository's .git (config and hooks run code)"
    cwd = PurePosixPath(os.path.normpath(ctx.cwd))
    if path != cwd and cwd not in path.parents:
        return "ask", f"writes to {path}, outside the current directory"
    return None
