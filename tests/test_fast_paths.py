"""The fast paths decide exactly as the full path does, on every line of the test corpora.

gatekeep check takes three shortcuts (issue 6): plain lines are split without
bashlex (parse.parse_plain_line), the compiled policy and tools' tables come
from a cache (cache.py), and `check`'s arguments are read without click
(tests/test_cli.py covers that one). A shortcut may never allow what the full
path would ask or deny, so each is compared with the full path here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.judge.gate import evaluate
from gatekeep.judge.policy import load_policy
from gatekeep.read import parse
from tests.conftest import write
from tests.security import test_corpus

ROOT = Path(__file__).resolve().parents[1]


def _corpus() -> list[tuple[str, str, str]]:
    """(policy name, line, cwd) for every line of tests/data/corpus.tsv and of the security corpus."""
    rows = (ROOT / "tests/data/corpus.tsv").read_text(encoding="utf-8").splitlines()[1:]
    cases = [("DEFAULT", row.split("\t")[0], test_corpus.CWD) for row in rows if row]
    for case in test_corpus.ATTEMPTS + test_corpus.BENIGN:
        cases.append((case.policy, case.line, case.cwd))
    return cases


_UNREADABLE = "the line could not be fully parsed: the parser"


def _outcome(verdict) -> tuple:
    # Which limit stops bashlex on a deeply nested line, its recursion or the time limit, depends
    # on how busy the machine is; either way the line is unreadable, and that is what must agree.
    reason = _UNREADABLE if verdict.reason.startswith(_UNREADABLE) else verdict.reason
    return (
        verdict.decision,
        reason,
        verdict.rule,
        verdict.suggestions,
        tuple((c.decision, c.rule, c.normalized.name) for c in verdict.commands),
    )


def test_the_plain_line_shortcut_decides_as_bashlex_does(monkeypatch):
    policies = {name: test_corpus._policy(name) for name in test_corpus.POLICIES}
    fast = []
    for name, line, cwd in _corpus():
        line, cwd = test_corpus._fill(line), test_corpus._fill(cwd)
        if parse.parse_plain_line(line) is None:
            continue
        fast.append((policies[name], line, cwd, _outcome(evaluate(line, policies[name], cwd))))
    assert len(fast) > 1_500
    monkeypatch.setattr(parse, "parse_plain_line", lambda line: None)
    for policy, line, cwd, outcome in fast:
        assert _outcome(evaluate(line, policy, cwd)) == outcome, line


@pytest.mark.parametrize("policy_name", sorted(test_corpus.POLICIES))
def test_a_cached_policy_decides_as_a_freshly_read_one(policy_name, paths):
    write(paths.user_policy, test_corpus.POLICIES[policy_name])
    fresh = load_policy(paths)  # compiles and fills the cache
    assert len(list(Path(paths.cache_dir).glob("policy-12-*.marshal"))) == 1
    cached = load_policy(paths)
    assert cached == fresh._replace(index=cached.index)
    assert cached.rules == fresh.rules
    for name, line, cwd in _corpus():
        if name == policy_name:
            line = test_corpus._fill(line)
            assert _outcome(evaluate(line, cached, cwd)) == _outcome(evaluate(line, fresh, cwd)), line


def test_an_edit_to_any_layer_takes_effect_at_once(paths, tmp_path, monkeypatch):
    write(paths.user_policy, "rules:\n  allow: ['git status *']\n")
    assert evaluate("git status", load_policy(paths)).decision == "allow"
    write(paths.user_policy, "rules:\n  deny: ['git status *']\n")  # same size, same second
    assert evaluate("git status", load_policy(paths)).decision == "deny"
    system = write(tmp_path / "system.yaml", "rules:\n  ask: ['git *']\n")
    monkeypatch.setenv("GATEKEEP_SYSTEM_POLICY", str(system))
    assert load_policy(get_paths()).layers[1].rules == (("ask", "git *", ()),)


def test_a_broken_or_foreign_cache_is_rebuilt(paths):
    write(paths.user_policy, "rules:\n  deny: ['rm *']\n")
    load_policy(paths)
    (cache,) = Path(paths.cache_dir).glob("policy-12-*.marshal")
    for garbage in (b"", b"\x00garbage", __import__("marshal").dumps(("someone else's key", ((), {}, {}, "x")))):
        cache.write_bytes(garbage)
        assert evaluate("rm x", load_policy(paths)).decision == "deny"


def test_two_policies_used_in_turn_keep_their_caches(paths, tmp_path, monkeypatch):
    """GATEKEEP_POLICY or --policy switching between two user policies compiles each once."""
    from gatekeep.judge import policy as policy_module

    other = write(tmp_path / "other.yaml", "rules:\n  deny: ['git status *']\n")
    write(paths.user_policy, "rules:\n  allow: ['git status *']\n")
    compiled = []
    compile_ = policy_module._compile
    monkeypatch.setattr(policy_module, "_compile", lambda sources: compiled.append(1) or compile_(sources))
    for _ in range(3):
        assert evaluate("git status", load_policy(paths)).decision == "allow"
        assert evaluate("git status", load_policy(paths, other)).decision == "deny"
    assert len(compiled) == 2
    assert len(list(Path(paths.cache_dir).glob("policy-12-*.marshal"))) == 2


def test_a_policy_cached_by_another_installation_serves_this_one(paths, tmp_path, monkeypatch):
    """The built-in policy's path is not part of the cache: the same text found elsewhere (another
    checkout, a pipx install) uses the cache, and messages name this installation's file."""
    from gatekeep.core import resources
    from gatekeep.judge import policy as policy_module

    write(paths.user_policy, "rules:\n  allow: ['git status *']\n")
    first = load_policy(paths)
    moved = write(tmp_path / "elsewhere" / "default_policy.yaml", Path(resources.DEFAULT_POLICY).read_text())
    monkeypatch.setattr(resources, "DEFAULT_POLICY", str(moved))
    monkeypatch.setattr(policy_module, "_compile", lambda sources: pytest.fail("compiled again"))
    again = load_policy(paths)
    assert again.sha256 == first.sha256
    assert again.layers[0].path == str(moved)
    verdict = evaluate("rm -rf /", again)
    assert verdict.decision == "deny" and str(moved) in verdict.reason


