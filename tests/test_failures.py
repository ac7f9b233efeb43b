"""When the current directory is gone: `cd /` and what only looks still pass, no traceback.
Real processes, real files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write


def gatekeep(*argv: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gatekeep", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


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
