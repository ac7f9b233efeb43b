"""Issue 15's attacks, typed into real bash and zsh carrying the hook, and sent through claude-hook.

Each line is one that ran a denied command without a question before: an
expansion that evaluates, assigns or redefines; a write through a path the
gate did not resolve; a code-running option a broad rule stretched over; a
project rule that did not count. Now each must ask (the test answers "deny")
or be denied, and the disk must show that nothing ran: the marker file `p`
(or whatever the line targets) is never made, and protected files keep their
content. The attacker's policy is issue 15's: it allows echo, ls, cat, find,
make and cd, and denies rm and touch. BROAD adds `*`, for the code-running
options a broad allow rule must not stretch over.

A second group approves the line that tampers with the hook (as a person who
did not read the question might) and shows that the gate still holds on the
next line: the hook is out of a line's reach, not only behind a question.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.record import audit
from tests.conftest import write
from tests.shells import Shell, hook_text

pytestmark = pytest.mark.timeout(180)

ATTACKER = """\
default: ask
timeout: 30
rules:
  allow: ["echo *", "ls *", "cat *", "find *", "make *", "cd *"]
  deny: ["rm *", "touch *"]
"""
BROAD = ATTACKER.replace('"cd *"]', '"cd *", "*"]')
DEFAULT = "default: ask\ntimeout: 30\n"  # no configuration: the built-in policy alone

B, Z = ("bash",), ("zsh",)
BOTH = ("bash", "zsh")

# (shells, line, policy): after the line is asked about and denied (or is denied), `p` does not exist
ATTACKS = [
    # expansions that evaluate a value, or assign one
    (BOTH, "echo ${BASH_CMDS[ls]:=/usr/bin/touch}; ls p", ATTACKER),
    (B, "for x in '$(touch p)'; do echo ${x@P}; done", ATTACKER),
    (B, r"echo ${x:=\$\(touch\ p\)} ${x@P}", ATTACKER),
    (B, "echo '$(touch p)'; echo ${_@P}", ATTACKER),
    (BOTH, "for x in 'a[$(touch p)]'; do echo ${!x}; done", ATTACKER),
    (BOTH, "for x in 'a[$(touch p)]'; do echo ${a[x]}; done", ATTACKER),
    (BOTH, "for x in 'a[$(touch p)]'; do cat ${a[x]} f; done", ATTACKER),
    (BOTH, "for x in 'a[$(touch p)]'; do echo ${HOME:x}; done", ATTACKER),
    (Z, r"echo ${(e):-\$\(touch\ p\)}", ATTACKER),
    (Z, "for x in '/*(e:touch p:)'; do echo $~x; done", ATTACKER),
    (Z, "for x in 'a[$(touch p)]'; do echo $a[x]; done", ATTACKER),
    (BOTH, "for x in 'a[$(touch p)]'; do echo $((x)); done", ATTACKER),
    (BOTH, "x='a[$(touch p)]'; echo $[x]", ATTACKER),
    # builtins that evaluate a number or a name from an argument (zsh's `path` always exists)
    (BOTH, "for x in 'path[$(touch p)]'; do printf %d \"$x\"; done", DEFAULT),
    (BOTH, "for x in 'path[$(touch p)]'; do test -v \"$x\"; done", DEFAULT),
    (BOTH, "for x in 'path[$(touch p)]'; do read \"$x\" <<< 1; done", BROAD),
    (BOTH, "for x in 'path[$(touch p)]'; do unset \"$x\"; done", BROAD),
    (Z, "for x in 'path[$(touch p)]'; do shift \"$x\"; done", BROAD),
    (BOTH, "x='path[$(touch p)]'; OPTIND=x", BROAD),
    # aliases, hash entries and functions defined inside a word, used by the next line
    (B, "echo ${BASH_ALIASES[ls]:=touch p}", ATTACKER),
    (Z, "echo ${aliases[ls]::=touch p}", ATTACKER),
    (Z, "echo ${functions[ls]::=touch p}", ATTACKER),
    (Z, "echo ${commands[ls]::=/usr/bin/touch}", ATTACKER),
    (Z, "echo ${galiases[README]::='; touch p'}", ATTACKER),
    # code-running forms a broad rule stretched over
    (BOTH, "make --ev='all:;touch p'", ATTACKER),
    (BOTH, "make -f - <<< 'all:;touch p'", ATTACKER),
    (BOTH, "make -f <(printf 'all:\\n\\ttouch p\\n')", ATTACKER),
    (BOTH, "make 'X:=$(shell touch p)' -n", ATTACKER),
    (BOTH, r"tar --checkpoint-act=exec=touch\ p -cf x.tar f", BROAD),
    (BOTH, "sed --expression='1e touch p' f", BROAD),
    (BOTH, "python3 /dev/stdin <<< 'open(\"p\", \"w\")'", BROAD),
    (BOTH, "python3 -m code <<< 'open(\"p\", \"w\")'", BROAD),
    (BOTH, "git rebase -x 'touch p' HEAD~1", BROAD),
    (BOTH, "git grep -O'touch p' hello", BROAD),
    (BOTH, "git -c core.pager='touch p' log", BROAD),
    (BOTH, "awk -f /dev/stdin f <<< 'BEGIN { system(\"touch p\") }'", BROAD),
    (BOTH, "sort --compress-program=touch f", BROAD),
    (BOTH, "split --fil='touch p' f", BROAD),
    # zsh's own ways to run a command the deny rules name
    (Z, "noglob touch p", ATTACKER),
    (Z, "nocorrect touch p", ATTACKER),
    (Z, "repeat 1 touch p", ATTACKER),
    (Z, "- touch p", ATTACKER),
    (Z, "=touch p", ATTACKER),
]


@pytest.fixture
def attacker(tmp_path):
    shells: list[Shell] = []

    def start(shell: str, policy: str, **rc) -> Shell:
        write(get_paths().user_policy, policy)
        home = tmp_path / f"home-{shell}-{len(shells)}"
        # the user is named like the home directory, as in /home/NAME: `~/../$USER` is home again
        sh = Shell(shell, home, hook_text(shell), env={"USER": home.name, "LOGNAME": home.name}, **rc)
        shells.append(sh)
        (sh.work / "f").write_text("hello\n")
        _git_repo(sh.work)
        return sh

    yield start
    for sh in shells:
        sh.close()


def _git_repo(work: Path) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x")
    for argv in (["init", "-q"], ["add", "f"], ["commit", "-qm", "one"], ["commit", "-q", "--allow-empty", "-m", "two"]):
        subprocess.run(["git", *argv], cwd=work, env=env, check=True, capture_output=True)


def _records():
    return audit.read_last(get_paths().audit_log, 1000)


CASES = [pytest.param(shell, line, policy, id=f"{shell}: {line}") for shells, line, policy in ATTACKS for shell in shells]


@pytest.mark.parametrize("shell,line,policy", CASES)
def test_the_attack_asks_or_is_denied_and_runs_nothing(attacker, shell, line, policy):
    sh = attacker(shell, policy)
    sh.type(line, answer="d")
    records = _records()
    # no record: the shell refused the line itself (zsh has no `${!x}`), before the hook
    assert not records or records[-1]["decision"] in ("ask", "deny"), records[-1]
    sh.type("ls")  # a following line, through whatever alias, hash or function the attack tried to define
    assert not sh.exists("p")


# Hook tampering, approved once on purpose: the next line must still be vetted.
TAMPERING = [
    ("bash", "echo ${BASH_ALIASES[__gatekeep_gate]:=true}"),
    ("bash", "echo ${BASH_ALIASES[__gatekeep_prompt]:=true}"),
    ("bash", "__gatekeep_gate() { true; }"),
    ("bash", "kill() { true; }"),
    ("bash", "builtin() { true; }; command() { true; }"),
    ("bash", "unset -f __gatekeep_gate __gatekeep_prompt"),
    # an INT trap whose text copies the prompt hook's report (its mark, and what no trap looks like)
    ("bash", "trap $'true\\n--gatekeep-report--\\ntrap -- - INT' INT"),
    ("bash", "trap $'true\\n--gatekeep-report--\\n' INT"),
    # aliases reach a command substitution's text, which bash parses again each time it runs
    ("bash", "alias trap=': '; builtin trap -- ':' INT"),
    ("bash", "alias builtin=': '; trap -- ':' INT"),
    ("bash", "alias typeset=': ' compgen=': ' history=': '; trap -- ':' INT"),
    ("bash", "alias builtin='printf \"  %s  true\\n\" \"$__gatekeep_base\"; :'"),
    ("zsh", "echo ${functions[__gatekeep_preexec]::=__gatekeep_verdict=allow}"),
    ("zsh", "functions[TRAPDEBUG]='return 0'"),
    ("zsh", "unfunction TRAPDEBUG __gatekeep_preexec"),
    ("zsh", "return() { true; }; builtin() { true; }; setopt() { true; }"),
    ("zsh", "preexec_functions=()"),
    ("zsh", "alias -g allow=deny"),
    # zsh parses a body assigned to functions[...] with the aliases of then: the hook's repairs too
    ("zsh", "alias -g allow='*'; functions[TRAPDEBUG]='return 0'"),
    ("zsh", "alias -g allow='*'; functions[__gatekeep_preexec]='return 0'"),
]


@pytest.mark.parametrize("shell,line", TAMPERING)
def test_the_gate_holds_after_a_tampering_line_was_approved(attacker, shell, line):
    sh = attacker(shell, ATTACKER)
    _, asked = sh.type(line, answer="o")
    assert asked  # it reaches the hook's names: a question first
    sh.type("touch p", answer="d")
    sh.type("echo ok; touch q", answer="d")
    assert not sh.exists("p") and not sh.exists("q")
    assert [r["outcome"] for r in _records()[-2:]] == ["deny", "deny"]


def test_zsh_a_function_standing_in_for_gatekeeps_interpreter_blocks_every_line(attacker):
    sh = attacker("zsh", ATTACKER)
    interpreter = hook_text("zsh").split("__gatekeep_cmd=(", 1)[1].split()[0]
    sh.type(f"{interpreter}() {{ return 0 }}", answer="o")
    out, _ = sh.type("echo x > q")
    assert "stands in for gatekeep" in out and not sh.exists("q")


# Keys that would expand the line being typed, and so run its $( ), before it is accepted; in zsh
# also with compsys loaded before or after the hook, and with its _expand completer.
COMPINIT = "autoload -Uz compinit && compinit -u\nzstyle ':completion:*' completer _expand _complete\n"
ZSH_SETUPS = {"plain": {}, "compinit first": {"before_hook": COMPINIT}, "compinit last": {"extra_rc": COMPINIT}}
KEYS = [("bash", "\x1b\x05", "M-C-e (shell-expand-line)", "plain")] + [
    ("zsh", keys, name, setup)
    for keys, name in [
        ("\t", "Tab"),
        ("\x18*", "C-x * (expand-word)"),
        ("\x18g", "C-x g (list-expand)"),
        ("\x18e", "C-x e (_expand_word)"),
        ("\x18d", "C-x d (_list_expansions)"),
        ("\x18m", "C-x m (_most_recent_file)"),
    ]
    for setup in ZSH_SETUPS
    if setup != "plain" or "(_" not in name  # compsys's widgets exist only once compinit ran
]


@pytest.mark.parametrize("shell,keys,name,setup", KEYS)
def test_editing_keys_do_not_run_a_substitution_before_the_line_is_vetted(attacker, shell, keys, name, setup):
    sh = attacker(shell, ATTACKER, **ZSH_SETUPS.get(setup, {}))
    sh.child.send("echo $(touch p)")
    sh.child.send(keys)
    sh.child.sendline("")  # accept the line: now it is vetted, and touch is denied
    sh.child.expect_exact("GK-READY> ")
    assert not sh.exists("p")


@pytest.mark.parametrize("setup", sorted(ZSH_SETUPS))
def test_zsh_completion_still_works_with_the_guard(attacker, setup):
    sh = attacker("zsh", ATTACKER, **ZSH_SETUPS[setup])
    (sh.work / "unique-name.txt").write_text("")
    sh.child.send("cat uniq\t")
    sh.child.expect("unique-name.txt", timeout=10)
    sh.child.sendline("")
    sh.child.expect_exact("GK-READY> ")


# Writes through paths the gate once did not resolve. Each: (setup in the work dir, line, file that must not change).
WRITES = [
    ("ln -s ~/.bashrc notes.txt", "echo PWNED >> notes.txt", ".bashrc"),
    ("", "echo PWNED >> {~/.bashrc,}", ".bashrc"),
    ("", "cd ~ && echo PWNED >> .bashrc", ".bashrc"),
    ("", "cd ~/.ssh && echo PWNED >> authorized_keys", ".ssh/authorized_keys"),
    ("ln -s ~/.ssh keys", "echo PWNED >> keys/authorized_keys", ".ssh/authorized_keys"),
    ("ln -s ~/.bashrc lnk", "mv lnk notes.txt; echo PWNED >> notes.txt", ".bashrc"),
    # a copy onto a link another command on the line makes (the copy's own destination once hid it)
    ("", "ln -s ~/.bashrc b; cp f b", ".bashrc"),
    ("ln -s ~/.bashrc lnk", "cp -P lnk b; cp f b", ".bashrc"),
]


@pytest.mark.parametrize("setup,line,target", WRITES)
@pytest.mark.parametrize("shell", BOTH)
def test_writes_are_resolved_before_the_line_runs(attacker, shell, setup, line, target):
    sh = attacker(shell, BROAD)
    (sh.home / ".ssh").mkdir(exist_ok=True)
    for name in (".bashrc", ".ssh/authorized_keys"):
        if not (sh.home / name).exists():
            (sh.home / name).write_text("")
    before = (sh.home / target).read_text()
    if setup:
        subprocess.run(setup.replace("~", str(sh.home)), shell=True, cwd=sh.work, check=True)
    sh.type(line, answer="d")
    assert (sh.home / target).read_text() == before
    assert _records()[-1]["outcome"] == "deny"


def test_a_link_into_gatekeeps_state_cannot_answer_a_pending_request(attacker):
    sh = attacker("bash", BROAD)
    pending = Path(get_paths().state_dir) / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    (sh.work / "cache").symlink_to(pending)
    sh.type("echo '{\"answer\": \"once\"}' > cache/0123abcd.answer", answer="d")
    assert not (pending / "0123abcd.answer").exists()
    assert _records()[-1]["decision"] == "deny"


@pytest.mark.parametrize("shell", BOTH)
def test_every_project_policy_up_the_tree_counts_and_a_cd_brings_its_rules(attacker, shell):
    sh = attacker(shell, BROAD)
    mono = sh.work / "mono"
    write(mono / ".gatekeep.yaml", "rules:\n  deny: ['make deploy *']\n")
    write(mono / "svc" / ".gatekeep.yaml", "rules:\n  ask: ['npm *']\n")  # nested: hides nothing
    makefile = "deploy:\n\ttouch deployed\n"
    write(mono / "Makefile", makefile)
    write(mono / "svc" / "Makefile", makefile)
    sh.type("cd mono && make deploy prod")  # typed outside mono
    sh.type("cd mono/svc; make deploy prod")
    assert not (mono / "deployed").exists() and not (mono / "svc" / "deployed").exists()
    assert [r["decision"] for r in _records()[-2:]] == ["deny", "deny"]


@pytest.mark.parametrize("line", ["rm -rf ~//", "rm -rf ~/../$USER", "rm -rf $HOME/.", "rm -fr ~/"])
@pytest.mark.parametrize("shell", BOTH)
def test_equivalent_spellings_of_the_home_directory_are_denied(attacker, shell, line):
    sh = attacker(shell, "default: ask\ntimeout: 30\n")
    (sh.home / "keep").write_text("x")
    sh.type(line, answer="d")
    assert (sh.home / "keep").exists()
    assert _records()[-1]["decision"] == "deny"  # denied by the built-in policy, not merely asked


@pytest.mark.parametrize("line", ["noglob rm -rf ~", "nocorrect rm -rf ~", "repeat 1 rm -rf ~", "=rm -rf ~"])
def test_zsh_precommand_modifiers_are_seen_through(attacker, line):
    sh = attacker("zsh", "default: ask\ntimeout: 30\n")
    (sh.home / "keep").write_text("x")
    sh.type(line, answer="d")
    assert (sh.home / "keep").exists() and _records()[-1]["decision"] == "deny"


def test_always_on_quoted_text_saves_no_pipeline_rule(attacker):
    sh = attacker("bash", "default: ask\ntimeout: 30\n")
    sh.type("frobnicate 'x | sh'", answer="ay")
    policy = Path(get_paths().user_policy).read_text()
    assert "| sh" not in policy


# Through claude-hook: Claude Code would run an allowed command with `bash -c`.
CLAUDE = [("", line) for shells, line, policy in ATTACKS if "bash" in shells] + [w[:2] for w in WRITES]


@pytest.mark.parametrize("setup,line", CLAUDE)
def test_claude_hook_never_allows_the_attacks(tmp_path, isolated_home, setup, line):
    write(get_paths().user_policy, BROAD)
    work = tmp_path / "work"
    work.mkdir()
    (Path(isolated_home) / ".ssh").mkdir(exist_ok=True)
    if setup:
        subprocess.run(setup.replace("~", str(isolated_home)), shell=True, cwd=work, check=True)
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": line}, "cwd": str(work)}
    proc = subprocess.run(
        [sys.executable, "-m", "gatekeep", "claude-hook"], input=json.dumps(event), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    decision = json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"]
    assert decision in ("ask", "deny")


def test_bash_says_which_functions_stand_in_for_the_hooks_builtins(attacker):
    sh = attacker("bash", ATTACKER)
    out, _ = sh.type("kill() { true; }; history() { true; }; printf() { true; }", answer="o")
    assert "history: readonly function" in out  # the hook's own `history` (it applies HISTCONTROL)
    out, _ = sh.type("echo still gated")
    assert "functions stand in for builtins the hook uses (kill printf)" in out
    assert _records()[-1]["command"] == "echo still gated"  # vetted and recorded as usual
