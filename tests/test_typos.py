"""Typos (judge/typos.py): a command word nothing could run is not asked about, when the shell
has said what it runs by name; everything else about the line is judged as before."""

from __future__ import annotations

import os
import subprocess

import pytest

from gatekeep.judge.gate import evaluate
from gatekeep.judge.typos import NOT_A_COMMAND
from tests.conftest import policy_from


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """A PATH of one directory holding `git` and `touch`, and a directory `build` here."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name in ("git", "touch"):
        (directory / name).write_text("#!/bin/sh\n")
        (directory / name).chmod(0o755)
    (tmp_path / "build").mkdir()
    monkeypatch.setenv("PATH", str(directory))
    monkeypatch.chdir(tmp_path)
    return directory


# line, the names the shell runs, the decision (with the shell's names), whether a typo was let by
TYPOS = [
    ("gti status", "", "allow", True),
    ("gti status && git status", "", "allow", True),
    ("gti status", "ll gti", "ask", False),  # an alias, function or hashed command of that name
    ("gti status", "command_not_found_handle", "ask", False),  # bash runs it for unknown names
    ("gti status", "command_not_found_handler", "ask", False),  # and zsh
    ("x.py", "*.py", "ask", False),  # a zsh suffix alias runs it
    ("git status", "", "allow", False),
    ("touch a", "", "ask", False),  # on PATH: asked as ever
    ("echo hi", "", "allow", False),  # a builtin
    ("build", "", "ask", False),  # a directory here: autocd would enter it
    ("gti status; touch a", "", "ask", False),  # something else asks: all is asked
    ("gti status; rm -rf ~", "", "deny", False),
    ("gti() { touch x; }; gti", "", "ask", False),  # a function the line defines
    ("alias gti=touch; gti x", "", "ask", False),
    ("hash -p /bin/touch gti; gti x", "", "ask", False),
    ("$X status", "", "ask", False),  # computed at run time
    ("./gti status", "", "ask", False),  # a path: any program
    ("X=1 gti", "", "ask", False),
]


@pytest.mark.parametrize("line,names,decision,let_by", TYPOS)
def test_typos(bin_dir, line, names, decision, let_by):
    verdict = evaluate(line, policy_from("posture: strict\n"), os.getcwd(), shell_names=frozenset(names.split()))
    assert verdict.decision == decision, verdict.reason
    assert any(v.why == NOT_A_COMMAND for v in verdict.commands) is let_by


def test_without_the_shells_names_a_typo_is_asked_about(bin_dir):
    assert evaluate("gti status", policy_from(""), os.getcwd()).decision == "ask"


def test_a_relative_directory_on_path_lets_no_typo_by(bin_dir, monkeypatch):
    monkeypatch.setenv("PATH", f"{bin_dir}:.")
    assert evaluate("gti status", policy_from(""), os.getcwd(), shell_names=frozenset()).decision == "ask"


@pytest.mark.parametrize("line", ["source env.sh; gti", ". ./env.sh && gti x", "eval true; gti", "command -v x; gti"])
def test_a_line_that_may_change_what_names_mean_lets_no_typo_by(bin_dir, line):
    policy = policy_from("posture: guard\nrules:\n  allow: ['source *', '. *', 'eval *', 'command *']\n")
    verdict = evaluate(line, policy, os.getcwd(), shell_names=frozenset())
    assert not any(v.why == NOT_A_COMMAND for v in verdict.commands), verdict.reason


@pytest.mark.parametrize(
    "line",
    ["git checkout topic && gti", "touch x; gti", "git stash && gti"],  # allowed, but may make gti a command
)
def test_a_typo_beside_a_command_that_changes_anything_is_asked_about(bin_dir, line):
    subprocess.run(["git", "init", "-q"], check=True)
    verdict = evaluate(line, policy_from("posture: guard\nrules:\n  allow: ['git *']\n"), os.getcwd(), shell_names=frozenset())
    assert verdict.decision == "ask", verdict.reason
