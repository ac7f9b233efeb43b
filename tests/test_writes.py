"""Writes through arguments (writes.argument_writes): which files a command names to write, and their verdict."""

from __future__ import annotations

import pytest

from gatekeep.judge.gate import evaluate
from gatekeep.judge.writes import WriteContext, argument_writes, judge
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
    # found by an attacker's review: sed's other write commands, short GNU abbreviations, more writers
    (["sed", "-n", "W /x/.bashrc"], ["/x/.bashrc"]),
    (["sed", "-n", "$w /x/.bashrc"], ["/x/.bashrc"]),
    (["sed", "-n", "s/x/y/gw /x/.bashrc"], ["/x/.bashrc"]),
    (["sed", "--i", "1i x", "f"], ["f"]),
    (["sort", "--o=/x/.bashrc"], ["/x/.bashrc"]),
    (["cp", "--t=/x", "a"], ["/x"]),
    (["uniq", "in", "out"], ["out"]),
    (["uniq", "-c", "in"], []),
    (["tar", "-xf", "x.tar", "-C", "/x"], ["/x"]),
    (["tar", "xf", "x.tar"], ["."]),
    (["tar", "-czf", "x.tgz", "src"], []),
    (["git", "archive", "-o", "/x/.bashrc", "HEAD"], ["/x/.bashrc"]),
    (["git", "checkout-index", "-f", "--prefix=.git/hooks/", "pre-commit"], [".git/hooks/"]),
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


# Writes resolved as the kernel resolves them (issue 15): after a cd earlier on the line,
# through symlinks that already exist or that the line makes, and across brace lists.
# Real files in a throw-away home; the line runs in HOME/project.
RESOLVED = [
    ("echo x > {~/.bashrc,}", "deny"),
    ("echo x > {a,b}.txt", "allow"),
    ("echo x > ~/.bash{rc,_profile}", "deny"),
    ("echo x > {1..500}.txt", "ask"),  # too many paths to check
    ("cd ~ && echo x >> .bashrc", "deny"),
    ("cd ~/.ssh && echo KEY >> authorized_keys", "deny"),
    ("cd .. ; echo x >> .zshrc", "deny"),
    ("cd sub && echo x > out.txt", "allow"),
    ("cd /tmp && echo x > f", "ask"),  # outside the line's directory
    ("cd $DIR && echo x > f", "ask"),  # a directory known only at run time
    ("cd - && echo x > f", "ask"),
    ("(cd sub); echo x >> new.txt", "allow"),
    ("(cd ~); echo x >> new.txt", "ask"),  # a cd in a subshell: judged in both places, to be sure
    ("(cd ~); echo x >> .bashrc", "deny"),
    ("~ && echo x >> .bashrc", "deny"),  # AUTO_CD: a directory typed alone is entered
    ("echo x >> notes.txt", "deny"),  # notes.txt -> ~/.bashrc, made before the line
    ("echo x >> cache/request.answer", "deny"),  # cache -> gatekeep's state directory
    ("echo x >> settings.yaml", "deny"),  # settings.yaml -> the user policy
    ("echo x >> loop", "ask"),  # a link that never resolves
    ("echo x >> plain.txt", "allow"),
    ("ln -s ~/.ssh d; echo k >> d/authorized_keys", "deny"),
    ("mv notes.txt new.txt; echo x >> new.txt", "deny"),  # a moved link still points home
    ("cp -P notes.txt b.txt && echo x >> b.txt", "deny"),
    ("cp -P notes.txt b.txt && cp plain.txt b.txt", "deny"),  # the second cp writes through the first's link
    ("ln -s ~/.bashrc b.txt; cp plain.txt b.txt", "deny"),
    ("while true; do cp plain.txt b.txt; ln -sf ~/.bashrc b.txt; done", "deny"),  # a loop runs it first
    # a command that makes a link (or may) does not write through it itself
    ("cp ~/.bashrc backup.txt", "allow"),
    ("cp notes.txt b.txt", "allow"),
    ("cp -a notes.txt b.txt", "allow"),
    ("mv notes.txt new.txt", "allow"),
    ("cp plain.txt ~/.bashrc", "deny"),
    ("cp plain.txt notes.txt", "deny"),  # onto a link that exists: through it
    ("cp -P notes.txt d; cp plain.txt d", "deny"),  # d may be the first cp's link
    ("cp -P notes.txt d; cp -P notes.txt plain.txt d", "deny"),  # the same link, made by two commands
]


@pytest.fixture
def project(isolated_home, paths):
    from pathlib import Path

    home = Path(isolated_home)
    work = home / "project"
    (work / "sub").mkdir(parents=True)
    (home / ".bashrc").write_text("")
    (home / ".ssh").mkdir()
    (work / "notes.txt").symlink_to(home / ".bashrc")
    Path(paths.state_dir).mkdir(parents=True, exist_ok=True)
    (work / "cache").symlink_to(paths.state_dir)
    (work / "settings.yaml").symlink_to(paths.user_policy)
    (work / "loop").symlink_to(work / "loop")
    (work / "plain.txt").write_text("")
    return work


@pytest.mark.parametrize("line,decision", RESOLVED)
def test_writes_are_resolved_as_the_kernel_resolves_them(project, line, decision):
    policy = policy_from("default: allow\nrules:\n  allow: ['*']\n")
    assert evaluate(line, policy, str(project)).decision == decision
