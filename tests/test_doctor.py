"""`gatekeep doctor`: the real command as a subprocess in controlled environments, and in real shells.

A subprocess's parent is this pytest process, so a GATEKEEP_HOOK "loaded here"
carries os.getpid(). The real-shell tests run doctor at the prompt of an
interactive bash or zsh in a pseudo-terminal (tests/test_hooks.py's Shell).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.shells.health import parse_hook, shell_kind
from tests.conftest import write
from tests.shells import Shell, hook_text

CHECKS = ["hook", "shell", "history", "policy", "managed policy", "audit log", "install", "server", "sandbox", "reviewer", "agents"]
BASH = shutil.which("bash") or "/bin/bash"
ZSH = shutil.which("zsh") or "/bin/zsh"


def bash_hook(pid: int | None = None, version: str = "5.2.15", python: str = sys.executable) -> str:
    return f"bash {version} ps0 {os.getpid() if pid is None else pid} {python}"


def doctor(env: dict[str, str | None], *args: str) -> tuple[int, str]:
    full = {k: v for k, v in os.environ.items() if k not in ("GATEKEEP_HOOK", "PROMPT_COMMAND", "BASHOPTS")}
    full["SHELL"] = BASH
    full.update(env)
    full = {k: v for k, v in full.items() if v is not None}
    argv = [sys.executable, "-m", "gatekeep", "doctor", *args]
    proc = subprocess.run(argv, env=full, capture_output=True, text=True, timeout=60)
    assert proc.stderr == ""
    return proc.returncode, proc.stdout


def doctor_json(env: dict[str, str | None]) -> tuple[int, dict]:
    code, out = doctor(env, "--json")
    result = json.loads(out)
    assert [c["name"] for c in result["checks"]] == CHECKS
    return code, result


def log_with_mode(mode: int) -> None:
    path = write(get_paths().audit_log, '{"id": "x"}\n')
    path.chmod(mode)


def broken_policy() -> None:
    write(get_paths().user_policy, "default: allow\ntimeout: 30\nrules:\n  allow: oops\n")


CASES = [
    # id, environment, setup, the checks that must fail, text each failing one's detail must hold
    ("all good, no log yet", {"GATEKEEP_HOOK": bash_hook()}, None, {}),
    ("all good, log 0600", {"GATEKEEP_HOOK": bash_hook()}, lambda: log_with_mode(0o600), {}),
    ("all good, zsh", {"GATEKEEP_HOOK": f"zsh 5.9 preexec+TRAPDEBUG {os.getpid()} {sys.executable}"}, None, {}),
    ("broken policy", {"GATEKEEP_HOOK": bash_hook()}, broken_policy, {"policy": "line 4"}),
    ("audit log 0644", {"GATEKEEP_HOOK": bash_hook()}, lambda: log_with_mode(0o644), {"audit log": "mode 0644"}),
    ("hook missing", {}, None, {"hook": "not loaded"}),
    ("hook inherited", {"GATEKEEP_HOOK": bash_hook(pid=1)}, None, {"hook": "inherited"}),
    ("hook malformed", {"GATEKEEP_HOOK": "bash 5.2 ps0"}, None, {"hook": "not what the hook sets"}),
    ("bash 4.3", {"GATEKEEP_HOOK": bash_hook(version="4.3.48")}, None, {"shell": "too old"}),
    (
        "zsh 4.2",
        {"GATEKEEP_HOOK": f"zsh 4.2.7 preexec+TRAPDEBUG {os.getpid()} {sys.executable}"},
        None,
        {"shell": "too old"},
    ),
    ("interpreter gone", {"GATEKEEP_HOOK": bash_hook(python="/nonexistent/python")}, None, {"install": "missing"}),
    (
        "prompt hook replaced",
        {"GATEKEEP_HOOK": bash_hook(), "PROMPT_COMMAND": "echo hi"},
        None,
        {"history": "PROMPT_COMMAND"},
    ),
    (
        "promptvars off",
        {"GATEKEEP_HOOK": bash_hook(), "BASHOPTS": "cmdhist:histappend"},
        None,
        {"history": "promptvars"},
    ),
    ("restored history settings", {"GATEKEEP_HOOK": bash_hook(), "HISTCONTROL": "ignorespace"}, None, {}),
    ("fish", {"SHELL": "/usr/bin/fish"}, None, {"hook": "not loaded", "shell": "bash and zsh only"}),
    (
        "server directory not private",
        {"GATEKEEP_HOOK": bash_hook(), "GATEKEEP_SERVER": None},
        lambda: os.makedirs(get_paths().server_dir, mode=0o755),
        {"server": "not private (mode 0755)"},
    ),
]


@pytest.mark.parametrize("env,setup,failing", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_doctor_json(env, setup, failing):
    if setup is not None:
        setup()
    code, result = doctor_json(env)
    assert {c["name"]: c["detail"] for c in result["checks"] if not c["ok"]}.keys() == failing.keys()
    for check in result["checks"]:
        if check["ok"]:
            assert check["fix"] is None, check
        else:
            assert failing[check["name"]] in check["detail"] and check["fix"], check
    assert result["ok"] is (not failing)
    assert code == (1 if failing else 0)


def test_a_broken_policy_names_its_file_and_line():
    broken_policy()
    _, result = doctor_json({"GATEKEEP_HOOK": bash_hook()})
    policy = result["checks"][CHECKS.index("policy")]
    assert str(get_paths().user_policy) in policy["detail"] and "line 4" in policy["detail"]


def test_a_good_policy_shows_mode_approve_and_default():
    write(get_paths().user_policy, "default: deny\nmode: audit\napprove: both\n")
    _, result = doctor_json({"GATEKEEP_HOOK": bash_hook()})
    detail = result["checks"][CHECKS.index("policy")]["detail"]
    assert "mode audit, approve both, default deny (from the user policy)" in detail


def test_doctor_writes_nothing_into_the_audit_log():
    log_with_mode(0o600)
    before = open(get_paths().audit_log, "rb").read()
    assert doctor_json({"GATEKEEP_HOOK": bash_hook()})[0] == 0
    assert open(get_paths().audit_log, "rb").read() == before


def test_the_shell_version_comes_from_SHELL_without_a_hook(tmp_path):
    fake = write(tmp_path / "bin" / "bash", "#!/bin/sh\necho 'GNU bash, version 4.3.30(1)-release'\n")
    fake.chmod(0o755)
    _, result = doctor_json({"SHELL": str(fake)})
    shell = result["checks"][CHECKS.index("shell")]
    assert not shell["ok"] and "bash 4.3.30" in shell["detail"] and str(fake) in shell["detail"]


def test_the_text_output_has_one_line_per_check_and_a_verdict():
    code, out = doctor({})
    lines = out.splitlines()
    assert code == 1 and len(lines) == len(CHECKS) + 1 and lines[-1] == "1 problem"
    assert re.match(r"problem +hook +not loaded in this shell .*; fix: gatekeep install --shell bash", lines[0])
    assert all(re.match(rf"ok +{name} ", line) for name, line in zip(CHECKS[1:], lines[1:-1], strict=True))
    assert doctor({"GATEKEEP_HOOK": bash_hook()})[1].splitlines()[-1] == "all is well"


def test_parse_hook_and_shell_kind():
    hook = parse_hook("zsh 5.9 preexec+TRAPDEBUG 42 /opt/my python/bin/python3")
    assert (hook.shell, hook.version, hook.pid, hook.interpreter) == ("zsh", "5.9", 42, "/opt/my python/bin/python3")
    assert parse_hook("fish 3.6 x 42 /usr/bin/python3") is None and parse_hook("bash 5.2 ps0 x /p") is None
    assert [shell_kind(p) for p in ("/bin/bash", "/usr/local/bin/bash5.2", "zsh-5.9", "/usr/bin/python3")] == [
        "bash",
        "bash",
        "zsh",
        None,
    ]


# --- in real shells -------------------------------------------------------------------------------

DOCTOR = f"{shlex.quote(sys.executable)} -m gatekeep doctor --json"
POLICY = f"""\
rules:
  allow: ["{sys.executable} -m gatekeep doctor *", "echo *"]
