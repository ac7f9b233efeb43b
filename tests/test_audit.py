"""The audit log: whole lines under concurrency, private, readable backwards and followed."""

from __future__ import annotations

import json
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatekeep.core.jsontext import dumps
from gatekeep.core.paths import get_paths
from gatekeep.record import audit
from tests.conftest import race


def _append_many(worker: int, count: int) -> None:
    path = get_paths().audit_log
    for i in range(count):
        # long records make torn writes likely if appends were not atomic
        audit.append(path, {"id": f"{worker}-{i}", "command": "x" * (i * 37 % 9000)})


def _all_lines(path: str) -> list[bytes]:
    """Every line of the log and its rotated files, oldest file first; each file ends in a newline."""
    found = []
    for name in reversed(audit.log_files(path)):
        lines = Path(name).read_bytes().split(b"\n")
        assert lines[-1] == b"", f"{name} does not end in a newline"
        found += lines[:-1]
    return found


def test_eight_processes_appending_500_records_each_leave_4000_valid_lines(paths):
    race(_append_many, 8, 500)  # ~18 MB: past the default size limit, so rotated once on the way
    assert Path(audit.rotated(paths.audit_log, 1)).exists()
    records = [json.loads(line) for line in _all_lines(paths.audit_log)]
    assert len(records) == 4000
    assert len({r["id"] for r in records}) == 4000


def _append_rotating(worker: int, count: int, max_bytes: int, keep: int) -> None:
    path = get_paths().audit_log
    for i in range(count):
        audit.append(path, {"id": f"{worker}-{i}", "pad": "r" * (i * 53 % 700)}, rotation=audit.Rotation(max_bytes, keep))


def test_processes_racing_across_many_rotations_lose_no_record(paths):
    """8 writers, a 16 KiB limit: ~50 rotations while they race; every record is in exactly one
    file, whole, and each writer's records are in its own order across the files."""
    race(_append_rotating, 8, 300, 16 << 10, 1000)
    names = audit.log_files(paths.audit_log)
    assert len(names) > 40
    for name in names:
        assert Path(name).stat().st_size < (16 << 10) + 1024  # rotated at the limit: one record past it at most
        assert Path(name).stat().st_mode & 0o777 == 0o600
    records = [json.loads(line) for line in _all_lines(paths.audit_log)]
    assert sorted(r["id"] for r in records) == sorted(f"{w}-{i}" for w in range(8) for i in range(300))
    for worker in range(8):
        mine = [int(r["id"].split("-")[1]) for r in records if r["id"].startswith(f"{worker}-")]
        assert mine == sorted(mine)


def test_rotation_keeps_the_newest_files_it_is_told_to(paths):
    rotation = audit.Rotation(4096, 2)
    for i in range(200):
        audit.append(paths.audit_log, {"id": i, "pad": "k" * 100}, rotation=rotation)
    names = audit.log_files(paths.audit_log)
    assert [Path(n).name for n in names] == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    ids = [json.loads(line)["id"] for line in _all_lines(paths.audit_log)]
    assert ids == list(range(ids[0], 200))  # the newest, none missing among them
    assert 40 < len(ids) < 200


def test_a_rotation_killed_half_way_loses_nothing_and_the_next_one_goes_on(paths):
    rotation = audit.Rotation(4096, 10)
    for i in range(120):
        audit.append(paths.audit_log, {"id": i, "pad": "h" * 100}, rotation=rotation)
    first = audit.log_files(paths.audit_log)
    assert len(first) >= 3
    # a writer killed after it renamed .2 to .3 but before .1 to .2: a gap at .2
    Path(audit.rotated(paths.audit_log, 3)).unlink(missing_ok=True)
    Path(audit.rotated(paths.audit_log, 2)).rename(audit.rotated(paths.audit_log, 3))
    assert not Path(audit.rotated(paths.audit_log, 2)).exists()
    before = [json.loads(line)["id"] for line in _all_lines(paths.audit_log)]
    for i in range(120, 200):
        audit.append(paths.audit_log, {"id": i, "pad": "h" * 100}, rotation=rotation)
    after = [json.loads(line)["id"] for line in _all_lines(paths.audit_log)]
    assert sorted(after) == sorted(set(before) | set(range(120, 200)))


def test_read_last_and_the_record_reader_read_across_rotated_files(paths):
    from gatekeep.record.stats import read_records

    rotation = audit.Rotation(4096, 100)
    for i in range(300):
        audit.append(paths.audit_log, {"id": i, "ts": audit.timestamp(), "pad": "q" * 60}, rotation=rotation)
    assert len(audit.log_files(paths.audit_log)) > 5
    assert [r["id"] for r in audit.read_last(paths.audit_log, 300)] == list(range(300))
    assert [r["id"] for r in read_records(paths.audit_log, None)] == list(range(300))
    since = datetime(2000, 1, 1, tzinfo=timezone.utc)
    assert sorted(r["id"] for r in read_records(paths.audit_log, since)) == list(range(300))


