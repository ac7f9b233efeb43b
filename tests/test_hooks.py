"""The shell hooks, in real interactive bash and zsh driven through a pseudo-terminal.

Each test starts a shell whose rc file loads `gatekeep hook SHELL`, with an
isolated GATEKEEP_HOME and HOME, and checks side effects on disk: a line that
runs creates its marker file; a blocked line creates none, in any of its parts.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from gatekeep.core.paths import get_paths
from gatekeep.judge.policy import read_layer
from gatekeep.record import audit
from gatekeep.shells.hook import hook_command
from tests.conftest import write
from tests.shells import PROMPT, QUESTION, Shell, hook_text, need_shell, press_answer

REPO = Path(__file__).resolve().parent.parent
SHELLS = ["bash", "zsh"]
POLICY = """\
default: ask
timeout: 8
rules:
  allow: ["touch allowed-*", "echo *", "false", "true"]
  deny: ["touch denied-*"]
"""

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def gated(tmp_path):
    write(get_paths().user_policy, POLICY)
    shells: list[Shell] = []

    def start(shell: str, **kw) -> Shell:
        sh = Shell(shell, tmp_path / f"home-{shell}-{len(shells)}", hook_text(shell), **kw)
        shells.append(sh)
        return sh

    yield start
    for sh in shells:
        sh.close()


def records():
    return audit.read_last(get_paths().audit_log, 1000)


@pytest.mark.parametrize("shell", SHELLS)
def test_allowed_lines_run(gated, shell):
    sh = gated(shell)
    sh.run("touch allowed-1 && touch allowed-2; echo done")
    assert sh.exists("allowed-1") and sh.exists("allowed-2")
    assert records()[-1]["outcome"] == "allow" and records()[-1]["shell"] == shell


DENIED_FORMS = [
    "touch denied-1 && touch allowed-a",
    "touch allowed-a; touch denied-1",
    "touch allowed-a || touch denied-1",
    "for f in a b; do touch allowed-$f; done; touch denied-1",
    "(touch allowed-a); touch denied-1",
    "{ touch allowed-a; }; touch denied-1",
    "echo x | touch denied-1; touch allowed-a",
    "touch allowed-a & touch denied-1",
    "echo $(touch allowed-a) && touch denied-1",
    "if true; then\ntouch allowed-a\ntouch denied-1\nfi",
]


@pytest.mark.parametrize("line", DENIED_FORMS)
@pytest.mark.parametrize("shell", SHELLS)
def test_a_denied_line_runs_nothing_at_all(gated, shell, line):
    sh = gated(shell)
    out = sh.run(line)
    assert "blocked" in out
    assert not sh.exists("allowed-a") and not sh.exists("denied-1")
    sh.run("touch allowed-after")  # the next line is vetted afresh, and runs
    assert sh.exists("allowed-after")


@pytest.mark.parametrize("shell", SHELLS)
def test_ask_once_runs_it_and_adds_no_rule(gated, shell):
    sh = gated(shell)
    sh.ask("touch ask-1", "o")
    assert sh.exists("ask-1")
    assert "command: touch ask-1" in sh.question and "[o] run once" in sh.question
    record = records()[-1]
    assert (record["decision"], record["outcome"], record["prompted"], record["answer"]) == (
        "ask",
        "allow",
        True,
        "once",
    )
    assert ("allow", "touch *", ()) not in read_layer("user", get_paths().user_policy).rules


@pytest.mark.parametrize("shell", SHELLS)
def test_ask_always_runs_it_and_saves_the_rule(gated, shell):
    sh = gated(shell)
    sh.ask("touch ask-1 ask-2", "ay")  # always, then yes: write the rule
    assert sh.exists("ask-1") and sh.exists("ask-2")
    assert ("allow", "touch *", ()) in read_layer("user", get_paths().user_policy).rules
    assert records()[-1]["answer"] == "always"
    sh.run("touch ask-3")  # no question any more
    assert sh.exists("ask-3")


@pytest.mark.parametrize(
    "keys,answer",
    [("d", "deny"), ("\x03", "interrupt"), ("\x04", "eof"), ("ny", "never"), ("ab", "timeout"), (None, "timeout")],
)
@pytest.mark.parametrize("shell", SHELLS)
def test_ask_not_approved_runs_nothing_and_is_audited(gated, shell, keys, answer):
    sh = gated(shell)
    sh.ask("touch ask-1; touch allowed-a", keys)
    assert not sh.exists("ask-1") and not sh.exists("allowed-a")
    record = records()[-1]
    assert (record["outcome"], record["answer"], record["timed_out"]) == ("deny", answer, answer == "timeout")
    if answer == "never":
        assert ("deny", "touch *", ()) in read_layer("user", get_paths().user_policy).rules


@pytest.mark.parametrize("shell", SHELLS)
def test_an_accidental_enter_or_y_does_not_approve(gated, shell):
    sh = gated(shell)
    sh.ask("touch ask-1", "\ry d")
    assert not sh.exists("ask-1")
    assert records()[-1]["answer"] == "deny"


@pytest.mark.parametrize("shell", SHELLS)
def test_the_question_shows_control_characters_visibly(gated, shell):
    sh = gated(shell)
    sh.ask("touch ask-$'\\e[2J'x\u202e", "d")
    assert "\x1b[2J" not in sh.question and "\u202e" not in sh.question
    assert "\\u{202e}" in sh.question


@pytest.mark.parametrize("shell", SHELLS)
def test_a_missing_gatekeep_blocks_and_ctrl_d_still_exits(gated, shell, tmp_path):
    hook = hook_text(shell).replace(sys.executable, str(tmp_path / "gone" / "python"))
    sh = Shell(shell, tmp_path / "home-missing", hook)
    out = sh.run("touch allowed-1")
    assert "cannot run" in out and "blocked" in out
    assert not sh.exists("allowed-1")
    sh.child.sendeof()
    sh.child.expect(pexpect.EOF)
    sh.child.close()
    assert sh.child.exitstatus == 0 or sh.child.signalstatus is None


@pytest.mark.parametrize(
    "command,message",
    [
        ("sh -c 'exit 3' --", "ended with status 3; blocked"),
        ("sh -c 'kill -9 $$' --", "ended with status 137; blocked"),
        ("sh -c 'exit 2' --", "could not decide"),
        ("/dev/null", "cannot run"),
    ],
)
@pytest.mark.parametrize("shell", SHELLS)
def test_a_crash_or_an_unknown_status_blocks(tmp_path, shell, command, message):
    write(get_paths().user_policy, POLICY)
    text = hook_text(shell)
    assert hook_command() in text  # else the replacement below would silently test the real hook
    sh = Shell(shell, tmp_path / "home", text.replace(hook_command(), command))
    try:
        out = sh.run("touch allowed-1")
        assert message in out and not sh.exists("allowed-1")
        sh.run("touch allowed-1")  # still blocked, and the shell still answers
        assert not sh.exists("allowed-1")
    finally:
        sh.close()


@pytest.mark.parametrize("shell", SHELLS)
def test_the_users_exit_status_is_kept(gated, shell):
    sh = gated(shell)
    sh.run("false")
    assert "status=1" in sh.run("echo status=$?")
    sh.run("true")
    assert "status=0" in sh.run("echo status=$?")


@pytest.mark.parametrize("shell", SHELLS)
def test_sourcing_twice_registers_once(gated, shell):
    sh = gated(shell, extra_rc='source "$HOME/hook.sh"')
    if shell == "bash":
        out = sh.run('echo "[$PROMPT_COMMAND]"')
        assert out.count("__gatekeep_prompt") == 1
    else:
        out = sh.ask('echo "[${preexec_functions[*]}]"', "o")  # it reaches the hook's table: asked first
        assert out.count("__gatekeep_preexec") == 1
    sh.run("touch allowed-1")
    assert len([r for r in records() if r["command"] == "touch allowed-1"]) == 1


@pytest.mark.parametrize("shell", SHELLS)
def test_non_interactive_shells_are_not_gated(tmp_path, shell):
    need_shell(shell)
    write(get_paths().user_policy, POLICY)
    hook = tmp_path / "hook.sh"
    hook.write_text(hook_text(shell))
    subprocess.run([shell, "-c", f"source {hook}; touch {tmp_path / 'denied-1'}"], check=True, timeout=30)
    assert (tmp_path / "denied-1").exists()
    assert records() == []


@pytest.mark.parametrize("shell", SHELLS)
def test_fc_and_r_cannot_rerun_history(gated, shell):
    sh = gated(shell)
    sh.run("echo hello")
    out = sh.run("fc -s" if shell == "bash" else "r")  # denied at once: the hook would refuse a yes
    assert "is denied by rule" in out and "hello" not in out


def test_bash_restores_history_settings_that_would_hide_a_line(gated):
    sh = gated("bash", extra_rc="HISTCONTROL=ignoreboth; HISTIGNORE='touch*'")
    sh.run(" touch denied-1; touch allowed-a")
    assert not sh.exists("denied-1") and not sh.exists("allowed-a")
    sh.run("touch allowed-b")
    sh.run("touch allowed-b")  # a repeated line is vetted again, not skipped
    assert [r["command"] for r in records()].count("touch allowed-b") == 2


def test_bash_blocks_a_line_that_did_not_reach_history(gated):
    sh = gated("bash")
    # a prompt command after the hook's sets HISTCONTROL again: the gate itself must notice
    # (without the prompt hook at all, see test_hook_failures.py)
    sh.ask("PROMPT_COMMAND+=$'\\nHISTCONTROL=ignorespace'", "o")
    out = sh.run(" touch allowed-1")
    assert "did not reach the shell's history" in out and "prompt hook did not run" not in out
    assert not sh.exists("allowed-1")
    out = sh.run("touch allowed-2")
    assert sh.exists("allowed-2") and "prompt hook did not run" not in out


def test_bash_user_int_trap_cannot_swallow_the_block(gated):
    sh = gated("bash", extra_rc="trap 'echo swallowed' INT")
    out = sh.run("touch allowed-a; touch denied-1")
    assert not sh.exists("allowed-a") and "swallowed" not in out


def test_bash_says_nothing_of_its_own_at_start_up_or_on_a_line_that_runs(gated):
    sh = gated("bash")
    assert "gatekeep" not in sh.child.before  # the first prompt, with the history still empty
    out = sh.run("touch allowed-1")
    assert sh.exists("allowed-1") and "gatekeep" not in out


def test_bash_a_line_that_carries_the_prompts_report_mark_reads_as_any_line(gated):
    # The prompt hook's report ends the history entry with a mark (__gatekeep_mark): a line that
    # holds the mark, and an entry number after it, must not change which number the hook keeps.
    sh = gated("bash")
    sh.run("echo 'a\n--gatekeep-report--\n    1  x\n--gatekeep-report--\ntrap -- - INT'")
    for name in ("allowed-1", "allowed-2"):
        out = sh.run(f"touch {name}")
        assert sh.exists(name) and "gatekeep" not in out
    assert records()[-1]["command"] == "touch allowed-2"


def test_bash_edit_and_execute_is_unbound(gated):
    sh = gated("bash", extra_rc=r'bind "\C-x\C-e": edit-and-execute-command')
    assert "is not bound" in sh.ask("bind -q edit-and-execute-command", "o")


def test_bash_coexists_with_debug_trap_and_prompt_command_users(gated):
    before = "trap 'echo dbg >> $HOME/debug.log' DEBUG\nPROMPT_COMMAND='echo pc >> $HOME/pc.log'"
    sh = gated("bash", before_hook=before, extra_rc="PROMPT_COMMAND+=$'\\necho pc2 >> $HOME/pc2.log'")
    sh.run("touch allowed-1")
    sh.run("touch denied-1; touch allowed-2")
    assert sh.exists("allowed-1") and not sh.exists("allowed-2") and not sh.exists("denied-1")
    assert (sh.home / "debug.log").exists() and (sh.home / "pc.log").exists() and (sh.home / "pc2.log").exists()


def test_zsh_comments_are_comments(gated):
    sh = gated("zsh")
    sh.run("touch allowed-1 # ; touch denied-1")
    assert sh.exists("allowed-1") and not sh.exists("#") and not sh.exists("denied-1")


@pytest.mark.parametrize("tamper", ["preexec_functions=()", "unfunction TRAPDEBUG", "TRAPDEBUG() { return 0 }"])
def test_zsh_reregisters_removed_or_replaced_hooks(gated, tamper):
    sh = gated("zsh")
    sh.ask(tamper, "o")
    sh.run("touch denied-1; touch allowed-a")
    assert not sh.exists("allowed-a") and not sh.exists("denied-1")


@pytest.mark.parametrize("position", ["before", "after"])
def test_bash_coexists_with_a_bash_preexec_style_framework(gated, position):
    """tests/data/preexec_standin.bash works as bash-preexec does (DEBUG trap, PROMPT_COMMAND rebuilt at
    the first prompt, preexec_functions fed from history), loaded before or after the hook."""
    framework = f"source {REPO / 'tests/data/preexec_standin.bash'}\n"
    framework += "preexec_functions+=(log_preexec); precmd_functions+=(log_precmd)\n"
    framework += 'log_preexec() { printf "%s\\n" "$1" >> "$HOME/preexec.log"; }\n'
    framework += 'log_precmd() { echo prompt >> "$HOME/precmd.log"; }\n'
    sh = gated("bash", **({"before_hook": framework} if position == "before" else {"extra_rc": framework}))
    sh.run("true")  # the framework installs itself at the first prompt
    assert "__standin_precmd" in sh.run('echo "$PROMPT_COMMAND"')
    sh.run("touch allowed-1 && echo ok")
    sh.run("touch allowed-2; touch denied-1")
    sh.run("for f in a b; do touch allowed-$f; done | touch denied-2")
    assert sh.exists("allowed-1")
    assert not any(sh.exists(n) for n in ("allowed-2", "denied-1", "allowed-a", "denied-2"))
    assert "touch allowed-1 && echo ok" in (sh.home / "preexec.log").read_text().splitlines()
    assert "touch denied-1" not in (sh.home / "preexec.log").read_text()
    assert (sh.home / "precmd.log").read_text().count("prompt") >= 4
    assert sh.run("false; echo status=$?").count("status=1") == 1


@pytest.mark.parametrize("shell", SHELLS)
def test_typing_the_next_command_at_the_question_answers_nothing(gated, shell):
    """The issue's case: at the question for `mkdir -p build`, the next command typed at a
    typist's pace wrote `mkdir *` into the policy with its `a`."""
    sh = gated(shell)
    before = Path(get_paths().user_policy).read_text()
    sh.child.sendline("mkdir -p build")
    sh.child.expect_exact(QUESTION)
    for key in "cat README.md\r":
        sh.child.send(key)
        time.sleep(0.08)
    sh.child.expect(r"not an answer: 'cat README.md\\[nr]'")
    sh.child.expect_exact(PROMPT, timeout=20)  # the question times out: 8 s
    assert not sh.exists("build")
    assert Path(get_paths().user_policy).read_text() == before
    assert (records()[-1]["command"], records()[-1]["answer"]) == ("mkdir -p build", "timeout")


