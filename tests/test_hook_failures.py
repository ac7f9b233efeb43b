"""When the hook cannot do its work, in real interactive bash and zsh driven through a pseudo-terminal
(issue 17): the shell says so in one line and fails closed, with a way out a person can take, and
the user's history settings are honoured without letting a line past the gate.

Each test starts a shell whose rc file loads the hook (tests/shells.py), with an isolated HOME
and GATEKEEP_HOME, and checks what reached the disk: marker files, the history file, the audit log.
Questions are answered only through Shell.ask and Shell.type.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
import pytest

from gatekeep.commands import install
from gatekeep.core.paths import get_paths
from gatekeep.judge.gate import evaluate
from gatekeep.record import audit
from gatekeep.shells import hook
from tests.conftest import policy_from, write
from tests.shells import PROMPT, Shell, hook_text

SHELLS = ["bash", "zsh"]
POLICY = """\
default: ask
timeout: 8
rules:
  allow: ["touch allowed-*", "echo *", "false", "true", "history *", "cat *"]
  deny: ["touch denied-*"]
"""
SECRET = "my-secret-token"

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def gated(tmp_path):
    write(get_paths().user_policy, POLICY)
    shells: list[Shell] = []

    def start(shell: str, hook: str | None = None, **kw) -> Shell:
        sh = Shell(shell, tmp_path / f"home-{shell}-{len(shells)}", hook or hook_text(shell), **kw)
        shells.append(sh)
        return sh

    yield start
    for sh in shells:
        sh.close()


def records():
    return audit.read_last(get_paths().audit_log, 1000)


def commands():
    return [r["command"] for r in records()]


def exit_shell(sh: Shell, line: str | None = "exit") -> None:
    """Leave the shell (a line, or Ctrl-D for None) and wait until it is gone, history written."""
    if line is None:
        sh.child.sendeof()
    else:
        sh.child.sendline(line)
    sh.child.expect(pexpect.EOF)
    sh.child.close()


def history_file(sh: Shell) -> str:
    path = sh.home / "history"
    return path.read_text() if path.exists() else ""


# --- 1. A new shell whose hook cannot start gatekeep -------------------------------------------------


def rc_block(shell: str, python: str) -> str:
    """The block `gatekeep install` writes, as if installed by an interpreter at `python`."""
    block = install.block(shell)
    assert sys.executable in block
    return block.replace(sys.executable, python)


@pytest.mark.parametrize("shell", SHELLS)
def test_a_shell_whose_gatekeep_is_gone_starts_blocking_every_line_and_says_why(gated, shell, tmp_path):
    sh = gated(shell, rc_block(shell, str(tmp_path / "deleted-venv" / "bin" / "python")))
    startup = sh.child.before
    way_out = "bash --norc" if shell == "bash" else "zsh -f"
    assert "the hook could not be loaded" in startup and "blocks every line" in startup
    assert way_out in startup and f"gatekeep install --shell {shell}" in startup
    for line in ["touch allowed-1", "echo hi > allowed-2; touch allowed-3", f"{way_out} -c 'touch allowed-4'"]:
        out = sh.run(line)
        assert "blocked: this shell could not load the gatekeep hook" in out
    assert not any(sh.exists(f"allowed-{n}") for n in range(1, 5))
    exit_shell(sh, None)  # Ctrl-D still leaves


UNDO = {
    "bash": ["PS0=", "trap '' INT; touch allowed-1", "unset PS0; touch allowed-1", "f() { :; }; touch allowed-1"],
    "zsh": ["TRAPDEBUG() { : }", "unfunction TRAPDEBUG", "functions[TRAPDEBUG]=':'", "setopt no_debug_before_cmd"],
}


@pytest.mark.parametrize("shell", SHELLS)
def test_no_typed_line_can_switch_the_fallback_off(gated, shell, tmp_path):
    sh = gated(shell, rc_block(shell, str(tmp_path / "gone" / "python")))
    for line in UNDO[shell]:
        assert "could not load the gatekeep hook" in sh.run(line)
        sh.run("touch allowed-1")
        assert not sh.exists("allowed-1")


def test_bash_fallback_unbinds_the_keys_that_run_text_without_ps0(gated, tmp_path):
    report = "bind -q edit-and-execute-command > \"$HOME/bound\" 2>&1; bind -q shell-expand-line >> \"$HOME/bound\""
    sh = gated("bash", rc_block("bash", str(tmp_path / "gone" / "python")), extra_rc=report)
    assert (sh.home / "bound").read_text().count("is not bound") == 2
    sh.child.send("echo $(touch allowed-1)")
    sh.child.send("\x1b\x05")  # M-C-e would run the $( ) as the line is typed
    sh.child.sendline("")
    sh.child.expect_exact(PROMPT)
    assert not sh.exists("allowed-1")


@pytest.mark.parametrize("keys", ["\t", "\x18*", "\x18g"])
def test_zsh_fallback_expansion_keys_refuse(gated, tmp_path, keys):
    sh = gated("zsh", rc_block("zsh", str(tmp_path / "gone" / "python")))
    sh.child.send("echo $(touch allowed-1)")
    sh.child.send(keys)
    sh.child.sendline("")
    sh.child.expect_exact(PROMPT)
    assert not sh.exists("allowed-1")


@pytest.mark.parametrize("shell", SHELLS)
def test_the_installed_block_loads_the_real_hook_when_gatekeep_is_there(gated, shell):
    sh = gated(shell, install.block(shell))
    assert "could not be loaded" not in sh.child.before
    sh.run("touch allowed-1; touch denied-1")
    assert not sh.exists("allowed-1")
    sh.run("touch allowed-2")
    assert sh.exists("allowed-2") and records()[-1]["command"] == "touch allowed-2"


@pytest.mark.parametrize("shell", SHELLS)
def test_a_hook_whose_gatekeep_moved_blocks_each_line_with_the_reason(gated, shell, monkeypatch):
    """The interpreter is there, the directories gatekeep was imported from are not."""
    monkeypatch.setattr(hook, "import_dirs", lambda: ["/nonexistent/site-packages"])
    sh = gated(shell, hook.hook_script(shell))
    out = sh.run("touch allowed-1")
    assert "cannot import gatekeep" in out and "blocked" in out and "Traceback" not in out
    assert not sh.exists("allowed-1")


# --- 2. The user's history settings ------------------------------------------------------------------


def test_bash_honours_ignorespace_ignoredups_and_histignore_and_still_gates(gated):
    sh = gated("bash", before_hook="HISTCONTROL=ignoreboth; HISTIGNORE='echo skip*'")
    sh.run(f" echo {SECRET}")
    sh.run("echo kept")
    sh.run("echo kept")
    sh.run("echo skip-me")
    sh.run(" touch denied-1")  # still gated with a leading space
    assert not sh.exists("denied-1")
    sh.run("touch allowed-1")
    exit_shell(sh)
    saved = history_file(sh)
    assert SECRET not in saved and "skip-me" not in saved and "denied-1" not in saved
    assert saved.splitlines()[:2] == ["echo kept", "touch allowed-1"]
    assert {f" echo {SECRET}", "echo kept", "echo skip-me", " touch denied-1"} <= set(commands())


def test_bash_drops_the_line_before_a_prompt_command_appends_history(gated):
    sh = gated("bash", before_hook="HISTCONTROL=ignorespace\nPROMPT_COMMAND='history -a'")
    sh.run(f" echo {SECRET}")
    sh.run("echo after")
    assert SECRET not in history_file(sh) and "echo after" in history_file(sh)  # while the shell is open
    sh.run(f" echo {SECRET}-2; echo same-line")
    exit_shell(sh)
    assert SECRET not in history_file(sh)
    assert f" echo {SECRET}-2; echo same-line" in commands()


@pytest.mark.parametrize("how", ["exit", "eof", "same line"])
def test_bash_drops_the_line_whatever_ends_the_shell(gated, how):
    sh = gated("bash", before_hook="HISTCONTROL=ignoreboth")
    sh.run("echo first")
    if how == "same line":
        exit_shell(sh, f" echo {SECRET}; exit")
    else:
        sh.run(f" echo {SECRET}")
        exit_shell(sh, "exit" if how == "exit" else None)
    assert SECRET not in history_file(sh) and "echo first" in history_file(sh)
    assert any(SECRET in c for c in commands())


def test_bash_erasedups_keeps_the_newest_copy_only(gated):
    sh = gated("bash", before_hook="HISTCONTROL=erasedups")
    for line in ["echo a", "echo b", "echo a", "echo c", "echo b"]:
        sh.run(line)
    listed = sh.run("history").splitlines()
    entries = [e.split(None, 1)[1] for e in listed if e.strip()[:1].isdigit()]
    assert entries == ["echo a", "echo c", "echo b", "history"]
    sh.run("touch allowed-1")  # and the gate still reads the right line
    assert sh.exists("allowed-1") and commands()[-1] == "touch allowed-1"


def test_bash_takes_history_settings_changed_later(gated):
    sh = gated("bash")
    sh.ask("HISTCONTROL=ignorespace", "o")  # a line that changes them asks first
    sh.run(f" echo {SECRET}")
    sh.run("echo after")
    exit_shell(sh)
    assert SECRET not in history_file(sh) and "echo after" in history_file(sh)


def test_zsh_history_settings_are_its_own(gated):
    sh = gated("zsh", before_hook="SAVEHIST=100\nsetopt HIST_IGNORE_SPACE HIST_IGNORE_DUPS")
    sh.run(f" echo {SECRET}")
    sh.run("echo kept")
    sh.run("echo kept")
    sh.run(" touch denied-1")
    assert not sh.exists("denied-1")
    exit_shell(sh)
    saved = history_file(sh)
    assert SECRET not in saved and "denied-1" not in saved and saved.count("echo kept") == 1
    assert {f" echo {SECRET}", "echo kept", " touch denied-1"} <= set(commands())


# --- 3. Messages that mislead or strand the user --------------------------------------------------


def test_bash_names_a_prompt_command_replaced_after_the_hook(gated):
    sh = gated("bash", extra_rc="PROMPT_COMMAND='echo hi'")
    out = sh.run("touch allowed-1")
    assert "did not reach the shell's history" not in out
    assert "prompt hook did not run before this line" in out and "PROMPT_COMMAND" in out
    assert sh.exists("allowed-1")  # nothing could keep it out of history: the gate read this very line
    out = sh.run("touch allowed-2; touch denied-1")
    assert not sh.exists("allowed-2")


@pytest.mark.parametrize("where", ["a later line of the rc file", "a line typed and approved"])
def test_bash_blocks_when_without_its_prompt_hook_it_cannot_be_sure(gated, where):
    change = "PROMPT_COMMAND='echo hi'; HISTCONTROL=ignorespace"
    sh = gated("bash", extra_rc=change if where.startswith("a later") else "")
    if where.startswith("a line"):
        sh.ask(change, "o")
    for line in ["touch allowed-1", " touch allowed-2"]:
        out = sh.run(line)
        assert "prompt hook did not run before this line" in out and "HISTCONTROL" in out
        assert "blocked" in out and "last in ~/.bashrc" in out
    assert not sh.exists("allowed-1") and not sh.exists("allowed-2")


@pytest.mark.parametrize("shell", SHELLS)
def test_a_line_too_long_for_an_argument_says_so(gated, shell):
    sh = gated(shell)
    line = "touch allowed-1 " + "x" * 140_000
    sh.child.send(f"\x1b[200~{line}\x1b[201~")  # pasted: typed key by key, zsh would redraw 140,000 times
    sh.child.sendline("")
    sh.child.expect_exact(PROMPT, timeout=120)
    out = sh.child.before
    assert "more than one argument to a program may hold" in out and "cannot run" not in out
    assert not sh.exists("allowed-1")


@pytest.mark.parametrize("shell", SHELLS)
def test_fc_and_r_are_denied_at_once(gated, shell):
    sh = gated(shell)
    sh.run("echo hello")
    for line in ["fc -s", "fc -l -s"] + (["r", "builtin r"] if shell == "zsh" else ["builtin fc -s"]):
        out = sh.run(line)  # no question: run() fails on one
        assert "denied by rule 'fc *'" in out or "denied by rule 'r *'" in out
        assert out.count("hello") == 0
    assert records()[-1]["outcome"] == "deny"


RERUN = "rerun() { fc -l -s; }\nlisting() { fc -rl -3; }\n"


@pytest.mark.parametrize("shell", SHELLS)
def test_the_hooks_fc_refuses_a_rerun_hidden_behind_a_listing_option(gated, shell):
    sh = gated(shell, extra_rc=RERUN)
    sh.run("echo marker >> marker.txt")
    out, _ = sh.type("rerun", answer="o")
    assert "fc re-runs history without the gate" in out
    assert (sh.work / "marker.txt").read_text() == "marker\n"
    out, _ = sh.type("listing", answer="o")
    assert "echo marker >> marker.txt" in out


def test_fc_and_r_are_firm_denies_whatever_the_policy():
    everything = policy_from("default: allow\nmode: audit\nrules:\n  allow: ['*']\n")
    for line in ["fc -s", "fc", "fc -e vi 12", "builtin fc -s", "r", "r git", "command r", "fc -l -s"]:
        verdict = evaluate(line, everything)
        assert (verdict.decision, verdict.firm) == ("deny", True), line
    assert evaluate("history 20", policy_from("")).decision == "allow"


@pytest.mark.parametrize("shell", SHELLS)
def test_a_broken_policy_names_the_file_the_fault_and_the_way_out(gated, shell):
    sh = gated(shell)
    policy = Path(get_paths().user_policy)
    policy.write_text('rules:\n  allow: [ "ls *"\n')
    out = sh.run("touch allowed-1")
    assert str(policy) in out and "invalid YAML" in out and "line 3" in out
    assert ("bash --norc" if shell == "bash" else "zsh -f") in out and "gatekeep rules edit" in out
    assert not sh.exists("allowed-1")
    assert records()[-1]["outcome"] == "deny"


@pytest.mark.parametrize("shell", SHELLS)
def test_a_broken_policy_is_mended_from_the_gated_prompt_and_nothing_else_runs(tmp_path, shell):
    """The way out typed where the gate holds (no new shell): `gatekeep rules edit` saves only a
    policy that loads, and `gatekeep doctor` runs; any other line, even one naming them, is blocked."""
    policy = Path(get_paths().user_policy)
    write(policy, 'rules:\n  allow: [ "ls *"\n')
    fixed = 'rules:\n  allow: ["touch allowed-*"]\n'
    editor = tmp_path / "editor.sh"  # first saves another broken file, then a good one
    editor.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{tmp_path}/tried" ]; then printf \'{fixed}\' > "$1"; else touch "{tmp_path}/tried"; echo "rules: [" > "$1"; fi\n'
    )
    editor.chmod(0o755)
    import os

    on_path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"  # the installed `gatekeep`, as a user has it
    sh = Shell(shell, tmp_path / "home", hook_text(shell), env={"EDITOR": str(editor), "PATH": on_path})
    try:
        out = sh.run("gatekeep doctor; touch allowed-0")
        assert not sh.exists("allowed-0") and "blocked" in out
        sh.child.sendline("gatekeep rules edit")
        sh.child.expect_exact("edit it again")  # the first save does not load: asked, not saved
        sh.child.sendline("y")
        sh.child.expect_exact(f"saved {policy}")
        sh.child.expect_exact(PROMPT)
        assert policy.read_text() == fixed
        sh.run("touch allowed-1")
        assert sh.exists("allowed-1")  # the gate is back, with the mended policy
        assert any(r["outcome"] == "allow" and r["command"] == "gatekeep rules edit" for r in records())
    finally:
        sh.close()


def test_the_hook_command_stays_one_the_tests_can_find():
    """test_hooks.py swaps hook_command() for other commands in the printed hook."""
    assert hook.hook_command() in hook_text("bash") and hook.hook_command() in hook_text("zsh")
