"""Replacing a file so that a reader sees the old content or the new, never half of either.

Only os: the first check after a policy edit writes the policy cache (cache.py), and
tempfile and pathlib would add 10 ms of imports (shutil, random, re, fnmatch, urllib) to it.
"""

from __future__ import annotations

import os


def write_atomic(path: str | os.PathLike, text: str | bytes, new_mode: int = 0o600) -> None:
    """Write `text` (or bytes) to a temporary file beside `path`, flush it to disk, rename it over `path`.

    An existing file keeps its mode; a new one gets `new_mode`.
    """
    path = os.fspath(path)
    directory, name = os.path.split(path)
    os.makedirs(directory or ".", exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        mode = new_mode
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    _remove_stale(directory or ".", name)
    fd, tmp = _create_beside(directory, name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


STALE_SECONDS = 600  # a write takes milliseconds: a temporary this old was left by a killed writer


def _remove_stale(directory: str, name: str) -> None:
    """Remove the `.NAME.RANDOM.tmp` files a writer killed before its rename left beside NAME
    (`rules add` killed mid-write), once they are STALE_SECONDS old: a live writer's is younger."""
    import time

    prefix, cutoff = f".{name}.", time.time() - STALE_SECONDS
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        middle = entry[len(prefix) : -len(".tmp")]
        if not (entry.startswith(prefix) and entry.endswith(".tmp") and len(middle) == 12):
            continue
        try:
            stale = os.lstat(os.path.join(directory, entry)).st_mtime < cutoff
            if stale and all(c in "0123456789abcdef" for c in middle):
                os.unlink(os.path.join(directory, entry))
        except OSError:
            pass  # gone already, or not ours to remove: it only costs space


def _create_beside(directory: str, name: str) -> tuple[int, str]:
    """A new file `.NAME.RANDOM.tmp` in `directory`, opened for writing, mode 0600, as
    tempfile.mkstemp makes it (O_EXCL: never an existing file, nor a symlink's target)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {os.path.join(directory, name)}")
