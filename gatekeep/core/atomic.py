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
