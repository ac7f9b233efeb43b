"""`gatekeep scan` and the history formats it reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatekeep.commands.scan import best_suggestions
from gatekeep.history import command_lines, null_separated
from gatekeep.main import main
from tests.conftest import write


@pytest.mark.parametrize(
    "text,commands",
    [
        ("git status\nls -la\n", ["git status", "ls -la"]),
        ("#1700000000\ngit status\n#1700000005\nls\n", ["git status", "ls"]),
        (": 1700000000:0;git status\n: 1700000001:12;make test\n", ["git status", "make test"]),
        (
            ": 1700000000:0;for i in 1 2; do\\\necho $i\\\ndone\n: 1700000002:0;ls\n",
            ["for i in 1 2; do\necho $i\ndone", "ls"],
        ),
        (": 1700000000:0;echo a\\\\\n", ["echo a\\\\"]),  # an escaped backslash does not continue
        ("\n  \nls\n", ["ls"]),
        ("#not-a-timestamp\n", ["#not-a-timestamp"]),
        (": 1700000000:0;unterminated\\", ["unterminated"]),
    ],
)
def test_history_formats(text, commands):
    assert list(command_lines(text.splitlines(keepends=True))) == commands


def test_null_separated_records_are_taken_whole():
    assert list(null_separated("echo a\nb\0ls\0\0")) == ["echo a\nb", "ls"]


def test_best_suggestions_cover_the_most_asks():
    asked = [("npm test *",)] * 5 + [("make *",)] * 3 + [("a *", "b *")] + [()]
    rules, covered = best_suggestions(asked, count=2)
    assert rules == ["npm test *", "make *"] and covered == 8


HISTORY = """\
#1700000000
git status
npm run build --watch
npm run build
rm -rf ~
cargo build --release
npm run build -- --prod
"""


def test_scan_summary(capsys, tmp_path, paths):
    path = write(tmp_path / "bash_history", HISTORY)
    assert main(["scan", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "6 lines: 1 allowed, 4 would ask, 1 denied"
    assert "denied:\n  rm -rf ~" in out
    assert "these 2 rules would remove 100% of the asks (4 of 4):" in out
    assert "  gatekeep rules add 'npm run build *'\n  gatekeep rules add 'cargo build *'" in out
    assert not Path(paths.audit_log).exists()


def test_scan_json_is_one_check_object_per_line_in_order(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("git status\0rm -rf ~\0git status\0"))
    assert main(["scan", "--json", "--null", "-"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["command"], r["decision"], r["outcome"]) for r in records] == [
        ("git status", "allow", "allow"),
        ("rm -rf ~", "deny", "deny"),
        ("git status", "allow", "allow"),
    ]
    assert len({r["id"] for r in records}) == 3
    assert set(records[0]) >= {"id", "command", "decision", "outcome", "reason", "rule", "commands", "suggestions"}


def test_scan_uses_the_given_policy(capsys, tmp_path):
    policy = write(tmp_path / "p.yaml", "rules:\n  allow: ['npm run build *']\n")
    history = write(tmp_path / "h", "npm run build\n")
    assert main(["scan", "--policy", str(policy), str(history)]) == 0
    assert capsys.readouterr().out.startswith("1 lines: 1 allowed")
