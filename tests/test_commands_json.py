"""--json on approve, deny, trust, install and rules import, and `rules list` without the built-in rules.

Real processes. Success prints one JSON object on stdout; an error prints one line on stderr,
nothing on stdout, and exits non-zero, with --json as without.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write

pytestmark = pytest.mark.timeout(120)
GATEKEEP = [sys.executable, "-m", "gatekeep"]


def gatekeep(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*GATEKEEP, *argv], capture_output=True, text=True, timeout=60, cwd=cwd)


def json_of(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def assert_error(result: subprocess.CompletedProcess, code: int, says: str) -> None:
    assert result.returncode == code
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr


def waiting_request(line: str) -> tuple[subprocess.Popen, str]:
    """A `gatekeep check` with no terminal, waiting under approve: remote, and its request id."""
    asker = subprocess.Popen(
        [*GATEKEEP, "check", "--", line], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for request in json.loads(gatekeep("pending", "--json").stdout):
            if request["command"] == line:
                return asker, request["id"]
        time.sleep(0.1)
    asker.kill()
    raise AssertionError("no request was published")


@pytest.mark.parametrize("command,answer,exit_code", [("approve", "once", 0), ("deny", "deny", 1)])
def test_approve_and_deny_json(paths, command, answer, exit_code):
    write(paths.user_policy, "approve: remote\ntimeout: 60\n")
    line = f"npm install left-pad-{command}"
    asker, request_id = waiting_request(line)
    try:
        shown = json_of(gatekeep(command, "--json", request_id[:8]))
        assert shown == {"id": request_id, "answer": answer, "command": line, "cwd": shown["cwd"]}
        assert asker.wait(timeout=30) == exit_code
    finally:
        asker.kill()
    assert_error(gatekeep(command, "--json", request_id[:8]), 2, "no open request")


def test_trust_and_revoke_json(tmp_path):
    project = write(tmp_path / ".gatekeep.yaml", "rules:\n  allow: ['make test']\n  deny: ['make deploy']\n")
    assert json_of(gatekeep("trust", "--json", str(tmp_path))) == {
        "path": str(project),
        "trusted": True,
        "allow": ["make test"],
    }
    assert json_of(gatekeep("trust", "--revoke", "--json", str(tmp_path))) == {
        "path": str(project),
        "trusted": False,
        "revoked": 1,
    }
    assert_error(gatekeep("trust", "--revoke", "--json", str(tmp_path)), 1, "was not trusted")
    write(project, "rules: [\n")
    assert_error(gatekeep("trust", "--json", str(tmp_path)), 2, "policy error")


def test_install_json(isolated_home):
    rc = isolated_home / ".bashrc"
    rc.write_text("# mine\n")
    assert json_of(gatekeep("install", "--shell", "bash", "--json")) == {
        "shell": "bash",
        "rc_file": str(rc),
        "action": "installed",
        "login_file": str(isolated_home / ".bash_profile"),  # none there: made, to load ~/.bashrc
        "login_action": "installed",
    }
    assert "# >>> gatekeep >>>" in rc.read_text()
    assert json_of(gatekeep("install", "--shell", "bash", "--remove", "--json"))["action"] == "removed"
    assert json_of(gatekeep("install", "--shell", "bash", "--remove", "--json"))["action"] == "absent"
    assert rc.read_text() == "# mine\n"
    assert not (isolated_home / ".bash_profile").exists()  # install made it: gone with its block


def test_an_rc_file_install_made_goes_with_its_block(isolated_home):
    rc = isolated_home / ".zshrc"
    assert json_of(gatekeep("install", "--shell", "zsh", "--json"))["action"] == "installed"
    assert rc.exists()
    assert json_of(gatekeep("install", "--shell", "zsh", "--remove", "--json"))["action"] == "removed"
    assert not rc.exists()


def test_install_into_an_rc_file_it_cannot_write_is_one_line(isolated_home):
    (isolated_home / ".bashrc").mkdir()  # a directory where the rc file should be
    assert_error(gatekeep("install", "--shell", "bash", "--json"), 2, "cannot read")


def test_install_keeps_an_rc_file_that_is_not_utf8(isolated_home):
    rc = isolated_home / ".zshrc"
    rc.write_bytes(b"export NAME='caf\xe9'\n")
    assert json_of(gatekeep("install", "--shell", "zsh", "--json"))["action"] == "installed"
    assert rc.read_bytes().startswith(b"export NAME='caf\xe9'\n\n# >>> gatekeep >>>")


SETTINGS = {"permissions": {"allow": ["Bash(npm run test:*)", "Read(~/x)"], "deny": ["Bash(git push:*)"]}}


def test_rules_import_dry_run_json(paths, tmp_path):
    source = write(tmp_path / "settings.json", json.dumps(SETTINGS))
    write(paths.user_policy, "rules:\n  ask: ['npm run test *']\n")
    before = Path(paths.user_policy).read_text()
    shown = json_of(gatekeep("rules", "import", "--dry-run", "--json", str(source)))
    assert (shown["source"], shown["policy"], shown["dry_run"]) == (str(source), paths.user_policy, True)
    results = [(e["verdict"], e["pattern"], e["result"], e["why"]) for e in shown["entries"]]
    assert results[0] == ("deny", "git push *", "added", None)
    assert ("allow", "npm run test *", "kept", "ask") in results
    assert any(e["result"] == "skipped" and e["entry"] == "Read(~/x)" and e["why"] for e in shown["entries"])
    assert shown["counts"] == {"added": 1, "present": 0, "kept": 1, "skipped": 1}
    assert Path(paths.user_policy).read_text() == before

    assert json_of(gatekeep("rules", "import", "--json", str(source)))["dry_run"] is False
    assert "git push *" in Path(paths.user_policy).read_text()
    assert_error(gatekeep("rules", "import", "--json", str(tmp_path / "none.json")), 2, "does not exist")


def test_rules_list_can_leave_out_the_built_in_rules(paths, tmp_path):
    write(paths.user_policy, "rules:\n  allow: ['make test']\n")
    write(tmp_path / ".gatekeep.yaml", "rules:\n  deny: ['make deploy']\n  allow: ['make lint']\n")
    everything = json_of(gatekeep("rules", "list", "--json", cwd=tmp_path))
    assert "built-in" in {r["layer"] for r in everything["rules"]}

    mine = json_of(gatekeep("rules", "list", "--no-builtin", "--json", cwd=tmp_path))
    assert [(r["layer"], r["verdict"], r["pattern"]) for r in mine["rules"]] == [
        ("user", "allow", "make test"),
        ("project", "deny", "make deploy"),
        ("project", "allow", "make lint"),  # untrusted: shown, marked
    ]
    assert mine["default"] == everything["default"]
    text = gatekeep("rules", "list", "--no-builtin", cwd=tmp_path).stdout.splitlines()
    assert len(text) == 2 + 3 and not any("built-in:" in line for line in text)

    user = json_of(gatekeep("rules", "list", "--layer", "user", "--json", cwd=tmp_path))
    assert [r["pattern"] for r in user["rules"]] == ["make test"]
    wrong = gatekeep("rules", "list", "--layer", "mine", cwd=tmp_path)
    assert wrong.returncode == 2 and "'mine' is not one of 'built-in', 'system', 'managed', 'user', 'project'" in wrong.stderr