@pytest.mark.parametrize("shell", SHELLS)
def test_a_pasted_line_after_one_that_asks_is_set_aside_with_a_word(gated, shell):
    sh = gated(shell)
    sh.child.send("touch allowed-1\ntouch ask-1\ntouch allowed-2\n")
    # \n or \r: as the shell left the terminal's input settings (zsh turns ICRNL off)
    sh.child.expect(r"set aside, not run: 'touch allowed-2\\[nr]' \(typed before this question")
    sh.child.expect_exact(QUESTION)
    press_answer(sh.child, "d")
    sh.child.expect_exact(PROMPT)
    assert sh.exists("allowed-1") and not sh.exists("ask-1") and not sh.exists("allowed-2")


@pytest.mark.parametrize("shell", SHELLS)
def test_the_audit_names_the_real_terminal(gated, shell):
    sh = gated(shell)
    terminal = re.search(r"/dev/pts/\d+", sh.run("tty")).group()
    sh.ask("touch ask-1", "d")
    assert records()[-1]["tty"] == terminal


@pytest.mark.parametrize("shell", SHELLS)
def test_the_path_advice_works_in_the_gated_shell_it_is_given_in(gated, shell):
    """`make user-install` says ~/.local/bin is not on PATH; the usual fix, a line appended to the
    rc file, is denied in a gated shell, and the denial names the command that does it: asked
    about (the built-in `gatekeep install *`), it puts the directory on PATH in the rc block."""
    sh = gated(shell)
    rc = sh.home / (".zshrc" if shell == "zsh" else ".bashrc")
    before = rc.read_text() if rc.exists() else None
    out = sh.run(f"echo 'export PATH=$HOME/mybin:$PATH' >> ~/{rc.name}")
    assert f"gatekeep install --shell {shell} --path DIR" in out.replace("\r\n", " ")
    assert (rc.read_text() if rc.exists() else None) == before
    command = Path(sys.executable).parent / "gatekeep"
    out = sh.ask(f"{command} install --shell {shell} --path ~/mybin", "o")
    assert f"{sh.home}/mybin is on PATH in new {shell} sessions" in out
    lines = [line for line in rc.read_text().splitlines() if line.endswith("# gatekeep install --path")]
    assert len(lines) == 1
    script = "PATH=/usr/bin:/bin\n" + lines[0] + "\n" + lines[0] + '\nprintf "%s\\n" "$PATH"\n'
    shown = subprocess.run([shell, "-c", script], capture_output=True, text=True, timeout=30).stdout
    assert shown.strip() == f"{sh.home}/mybin:/usr/bin:/bin"  # once, however often the file is read


