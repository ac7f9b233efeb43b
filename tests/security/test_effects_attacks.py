"""Issue 34's attacks: judged by what a command does, in real bash and zsh carrying the hook, and
through every agent hook.

Each line read a secret, wrote a start-up file or `.git/config`, ran code, or threw work away
without a question, because the gate knew commands by name: an option or a spelling it had
never heard of counted as harmless. Now each must ask (the test answers "deny") or be denied,
and the disk says nothing happened: the secret's text is not printed, the protected file keeps
its content, the marker `p` is not made, the work is still there.

The policy is a broad one, as a user who trusts the tools writes it: everything allowed but
`touch` (so a marker made by `touch p` shows code that ran). Lines marked NONE are decided
with no configuration at all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gatekeep.agents.hosts import HOSTS
from gatekeep.core.paths import get_paths
from gatekeep.record import audit
from tests.conftest import write
from tests.shells import Shell, hook_text
from tests.test_agents import EVENTS, RUN, hook

pytestmark = pytest.mark.timeout(180)

SECRET = "SEKRIT-0451"
BROAD = 'default: allow\ntimeout: 30\nrules:\n  deny: ["touch *"]\n'
NONE = "default: ask\ntimeout: 30\n"
B, Z, BOTH = ("bash",), ("zsh",), ("bash", "zsh")

# (shells, policy, setup run in the work directory, line); every line is checked by `_unharmed`
READS = [
    (BOTH, NONE, "", "cat ~+/../.ssh/id_rsa"),
    (BOTH, NONE, "", "cat ~+/.env"),
    (BOTH, NONE, "", "cd ~/.ssh && cat ~-/.env"),
    (Z, NONE, "", "cat ~HOME/.ssh/id_rsa"),
    (Z, NONE, "", "cat ~PWD/.env"),
    (BOTH, NONE, "", "cat ${HOME%/}/.ssh/id_rsa"),
    (BOTH, NONE, "", "cat ${HOME:-x}/.aws/credentials"),
    (BOTH, NONE, "", "cat /${HOME#/}/.ssh/id_rsa"),
    (BOTH, NONE, "", "cat ${PWD%/*}/.ssh/id_rsa"),
    (BOTH, NONE, "", "cat $(pwd)/../.ssh/id_rsa"),
    (B, NONE, "", "cat .[[:alpha:]]nv"),
    (BOTH, NONE, "", "grep -r SEKRIT ."),
    (BOTH, NONE, "", "grep -R SEKRIT"),
    (BOTH, NONE, "mkdir -p config && cp .env config/.env", "diff -ruN nonexist config"),
    (BOTH, NONE, "", "git grep --no-index SEKRIT"),
    (BOTH, NONE, "", "git grep --untracked SEKRIT"),
    (BOTH, NONE, "git add -f .env && git commit -qm env", "git show HEAD:.env"),
    (BOTH, NONE, "git add -f .env", "git show :.env"),
    (BOTH, NONE, "git add -f .env", "git cat-file -p :.env"),
    (BOTH, NONE, "", "cd - && cat .ssh/id_rsa"),
    (BOTH, NONE, "", "cd ~- && cat .ssh/id_rsa"),
    (BOTH, NONE, "", "cd $OLDPWD && cat .ssh/id_rsa"),
    (BOTH, BROAD, "", "cat ~+/.env"),
]
WRITES = [
    (BOTH, NONE, "tar cf rc.tar f", "tar -tf rc.tar --index-file ~/.bashrc"),
    (BOTH, NONE, "tar cf rc.tar f", "tar -tf rc.tar --index ~/.bashrc"),
    (BOTH, BROAD, "", "git config -f .git/config core.fsmonitor 'touch p'; git status"),
    (BOTH, BROAD, "", "git config -f ~/.bashrc a.b x"),
    (BOTH, BROAD, "echo x > payload", "git merge-file ~/.bashrc ~/.bashrc payload"),
    (BOTH, BROAD, "", "git bundle create ~/.bashrc HEAD"),
    (BOTH, BROAD, "echo '{}' > in.json", "python3 -m json.tool in.json ~/.bashrc"),
    (BOTH, BROAD, "", "ln -sf /tmp/evil ~/.bashrc"),
    (BOTH, BROAD, "", "ln -s /bin/true .git/hooks/pre-commit"),
    (BOTH, BROAD, "echo x > evil", "rsync evil ~/.bashrc"),
    (BOTH, BROAD, "", "mkdir ~/.ssh/authorized_keys"),
    (BOTH, BROAD, "", "touch ~/.ssh/authorized_keys"),
    (BOTH, BROAD, "", "echo 'BEGIN{system(\"touch p\")}' > x.awk && mawk -W exec x.awk"),
    (BOTH, BROAD, "", "echo 'DEFINE pager touch p' > m.conf && man -C m.conf ls"),
    (BOTH, BROAD, "echo '{\"name\":\"x\",\"version\":\"1.0.0\"}' > package.json", "npm exec -- touch p"),
    (
        BOTH,
        BROAD,
        "echo '{\"name\":\"x\",\"version\":\"1.0.0\"}' > package.json",
        "npm pkg set scripts.test='touch p' && npm test",
    ),
]
LOSSES = [
    (BOTH, BROAD, "", "git read-tree -u --reset HEAD"),
    (BOTH, BROAD, "", "git checkout-index -a -f"),
    (BOTH, BROAD, "", "git rm -rf ."),
    (BOTH, BROAD, "git branch other", "git switch --force other"),
    (BOTH, BROAD, "", "find . -delete"),
    (BOTH, BROAD, "", "find . -exec rm -rf {} \\;"),
    (BOTH, BROAD, "", "rm -rf ../other"),
    (BOTH, BROAD, "", "cd .. && rm -rf other"),
]
ATTACKS = READS + WRITES + LOSSES


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}


def _git(work: Path, *argv: str) -> None:
    subprocess.run(["git", *argv], cwd=work, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def _set_up(setup: str, work: Path) -> None:
    if setup:
        subprocess.run(setup, shell=True, cwd=work, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def _world(home: Path) -> Path:
    """A home with secrets and start-up files, a repository with a commit, a .env, an
    uncommitted change and an untracked file, and a sibling directory of other work."""
    write(home / ".ssh" / "id_rsa", f"{SECRET}\n")
    write(home / ".aws" / "credentials", f"[default]\nkey={SECRET}\n")
    write(home / ".bashrc", "# the user's own\n")
    work = home / "work"
    work.mkdir(exist_ok=True)
    write(work / "f", "committed\n")
    _git(work, "init", "-q")
    _git(work, "add", "f")
    _git(work, "commit", "-qm", "one")
    write(work / "f", "committed\nand changed, not committed\n")
    write(work / "notes.txt", "untracked work\n")
    write(work / ".env", f"TOKEN={SECRET}\n")
    write(home / "other" / "keep.txt", "other work\n")
    return work


def _snapshot(home: Path) -> dict:
    """What must not change: the start-up file, ~/.ssh, the repository's config and hooks, the
    work (changed, untracked, committed history) and the other directory."""
    work = home / "work"
    seen = {}
    for path in [
        home / ".bashrc",
        home / ".ssh",
        work / ".git" / "config",
        work / ".git" / "hooks" / "pre-commit",
        work / "f",
        work / "notes.txt",
        work / ".git" / "HEAD",
        home / "other" / "keep.txt",
        work / "p",
    ]:
        if path.is_symlink():
            seen[path] = ("link", os.readlink(path))
        elif path.is_dir():
            seen[path] = ("dir", sorted(p.name for p in path.iterdir()))
        elif path.exists():
            seen[path] = ("file", path.read_bytes())
        else:
            seen[path] = None
    return seen


def _needs(line: str) -> None:
    for tool in ("rsync", "mawk", "man", "npm"):
        if f"{tool} " in line and shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")


@pytest.fixture
def gated(tmp_path):
    shells: list[Shell] = []

    def start(shell: str, policy: str) -> Shell:
        write(get_paths().user_policy, policy)
        home = tmp_path / f"home-{shell}"
        home.mkdir()
        _world(home)
        # git's pager would wait for a key if a read got through; man's is left alone, as the
        # `man -C` line's configuration names it
        env = {"USER": home.name, "LOGNAME": home.name, "GIT_PAGER": "cat"}
        sh = Shell(shell, home, hook_text(shell), env=env)
        shells.append(sh)
        return sh

    yield start
    for sh in shells:
        sh.close()


CASES = [
    pytest.param(shell, policy, setup, line, id=f"{shell}: {line}")
    for shells, policy, setup, line in ATTACKS
    for shell in shells
]


@pytest.mark.parametrize("shell,policy,setup,line", CASES)
def test_the_attack_asks_or_is_denied_and_changes_nothing(gated, shell, policy, setup, line):
    _needs(line)
    sh = gated(shell, policy)
    _set_up(setup, sh.work)
    before = _snapshot(sh.home)
    out, asked = sh.type(line, answer="d")
    records = audit.read_last(get_paths().audit_log, 1000)
    assert records and records[-1]["outcome"] == "deny", records[-1:]
    assert SECRET not in out.split(line, 1)[-1], out
    assert _snapshot(sh.home) == before


AGENT_CASES = [
    pytest.param(agent, policy, setup, line, id=f"{agent}: {line}")
    for _, policy, setup, line in ATTACKS
    for agent in sorted(HOSTS)
]


@pytest.mark.parametrize("agent,policy,setup,line", AGENT_CASES)
def test_no_agent_hook_lets_the_attack_run(tmp_path, isolated_home, agent, policy, setup, line):
    write(get_paths().user_policy, policy)
    work = _world(Path(isolated_home))
    _set_up(setup, work)
    result = hook(agent, EVENTS[agent](line, str(work)), cwd=work)
    assert result.host_does != RUN, result
    record = audit.read_last(get_paths().audit_log, 1)[-1]
    assert record["decision"] in ("ask", "deny") and json.dumps(record)
