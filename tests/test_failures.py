"""When gatekeep's own files cannot be written, or the current directory is gone: one line that
says what and what to do, the line blocked where a decision cannot be recorded, and no
traceback. Real processes, real files.

Directories are made unwritable by putting a regular file where a directory should be
(ENOTDIR, ENOTEMPTY, EISDIR): unlike `chmod`, root cannot write through that, and the tests
may run as root. The chmod cases run only when the tests do not.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write

ROOT = os.geteuid() == 0


def gatekeep(*argv: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gatekeep", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr
    assert stderr.count("\n") == 1, stderr
    return stderr


# --- a home or state directory that cannot be written ---


def _blocked(tmp_path: Path, variable: str) -> dict:
    """The environment with `variable` pointing below a regular file: nothing can be made there."""
    blocker = write(tmp_path / "a-file", "not a directory\n")
    env = dict(os.environ)
    if variable != "GATEKEEP_HOME":
        env.pop("GATEKEEP_HOME")
    if variable == "HOME":
        for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME"):
            env.pop(name, None)
    env[variable] = str(blocker / "below")
    return env


@pytest.mark.parametrize("variable", ["GATEKEEP_HOME", "XDG_STATE_HOME", "HOME"])
@pytest.mark.parametrize("line", ["ls", "mkdir build"])
def test_a_state_directory_that_cannot_be_written_blocks_in_one_line(tmp_path, variable, line):
    result = gatekeep("check", "--no-prompt", "--", line, env=_blocked(tmp_path, variable))
    assert result.returncode == 2  # fail closed: a decision that cannot be recorded does not run
    message = one_line(result.stderr)
    assert "cannot write the audit log" in message and "Not a directory" in message
    assert "set GATEKEEP_HOME" in message  # what to do


def check_in_read_only(directory: str) -> subprocess.CompletedProcess:
    """`gatekeep check --no-prompt -- ls` while `directory` (made here) can be read but not written."""
    os.makedirs(directory)
    os.chmod(directory, 0o500)
    try:
        return gatekeep("check", "--no-prompt", "--", "ls")
    finally:
        os.chmod(directory, 0o700)


@pytest.mark.skipif(ROOT, reason="root writes into a read-only directory")
def test_a_read_only_state_directory_blocks_in_one_line(paths):
    result = check_in_read_only(paths.state_dir)
    assert result.returncode == 2
    assert "cannot write the audit log" in one_line(result.stderr)


def test_a_cache_that_cannot_be_written_costs_only_time(paths):
    write(paths.cache_dir, "a file where the cache directory goes\n")
    for _ in range(2):
        result = gatekeep("check", "--no-prompt", "--", "ls")
        assert result.returncode == 0, result.stderr
    with open(paths.audit_log, encoding="utf-8") as f:
        assert [json.loads(r)["outcome"] for r in f] == ["allow", "allow"]


@pytest.mark.skipif(ROOT, reason="root writes into a read-only directory")
def test_a_read_only_cache_directory_costs_only_time(paths):
    result = check_in_read_only(paths.cache_dir)
    assert result.returncode == 0, result.stderr


BROKEN = """
import sys
import gatekeep.commands.check as check
def broken(*args, **kwargs):
    raise RuntimeError("a bug")
check.evaluate = broken
from gatekeep.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_an_internal_error_whose_log_cannot_be_written_is_still_one_line(tmp_path):
    env = _blocked(tmp_path, "GATEKEEP_HOME")
    result = subprocess.run(
        [sys.executable, "-c", BROKEN, "check", "--no-prompt", "--", "ls"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    message = one_line(result.stderr)  # was a traceback of 28 lines
    assert "internal error (RuntimeError: a bug)" in message and "could not be written" in message


# --- before a question: everything the answer needs ---


def _on_a_terminal(argv: list[str], cwd: Path, seconds: float = 20) -> tuple[int | None, str]:
    """Run argv with a new pseudo-terminal as its controlling terminal; (exit code or None if it
    still runs after `seconds`, what it wrote). Nothing is typed: a question would wait."""
    import fcntl
    import pty
    import termios

    master, slave = pty.openpty()

    def take_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, preexec_fn=take_terminal)
    os.close(slave)
    output = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the terminal closed: the process has ended
                    chunk = b""
                output += chunk
                if not chunk and proc.poll() is not None:
                    break
            elif proc.poll() is not None:
                break
        code = proc.poll()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)
    return code, output.decode("utf-8", "replace")


