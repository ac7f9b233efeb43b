"""Audit stage: one JSON line per decision, appended to audit.jsonl.

Each record is written with a single write on a descriptor opened with
O_APPEND, while holding an exclusive flock on that same descriptor: many
processes can append at once and every line stays whole. A write is all or
nothing: one cut short (a full disk) is cut back before the error goes up, and
a torn last line left by a writer killed mid-write is cut off before the next
record, so no record is ever glued to a fragment. The lock lives on
the log itself (no extra lock file) and costs only the fcntl import, which
matters on the hot path. The file is created private (0600).
"""

from __future__ import annotations

import fcntl
import os

from gatekeep.core.jsontext import dumps  # json.dumps(record, ensure_ascii=False), without the json package

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


def append(path: str, record: dict) -> None:
    # a line that is not valid UTF-8 reaches Python with its bad bytes as lone surrogates
    # (surrogateescape); they are written as JSON escapes (\udcff), so the line stays JSON
    data = (dumps(record) + "\n").encode("utf-8", "backslashreplace")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
        _lock(fd, LOCK_SECONDS)
        end = _whole_lines_end(fd)
        view = memoryview(data)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except BaseException:
            os.ftruncate(fd, end)  # all or nothing: a short write (a full disk) is cut back
            raise
    finally:
        os.close(fd)  # also releases the lock


# How long a record waits for the log's lock: another writer holds it for one write, so a wait
# this long means a process stalled with it (stopped, or on a hung disk); the line is then blocked.
LOCK_SECONDS = 5.0


def _lock(fd: int, seconds: float) -> None:
    """The log's exclusive lock, or TimeoutError (an OSError: the line is blocked, never allowed,
    with its one-line reason) when another process has held it for `seconds`. The wait is flock's
    own (the kernel queues the waiter, /proc/locks shows it), ended by a real-time timer: a wait
    uses no CPU, so budget.Limit's CPU timer cannot end it. At record time no other timer runs
    (the parser's ITIMER_REAL has ended with the decision); off the main thread, where no
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
    """The last `count` records that `keep` accepts, oldest first; lines that are not JSON are skipped.

    Reads the file backwards in blocks, so a long log costs only what is shown.
    """
    found: list[dict] = []
    if count <= 0 or not os.path.exists(path):
        return found
    with open(path, "rb") as f:
        for raw in lines_backwards(f):
            record = _decode(raw)
            if record is not None and keep(record):
                found.append(record)
                if len(found) == count:
                    break
    return found[::-1]


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


def follow(path: str, poll_seconds: float = 0.25) -> Iterator[dict]:
    """Records appended after now, forever, like `tail -f` (survives the file being replaced)."""
    import time

    position = os.stat(path).st_size if os.path.exists(path) else 0
    pending = b""
    while True:
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            size = 0
        if size < position:  # truncated or replaced: start from its beginning
            position, pending = 0, b""
        if size > position:
            with open(path, "rb") as f:
                f.seek(position)
                chunk = f.read(size - position)
            position += len(chunk)
            *lines, pending = (pending + chunk).split(b"\n")
            yield from _records(line for line in lines if line)
        else:
            yield None  # lets the caller notice Ctrl-C or stop between polls
            time.sleep(poll_seconds)
