"""`audit: {max_size, keep}`: the audit log's rotation as a policy sets it, and the commands that
read the log reading across its rotated files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gatekeep.judge.policy import DEFAULT_KEEP, DEFAULT_MAX_BYTES, load_policy
from gatekeep.record import audit
from tests.conftest import write


@pytest.mark.parametrize(
    "system, user, expected",
    [
        (None, None, (DEFAULT_MAX_BYTES, DEFAULT_KEEP)),
        (None, "audit: {max_size: 1M}", (1 << 20, DEFAULT_KEEP)),
        (None, "audit: {max_size: 64K, keep: 3}", (64 << 10, 3)),
        (None, "audit: {max_size: 2MiB}", (2 << 20, DEFAULT_KEEP)),
        (None, "audit: {max_size: 1g}", (1 << 30, DEFAULT_KEEP)),
        (None, "audit: {max_size: 5000}", (5000, DEFAULT_KEEP)),
        ("audit: {max_size: 8M, keep: 20}", None, (8 << 20, 20)),
        ("audit: {max_size: 8M, keep: 20}", "audit: {max_size: 1M}", (1 << 20, 20)),
        ("audit: {keep: 20}", "audit: {keep: 5}", (DEFAULT_MAX_BYTES, 20)),  # the system's keep is a floor
        ("audit: {keep: 5}", "audit: {keep: 50}", (DEFAULT_MAX_BYTES, 50)),
    ],
)
def test_rotation_comes_from_the_user_over_the_system_with_the_systems_keep_as_a_floor(paths, system, user, expected):
    if system:
        write(paths.system_policy, system + "\n")
    if user:
        write(paths.user_policy, user + "\n")
    assert load_policy(paths).rotation == expected


def test_a_project_cannot_set_the_rotation(paths, tmp_path):
    write(tmp_path / "repo" / ".gatekeep.yaml", "audit: {max_size: 4K, keep: 1}\n")
    assert load_policy(paths, cwd=str(tmp_path / "repo")).rotation == (DEFAULT_MAX_BYTES, DEFAULT_KEEP)


def _gatekeep(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gatekeep", *args], capture_output=True, text=True, timeout=60)


def test_checks_rotate_the_log_as_the_policy_says_and_audit_tail_reads_across(paths):
    write(paths.user_policy, "audit: {max_size: 4K, keep: 2}\nrules:\n  allow: ['true *']\n")
    for i in range(24):
        assert _gatekeep("check", "--no-prompt", "-q", "--", f"true {i} {'p' * 300}").returncode == 0
    names = [Path(name).name for name in audit.log_files(paths.audit_log)]
    assert names == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]  # and no more: keep is 2
    shown = _gatekeep("audit", "tail", "-n", "12", "--json")
    commands = [json.loads(line)["command"].split()[1] for line in shown.stdout.splitlines()]
    assert commands == [str(i) for i in range(12, 24)]
    assert len(Path(paths.audit_log).read_text().splitlines()) < 12  # so some came from rotated files
    stats = json.loads(_gatekeep("audit", "stats", "--json").stdout)
    kept = sum(len(Path(name).read_text().splitlines()) for name in audit.log_files(paths.audit_log))
    assert stats["records"] == kept
