"""`gatekeep audit export --otlp`: the audit log sent to a collector as OTLP log records.

The collector is tests/otlp_receiver.py, a real OTLP/HTTP endpoint on the loopback address that
decodes each request with the OTLP protobuf schema. The exporter is the real command, a process
of its own, while real writers (audit.append, `gatekeep check`) fill and rotate the log.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.record import audit, export
from gatekeep.record.otlp import attributes
from gatekeep.record.redact import redact
from tests.otlp_receiver import Receiver

SMALL = audit.Rotation(4096, 100)  # ~10 records a file: a rotation every few records


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def gatekeep(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gatekeep", *argv], capture_output=True, text=True, timeout=120, **kwargs)


@pytest.fixture
def follower():
    """Starts `audit export --follow` processes; each is killed at the end, whatever the test did."""
    started: list[subprocess.Popen] = []

    def start(url: str) -> subprocess.Popen:
        argv = [sys.executable, "-m", "gatekeep", "audit", "export", "--otlp", url, "--follow", "--timeout", "2"]
        started.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()


def write_records(count: int, start: int = 0) -> list[str]:
    """`count` records appended by the real writer, rotating the log as a small max_size says."""
    ids = []
    for i in range(start, start + count):
        record = {"id": audit.new_id(), "ts": audit.timestamp(), "command": f"make step-{i}", "decision": "ask"}
        record.update(outcome="deny", rule=None, reason=f"`make step-{i}` matches no rule", prompted=False, shell="bash")
        audit.append(get_paths().audit_log, record, rotation=SMALL)
        ids.append(record["id"])
    return ids


def wait_for(receiver: Receiver, count: int, seconds: float = 60) -> list[str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(receiver.ids()) < count:
        time.sleep(0.05)
    return receiver.ids()


def stop(process: subprocess.Popen, how: int = signal.SIGTERM) -> str:
    process.send_signal(how)
    _, err = process.communicate(timeout=60)
    return err


def test_every_record_once_in_order_across_rotations_restarts_and_a_collector_that_is_down(receiver, follower):
    expected = write_records(25)  # before the first start: the backlog, across rotated files
    process = follower(receiver.url)
    assert wait_for(receiver, 25) == expected
    expected += write_records(30, 25)  # while it follows, rotating the log under it
    assert wait_for(receiver, 55) == expected
    assert stop(process) is not None and process.returncode == 0

    expected += write_records(12, 55)  # while it is stopped
    process = follower(receiver.url)  # a restart: from its checkpoint, nothing twice
    assert wait_for(receiver, 67) == expected

    receiver.stop()  # the collector goes down
    expected += write_records(20, 67)
    time.sleep(3)  # it tries, fails, waits, tries again
    receiver.start()
    assert wait_for(receiver, 87) == expected

    receiver.refuse = 2  # overloaded: 503 twice
    expected += write_records(5, 87)
    assert wait_for(receiver, 92) == expected
    stop(process)
    assert receiver.ids() == expected  # nothing more arrived
    assert len(audit.log_files(get_paths().audit_log)) > 5  # it did read across rotations


def test_a_kill_loses_nothing(receiver, follower):
    """A `kill -9` can at worst send the batch in flight again (its records carry their ids)."""
    expected = write_records(40)
    process = follower(receiver.url)
    assert wait_for(receiver, 40) == expected
    stop(process, signal.SIGKILL)
    expected += write_records(10, 40)
    process = follower(receiver.url)
    ids = wait_for(receiver, 50)
    stop(process)
    assert list(dict.fromkeys(ids)) == expected


def test_a_one_off_export_sends_what_there_is_and_then_only_what_is_new(receiver, tmp_path):
    no_shell = {k: v for k, v in os.environ.items() if k != "SHELL"}  # as CI runs it: a line no agent sent is a shell's
    for line in ("ls", "git push origin main", "rm -rf /"):
        gatekeep("check", line, cwd=tmp_path, stdin=subprocess.DEVNULL, env=no_shell)
    first = gatekeep("audit", "export", "--otlp", receiver.url)
    assert first.returncode == 0 and "3 records sent" in first.stderr
    got = {r.attributes["gatekeep.command"]: r for r in receiver.records}
    assert set(got) == {"ls", "git push origin main", "rm -rf /"}
    denied = got["rm -rf /"]
    assert denied.event_name == "gatekeep.tool_decision" and denied.severity == "WARN"
    assert denied.attributes["decision"] == "reject" and denied.attributes["source"] == "config"
    assert denied.attributes["gatekeep.rule"] == "rm * / *" and denied.attributes["gatekeep.layer"] == "built-in"
    assert denied.attributes["gatekeep.posture"] == "workspace" and len(denied.attributes["gatekeep.policy_sha256"]) == 64
    assert denied.resource["service.name"] == "gatekeep" and denied.resource["host.name"]
    assert got["ls"].attributes["decision"] == "accept" and got["ls"].attributes["tool_name"] == "shell"
    assert got["ls"].time > 1_700_000_000 * 10**9
    again = gatekeep("audit", "export", "--otlp", receiver.url)
    assert again.returncode == 0 and "0 records sent" in again.stderr and len(receiver.records) == 3
    from gatekeep.commands.audit_export import checkpoint_path

    kept = json.loads(Path(checkpoint_path(receiver.url)).read_text())
    assert kept["last_id"] == receiver.ids()[-1] and kept["url"] == receiver.url
    assert kept["offset"] == os.path.getsize(get_paths().audit_log)


def test_a_collector_that_cannot_be_reached_fails_a_one_off_export_and_loses_nothing(receiver):
    write_records(3)
    receiver.stop()
    out = gatekeep("audit", "export", "--otlp", receiver.url, "--timeout", "1")
    assert out.returncode != 0 and "did not take the rest" in out.stderr
    receiver.start()
    assert gatekeep("audit", "export", "--otlp", receiver.url).returncode == 0
    assert len(receiver.ids()) == 3


def test_each_collector_has_its_own_checkpoint(receiver):
    other = Receiver()
    try:
        write_records(4)
        assert gatekeep("audit", "export", "--otlp", receiver.url).returncode == 0
        assert gatekeep("audit", "export", "--otlp", other.url).returncode == 0
        assert receiver.ids() == other.ids() and len(other.ids()) == 4
    finally:
        other.stop()


def test_records_rotated_away_before_they_were_sent_are_said_to_be_lost(receiver):
    write_records(3)
    assert gatekeep("audit", "export", "--otlp", receiver.url).returncode == 0
    log = get_paths().audit_log
    for name in audit.log_files(log):
        os.unlink(name)  # as `keep` would drop them
    later = write_records(2)
    out = gatekeep("audit", "export", "--otlp", receiver.url)
    assert out.returncode == 0 and "lost to the export" in out.stderr
    assert receiver.ids()[3:] == later


def test_a_torn_checkpoint_is_a_clear_error(receiver):
    write_records(1)
    from gatekeep.commands.audit_export import checkpoint_path

    Path(checkpoint_path(receiver.url)).parent.mkdir(parents=True)
    Path(checkpoint_path(receiver.url)).write_text('{"dev": 1, "ino"')
    out = gatekeep("audit", "export", "--otlp", receiver.url)
    assert out.returncode != 0 and "checkpoint" in out.stderr and "remove it" in out.stderr
    assert receiver.ids() == []


def test_without_the_extra_it_says_what_to_install():
    code = (
        "import sys, runpy; sys.modules['opentelemetry.exporter.otlp.proto.http._log_exporter'] = None;"
        " sys.argv = ['gatekeep', 'audit', 'export', '--otlp', 'http://127.0.0.1:9/v1/logs'];"
        " runpy.run_module('gatekeep', run_name='__main__')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "pip install 'gatekeep[otlp]'" in out.stderr


def test_a_url_that_is_not_otlp_http():
    out = gatekeep("audit", "export", "--otlp", "collector:4317")
    assert out.returncode != 0 and "http(s)://HOST:4318/v1/logs" in out.stderr


# (line, what redact makes of it)
REDACTED = [
    ("mysql -u root --password=hunter2 db", "mysql -u root --password=*** db"),
    ("mysql -uroot -phunter2 db", "mysql -uroot -p*** db"),
    ("psql --password s3cret -h db", "psql --password *** -h db"),
    ("curl -u me:pw https://x.example", "curl -u me:*** https://x.example"),
    ("curl --user=me:pw https://x.example", "curl --user=me:*** https://x.example"),
    ("curl -H 'Authorization: Bearer abc.def' https://x.example", "curl -H 'Authorization: ***' https://x.example"),
    ("curl 'https://x.example/a?token=abc&page=2'", "curl 'https://x.example/a?token=***&page=2'"),
    ("API_KEY=abc123 ./deploy.sh", "API_KEY=*** ./deploy.sh"),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "export AWS_SECRET_ACCESS_KEY=***"),
    ("git clone https://me:tok3n@github.com/a/b", "git clone https://me:***@github.com/a/b"),
    ("echo ghp_abcdefghijklmnopqrstuvwxyz0123", "echo ***"),
    ("aws configure set aws_secret_access_key ABC", "aws configure set aws_secret_access_key ***"),
    ("npm publish --otp=123456", "npm publish --otp=***"),
    ("tool --api_key 'a b c' run", "tool --api_key *** run"),
    # left as they are: nothing secret
    ("ls -la --color=auto", "ls -la --color=auto"),
    ("pip install --user requests", "pip install --user requests"),
    ("mkdir -pv build/x", "mkdir -pv build/x"),
    ("git -c user.name=me commit -m 'x'", "git -c user.name=me commit -m 'x'"),
    ("python -m pytest -q tests", "python -m pytest -q tests"),
    ("dd if=/dev/zero of=/dev/sda bs=1M", "dd if=/dev/zero of=/dev/sda bs=1M"),  # what it did stays
    ("kubectl delete pods -l app=payments", "kubectl delete pods -l app=payments"),
    ("psql 'host=db user=admin password=pw dbname=app'", "psql 'host=db user=admin password=*** dbname=app'"),
    ("psql postgresql://admin:p@ss@db/app", "psql postgresql://admin:***@db/app"),
    ("redis-cli -u redis://:pw@host:6379", "redis-cli -u redis://:***@host:6379"),
    ("redis-cli -a pw ping", "redis-cli -a *** ping"),
    ("sshpass -p pw ssh h", "sshpass -p *** ssh h"),
    ("docker login -u me -p pw reg", "docker login -u me -p *** reg"),
    ("keytool -list -storepass pw", "keytool -list -storepass ***"),
    ("openssl enc -pass pass:pw -in a", "openssl enc -pass pass:*** -in a"),
    ("htpasswd -bc .htpasswd user pw", "htpasswd -bc .htpasswd user ***"),
    ("smbclient //h/s -U user%pw", "smbclient //h/s -U user%***"),
    ("ldapsearch -x -w pw -b dc=x", "ldapsearch -x -w *** -b dc=x"),
    ("npm config set //reg/:_authToken tok", "npm config set //reg/:_authToken ***"),
    ("curl -d '{\"password\": \"pw\"}' https://h", "curl -d '{\"password\": \"***\"}' https://h"),
    ("curl -H 'Private-Token: tok' https://h", "curl -H 'Private-Token: ***' https://h"),
    ("x --password='it''s' y", "x --password=*** y"),
    ("curl -H Authorization:Bearer\\ x https://h && ls", "curl -H Authorization:*** https://h && ls"),
]


@pytest.mark.parametrize("line,expected", REDACTED)
def test_redact(line, expected):
    assert redact(line) == expected


RECORD = {
    "id": "r1", "ts": "2026-11-29T10:00:00.250Z", "command": "DB_PASSWORD=x psql -c 'select 1'", "cwd": "/srv/app",
    "decision": "ask", "outcome": "allow", "rule": None, "prompted": True, "answer": "once", "tty": "/dev/pts/3",
    "reason": "`DB_PASSWORD=x psql -c 'select 1'` matches no rule", "agent": "claude", "tool": "Bash",
    "session_id": "s-9", "tool_use_id": "toolu_1", "shell": None, "posture": "workspace", "layer": None,
}  # fmt: skip


@pytest.mark.parametrize(
    "commands,command,reason",
    [
        ("redacted", "DB_PASSWORD=*** psql -c 'select 1'", "`…` matches no rule"),
        ("whole", RECORD["command"], RECORD["reason"]),
        ("none", None, "`…` matches no rule"),
    ],
)
def test_what_a_record_becomes(commands, command, reason):
    found = attributes(RECORD, commands)
    assert found.get("gatekeep.command") == command and found["gatekeep.reason"] == reason
    assert ("gatekeep.cwd" in found) == (commands != "none")
    assert found["decision"] == "accept" and found["source"] == "user_temporary"
    assert (found["tool_name"], found["session.id"], found["tool_use_id"]) == ("Bash", "s-9", "toolu_1")
    assert found["gatekeep.agent"] == "claude" and found["gatekeep.terminal"] == "/dev/pts/3"
    assert "gatekeep.layer" not in found  # None values are left out


@pytest.mark.parametrize(
    "fields,source",
    [
        ({"prompted": False}, "config"),
        ({"prompted": True, "answer": "always"}, "user_permanent"),
        ({"prompted": True, "answer": "deny"}, "user_reject"),
        ({"prompted": True, "answer": "never"}, "user_reject"),
        ({"prompted": True, "answer": "timeout"}, "user_abort"),
        ({"prompted": False, "answered_from": "reviewer"}, "reviewer"),
    ],
)
def test_source_in_claude_codes_words(fields, source):
    assert attributes({**RECORD, **fields}, "redacted")["source"] == source


def test_next_batch_reads_whole_lines_only_and_passes_a_torn_one_in_a_rotated_file():
    log = get_paths().audit_log
    write_records(2)
    with open(log, "ab") as f:
        f.write(b'{"id": "half')  # a writer mid-write
    batch = export.next_batch(log, None)
    assert len(batch.records) == 2 and not batch.lost
    os.rename(log, audit.rotated(log, 1))  # now a rotated file whose end is a fragment
    newer = write_records(1)
    following = export.next_batch(log, batch.position)
    assert [r["id"] for r in following.records] == newer


def test_the_checkpoint_is_replaced_whole(tmp_path):
    place = str(tmp_path / "state" / "cp.json")
    export.save_checkpoint(place, export.Position(1, 2, 3, "x"), {"url": "u"})
    assert json.loads(Path(place).read_text()) == {"url": "u", "dev": 1, "ino": 2, "offset": 3, "last_id": "x"}
    assert export.load_checkpoint(place) == export.Position(1, 2, 3, "x")
    assert os.listdir(tmp_path / "state") == ["cp.json"]  # no temporary file left
    assert oct(os.stat(place).st_mode & 0o777) == "0o600"


def test_a_checkpoint_whose_inode_now_holds_other_records_is_not_taken_for_it():
    """An inode is reused once its file is gone: the record before the offset must be the one sent last."""
    log = get_paths().audit_log
    ids = write_records(3)
    st = os.stat(log)
    first_line = Path(log).read_bytes().split(b"\n")[0]
    right = export.Position(st.st_dev, st.st_ino, len(first_line) + 1, ids[0])
    assert [r["id"] for r in export.next_batch(log, right).records] == ids[1:]
    wrong = right._replace(last_id="another-files-record")
    batch = export.next_batch(log, wrong)
    assert batch.lost and [r["id"] for r in batch.records] == ids


def _exec_start(unit: str) -> list[str]:
    """ExecStart= as systemd splits it (our quoting: double quotes, \\ escapes, %% and $$)."""
    import shlex

    line = next(x for x in unit.splitlines() if x.startswith("ExecStart="))
    return [w.replace("%%", "%").replace("$$", "$") for w in shlex.split(line.removeprefix("ExecStart="))]


def test_install_export_writes_a_user_service_that_runs_the_export(receiver, isolated_home):
    out = gatekeep("install", "--export", receiver.url)
    assert out.returncode == 0, out.stderr
    units = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user"
    unit = units / "gatekeep-export.service"
    link = units / "default.target.wants" / "gatekeep-export.service"
    assert link.is_symlink() and link.resolve() == unit.resolve()
    text = unit.read_text()
    assert text.startswith("# Written by `gatekeep install --export`") and "WantedBy=default.target" in text
    if shutil.which("systemd-analyze"):  # systemd's own reading of the file
        runtime = isolated_home / "run"
        runtime.mkdir(mode=0o700)
        env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
        verify = subprocess.run(["systemd-analyze", "verify", "--user", str(unit)], capture_output=True, text=True, env=env)
        assert verify.returncode == 0, verify.stderr
    argv = _exec_start(text)
    assert argv[:3] == [sys.executable, "-I", "-m"] and argv[argv.index("--otlp") + 1] == receiver.url
    expected = write_records(3)
    service = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # as systemd would run it
    try:
        assert wait_for(receiver, 3) == expected
    finally:
        stop(service)
    assert service.returncode == 0
    again = json.loads(gatekeep("install", "--export", receiver.url, "--json").stdout)
    assert again["action"] == "unchanged"
    removed = json.loads(gatekeep("install", "--export", "--remove", "--json").stdout)
    assert removed["action"] == "removed" and not unit.exists() and not link.is_symlink()


def test_install_export_quotes_what_systemd_would_expand_and_leaves_a_foreign_unit_alone(isolated_home):
    url = 'http://127.0.0.1:4318/v1/logs?a=%20"$HOME"\\x'
    assert gatekeep("install", "--export", url).returncode == 0
    unit = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user" / "gatekeep-export.service"
    argv = _exec_start(unit.read_text())
    assert argv[argv.index("--otlp") + 1] == url
    unit.write_text("[Service]\nExecStart=/bin/true\n")
    out = gatekeep("install", "--export", "--remove")
    assert out.returncode != 0 and "not written by gatekeep" in out.stderr and unit.exists()
    bad = gatekeep("install", "--export", "collector:4317")
    assert bad.returncode != 0 and "http(s)://HOST:4318/v1/logs" in bad.stderr


def test_install_export_managed_is_every_users(tmp_path, monkeypatch):
    managed = tmp_path / "etc-systemd-user"
    monkeypatch.setenv("GATEKEEP_SYSTEMD_MANAGED_DIR", str(managed))
    out = gatekeep("install", "--export", "http://collector.internal:4318/v1/logs", "--managed")
    assert out.returncode == 0 and "every user's systemd starts it" in out.stdout
    unit = managed / "gatekeep-export.service"
    assert oct(unit.stat().st_mode & 0o777) == "0o644"
    assert (managed / "default.target.wants" / "gatekeep-export.service").is_symlink()


@pytest.mark.parametrize("commands", ["redacted", "none"])
def test_a_reason_that_quotes_the_command_does_not_carry_its_secret(commands):
    """The reason quotes the words with their quotes removed: `--password 'S3 cret'` reads there as
    `--password S3 cret`, and a backquote in the line pairs with the reason's own quoting."""
    spaced = {**RECORD, "command": "mysql --password 'S3 cret' -e 'select 1'", "reason": "`mysql --password S3 cret -e select 1` matches no rule"}
    backquoted = {**RECORD, "command": "curl 'a`b' -u admin:S3cretPw https://h", "reason": "`curl a`b -u admin:S3cretPw https://h` matches no rule"}
    for record in (spaced, backquoted):
        found = attributes(record, commands)
        assert "cret" not in found.get("gatekeep.reason", "") and "cret" not in str(found.get("gatekeep.command", ""))
    assert attributes(spaced, commands)["gatekeep.reason"] == "`…` matches no rule"
    assert "gatekeep.reason" not in attributes(backquoted, commands)