"""


def doctor_in(sh: Shell) -> tuple[int, dict]:
    out = sh.run(f"{DOCTOR}; echo doctor-exit=$?")
    found = re.search(r'^(\{"ok".*\})\r?$', out, re.MULTILINE)
    assert found, out
    return int(re.search(r"^doctor-exit=(\d+)", out, re.MULTILINE).group(1)), json.loads(found.group(1))


def checks_of(result: dict) -> dict[str, dict]:
    return {c["name"]: c for c in result["checks"]}


@pytest.fixture
def shells(tmp_path, monkeypatch):
    monkeypatch.delenv("GATEKEEP_HOOK", raising=False)
    write(get_paths().user_policy, POLICY)
    started: list[Shell] = []

    def start(shell: str, hook: str) -> Shell:
        sh = Shell(shell, tmp_path / f"home-{shell}-{len(started)}", hook)
        started.append(sh)
        return sh

    yield start
    for sh in started:
        sh.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shell,mechanism", [("bash", "PS0 line gate"), ("zsh", "preexec + TRAPDEBUG")])
def test_in_a_gated_shell_the_hook_is_reported_loaded(shells, shell, mechanism):
    sh = shells(shell, hook_text(shell))
    code, result = doctor_in(sh)
    hook = checks_of(result)["hook"]
    assert hook["ok"] and f"loaded in this {shell} (PID {sh.child.pid}): {mechanism}" == hook["detail"]
    assert checks_of(result)["install"]["detail"] == f"the loaded hook calls {sys.executable}"
    assert result["ok"] and code == 0, result


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_in_a_shell_without_the_hook_it_is_reported_not_loaded(shells, shell):
    sh = shells(shell, "")
    code, result = doctor_in(sh)
    hook = checks_of(result)["hook"]
    assert not hook["ok"] and "not loaded" in hook["detail"] and f"--shell {shell}" in hook["fix"]
    assert code == 1 and not result["ok"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shell,child", [("bash", "bash --norc -i"), ("zsh", "zsh -f -i")])
def test_a_child_shell_without_the_hook_inherits_the_variable_but_is_not_gated(shells, shell, child):
    sh = shells(shell, hook_text(shell))
    # the built-in policy asks before a shell without the hook; PS1 split so the echoed line is no prompt
    sh.ask(f"PS1='GK''-READY> ' {child}", "o")
    sh.run("touch ungated-1")  # no question: the child really runs lines without the gate
    assert sh.exists("ungated-1")
    code, result = doctor_in(sh)
    hook = checks_of(result)["hook"]
    assert not hook["ok"] and "inherited" in hook["detail"] and f"PID {sh.child.pid}" in hook["detail"]
    assert code == 1


def test_the_server_check_says_whether_the_warm_checker_runs():
    import signal
    import time

    from gatekeep.server.client import start_server

    def server_detail(env):
        checks = doctor_json({"GATEKEEP_HOOK": bash_hook(), **env})[1]["checks"]
        return next(c["detail"] for c in checks if c["name"] == "server")

    def listening() -> bool:
        return os.path.isdir(directory) and any(name.endswith(".sock") for name in os.listdir(directory))

    assert server_detail({}).startswith("off (GATEKEEP_SERVER=off)")
    assert "has not started yet" in server_detail({"GATEKEEP_SERVER": None})
    directory = get_paths().server_dir
    start_server(directory)
    try:
        deadline = time.monotonic() + 20
        while not listening():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        lock = next(name for name in os.listdir(directory) if name.endswith(".lock"))
        pid = int(open(os.path.join(directory, lock)).read())
        assert server_detail({"GATEKEEP_SERVER": None}) == f"the warm checker runs (PID {pid}), in {directory}"
    finally:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if f"serve({directory!r})".encode() in open(f"/proc/{entry}/cmdline", "rb").read():
                        os.killpg(int(entry), signal.SIGKILL)
                except OSError:
                    pass
    time.sleep(0.2)
    assert "is not running" in server_detail({"GATEKEEP_SERVER": None})


def test_a_login_shell_without_the_hook_is_told_which_file_it_reads(isolated_home):
    """A bash login shell reads ~/.profile (or ~/.bash_profile), not ~/.bashrc: doctor says so,
    and that install makes login shells load it too. A real `bash --login` is the parent here."""
    import subprocess

    from gatekeep.shells import health

    (isolated_home / ".profile").write_text("export X=1\n")
    env = {"HOME": str(isolated_home), "PATH": "/usr/bin:/bin"}
    login = subprocess.Popen(["bash", "--login", "-c", "sleep 30; true"], env=env)
    plain = subprocess.Popen(["bash", "-c", "sleep 30; true"])  # (`; true`: bash would exec a lone sleep)
    try:
        import time

        time.sleep(0.3)
        _, check = health.check_hook(None, login.pid, health.process_exe(login.pid))
        assert not check.ok and f"login shell, which reads {isolated_home / '.profile'}" in check.detail
        assert "makes login shells load ~/.bashrc too" in check.fix
        _, check = health.check_hook(None, plain.pid, health.process_exe(plain.pid))
        assert "not loaded in this shell (GATEKEEP_HOOK is not set)" in check.detail
    finally:
        login.kill()
        plain.kill()


def _sandbox_check(env: dict) -> dict:
    checks = doctor_json({"GATEKEEP_HOOK": bash_hook(), **env})[1]["checks"]
    return next(c for c in checks if c["name"] == "sandbox")


def test_the_sandbox_check_says_whether_containment_works_here(tmp_path):
    assert _sandbox_check({})["detail"].startswith("off (sandbox.contain is not set)")
    write(get_paths().user_policy, "sandbox:\n  contain: true\n")
    found = _sandbox_check({"GATEKEEP_BWRAP": "none"})  # (a machine without bubblewrap)
    assert not found["ok"]
    assert "containment is off here: bubblewrap is not installed" in found["detail"]
    assert "apt install bubblewrap" in found["fix"]
    from gatekeep.contain.sandbox import unavailable

    if unavailable() is None:
        found = _sandbox_check({})
        assert found["ok"] and found["detail"].startswith("on: ") and "network off" in found["detail"]


# (agent installed, settings files written in the project: path -> text, problem expected in the detail)
AGENT_SWITCHES = [
    ("claude", {".claude/settings.json": '{"disableAllHooks": true}'}, "disableAllHooks"),
    ("claude", {".claude/settings.local.json": '{"disableAllHooks": "true"}'}, "disableAllHooks"),
    ("claude", {".claude/settings.json": '{"disableAllHooks": false}'}, None),
    ("claude", {".claude/settings.json": "not json"}, None),  # Claude Code reports that itself
    ("gemini", {".gemini/settings.json": '{"hooksConfig": {"enabled": false}}'}, "hooksConfig.enabled"),
    ("gemini", {".gemini/settings.json": '{"hooksConfig": {"disabled": ["gatekeep"]}}'}, "hooksConfig.disabled"),
    ("gemini", {".gemini/settings.json": '{"hooksConfig": {"disabled": ["other"]}}'}, None),
    ("copilot", {".github/copilot/settings.local.json": '{"disableAllHooks": true}'}, "disableAllHooks"),
    ("copilot", {".claude/settings.json": '{"disableAllHooks": true}'}, None),  # another host's switch
    ("cursor", {".claude/settings.json": '{"disableAllHooks": true}'}, None),
]


@pytest.mark.parametrize("agent, files, problem", AGENT_SWITCHES)
def test_doctor_reports_a_project_setting_that_turns_an_installed_agent_hook_off(agent, files, problem, tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name, text in files.items():
        write(repo / name, text)
    from gatekeep.main import main

    assert main(["install", "--agent", agent]) == 0
    done = subprocess.run([sys.executable, "-m", "gatekeep", "doctor", "--json"], cwd=repo / ".git", capture_output=True, text=True)
    [check] = [c for c in json.loads(done.stdout)["checks"] if c["name"] == "agents"]
    if problem is None:
        assert check["ok"], check
    else:
        assert not check["ok"] and problem in check["detail"] and check["fix"], check


def test_doctor_says_when_no_agent_hook_is_installed(tmp_path):
    done = subprocess.run([sys.executable, "-m", "gatekeep", "doctor", "--json"], cwd=tmp_path, capture_output=True, text=True)
    [check] = [c for c in json.loads(done.stdout)["checks"] if c["name"] == "agents"]
    assert check == {"name": "agents", "ok": True, "detail": "no agent hook installed", "fix": None}
