"""Project policies: a repository's `.gatekeep.yaml`, and the user's trust in it.

Every `.gatekeep.yaml` in the line's directory or above it is a project
layer, outermost first, so a nested file adds to its parents' rules and
cannot hide them. Its deny and ask rules apply at once: they can only make the
gate stricter, so a cloned repository needs no trust to protect its user.
Its allow rules apply only once the user has run `gatekeep trust` there.

Trust works as direnv's `direnv allow` does: it is recorded as the SHA-256 of
the file's absolute path and exact content, one empty file per trusted
version in `<state dir>/trust/`. Any edit changes the hash, so an edited file
is untrusted until trusted again, and a trusted file copied into another
repository is not trusted there. Checking trust is one `stat`, and revoking
it removes the files: nothing to lock, nothing to corrupt. The state
directory and every `.gatekeep.yaml` are protected from writes by the
built-in policy (writes.py), like the user's own policy.
"""

from __future__ import annotations

import os

from gatekeep.core.paths import Paths, upward

FILE_NAME = ".gatekeep.yaml"


def find_project_file(cwd: str) -> str | None:
    """The nearest `.gatekeep.yaml` at or above `cwd`, as an absolute path, or None."""
    found = find_project_files(cwd)
    return found[-1] if found else None


def find_project_files(cwd: str) -> list[str]:
    """Every `.gatekeep.yaml` from the filesystem root down to `cwd`, outermost first, whatever it is.

    All of them count (issue 15): a nested one deeper in a repository adds to its
    parents' deny and ask rules, it cannot hide them.
    """
    found = []
    for directory in upward(os.path.abspath(cwd)):
        candidate = os.path.join(directory, FILE_NAME)
        # any entry of that name counts: one that is no regular file (a directory, a FIFO, a
        # dangling symlink) is a broken layer that makes every line ask (policy.read_project_text),
        # never a file quietly skipped, whose deny rules would vanish
        if os.path.lexists(candidate):
            found.append(candidate)
    return found[::-1]


def trust_key(path: str, text: str) -> str:
    """What trust is recorded under: the file's absolute path and its exact content."""
    from gatekeep.core.hashing import sha256  # only in a project directory

    # surrogateescape: a path that is not valid UTF-8 is hashed as its bytes, not refused
    return sha256(f"{os.path.abspath(path)}\0{text}".encode("utf-8", "surrogateescape")).hexdigest()


def _trust_file(paths: Paths, path: str, text: str) -> str:
    return os.path.join(paths.trust_dir, trust_key(path, text))


def is_trusted(paths: Paths, path: str, text: str) -> bool:
    return os.path.isfile(_trust_file(paths, path, text))


def trust(paths: Paths, path: str, text: str) -> None:
    """Record trust in this exact content of the file at `path`."""
    os.makedirs(paths.trust_dir, mode=0o700, exist_ok=True)
    marker = _trust_file(paths, path, text)
    # the file names the policy it trusts, so `revoke` finds old versions too
    fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(os.path.abspath(path) + "\n")


def revoke(paths: Paths, path: str) -> int:
    """Forget trust in every version of the file at `path`; returns how many were trusted."""
    target = os.path.abspath(path) + "\n"
    removed = 0
    try:
        markers = [os.path.join(paths.trust_dir, name) for name in os.listdir(paths.trust_dir)]
    except FileNotFoundError:
        return 0
    for marker in markers:
        try:
            with open(marker, encoding="utf-8") as f:
                names_it = f.read() == target
            if names_it:
                os.unlink(marker)
                removed += 1
        except (OSError, UnicodeDecodeError):
            continue
    return removed