def _following(path: str, count: int, poll_seconds: float = 0.001) -> tuple[list, threading.Thread]:
    """The ids `audit.follow` yields, collected by a thread until it has `count`; started, and
    following, when this returns."""
    seen: list = []
    follower = audit.follow(path, poll_seconds=poll_seconds)

    def collect():
        for record in follower:
            if record is not None:
                seen.append(record["id"])
                if len(seen) == count:
                    return

    thread = threading.Thread(target=collect, daemon=True)
    thread.start()
    time.sleep(0.1)
    return seen, thread


@pytest.mark.parametrize("poll_seconds", [0.001, 0.2])  # 0.2: many rotations between two looks
def test_follow_reads_across_rotations(paths, poll_seconds):
    rotation = audit.Rotation(4096, 1000)
    audit.append(paths.audit_log, {"id": "old"}, rotation=rotation)
    seen, thread = _following(paths.audit_log, 400, poll_seconds)
    for i in range(400):
        audit.append(paths.audit_log, {"id": i, "pad": "f" * 150}, rotation=rotation)
    thread.join(timeout=30)
    assert len(audit.log_files(paths.audit_log)) > 10
    assert seen == list(range(400))


def test_a_record_appended_once_is_not_written_again(paths):
    first = {"id": audit.new_id(), "command": "touch x"}
    audit.append(paths.audit_log, first)
    for i in range(50):
        audit.append(paths.audit_log, {"id": audit.new_id(), "command": f"other {i}"})
    assert audit.append_once(paths.audit_log, {**first, "outcome": "again"}) is False
    fresh = {"id": audit.new_id(), "command": "touch y"}
    assert audit.append_once(paths.audit_log, fresh) is True
    ids = [json.loads(line)["id"] for line in _all_lines(paths.audit_log)]
    assert ids.count(first["id"]) == 1 and ids.count(fresh["id"]) == 1


def test_a_record_appended_once_is_found_in_the_rotated_file_too(paths):
    rotation = audit.Rotation(4096, 5)
    first = {"id": audit.new_id(), "command": "touch x", "pad": "z" * 3000}
    audit.append(paths.audit_log, first, rotation=rotation)
    audit.append(paths.audit_log, {"id": audit.new_id(), "pad": "z" * 3000}, rotation=rotation)  # rotates
    audit.append(paths.audit_log, {"id": audit.new_id()}, rotation=rotation)
    assert Path(audit.rotated(paths.audit_log, 1)).exists()
    assert first["id"] not in Path(paths.audit_log).read_text()
    assert audit.append_once(paths.audit_log, first, rotation=rotation) is False


