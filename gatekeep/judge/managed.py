"""The managed policy: an organization's drop-in files, `/etc/gatekeep/policy.d/*.yaml`.

Configuration management drops files there; gatekeep reads every `*.yaml` file in it (not
hidden ones, nothing else: `10-base.yaml.dpkg-old` and editors' backups are skipped) in name
order, as layers above the user's and the projects' (policy.py says what a layer above them
may insist on). `GATEKEEP_MANAGED_DIR` moves the directory, only where none exists at the
default place (paths.py).

A user who could write one of those files, or the directory, or any directory above them,
could loosen what the organization set. So the directory is only read when every part of the
way to it and to each file, symlinks followed, belongs to root and is writable by nobody else
(a directory that others may write to but whose sticky bit keeps them from replacing root's
entries, such as /tmp, does not count against it). Otherwise the managed policy is ignored,
loudly: it becomes one layer whose error every check prints and whose rule asks for every
line, until root fixes the ownership. So it is, too, when the place is a file and not a
directory, when a `*.yaml` in it is no regular file (a FIFO would stall every check), when it
holds more than MAX_FILES of them, or when it cannot be read. A file that is not valid policy blocks every line, as a
broken system policy does: the organization's rules are never silently lost.
"""

from __future__ import annotations

import os
import stat

from gatekeep.core.errors import PolicyError
from gatekeep.core.paths import upward

FLOORS = ("system", "managed")  # the layers whose settings no user or project file may loosen (policy.py)
MAX_FILES = 256  # drop-ins in the directory; more is a mistake, and each one is read per check
OWNER = 0  # root


def managed_files(directory: str) -> list[str] | PolicyError:
    """The policy files of `directory` in name order ([] when it does not exist), or the
    PolicyError that says why none of them may be used."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    except NotADirectoryError:  # a file where the directory belongs: a mistake, never "no policy"
        return PolicyError(directory, "is not a directory")
    except OSError as e:
        return PolicyError(directory, f"cannot read the managed policy directory ({e.strerror})")
    files = [os.path.join(directory, name) for name in sorted(names) if _is_policy_name(name)]
    if len(files) > MAX_FILES:
        return PolicyError(directory, f"holds more than {MAX_FILES} policy files")
    for path in (directory, *files):
        found = unsafe(path)
        if found is not None:
            return PolicyError(*found)
    for path in files:  # a FIFO would stall every check that opens it; a directory cannot be read
        if not stat.S_ISREG(os.stat(path).st_mode):
            return PolicyError(path, "is not a regular file")
    return files


def _is_policy_name(name: str) -> bool:
    return name.endswith(".yaml") and not name.startswith(".")


def skipped(directory: str) -> list[str]:
    """Files of `directory` that look like policy but are not read (`50-team.yml`): doctor says so,
    as an organization's rules quietly left out would otherwise go unnoticed."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(n for n in names if n.lower().endswith((".yaml", ".yml")) and not _is_policy_name(n))


def unsafe(path: str) -> tuple[str, str] | None:
    """Where and why a user other than root could change what `path` holds, or None: it, and every
    directory on the way to it (as written, and as its symlinks resolve), must belong to root
    and be writable by no one else, a sticky directory on the way excepted."""
    absolute = os.path.abspath(path)
    real = os.path.realpath(absolute)
    for place in _ancestors(absolute):  # a symlink on the way: its owner could point it elsewhere
        try:
            st = os.lstat(place)
        except OSError as e:
            return place, f"cannot check who may change it ({e.strerror})"
        if stat.S_ISLNK(st.st_mode) and st.st_uid != OWNER:
            return place, f"it is a symlink of uid {st.st_uid}, not root's, who could point it elsewhere"
    seen = set()
    for chain in (_ancestors(absolute), _ancestors(real)):
        for place in chain:
            if place in seen:
                continue
            seen.add(place)
            try:
                st = os.stat(place)
            except OSError as e:
                return place, f"cannot check who may change it ({e.strerror})"
            why = _writable_by_others(place, st, on_the_way=place not in (absolute, real))
            if why is not None:
                return place, why
    return None


def _ancestors(path: str) -> list[str]:
    """`path` and every directory above it, from the root down."""
    return list(upward(path))[::-1]


def _writable_by_others(place: str, st: os.stat_result, on_the_way: bool) -> str | None:
    fix = f"fix it with `sudo chown root {place} && sudo chmod go-w {place}`"
    if st.st_uid != OWNER:
        return f"it belongs to uid {st.st_uid}, not root, who could change the managed policy; {fix}"
    if on_the_way and stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX:
        return None  # others may add entries, but not replace root's
    if st.st_mode & stat.S_IWGRP:  # even group root's: whoever is in it need not be root (as sshd's StrictModes)
        return f"it is writable by its group (gid {st.st_gid}), whose members could change the managed policy; {fix}"
    if st.st_mode & stat.S_IWOTH:
        return f"it is writable by everyone, who could change the managed policy; {fix}"
    return None
