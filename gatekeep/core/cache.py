"""A cache of data compiled from text files: the policy's rule index, the tools' tables.

`gatekeep check` runs before every line, and reading YAML or TOML costs more
than the rest of the check (issue 6). So the compiled form is kept in
`<state dir>/cache/NAME.marshal` together with the exact text of every file
it was made from. On the next run the files are read again (cheap) and the
cache is used only if every text is identical; otherwise it is rebuilt. So an
edit, a replaced file or a new gatekeep version always takes effect at once:
there are no timestamps to trust.

The key also holds gatekeep's version and the cache's name, which carries the
format of its data (`policy-12-SLOT`, `tools-6`): a change to that format changes the name.

gatekeep's own data files (tools/: shipped with it, read by every
check) are the one exception: cached_files keys them by each file's size,
modification time in nanoseconds and inode, and reads their text only to
rebuild, which spares every check reading and comparing ~300 KB of TOML
(~1.5 ms, issue 18). They change with an install or an edit of a checkout,
and either changes those; a policy, edited by hand and by gatekeep within the
same second, keeps the exact-text key.

The cache lives in the state directory, which gatekeep protects like the
policy itself (writes.py); a broken or unreadable cache is ignored and
rebuilt, and a cache that cannot be written only costs time. marshal is used
because it loads these plain tuples and dicts several times faster than json
or pickle, and cannot run code.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

FORMAT = 1


def cached(directory: str | None, name: str, key, build: Callable[[], object]):
    """`build()`'s result, from the cache when `key` (texts and versions) is what it was built from."""
    from gatekeep import __version__

    key = (FORMAT, __version__, sys.version_info[:2], key)
    path = None if directory is None else os.path.join(directory, f"{name}.marshal")
    if path is not None:
        try:
            with open(path, "rb") as f:
                stored_key, data = marshal.loads(f.read())  # marshal.load(f) reads in tiny pieces: 10× slower
            if stored_key == key:
                return data
        except (OSError, EOFError, ValueError, TypeError):
            pass
    data = build()
    if path is not None:
        _store(path, marshal.dumps((key, data)))
    return data


def cached_files(directory: str | None, name: str, files: list[str], build: Callable[[list[str]], object]):
    """`build(texts of files)`'s result, from the cache while no file's size, mtime or inode changed."""
    signature = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            signature = None  # unreadable: build, which says why
            break
        signature.append((os.path.basename(path), st.st_size, st.st_mtime_ns, st.st_ino))

    def read_and_build():
        texts = []
        for path in files:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
        return build(texts)

    if signature is None:
        return read_and_build()
    return cached(directory, name, ("files", tuple(signature)), read_and_build)


def _store(path: str, blob: bytes) -> None:
    from gatekeep.core.atomic import write_atomic

    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_atomic(path, blob)
    except OSError:
        pass  # no cache: the next run builds again
