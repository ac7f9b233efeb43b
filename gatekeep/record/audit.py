"""Audit stage: one JSON line per decision, appended to audit.jsonl.

Each record is written with a single write on a descriptor opened with
O_APPEND, while holding an exclusive flock on that same descriptor: many
processes can append at once and every line stays whole. A write is all or
nothing: one cut short (a full disk) is cut back before the error goes up, and
a torn last line left by a writer killed mid-write is cut off before the next
record, so no record is ever glued to a fragment. The lock lives on
the log itself (no extra lock file) and costs only the fcntl import, which
matters on the hot path. The file is created private (0600).

Rotation: a writer that finds the log at its size limit (Rotation, from the
policy's `audit:`) renames it to audit.jsonl.1 (the older ones to .2, .3, ...,
the oldest past `keep` replaced) under the log's lock, and writes to a new one.
A writer that opened the log before it was renamed, and gets its lock after,
sees that the file it holds is no longer the log and opens the new one: every
record lands in the current log, none in a file already rotated away. Readers
(read_last, records, follow) read across the rotated files.
"""

from __future__ import annotations

import fcntl
import os

from gatekeep.core.jsontext import dumps  # json.dumps(record, ensure_ascii=False), without the json package
from gatekeep.core.records import record as record_type
from gatekeep.judge.policy import DEFAULT_KEEP, DEFAULT_MAX_BYTES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

FIELDS = (
    "id",
    "ts",
    "command",
    "cwd",
    "tty",
    "pid",
    "user",
    "shell",
    "decision",
    "outcome",
    "rule",
    "reason",
    "prompted",
    "answer",
    "timed_out",
    "policy_sha256",
)


def new_id() -> str:
    """A random (version 4) UUID, as uuid.uuid4() gives it; the uuid module costs ~3 ms to import."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def timestamp(seconds: float | None = None) -> str:
    """UTC with milliseconds, `2026-11-22T15:39:30.123Z`, without importing datetime."""
    import time

    seconds = time.time() if seconds is None else seconds
    whole = int(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((seconds - whole) * 1000):03d}Z"


def ready(path: str) -> None:
    """Open the log for appending as append() will, and close it: OSError when a record could
    not be written (`check` calls this before it asks a question, see check._ready_to_record)."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600))


class Rotation(record_type("Rotation", "max_bytes keep")):
    """When the log is rotated (once it holds `max_bytes`) and how many rotated files are kept."""

    __slots__ = ()


DEFAULT_ROTATION = Rotation(DEFAULT_MAX_BYTES, DEFAULT_KEEP)  # a policy's when it says nothing (policy.py)
REPLACED_TRIES = 16  # a log replaced again and again while a writer waits for it: an error past this
LOOK_BACK_BYTES = 4 << 20  # how far back `unless_present` looks for a record (~7,000 records)


def append(path: str, record: dict, *, rotation: Rotation = DEFAULT_ROTATION) -> None:
    """Append `record` as one line."""
    _append(path, record, rotation, unless_present=False)


def append_once(path: str, record: dict, *, rotation: Rotation = DEFAULT_ROTATION) -> bool:
    """Append `record` unless a record with its id is among the last LOOK_BACK_BYTES of the log
    (a call a worker may have recorded before it died, process.may_be_recorded); whether it did."""
    return _append(path, record, rotation, unless_present=True)


def _append(path: str, record: dict, rotation: Rotation, unless_present: bool) -> bool:
    # a line that is not valid UTF-8 reaches Python with its bad bytes as lone surrogates
    # (surrogateescape); they are written as JSON escapes (\udcff), so the line stays JSON
    data = (dumps(record) + "\n").encode("utf-8", "backslashreplace")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    for _ in range(REPLACED_TRIES):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            found = os.fstat(fd)
            if found.st_mode & 0o077:
                os.fchmod(fd, 0o600)
            _lock(fd, LOCK_SECONDS)
            if not _is_current(found, path):
                continue  # rotated (or removed) while this writer waited: write to the log there is now
            end = _whole_lines_end(fd)
            if unless_present and _recorded(path, fd, end, record["id"]):
                return False
            if end >= rotation.max_bytes:
                _rotate(path, rotation.keep)  # this descriptor is now the newest rotated file
                continue
            _write_all(fd, data, end)
            return True
        finally:
            os.close(fd)  # also releases the lock
    raise OSError(f"the audit log was replaced {REPLACED_TRIES} times while a record waited for it")


def _write_all(fd: int, data: bytes, end: int) -> None:
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except BaseException:
        os.ftruncate(fd, end)  # all or nothing: a short write (a full disk) is cut back
        raise