def test_an_unwritable_cache_only_costs_time(paths):
    write(paths.user_policy, "rules:\n  deny: ['rm *']\n")
    Path(paths.state_dir).mkdir(parents=True)
    write(paths.cache_dir, "not a directory")
    assert evaluate("rm x", load_policy(paths)).decision == "deny"


def test_a_broken_policy_is_never_cached(paths):
    from gatekeep.core.errors import PolicyError

    write(paths.user_policy, "rules: [oops\n")
    for _ in range(2):
        with pytest.raises(PolicyError):
            load_policy(paths)


def test_an_edit_to_gatekeeps_own_data_takes_effect_at_once(tmp_path, monkeypatch):
    """tools/ is cached by each file's size, mtime and inode (cache.cached_files): an
    edit, even one that keeps the size, or a file replaced, rebuilds; nothing else reads them."""
    import os
    import shutil

    from gatekeep.core import resources
    from gatekeep.name import knowledge

    data = tmp_path / "data"
    shutil.copytree(resources.data_dir("tools"), data / "tools")
    monkeypatch.setattr(resources, "data_dir", lambda name: str(data / name))
    monkeypatch.setattr(knowledge, "_table", None)
    monkeypatch.setattr(knowledge, "_knowledge", None)  # put back after the test: this one reads copies
    git = data / "tools" / "vcs.toml"
    assert git.exists()
    assert knowledge.load_table().name(["git", "stash", "list"]) == "git stash list"  # the cache filled
    reads = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        if str(path).endswith(".toml"):
            reads.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    knowledge._knowledge, knowledge._table = None, None
    knowledge.load_table().name(["git", "stash", "list"])
    assert reads == []  # served from the cache without reading the data
    text = git.read_text()
    assert '[git.stash]\narity = 3\n' in text
    st = os.stat(git)
    git.write_text(text.replace('[git.stash]\narity = 3\n', '[git.stash]\narity = 2\n'))  # same size
    os.utime(git, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    knowledge._knowledge, knowledge._table = None, None
    assert knowledge.load_table().name(["git", "stash", "list"]) == "git stash"
    replaced = git.with_name("new.tmp")
    replaced.write_text(text)
    os.replace(replaced, git)  # another inode
    os.utime(git, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # even with the same mtime as the last
    knowledge._knowledge, knowledge._table = None, None
    assert knowledge.load_table().name(["git", "stash", "list"]) == "git stash list"
    knowledge._knowledge = None
