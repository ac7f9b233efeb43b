"""`gatekeep scan` and the history formats it reads."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gatekeep.commands.scan import best_suggestions
from gatekeep.main import main
from gatekeep.record.history import command_lines, decode, null_separated, unmetafy
from tests.conftest import write
from tests.shells import need_shell


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
    assert out == (
        "6 lines: 1 allowed, 4 would ask, 1 denied\n"
        "denied: 1 line, 1 distinct, most frequent first:\n"
        "       1  rm -rf ~\n"
        # (npm passes --watch and --prod to the script: options gatekeep cannot know, so they ask)
        "`posture: guard` would have removed 2 of the 4 asks (what it lets through: docs/policy.md#postures)\n"
        "this rule would remove 75% of the asks (3 of 4):\n"  # cargo build * would remove only one
        "  gatekeep rules add 'npm run build *'  # removes 3\n"
    )
    assert not Path(paths.audit_log).exists()


def test_scan_says_what_a_looser_posture_would_remove(capsys, tmp_path, paths, monkeypatch):
    tree = tmp_path / "app"
    tree.mkdir()
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    monkeypatch.chdir(tree)
    write(paths.user_policy, "posture: strict\n")
    path = write(tmp_path / "history", "mkdir -p src\ntouch src/a.py\ngit add -A\npython3 x.py\nls\n")
    assert main(["scan", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "5 lines: 1 allowed, 4 would ask, 0 denied"
    assert "`posture: workspace` would have removed 3 of the 4 asks" in out[1]  # not python3 x.py
    assert "`posture: guard` would have removed 4 of the 4 asks" in out[2]


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


def test_unmetafy_and_decode():
    metafied = "echo ăĂ — ok".encode().replace(b"\xc4\x83", b"\xc4\x83\xa3").replace(b"\x80\x94", b"\x80\x83\xb4")
    assert unmetafy(metafied) == "echo ăĂ — ok".encode()
    assert decode(metafied) == "echo ăĂ — ok"
    assert decode("ăa".encode()) == "ăa"  # valid UTF-8 is never unmetafied, though it holds 0x83
    assert decode(b"caf\xe9") == "caf\ufffd"


# --- the real command: which input it reads, and what it says about it ---

GATEKEEP = [sys.executable, "-m", "gatekeep"]


def gatekeep_scan(*args: str, piped: str | None = None, **env: str) -> subprocess.CompletedProcess:
    """`gatekeep scan` as a person runs it: with `piped` on a pipe to its stdin, or else with nothing
    piped in (stdin is /dev/null, as for a command started from a terminal with no input)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("HISTFILE", "ZDOTDIR", "SHELL")} | env
    stdin = {"input": piped} if piped is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run(
        [*GATEKEEP, "scan", *args], **stdin, capture_output=True, text=True, env=environ, timeout=60
    )


def test_no_file_reads_the_bash_history(isolated_home):
    history = write(isolated_home / ".bash_history", "#1700000000\ngit status\nrm -rf ~\n")
    write(isolated_home / ".zsh_history", ": 1700000000:0;git status\n")
    result = gatekeep_scan(SHELL="/bin/bash")
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"gatekeep: scanning {history} (the bash history; give a FILE, or - for standard input)\n"
    assert result.stdout.startswith("2 lines: 1 allowed, 0 would ask, 1 denied\n")


def test_no_file_reads_the_zsh_history_zsh_wrote_itself(isolated_home, tmp_path):
    need_shell("zsh")
    zdotdir = tmp_path / "zdot"
    zdotdir.mkdir()
    history = zdotdir / ".zsh_history"
    script = (
        f"HISTSIZE=10 SAVEHIST=10 HISTFILE={shlex.quote(str(history))}; setopt extendedhistory; "
        "print -s 'echo ăĂ — ok'; print -s 'rm -rf ~'; print -s 'rm -rf ~'; fc -W"
    )
    subprocess.run(["zsh", "-f", "-i", "-c", script], stdin=subprocess.DEVNULL, check=True, timeout=60)
    assert b"\x83" in history.read_bytes()  # zsh metafied the non-ASCII text

    result = gatekeep_scan("--json", SHELL="/usr/bin/zsh", ZDOTDIR=str(zdotdir))
    assert result.returncode == 0, result.stderr
    assert f"scanning {history} (the zsh history;" in result.stderr
    assert [json.loads(line)["command"] for line in result.stdout.splitlines()] == [
        "echo ăĂ — ok",
        "rm -rf ~",
        "rm -rf ~",
    ]
    summary = gatekeep_scan(SHELL="/usr/bin/zsh", ZDOTDIR=str(zdotdir)).stdout
    assert "denied: 2 lines, 1 distinct, most frequent first:\n       2  rm -rf ~\n" in summary