# Typos (judge/typos.py): a command word that is nothing the shell could run is not asked about,
# and the shell says "not found"; one that is an alias, a function or a hashed command of the
# shell, or a line where anything else asks, is asked about as before.
@pytest.mark.parametrize("shell", SHELLS)
def test_a_typo_is_not_asked_about_and_the_shell_reports_it(gated, shell):
    sh = gated(shell)
    out = sh.run("gti status")
    assert "not found" in out and "gti" in out, out
    record = records()[-1]
    assert (record["decision"], record["outcome"], record["prompted"]) == ("allow", "allow", False)
    assert "no command here" in record["reason"]


@pytest.mark.parametrize(
    "define",
    [
        "alias gti='touch ran-gti'",
        "gti() { touch ran-gti; }",
        "hash -p /usr/bin/touch gti",
        "command_not_found_handle() { touch ran-gti; }; command_not_found_handler() { touch ran-gti; }",
    ],
)
@pytest.mark.parametrize("shell", SHELLS)
def test_a_name_the_shell_runs_is_asked_about(gated, shell, define):
    if shell == "zsh" and define.startswith("hash"):
        define = "hash gti=/usr/bin/touch"
    sh = gated(shell, extra_rc=define)
    sh.ask("gti ran-gti", "d")
    assert not sh.exists("ran-gti")
    assert records()[-1]["outcome"] == "deny"


@pytest.mark.parametrize("shell", SHELLS)
def test_a_typo_beside_a_question_is_asked_about_with_it(gated, shell):
    sh = gated(shell)
    sh.ask("gti status; touch ask-1", "d")
    assert not sh.exists("ask-1")
    assert "gti status" in sh.question


def test_zsh_correction_keeps_the_question(gated):
    """With CORRECT on, zsh offers `git` for `gti` before the hook runs; told no, the word is
    still asked about (the hook passes no names), never let through as a typo."""
    sh = gated("zsh", extra_rc="setopt correct")
    sh.child.sendline("gti status")
    if sh.child.expect_exact(["[nyae]?", QUESTION]) == 0:  # (no offer where no command is close)
        sh.child.send("n")
        sh.child.expect_exact(QUESTION)
    press_answer(sh.child, "d")
    sh.child.expect_exact(PROMPT)
    assert records()[-1]["outcome"] == "deny" and records()[-1]["prompted"]
