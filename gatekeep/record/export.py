"""Sending the audit log elsewhere, record by record, losing nothing and sending nothing twice.

The audit log itself is the queue: the exporter reads a batch of whole lines from where it
stopped, hands it to `send` (otlp.py sends it as OTLP log records), and only once `send` says
it was taken, moves its checkpoint past it. So memory holds one batch, whatever the backlog,
and a collector that is down costs a wait, never a record.

The checkpoint names a position in the log: the file (its device and inode, which a rotation
keeps, audit.py), the byte offset after the last record sent, and that record's id. A restart
finds the file among the log and its rotated files by inode, makes sure the record before the
offset is the one it sent last (an inode is reused once a file is gone), and goes on from
there, then through every newer file to the current log. It is written to a temporary file,
synced and renamed over the old one: a killed exporter leaves the old or the new checkpoint,
never a torn one. What a `kill -9` between a collector's answer and the checkpoint's write
can cost is the same batch sent again; every record carries its id, by which a collector
can drop the repeat. A stop by SIGTERM or SIGINT waits for the batch in flight and its
checkpoint.

With no checkpoint, the export starts at the oldest record the log still holds. A checkpoint
whose file is gone (rotated away past `audit.keep` before it was sent) says so, once: those
records are lost to the export, and it goes on from the oldest file there is.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from gatekeep.core.records import record
from gatekeep.record.audit import log_files

BATCH = 512  # records a request; ~300 KiB of OTLP
LOOK_BACK = 1 << 20  # the last record before a checkpoint's offset is at most this long


class Position(record("Position", "dev ino offset last_id")):
    """Where the export stands: the file (device, inode), the offset after the last record
    sent, and that record's id (None at a file's start)."""

    __slots__ = ()


class Batch(record("Batch", "records position lost")):
    """Records to send (decoded, in log order), the position after them, and whether the
    checkpoint's file was gone (records rotated away before they were sent)."""

    __slots__ = ()


def load_checkpoint(path: str) -> Position | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return Position(int(data["dev"]), int(data["ino"]), int(data["offset"]), data.get("last_id"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as e:
        why = f"the export checkpoint {path} cannot be read ({e}): remove it to send the whole log again"
        raise ValueError(why) from None


def save_checkpoint(path: str, position: Position, about: dict) -> None:
    """Atomically: a temporary file, fsync, rename, fsync of the directory."""
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    data = json.dumps({**about, **dict(zip(Position._fields, position))}).encode()
    temporary = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def next_batch(log: str, position: Position | None, limit: int = BATCH) -> Batch:
    """The next records after `position` (from the oldest record there is, without one)."""
    files = _files(log)
    start, offset, lost = 0, 0, False
    if position is not None:
        found = next((k for k, (name, st) in enumerate(files) if _is_there(name, st, position)), None)
        if found is None:
            lost = bool(files)
        else:
            start, offset = found, position.offset
    found_records: list[dict] = []
    last = position if not lost else None
    for k in range(start, len(files)):
        name, st = files[k]
        rotated = k < len(files) - 1
        offset, last_id, complete = _read(name, offset, limit - len(found_records), found_records, rotated)
        same = last is not None and (last.dev, last.ino) == (st.st_dev, st.st_ino)
        last = Position(st.st_dev, st.st_ino, offset, last_id or (last.last_id if same else None))
        if len(found_records) >= limit or not complete or k == len(files) - 1:
            break
        offset = 0  # an older file read to its end: the next newer one, from its start
        last = Position(files[k + 1][1].st_dev, files[k + 1][1].st_ino, 0, None)
    return Batch(found_records, last, lost)


def _files(log: str) -> list[tuple[str, os.stat_result]]:
    """The log's files, oldest first, with what stat says of each."""
    found = []
    for name in reversed(log_files(log)):
        try:
            found.append((name, os.stat(name)))
        except FileNotFoundError:
            continue  # rotated meanwhile: the next look finds it under its new name
    return found


def _is_there(name: str, st: os.stat_result, position: Position) -> bool:
    """Whether `name` is the checkpoint's file: its inode, and the record just before the offset
    is the one sent last (an inode is reused once its file is gone)."""
    if (st.st_dev, st.st_ino) != (position.dev, position.ino) or st.st_size < position.offset:
        return False
    if position.offset == 0 or position.last_id is None:
        return True
    with open(name, "rb") as f:
        start = max(0, position.offset - LOOK_BACK)
        f.seek(start)
        before = f.read(position.offset - start)
    if not before.endswith(b"\n"):
        return False
    line = before[:-1].rsplit(b"\n", 1)[-1]
    decoded = _decode(line)
    return decoded is not None and decoded.get("id") == position.last_id


def _read(name: str, offset: int, room: int, into: list[dict], rotated: bool) -> tuple[int, str | None, bool]:
    """Whole lines of `name` from `offset`, up to `room` records, appended to `into`; the offset
    after them, the last record's id, and whether the file was read to its end. A line without
    its newline at the end of the current log is a record being written: it waits. At the end of
    a rotated file it is a fragment a killed writer left, and is passed over."""
    last_id = None
    try:
        f = open(name, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return offset, None, False
    with f:
        f.seek(offset)
        while room > 0:
            line = f.readline()
            if not line:
                return offset, last_id, True
            if not line.endswith(b"\n"):
                if rotated:
                    return offset + len(line), last_id, True
                return offset, last_id, False
            offset += len(line)
            decoded = _decode(line)
            if decoded is not None:
                into.append(decoded)
                last_id = decoded["id"] if isinstance(decoded.get("id"), str) else last_id
                room -= 1
        return offset, last_id, not f.read(1)


def _decode(raw: bytes) -> dict | None:
    try:
        found = json.loads(raw)
    except ValueError:
        return None  # a line that is not a record (a fragment a killed writer left): skipped
    return found if isinstance(found, dict) else None


def run(
    log: str,
    checkpoint: str,
    send: Callable[[list[dict]], bool],
    *,
    follow: bool,
    stopped: Callable[[], bool],
    about: dict,
    say: Callable[[str], None],
    poll: float = 0.5,
    backoff: tuple[float, float] = (1.0, 60.0),
) -> tuple[int, bool]:
    """Send the log from the checkpoint: once to its end, or (`follow`) until `stopped()`. A batch
    `send` refuses is tried again after a wait that doubles from backoff[0] up to backoff[1]
    (once only, without `follow`). Returns how many records were sent and whether all were."""
    position = load_checkpoint(checkpoint)
    sent, wait, told = 0, backoff[0], False
    while True:
        batch = next_batch(log, position)
        if batch.lost and not told:
            told = True
            say("the record the export had reached was rotated away: what followed it there is lost to the export")
        if batch.records:
            if not send(batch.records):
                if not follow:
                    return sent, False
                say(f"the collector did not take {len(batch.records)} records; trying again in {wait:g} s")
                if _sleep(wait, stopped):
                    return sent, False
                wait = min(wait * 2, backoff[1])
                continue
            wait = backoff[0]
            sent += len(batch.records)
        if batch.position is not None and batch.position != position:
            save_checkpoint(checkpoint, batch.position, about)
            position = batch.position
        if stopped():
            return sent, True
        if not batch.records and (not follow or _sleep(poll, stopped)):
            return sent, True


def _sleep(seconds: float, stopped: Callable[[], bool]) -> bool:
    """Wait, a tenth of a second at a time; whether a stop came meanwhile."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if stopped():
            return True
        time.sleep(min(0.1, max(deadline - time.monotonic(), 0)))
    return stopped()