@pytest.mark.parametrize(
    "unwritable,message",
    [
        ("audit.jsonl", "cannot write the audit log"),  # a directory where the log goes: EISDIR
        ("locks", "cannot write the lock directory"),  # a file where the lock directory goes
    ],
)
def test_an_unwritable_audit_log_blocks_before_any_question(paths, tmp_path, unwritable, message):
    """Was: the question was asked, "always" wrote the policy, then the line was blocked unrecorded."""
    target = Path(paths.state_dir) / unwritable
    if unwritable == "audit.jsonl":
        (target / "x").mkdir(parents=True)
    else:
        write(target, "not a directory\n")
    argv = [sys.executable, "-m", "gatekeep", "check", "--", "mkdir -p build"]  # asks: no rule allows it
    code, output = _on_a_terminal(argv, tmp_path)
    assert code == 2, output  # ended by itself, at once: no question waited for an answer
    assert message in output and "Traceback" not in output
    assert not os.path.exists(paths.user_policy)


# --- the current directory removed by another process ---


def _in_removed_directory(tmp_path: Path, line: str, *options: str, pwd: bool = True) -> subprocess.CompletedProcess:
    """`gatekeep check` started by bash in a directory bash has just removed (as another process
    would), the way the hook starts it: its os.getcwd() fails."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    gone = tmp_path / "gone"
    gone.mkdir()
    env = dict(os.environ)
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    argv = [sys.executable, "-m", "gatekeep", "check", "--no-prompt", *options, "--", line]
    if not pwd:
        argv = ["env", "-u", "PWD", *argv]
    return subprocess.run(
        [bash, "-c", script, "bash", str(gone), *argv], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "line,code",
    [
        ("cd /", 0),  # was: an internal error on every line, `cd /` included
        ("cd ..", 0),
        ("ls", 0),
        ("cat /etc/hostname", 0),
        ("git status", 0),
        ("echo x > out.txt", 1),  # a relative write: what is there is unknown, so it asks
        ("echo x >> ../out.txt", 1),
        ("rm -rf build", 1),
    ],
)
@pytest.mark.parametrize("how", ["$PWD", "no PWD", "--cwd"])
def test_a_removed_current_directory_still_lets_you_out(paths, tmp_path, line, code, how):
    write(paths.user_policy, "rules:\n  allow: ['echo *']\n")  # so only the write can make it ask
    options = ("--cwd", str(tmp_path / "gone")) if how == "--cwd" else ()
    result = _in_removed_directory(tmp_path, line, *options, pwd=how != "no PWD")
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    if code:
        assert "no longer exists" in result.stderr
    with open(paths.audit_log, encoding="utf-8") as f:
        assert json.loads(f.read().splitlines()[-1])["cwd"] == str(tmp_path / "gone")


def test_the_same_relative_write_is_allowed_where_the_directory_exists(paths, tmp_path):
    write(paths.user_policy, "rules:\n  allow: ['echo *']\n")
    assert gatekeep("check", "--no-prompt", "--", "echo x > out.txt", cwd=tmp_path).returncode == 0


def test_a_removed_directory_keeps_the_deny_rules_of_its_project(paths, tmp_path):
    write(tmp_path / ".gatekeep.yaml", "rules:\n  deny: ['make deploy *']\n")
    result = _in_removed_directory(tmp_path, "make deploy prod")
    assert result.returncode == 1 and "make deploy *" in result.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_gated_shell_gets_out_of_a_removed_directory(tmp_path, shell):
    """In real interactive bash and zsh with the hook: was an internal error on every line, `cd /`
    included, and only Ctrl-D got out."""
    from tests.shells import Shell, hook_text

    session = Shell(shell, tmp_path / shell, hook_text(shell))
    try:
        (session.work / "gone").mkdir()
        session.run("cd gone")
        (session.work / "gone").rmdir()  # another process removes it
        for line in ("ls", "cd /"):
            output = session.run(line)
            assert "internal error" not in output and "Traceback" not in output
        assert "/" in [line.strip() for line in session.run("pwd").splitlines()]
    finally:
        session.close()


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_gated_shell_with_an_unwritable_audit_log_blocks_without_asking(paths, tmp_path, shell):
    from tests.shells import Shell, hook_text

    session = Shell(shell, tmp_path / shell, hook_text(shell))
    try:
        (Path(paths.audit_log) / "x").mkdir(parents=True)  # a directory where the log goes
        output = session.run("mkdir build")  # a line that asks: Shell.run fails if a question shows
        assert "cannot write the audit log" in output and "Traceback" not in output
        assert not session.exists("build") and not os.path.exists(paths.user_policy)
    finally:
        session.close()


@pytest.mark.parametrize(
    "argv,stdin",
    [
        (["rules", "test", "--", "ls"], None),
        (["doctor"], None),
        (["claude-hook"], '{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}'),
    ],
)
def test_the_other_commands_work_in_a_removed_directory(tmp_path, argv, stdin):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    command = ["bash", "-c", script, "bash", str(gone), sys.executable, "-m", "gatekeep", *argv]
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result.stderr