def test_histfile_comes_first_and_a_missing_history_is_one_line(isolated_home, tmp_path):
    write(isolated_home / ".bash_history", "git status\n")
    mine = write(tmp_path / "mine", "rm -rf ~\n")
    result = gatekeep_scan(SHELL="/bin/bash", HISTFILE=str(mine))
    assert f"scanning {mine} ($HISTFILE;" in result.stderr and "1 denied" in result.stdout

    (isolated_home / ".bash_history").unlink()
    result = gatekeep_scan(SHELL="/bin/bash")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"gatekeep: no history file found (looked for {isolated_home}/.bash_history, {isolated_home}/.zsh_history, "
        f"{isolated_home}/.histfile); give a FILE, or - to read standard input\n"
    )
    result = gatekeep_scan(str(tmp_path / "nothing-here"))
    assert result.returncode == 2
    assert result.stderr == f"gatekeep: cannot read {tmp_path}/nothing-here (No such file or directory)\n"


def test_piped_input_is_read_without_a_file(isolated_home):
    write(isolated_home / ".bash_history", "git status\n")
    result = gatekeep_scan(piped="rm -rf ~\n", SHELL="/bin/bash")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "gatekeep: scanning standard input (give a FILE to scan that instead)\n"
    assert result.stdout.startswith("1 lines: 0 allowed, 0 would ask, 1 denied")
    # `-` is standard input, whatever it is: here /dev/null, so nothing
    result = gatekeep_scan("-")
    assert (result.returncode, result.stdout, result.stderr) == (0, "0 lines: 0 allowed, 0 would ask, 0 denied\n", "")


def test_denied_lines_are_counted_most_frequent_first_and_the_list_is_bounded(tmp_path):
    policy = write(tmp_path / "p.yaml", "rules:\n  deny: ['frob *']\n")
    lines = [f"frob {n}" for n in range(30)] + ["frob 7"] * 4 + ["frob 3"] * 2 + ["frob 29"] * 2
    history = write(tmp_path / "h", "\n".join(lines) + "\n")
    out = gatekeep_scan("--policy", str(policy), str(history)).stdout.splitlines()
    assert out[1] == "denied: 38 lines, 30 distinct, most frequent first:"
    assert out[2:6] == ["       5  frob 7", "       3  frob 3", "       3  frob 29", "       1  frob 0"]
    assert len(out) == 2 + 20 + 1 and out[-1] == "  and 10 more (--json lists every line)"


def test_only_useful_rules_are_suggested_up_to_top(tmp_path):
    history = write(
        tmp_path / "h",
        "frob a\nfrob a\nfrob a\nnpm run build\nnpm run build --watch\ncargo build\nmake x\nmake y\n",
    )
    out = gatekeep_scan(str(history)).stdout
    assert out.endswith(
        "these 2 rules would remove 62% of the asks (5 of 8):\n"
        "  gatekeep rules add 'frob a *'         # removes 3\n"
        "  gatekeep rules add 'npm run build *'  # removes 2\n"
    )
    out = gatekeep_scan("--top", "1", str(history)).stdout
    suggested = "this rule would remove 38% of the asks (3 of 8):\n  gatekeep rules add 'frob a *'  # removes 3\n"
    assert out.endswith(suggested)
    assert gatekeep_scan("--top", "0", str(history)).stdout == "8 lines: 0 allowed, 8 would ask, 0 denied\n"
    one_offs = write(tmp_path / "once", "cargo build\nmake x\n")
    assert gatekeep_scan(str(one_offs)).stdout.endswith("no rule suggested: none would remove 2 or more of the asks\n")
