"""A reader that goes away (`gatekeep audit tail | head -1`) ends a command quietly with exit 0, but a gate
(check, claude-hook) whose output is cut short still blocks. Real processes and real pipes."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from gatekeep.record import audit

GATEKEEP = [sys.executable, "-m", "gatekeep"]


def closed_pipe(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """Run gatekeep with its stdout on a pipe whose reading end is already closed: every write fails (EPIPE)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*GATEKEEP, *args], input=stdin, stdout=write_end, stderr=subprocess.PIPE, timeout=60
        )
    finally:
        os.close(write_end)


@pytest.fixture
def records(paths):
    for n in range(200):
        audit.append(paths.audit_log, {"ts": audit.timestamp(), "command": f"git status {n}", "outcome": "allow"})


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "tail", "-n", "200"],
        ["audit", "tail", "--json", "-n", "200"],
        ["audit", "stats"],
        ["rules", "list"],
        ["paths", "--json"],
        ["--help"],
        ["rules", "--help"],
    ],
)
def test_a_closed_pipe_ends_an_output_command_quietly(records, args):
    result = closed_pipe(*args)
    assert (result.returncode, result.stderr) == (0, b"")


def test_audit_tail_into_head_exits_0_with_pipefail(records):
    command = f"set -o pipefail; {shlex.join(GATEKEEP)} audit tail -n 200 | head -1"
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("TIME (UTC)") and result.stdout.count("\n") == 1
    assert result.stderr == ""


def test_a_usage_error_keeps_its_exit_code():
    assert closed_pipe("rules", "list", "--no-such-option").returncode == 2


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--json", "--no-prompt", "--", "rm -rf ~"],  # blocked: must stay blocked
        ["check", "--json", "--no-prompt", "--", "git status"],  # allowed, but its answer was cut short
        ["check", "--json", "--no-prompt", "git status"],  # no `--`: read by click, not main.py's fast path
    ],
)
def test_a_check_whose_output_is_cut_short_blocks(paths, args):
    result = closed_pipe(*args)
    assert result.returncode == 2
    assert b"output was closed" in result.stderr


def test_claude_hook_whose_answer_is_cut_short_blocks():
    event = {
        "session_id": "s",
        "cwd": "/",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
    }
    assert closed_pipe("claude-hook", stdin=json.dumps(event).encode()).returncode == 2
