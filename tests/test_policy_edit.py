"""Policy writes: locked, atomic, comment-preserving, and safe with many writers."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from gatekeep.core.errors import PolicyError
from gatekeep.core.paths import get_paths
from gatekeep.judge.policy import load_policy, read_layer
from gatekeep.record.policy_edit import add_rule, remove_rule
from tests.conftest import race, write

COMMENTED = """\
# my policy — hand written
default: ask   # keep asking

rules:
  # things I trust
  allow: ["git status *", "make test"]
  deny:
    - rm -rf *   # never
"""


def test_add_creates_a_new_private_policy(paths):
    assert add_rule(paths, paths.user_policy, "npm run build *", "allow") == "added"
    assert read_layer("user", paths.user_policy).rules == (("allow", "npm run build *", ()),)
    assert Path(paths.user_policy).stat().st_mode & 0o777 == 0o600


def test_add_keeps_comments_layout_and_order(paths):
    write(paths.user_policy, COMMENTED)
    add_rule(paths, paths.user_policy, "npm test:*", "allow")
    add_rule(paths, paths.user_policy, "git push *", "ask")
    text = Path(paths.user_policy).read_text()
    for kept in (
        "# my policy — hand written",
        "default: ask   # keep asking",
        "# things I trust",
        "rm -rf *   # never",
    ):
        assert kept in text
    assert 'allow: ["git status *", "make test", npm test *]' in text
    assert read_layer("user", paths.user_policy).rules == (
        ("allow", "git status *", ()),
        ("allow", "make test", ()),
        ("allow", "npm test *", ()),
        ("deny", "rm -rf *", ()),
        ("ask", "git push *", ()),
    )


def test_adding_twice_is_a_no_op_and_changing_verdict_moves_the_rule(paths):
    write(paths.user_policy, COMMENTED)
    assert add_rule(paths, paths.user_policy, "make   test", "allow") == "exists"
    assert add_rule(paths, paths.user_policy, "make test", "deny") == "moved from allow"
    rules = read_layer("user", paths.user_policy).rules
    assert ("deny", "make test", ()) in rules and ("allow", "make test", ()) not in rules


def test_remove(paths):
    write(paths.user_policy, COMMENTED)
    assert remove_rule(paths, paths.user_policy, "rm -rf *") == ["deny"]
    assert remove_rule(paths, paths.user_policy, "rm -rf *") == []
    assert "# things I trust" in Path(paths.user_policy).read_text()


def test_a_rule_with_exceptions_is_added_updated_and_removed_as_one(paths):
    write(paths.user_policy, COMMENTED)
    assert add_rule(paths, paths.user_policy, "rm -rf *", "deny", ("rm -rf /tmp/*",)) == "updated"
    assert add_rule(paths, paths.user_policy, "rm -rf *", "deny", ("rm  -rf /tmp/*",)) == "exists"
    assert add_rule(paths, paths.user_policy, "git push *", "ask", ("git push origin feature/*",)) == "added"
    rules = read_layer("user", paths.user_policy).rules
    assert ("deny", "rm -rf *", ("rm -rf /tmp/*",)) in rules
    assert ("ask", "git push *", ("git push origin feature/*",)) in rules
    assert "- {pattern: rm -rf *, except: [rm -rf /tmp/*]} # never" in Path(paths.user_policy).read_text()
    assert remove_rule(paths, paths.user_policy, "rm -rf *") == ["deny"]
    assert all(pattern != "rm -rf *" for _, pattern, _ in read_layer("user", paths.user_policy).rules)


def test_a_broken_file_is_never_rewritten(paths):
    broken = "rules:\n  allow: [unclosed\n"
    write(paths.user_policy, broken)
    with pytest.raises(PolicyError):
        add_rule(paths, paths.user_policy, "ls *", "allow")
    assert Path(paths.user_policy).read_text() == broken


def test_no_temporary_file_is_left_behind(paths):
    add_rule(paths, paths.user_policy, "ls *", "allow")
    assert sorted(p.name for p in Path(paths.user_policy).parent.iterdir()) == ["policy.yaml"]


def _add_many(worker: int, count: int) -> None:
    paths = get_paths()
    for i in range(count):
        add_rule(paths, paths.user_policy, f"tool{worker} sub{i} *", "allow")
        # each `gatekeep rules add` is a new process, which takes a while to start: without
        # that gap, a loop re-takes the lock before the others' polls see it free (filelock
        # polls), and one worker could wait out LOCK_SECONDS on a loaded machine
        time.sleep(random.uniform(0.005, 0.03))


def test_eight_processes_adding_fifty_rules_each_lose_nothing(paths):
    write(paths.user_policy, COMMENTED)
    race(_add_many, 8, 50)
    patterns = [p for v, p, _ in read_layer("user", paths.user_policy).rules if p.startswith("tool")]
    assert len(patterns) == 400 == len(set(patterns))
    assert "# things I trust" in Path(paths.user_policy).read_text()
    load_policy(paths)  # and the whole file still loads


def test_the_lock_is_per_file_and_lives_in_the_state_dir(paths, tmp_path):
    other = tmp_path / "elsewhere" / "team.yaml"
    add_rule(paths, other, "ls *", "allow")
    add_rule(paths, paths.user_policy, "ls *", "allow")
    assert len(os.listdir(paths.lock_dir)) == 2


def test_a_writer_killed_before_its_rename_leaves_no_temporary_for_ever(paths, tmp_path):
    """`rules add` killed with SIGKILL between writing its temporary and renaming it: the next edit
    removes that temporary once it is old enough to be nobody's, and keeps a live writer's."""
    import signal
    import subprocess
    import sys

    add_rule(paths, paths.user_policy, "make test", "allow")
    code = (
        "import os, sys, time\n"
        "from gatekeep.core import atomic\n"
        "real = os.replace\n"
        "def stall(a, b): print('written', flush=True); time.sleep(60)\n"
        "os.replace = stall\n"
        "atomic.write_atomic(sys.argv[1], 'rules: {}\\n')\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", code, paths.user_policy], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline() == "written\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    directory = Path(paths.user_policy).parent
    (left,) = [p for p in directory.iterdir() if p.name.endswith(".tmp")]
    live = directory / f".{Path(paths.user_policy).name}.{'0' * 12}.tmp"
    live.write_text("a writer at work")
    add_rule(paths, paths.user_policy, "make lint", "allow")
    assert left.exists() and live.exists()  # young: it may be a live writer's
    old = time.time() - 3600
    os.utime(left, (old, old))
    add_rule(paths, paths.user_policy, "make docs", "allow")
    assert not left.exists() and live.exists()
    assert "make docs" in Path(paths.user_policy).read_text()


def test_rules_edit_saves_only_a_policy_that_loads(paths, tmp_path, monkeypatch, capsys):
    from gatekeep.main import main

    add_rule(paths, paths.user_policy, "make test", "allow")
    before = Path(paths.user_policy).read_text()
    broken = tmp_path / "broken.sh"
    broken.write_text('#!/bin/sh\necho "rules: [" > "$1"\n')
    broken.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(broken))
    assert main(["rules", "edit"]) == 1  # no terminal to ask "edit again?": the policy stays
    assert Path(paths.user_policy).read_text() == before
    assert "invalid YAML" in capsys.readouterr().err
    good = tmp_path / "good.sh"
    good.write_text("#!/bin/sh\nprintf 'rules:\\n  allow: [\"make lint\"]\\n' > \"$1\"\n")
    good.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(good))
    assert main(["rules", "edit"]) == 0
    assert "make lint" in Path(paths.user_policy).read_text()
    assert not [p for p in Path(paths.state_dir).iterdir() if p.name.startswith("policy-edit-")]  # no copy left