def _is_current(opened: os.stat_result, path: str) -> bool:
    try:
        return _same_file(os.stat(path), opened)
    except FileNotFoundError:
        return False


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def rotated(path: str, number: int) -> str:
    return f"{path}.{number}"


def _rotate(path: str, keep: int) -> None:
    """audit.jsonl.{keep-1} -> .{keep} (replacing the oldest), ..., audit.jsonl -> .1. Each rename
    is atomic; a writer killed half-way leaves a gap in the numbers, never a lost record."""
    for number in range(keep, 0, -1):
        source = path if number == 1 else rotated(path, number - 1)
        try:
            os.rename(source, rotated(path, number))
        except FileNotFoundError:
            pass


def log_files(path: str) -> list[str]:
    """The log and its rotated files that exist, newest first."""
    found = [path] if os.path.exists(path) else []
    number = 1
    while True:  # numbers are consecutive, but for a gap a killed rotation may leave
        candidate = rotated(path, number)
        if os.path.exists(candidate):
            found.append(candidate)
        elif not os.path.exists(rotated(path, number + 1)):
            return found
        number += 1


def _recorded(path: str, fd: int, end: int, record_id: str) -> bool:
    """Whether the record `record_id` is in the last LOOK_BACK_BYTES of the log (held by `fd`,
    locked, `end` long) or, should the log be shorter, of the newest rotated file."""
    needle = ('"id": "%s"' % record_id).encode()
    if needle in _tail(fd, end, LOOK_BACK_BYTES):
        return True
    if end >= LOOK_BACK_BYTES:
        return False
    try:
        older = os.open(rotated(path, 1), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        return needle in _tail(older, os.fstat(older).st_size, LOOK_BACK_BYTES - end)
    finally:
        os.close(older)


def _tail(fd: int, end: int, size: int) -> bytes:
    start = max(0, end - size)
    return os.pread(fd, end - start, start)


# How long a record waits for the log's lock: another writer holds it for one write, so a wait
# this long means a process stalled with it (stopped, or on a hung disk); the line is then blocked.
LOCK_SECONDS = 5.0


def _lock(fd: int, seconds: float) -> None:
    """The log's exclusive lock, or TimeoutError (an OSError: the line is blocked, never allowed,
    with its one-line reason) when another process has held it for `seconds`. The wait is flock's
    own (the kernel queues the waiter, /proc/locks shows it), ended by a real-time timer: a wait
    uses no CPU, so budget.Limit's CPU timer cannot end it. At record time no other timer runs
    (client.py's, for an agent's event, has ended before the decision); off the main thread, where no
    handler can be set, it polls instead."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    import _signal  # signal's C module: `import signal` would load enum

    def expired(_signum, _frame):
        raise TimeoutError(f"another process has held its lock for {seconds:g} s")

    try:
        previous = _signal.signal(_signal.SIGALRM, expired)
    except ValueError:  # not the main thread
        return _poll_lock(fd, seconds)
    try:
        _signal.setitimer(_signal.ITIMER_REAL, seconds)
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, previous)


def _poll_lock(fd: int, seconds: float) -> None:
    import time

    deadline, pause = time.monotonic() + seconds, 0.001
    while True:
        time.sleep(pause)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"another process has held its lock for {seconds:g} s") from None
        pause = min(pause * 2, 0.05)


def _whole_lines_end(fd: int, block: int = 1 << 16) -> int:
    """The log's size, once a torn last line is cut off: a writer killed in the middle of its
    write (or one whose cut-back failed) leaves a line with no newline, which the next record
    would be glued to. That fragment was never a record (its writer did not get its write done,
    and blocked its line), so it goes; every whole line stays."""
    size = os.fstat(fd).st_size
    if not size or os.pread(fd, 1, size - 1) == b"\n":
        return size
    position = size
    while position > 0:
        start = max(0, position - block)
        chunk = os.pread(fd, position - start, start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            end = start + newline + 1
            break
        position = start
    else:
        end = 0
    os.ftruncate(fd, end)
    return end


def send_to_syslog(address: str, record: dict) -> None:
    """Also send `record` to the system log at `address` (a Unix socket; /dev/log reaches
    journald where systemd runs it), as `gatekeep: {json}` under the authpriv facility,
    which syslog daemons keep readable by root only: command lines can hold secrets.

    The JSONL file stays the source of truth, so this is called after append() and its
    OSError only warns. logging is imported here, never on the usual hot path.
    """
    import logging
    from logging.handlers import SysLogHandler

    class Handler(SysLogHandler):
        def handleError(self, _record):  # raise what emit() caught, instead of printing it
            raise

    handler = Handler(address=address, facility=SysLogHandler.LOG_AUTHPRIV)
    try:
        handler.ident = "gatekeep: "
        level = logging.WARNING if record.get("outcome") == "deny" else logging.INFO
        handler.emit(
            logging.makeLogRecord(
                {
                    "msg": dumps(record),
                    "levelno": level,
                    "levelname": logging.getLevelName(level),
                }
            )
        )
    finally:
        handler.close()


def read_last(path: str, count: int, keep: Callable[[dict], bool] = lambda r: True) -> list[dict]:
    """The last `count` records that `keep` accepts, oldest first, from the log and then its
    rotated files; lines that are not JSON are skipped.

    Reads the files backwards in blocks, so a long log costs only what is shown.
    """
    found: list[dict] = []
    if count <= 0:
        return found
    for raw in lines_backwards_across(path):
        record = _decode(raw)
        if record is not None and keep(record):
            found.append(record)
            if len(found) == count:
                break
    return found[::-1]


def lines_backwards_across(path: str) -> Iterator[bytes]:
    """The non-empty lines of the log and its rotated files, newest first."""
    for name in log_files(path):
        try:
            f = open(name, "rb")  # noqa: SIM115 - closed below, also when the caller stops early
        except FileNotFoundError:  # rotated away meanwhile: its lines are in the next file
            continue
        with f:
            yield from lines_backwards(f)


def lines_backwards(f, block: int = 1 << 16) -> Iterator[bytes]:
    """The file's non-empty lines, last first."""
    position = f.seek(0, os.SEEK_END)
    partial = b""  # the start of a line whose beginning lies in an earlier block
    while position > 0:
        step = min(block, position)
        position -= step
        f.seek(position)
        lines = (f.read(step) + partial).split(b"\n")
        partial = lines.pop(0)
        yield from (line for line in reversed(lines) if line)
    if partial:
        yield partial


def _records(lines) -> Iterator[dict]:
    for raw in lines:
        record = _decode(raw)
        if record is not None:
            yield record


def _decode(raw: bytes) -> dict | None:
    import json

    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def follow(path: str, poll_seconds: float = 0.25) -> Iterator[dict | None]:
    """Records appended after now, forever, like `tail -F`: when the log is rotated (or
    replaced), what was appended to the old file before it went is read first, then the new
    log from its beginning. None between polls, to let the caller notice Ctrl-C."""
    import time

    f = _open_log(path)
    if f is not None:
        f.seek(0, os.SEEK_END)
    pending = b""
    try:
        while True:
            if f is not None and f.tell() > os.fstat(f.fileno()).st_size:
                f.seek(0)  # truncated in place: from its beginning
                pending = b""
            chunk = f.read() if f is not None else b""
            if chunk:
                *lines, pending = (pending + chunk).split(b"\n")
                yield from _records(line for line in lines if line)
                continue
            if f is None or not _is_current(os.fstat(f.fileno()), path):
                # Every write to the old file came before it was renamed, which came before this
                # look: one more read of it (above, on the next turn) gets them all.
                if f is not None and f.read(1):
                    f.seek(-1, os.SEEK_CUR)
                    continue
                newer = _open_log(path) if f is None else _next_file(path, os.fstat(f.fileno()))
                if newer is not None or f is not None:
                    if f is not None:
                        f.close()
                    f, pending = newer, b""
                    continue
            yield None
            time.sleep(poll_seconds)
    finally:
        if f is not None:
            f.close()


def _next_file(path: str, done: os.stat_result):
    """The file written after the rotated file `done`, opened: the one numbered one lower (it may
    have been rotated more than once since); the oldest there is when `done` itself is gone
    (`keep` dropped it), the log when there is nothing else."""
    for _ in range(REPLACED_TRIES):
        found = []
        for name in log_files(path):
            try:
                found.append((name, os.stat(name)))
            except FileNotFoundError:
                break  # rotated meanwhile: look again
        else:
            places = [i for i, (_, seen) in enumerate(found) if _same_file(seen, done)]
            if places and places[0] == 0:
                return _open_log(path)  # it is the log again (cannot be, but then it goes on there)
            name, expected = found[places[0] - 1] if places else (found[-1] if found else (path, None))
            f = _open_log(name)
            if f is None or expected is None:
                return f
            if _same_file(os.fstat(f.fileno()), expected):
                return f
            f.close()
    return _open_log(path)


def _open_log(path: str):
    try:
        return open(path, "rb")  # noqa: SIM115 - follow() closes it
    except FileNotFoundError:
        return None