def _append_past_a_size_limit(path: str, limit: int, size: int) -> str:
    """In a process whose files may not grow past `limit` bytes (RLIMIT_FSIZE: the kernel cuts the
    write short, then fails the next with EFBIG, as a full disk does), append a record of ~`size`
    bytes; the error it raised, or "" when none."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails instead of killing the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        audit.append(path, {"id": "torn", "command": "y" * size})
    except OSError as e:
        return type(e).__name__ + str(e.errno)
    return ""


def test_a_write_cut_short_by_a_full_disk_leaves_no_fragment(paths):
    import multiprocessing

    for i in range(3):
        audit.append(paths.audit_log, {"id": str(i), "command": "x" * 50})
    before = Path(paths.audit_log).read_bytes()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        error = pool.apply(_append_past_a_size_limit, (paths.audit_log, len(before) + 100, 5000))
    assert error == "OSError27", error  # EFBIG: the writer was told its record is not written
    assert Path(paths.audit_log).read_bytes() == before  # cut back: nothing torn, nothing lost
    audit.append(paths.audit_log, {"id": "after"})
    records = [json.loads(line) for line in Path(paths.audit_log).read_bytes().splitlines()]
    assert [r["id"] for r in records] == ["0", "1", "2", "after"]


def test_a_torn_last_line_is_cut_off_before_the_next_record(paths):
    audit.append(paths.audit_log, {"id": "whole"})
    with open(paths.audit_log, "ab") as f:
        f.write(b'{"id": "killed mid-wr')  # a writer killed in the middle of its write
    audit.append(paths.audit_log, {"id": "next"})
    records = [json.loads(line) for line in Path(paths.audit_log).read_bytes().splitlines()]
    assert [r["id"] for r in records] == ["whole", "next"]


def test_a_log_that_is_one_torn_line_is_emptied_before_the_next_record(paths):
    Path(paths.audit_log).parent.mkdir(parents=True)
    Path(paths.audit_log).write_bytes(b"x" * 200_000)  # longer than one block read backwards
    audit.append(paths.audit_log, {"id": "first"})
    assert [json.loads(line)["id"] for line in Path(paths.audit_log).read_bytes().splitlines()] == ["first"]


def _raised(path: str) -> str:
    try:
        audit.append(path, {"id": "from a thread"})
    except OSError as e:
        return type(e).__name__
    return ""


def test_a_lock_held_by_a_stalled_process_blocks_the_record_in_time(paths, monkeypatch):
    import subprocess
    import sys

    audit.append(paths.audit_log, {"id": "before"})
    holder = subprocess.Popen(  # a real process holding the log's lock, as a stopped writer would
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX);"
         " print('held', flush=True); time.sleep(60)", paths.audit_log],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == "held\n"
        monkeypatch.setattr(audit, "LOCK_SECONDS", 0.5)
        started = time.monotonic()
        with pytest.raises(TimeoutError, match="held its lock for 0.5 s"):
            audit.append(paths.audit_log, {"id": "blocked"})
        assert 0.4 < time.monotonic() - started < 3
        from gatekeep.core.errors import FatalError
        from gatekeep.record.decision import append_record

        with pytest.raises(FatalError, match="cannot write the audit log .*held its lock.*the line is blocked"):
            append_record(paths.audit_log, {"id": "blocked"})
        errors = []  # off the main thread, where no timer handler can be set, it polls: the same limit
        worker = threading.Thread(target=lambda: errors.append(_raised(paths.audit_log)))
        worker.start()
        worker.join(10)
        assert errors == ["TimeoutError"]
    finally:
        holder.kill()
        holder.wait()
    audit.append(paths.audit_log, {"id": "after"})  # once the holder is gone, records go in again
    ids = [json.loads(line)["id"] for line in Path(paths.audit_log).read_bytes().splitlines()]
    assert ids == ["before", "after"]


def test_the_log_is_private_even_if_created_loose(paths):
    Path(paths.audit_log).parent.mkdir(parents=True)
    Path(paths.audit_log).touch(mode=0o644)
    audit.append(paths.audit_log, {"id": "1"})
    assert Path(paths.audit_log).stat().st_mode & 0o777 == 0o600


def test_read_last_reads_backwards_across_blocks_and_filters(paths):
    for i in range(3000):
        audit.append(paths.audit_log, {"id": i, "outcome": "allow" if i % 3 else "deny", "pad": "p" * 50})
    with Path(paths.audit_log).open("ab") as f:
        f.write(b"not json\n")
    assert [r["id"] for r in audit.read_last(paths.audit_log, 3)] == [2997, 2998, 2999]
    denied = audit.read_last(paths.audit_log, 4, lambda r: r["outcome"] == "deny")
    assert [r["id"] for r in denied] == [2988, 2991, 2994, 2997]
    assert len(audit.read_last(paths.audit_log, 10_000)) == 3000
    assert audit.read_last(paths.audit_log, 0) == []


def test_follow_yields_records_appended_later(paths):
    audit.append(paths.audit_log, {"id": "old"})
    seen, thread = _following(paths.audit_log, 2)
    audit.append(paths.audit_log, {"id": "new1"})
    audit.append(paths.audit_log, {"id": "new2"})
    thread.join(timeout=10)
    assert seen == ["new1", "new2"]


def test_the_client_makes_ids_as_the_audit_does():
    from gatekeep.server import client

    made = client._new_id()
    assert uuid.UUID(made).version == 4 and str(uuid.UUID(made)) == made


def test_ids_are_random_version_4_uuids():
    ids = [audit.new_id() for _ in range(1000)]
    assert len(set(ids)) == 1000
    for text in ids:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)


@pytest.mark.parametrize("seconds", [0.0, 1.5, 1_795_000_000.999, 1_795_000_000.0004])
def test_timestamps_are_what_datetime_gives(seconds):
    expected = datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")
    assert audit.timestamp(seconds) == expected.replace("+00:00", "Z")


SCALARS = st.one_of(st.text(), st.integers(), st.booleans(), st.none())


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(), SCALARS, max_size=20))
def test_encode_writes_what_json_dumps_writes(record):
    assert dumps(record) == json.dumps(record, ensure_ascii=False)


@pytest.mark.parametrize(
    "record",
    [
        {"command": 'echo \x1b[31m\u202e\0 "q" \\ \ud800 ✓', "pid": -1, "big": 2**70, "ok": True, "no": None},
        {"commands": [{"argv": ["ls"]}], "n": 1.5},  # not flat: json writes it
        {1: "int key"},
    ],
)
def test_encode_edge_cases_match_json(record):
    assert dumps(record) == json.dumps(record, ensure_ascii=False)


def test_a_line_that_is_not_utf8_is_decided_and_audited(tmp_path):
    """Python hands the bad byte over as a lone surrogate; the record must still be written, as JSON."""
    import subprocess
    import sys

    argv = [sys.executable.encode(), b"-m", b"gatekeep", b"check", b"--", b"echo caf\xe9"]
    result = subprocess.run(argv, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    (record,) = audit.read_last(get_paths().audit_log, 1)
    assert record["command"] == "echo caf\udce9"
    assert record["outcome"] == "allow"
