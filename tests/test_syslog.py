"""`audit: {syslog: ...}`: each audit record also goes to a real local syslog socket; and every `audit:` key's
bad values."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gatekeep.core.errors import PolicyError
from gatekeep.core.paths import get_paths
from gatekeep.judge.policy import load_policy
from tests.conftest import write

AUTHPRIV = 10  # syslog facility codes (RFC 5424)
WARNING, INFO = 4, 6


@pytest.fixture
def syslog_socket():
    """A listening Unix datagram socket, like syslogd's /dev/log (short path: sun_path is 108 bytes)."""
    directory = Path(tempfile.mkdtemp(prefix="gk-", dir="/tmp"))
    address = directory / "log"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(address))
    server.settimeout(10)
    yield server, str(address)
    server.close()
    address.unlink()
    directory.rmdir()


def check(line: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gatekeep", "check", "--no-prompt", "--", line],
        capture_output=True,
        text=True,
        timeout=60,
    )


def audit_records() -> list[dict]:
    return [json.loads(line) for line in Path(get_paths().audit_log).read_text().splitlines()]


@pytest.mark.parametrize("line,code,severity", [("git status", 0, INFO), ("rm -rf ~", 1, WARNING)])
def test_each_record_reaches_the_socket_as_in_the_audit_log(syslog_socket, line, code, severity):
    server, address = syslog_socket
    write(get_paths().user_policy, f"audit:\n  syslog: {address}\n")
    result = check(line)
    assert result.returncode == code
    message = server.recv(1 << 16).decode()
    prefix = f"<{AUTHPRIV * 8 + severity}>gatekeep: "
    assert message.startswith(prefix)
    sent = json.loads(message[len(prefix) :].rstrip("\0"))
    assert sent == audit_records()[-1]  # the same record, byte for byte once decoded
    assert sent["command"] == line


def test_an_unreachable_syslog_warns_and_the_audit_log_still_has_the_record(tmp_path):
    write(get_paths().user_policy, f"audit:\n  syslog: {tmp_path / 'no-such-socket'}\n")
    result = check("git status")
    assert result.returncode == 0  # the JSONL log is the source of truth; the line is not blocked
    assert "could not send the audit record to syslog" in result.stderr
    assert audit_records()[-1]["command"] == "git status"


def test_without_the_setting_nothing_is_sent(syslog_socket):
    server, _ = syslog_socket
    assert check("git status").returncode == 0
    server.settimeout(0.5)
    with pytest.raises(TimeoutError):
        server.recv(1 << 16)


# (system layer, user layer, effective socket): the system's choice binds the user
LAYERS = [
    (None, "audit: {syslog: true}", "/dev/log"),
    (None, "audit: {syslog: /run/my.sock}", "/run/my.sock"),
    ("audit: {syslog: true}", "audit: {syslog: false}", "/dev/log"),
    ("audit: {syslog: /run/fleet.sock}", "audit: {syslog: /tmp/mine.sock}", "/run/fleet.sock"),
    ("audit: {syslog: false}", None, None),
    (None, None, None),
]


@pytest.mark.parametrize("system,user,expected", LAYERS)
def test_which_layer_decides_the_socket(paths, system, user, expected):
    if system:
        write(paths.system_policy, system + "\n")
    if user:
        write(paths.user_policy, user + "\n")
    assert load_policy(paths).syslog == expected


def test_a_project_policy_cannot_turn_syslog_on(paths, tmp_path):
    write(tmp_path / "repo" / ".gatekeep.yaml", "audit: {syslog: /tmp/x.sock}\n")
    assert load_policy(paths, cwd=str(tmp_path / "repo")).syslog is None


@pytest.mark.parametrize(
    "text,key",
    [
        ("audit: true\n", "audit"),
        ("audit: {syslog: relative/path}\n", "audit.syslog"),
        ("audit: {syslog: 3}\n", "audit.syslog"),
        ("audit: {journal: true}\n", "audit.journal"),
        ("audit: {max_size: 100}\n", "audit.max_size"),  # below 4096 bytes
        ("audit: {max_size: lots}\n", "audit.max_size"),
        ("audit: {max_size: 16T}\n", "audit.max_size"),
        ("audit: {max_size: true}\n", "audit.max_size"),
        ("audit: {max_size: -5M}\n", "audit.max_size"),
        ("audit: {keep: 0}\n", "audit.keep"),
        ("audit: {keep: 2.5}\n", "audit.keep"),
        ("audit: {keep: '3'}\n", "audit.keep"),
        ("audit: {keep: 100000}\n", "audit.keep"),
    ],
)
def test_bad_audit_settings_are_policy_errors(paths, text, key):
    write(paths.user_policy, text)
    with pytest.raises(PolicyError) as error:
        load_policy(paths)
    assert f"key '{key}'" in str(error.value)
