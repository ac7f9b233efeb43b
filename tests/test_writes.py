"""Writes through arguments (writes.argument_writes): which files a command names to write, and their verdict."""

from __future__ import annotations

import pytest

from gatekeep.gate import evaluate
from gatekeep.writes import WriteContext, argument_writes, judge
from tests.conftest import policy_from

WRITTEN = [
    (["tee", "-a", "log.txt", "copy.txt"], ["log.txt", "copy.txt"]),
    (["sed", "-i", "s/a/b/", "f1", "f2"], ["f1", "f2"]),
    (["sed", "-ni.bak", "p", "f"], ["f"]),
    (["sed", "-e", "s/a/b/", "-i", "f"], ["f"]),
    (["sed", "--in-place=.orig", "s/a/b/", "f"], ["f"]),
    (["sed", "-n", "p", "f"], []),
    (["sed", "s/a/b/w /etc/cron.d/job", "README.md"], ["/etc/cron.d/job"]),
    (["sed", "-n", "1w out.txt", "f"], ["out.txt"]),
    (["sed", "-e", "s/a/b/", "f"], []),
    (["sort", "-o", "out", "in"], ["out"]),
    (["sort", "-oout", "in"], ["out"]),
    (["sort", "--out", "o", "in"], ["o"]),  # GNU abbreviation of --output
    (["sort", "-n", "in"], []),
    (["dd", "if=a", "of=b"], ["b"]),
    (["cp", "-r", "a", "b", "dest/"], ["dest/"]),
    (["cp", "-t", "dir", "a", "b"], ["dir"]),
    (["mv", "a", ".git/hooks/pre-commit"], [".git/hooks/pre-commit"]),
    (["install", "-m", "755", "tool", "/usr/local/bin/tool"], ["/usr/local/bin/tool"]),
    (["cp", "a"], []),
    (["find", ".", "-name", "x", "-fprint", "list"], ["list"]),
    (["git", "log", "--output=x"], ["x"]),
    (["git", "diff", "--outp", "y"], ["y"]),
    (["git", "log", "--oneline"], []),
    (["curl", "-sSLo", "f", "https://x.example"], ["f"]),
    (["curl", "https://x.example"], []),
    (["wget", "-O", "page.html", "https://x.example"], ["page.html"]),
    (["truncate", "-s", "0", "f"], ["f"]),
    (["/usr/bin/tee", "x"], ["x"]),
    (["ls", "-la"], []),
]


@pytest.mark.parametrize("argv,written", WRITTEN)
def test_files_written_through_arguments(argv, written):
    assert argument_writes(tuple(argv)) == written


ALLOW_ALL = "default: allow\nrules:\n  allow: ['*']\n"
VERDICTS = [
    ("cp payload ~/.ssh/authorized_keys", "deny"),
    ("sudo tee /etc/hosts", "deny"),
    ("sed -i s/a/b/ ~/.zshrc", "deny"),
    ("curl -o /tmp/x https://x.example", "ask"),  # outside the current directory
    ('cp x "$DEST"', "ask"),  # computed at run time
    ("sed -i s/a/b/ notes.txt", "allow"),
    ("cp a b", "allow"),
    ("sort -o sorted.txt notes.txt", "allow"),
]


@pytest.mark.parametrize("line,decision", VERDICTS)
def test_argument_writes_are_judged_like_redirections(line, decision, tmp_path):
    assert evaluate(line, policy_from(ALLOW_ALL), str(tmp_path)).decision == decision


JUDGED = [
    ("~/.bash_aliases", "deny"),
    ("~root/.bashrc", "deny"),
    ("/dev/sda", "deny"),
    ("/dev/nvme0n1p2", "deny"),
    ("~/.gitconfig", "ask"),
    ("bin/git", "ask"),  # <cwd>/bin is on PATH here
    ("~nosuchuser-gk/x", "ask"),
    ("/dev/null", None),
    ("notes.txt", None),
]


@pytest.mark.parametrize("target,decision", JUDGED)
def test_where_a_write_lands_decides_it(target, decision, tmp_path):
    ctx = WriteContext(str(tmp_path), str(tmp_path), (), (str(tmp_path / "bin"),))
    verdict = judge(target, False, ctx)
    assert (verdict[0] if verdict else None) == decision
