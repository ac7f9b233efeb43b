"""Every coding agent's hook (`gatekeep agent-hook NAME`), spoken to as its host speaks to it.

Each host's example event is built from its documentation or source, named
beside it (the study behind them: tests/data/agents/HOSTS.md). The hook runs as
the real console script with the event on stdin, and its answer is read by
`host_reads`, a model of what each host does with a hook's exit code, stdout and
stderr, taken from the same sources: so every test says what the agent would do,
run the command, ask its user, or block it, not only what gatekeep printed.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gatekeep.agents.hosts import HOSTS
from gatekeep.agents.setup import SETUPS
from gatekeep.commands.agent_hook import agent_hook
from gatekeep.record import audit
from tests.conftest import write

SCRIPT = Path(sys.executable).with_name("gatekeep")
GATEKEEP = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gatekeep"]
RUN, ASK, BLOCK = "run", "ask", "block"


# --- what each host does with a hook's result ----------------------------------------------------


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def host_reads(agent: str, code: int, stdout: str, stderr: str) -> str:
    """RUN, ASK or BLOCK: what `agent` does with a PreToolUse-style hook that ended so.
    Each rule's source is in tests/data/agents/HOSTS.md, section by host."""
    out = _json(stdout) if stdout.strip() else None
    if agent == "claude":  # §1.3-1.4: exit 2 blocks; JSON on exit 0; anything else goes ahead
        if code == 2:
            return BLOCK
        if code != 0 or not isinstance(out, dict):
            return RUN
        decision = out.get("hookSpecificOutput", {}).get("permissionDecision")
        return {"deny": BLOCK, "ask": ASK}.get(decision, RUN)
    if agent == "codex":  # §2.3: exit 2 with a reason on stderr blocks; ask and failures go ahead
        if code == 2:
            return BLOCK if stderr.strip() else RUN
        if code != 0 or not isinstance(out, dict):
            return RUN
        specific = out.get("hookSpecificOutput", {})
        if specific.get("permissionDecision") == "deny" and specific.get("permissionDecisionReason"):
            return BLOCK
        return BLOCK if out.get("decision") == "block" and out.get("reason") else RUN
    if agent == "gemini":  # §3.3-3.4: stdout (else stderr) as JSON whatever the code; text: exit >= 2 denies
        text = stdout if stdout.strip() else stderr
        parsed = _json(text) if text.strip() else None
        if isinstance(parsed, dict):
            return {"deny": BLOCK, "block": BLOCK, "ask": ASK}.get(parsed.get("decision"), RUN)
        return BLOCK if text.strip() and code >= 2 else RUN
    if agent == "cursor":  # §4.3-4.4, with failClosed as installed: exit 2 and every failure block
        if code != 0 or not isinstance(out, dict):
            return BLOCK
        return {"allow": RUN, "ask": ASK}.get(out.get("permission"), BLOCK)
    if agent == "copilot":  # 1.0.102, the real CLI (tests/test_real_agents.py): a failing hook blocks
        if code != 0:
            return BLOCK
        if not isinstance(out, dict):
            return RUN
        return {"deny": BLOCK, "ask": ASK}.get(out.get("permissionDecision"), RUN)
    if agent == "opencode":  # the plugin (agents/opencode.js): only an allow on exit 0 lets the call run
        return RUN if code == 0 and isinstance(out, dict) and out.get("decision") == "allow" else BLOCK
    raise AssertionError(agent)


# --- example events, from each host's documentation --------------------------------------------------


def claude_event(command: object = "git status", cwd: object = "/", **changes) -> dict:
    """code.claude.com/docs/en/hooks#pretooluse-input (HOSTS.md §1.2)."""
    data = {
        "session_id": "abc123",
        "transcript_path": "/home/user/.claude/projects/-home-user-repo/abc123.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Clean build directory", "timeout": 120000},
        "tool_use_id": "toolu_01ABC123",
    }
    return {**data, **changes}


def codex_event(command: object = "git status", cwd: object = "/", **changes) -> dict:
    """openai/codex codex-rs/hooks/schema/generated/pre-tool-use.command.input.schema.json @3be4afd3 and
    codex-rs/hooks/src/events/pre_tool_use.rs @0082977c (HOSTS.md §2.2)."""
    data = {
        "session_id": "0199a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b",
        "turn_id": "turn-1",
        "transcript_path": None,  # may be null
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "model": "gpt-5",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "call-43",
    }
    return {**data, **changes}


def gemini_event(command: object = "git status", cwd: object = "/", **changes) -> dict:
    """google-gemini/gemini-cli docs/hooks/reference.md @06c0d810; @google/gemini-cli 0.61.0
    createBaseInput + fireBeforeToolEvent (HOSTS.md §3.2)."""
    data = {
        "session_id": "6b1f4c3e-2d7a-4e52-9b0f-0c9a7d1e2f30",
        "transcript_path": "/home/user/.gemini/tmp/hash/chats/session-2026-11-24T04-00-6b1f4c3e.json",
        "cwd": cwd,
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-11-24T04:00:00.000Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "description": "Remove build output", "is_background": False},
    }
    return {**data, **changes}


def cursor_event(command: object = "git status", cwd: object = "/", **changes) -> dict:
    """cupcake.eqtylab.io/reference/harnesses/cursor, beforeShellExecution (HOSTS.md §4.2)."""
    data = {
        "hook_event_name": "beforeShellExecution",
        "conversation_id": "conv-123",
        "generation_id": "gen-456",
        "workspace_roots": [cwd],
        "model": "gpt-5",
        "cursor_version": "2.0.77",
        "command": command,
        "cwd": cwd,
    }
    return {**data, **changes}


def copilot_event(command: object = "git status", cwd: object = "/", **changes) -> dict:
    """github/docs content/copilot/reference/hooks-configuration.md @1912b4fc, "Pre-tool use hook", with
    sessionId from cli-hooks-reference.md @927566b0 (HOSTS.md §5.2)."""
    data = {
        "timestamp": 1704614600000,
        "sessionId": "copilot-session-1",
        "cwd": cwd,
        "toolName": "bash",
        "toolArgs": json.dumps({"command": command, "description": "Clean build directory"}),
    }
    return {**data, **changes}


def opencode_event(command: object = "git status", cwd: object = "/", **changes) -> dict:
    """What agents/opencode.js sends, from OpenCode's tool.execute.before arguments: input {tool,
    sessionID, callID}, output {args} (@opencode-ai/plugin 1.18.33 dist/index.d.ts; HOSTS.md §6.2)."""
    data = {
        "hook_event_name": "tool.execute.before",
        "tool": "bash",
        "sessionID": "ses_01",
        "callID": "call_01",
        "directory": cwd,
        "args": {"command": command, "timeout": 120000, "description": "Clean build directory"},
    }
    return {**data, **changes}


EVENTS = {
    "claude": claude_event,
    "codex": codex_event,
    "gemini": gemini_event,
    "cursor": cursor_event,
    "copilot": copilot_event,
    "opencode": opencode_event,
}
SESSIONS = {
    "claude": "abc123",
    "codex": "0199a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b",
    "gemini": "6b1f4c3e-2d7a-4e52-9b0f-0c9a7d1e2f30",
    "cursor": "conv-123",
    "copilot": "copilot-session-1",
    "opencode": "ses_01",
}
TOOLS = {"claude": "Bash", "codex": "Bash", "gemini": "run_shell_command", "cursor": "Shell", "copilot": "bash"}
TOOLS["opencode"] = "bash"
CAN_ASK = {"claude", "gemini", "cursor", "copilot"}


def test_every_host_has_an_example_event():
    assert set(EVENTS) == set(HOSTS) == set(SETUPS)
    assert {name for name, host in HOSTS.items() if host.asks} == CAN_ASK


class Result:
    def __init__(self, agent: str, process: subprocess.CompletedProcess) -> None:
        self.code, self.stdout, self.stderr = process.returncode, process.stdout.decode(), process.stderr.decode()
        self.host_does = host_reads(agent, self.code, self.stdout, self.stderr)

    def __repr__(self) -> str:
        return f"Result({self.code}, {self.stdout!r}, {self.stderr!r}) -> {self.host_does}"


# A process named gemini that runs its arguments after `--` as a child, as Gemini CLI runs its
# hooks: gatekeep finds it above the hook, and reads from its flags whether it can ask.
GEMINI_LAUNCHER = 'while [ "$1" != -- ]; do shift; done; shift; "$@"\n'


def as_gemini(argv: list[str], flags: tuple[str, ...] = ("-i", "the task")) -> list[str]:
    """`argv` run by a parent process named gemini, started with `flags` (interactive: `-i`)."""
    launcher = Path(tempfile.gettempdir()) / f"gatekeep-test-{os.getpid()}" / "gemini"
    if not launcher.exists():
        launcher.parent.mkdir(exist_ok=True)
        launcher.write_text(GEMINI_LAUNCHER)
    return ["/bin/sh", str(launcher), *flags, "--", *argv]


def hook(agent: str, data: dict | bytes, *args: str, cwd: Path | None = None) -> Result:
    stdin = data if isinstance(data, bytes) else json.dumps(data).encode()
    argv = [*GATEKEEP, "agent-hook", agent, *args]
    if agent == "gemini":
        argv = as_gemini(argv)
    env = {**os.environ, "COPILOT_CLI_BINARY_VERSION": "1.0.102"}  # as Copilot CLI sets it for its hooks
    return Result(agent, subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=env, timeout=60))


@pytest.fixture
def audit_log(paths) -> Path:
    return Path(paths.audit_log)


# --- decisions ------------------------------------------------------------------------------------

DECISIONS = [
    ("git status", "allow", RUN),
    ("rm -rf ~", "deny", BLOCK),
    ("npm run build --watch", "ask", ASK),
]


@pytest.mark.parametrize("agent", list(EVENTS))
@pytest.mark.parametrize("command,decision,host_does", DECISIONS)
def test_each_host_gets_the_gates_decision_in_its_own_terms(agent, command, decision, host_does, tmp_path, audit_log):
    result = hook(agent, EVENTS[agent](command, str(tmp_path)))
    expected = host_does if host_does != ASK or agent in CAN_ASK else BLOCK  # what cannot be asked is denied
    assert result.host_does == expected, result
    if decision != "allow":
        assert "gatekeep" in result.stdout + result.stderr
    if decision == "ask":
        assert "gatekeep rules add 'npm run build *'" in result.stdout + result.stderr
        assert agent in CAN_ASK or f"{HOSTS[agent].title} cannot ask" in result.stdout + result.stderr
    (record,) = audit.read_last(str(audit_log), 10)
    assert set(audit.FIELDS) <= set(record)
    assert (record["agent"], record["session_id"], record["tool"]) == (agent, SESSIONS[agent], TOOLS[agent])
    assert (record["command"], record["cwd"], record["shell"]) == (command, str(tmp_path), None)
    assert record["decision"] == decision
    assert record["outcome"] == (decision if decision != "ask" or agent in CAN_ASK else "deny")
    assert (record["prompted"], record["answer"]) == (False, None)


# Each host's answers, exactly: what the host reads must not depend on the model above alone.
ANSWERS = {
    "claude": ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", ', "", 0),
    "codex": ("", "gatekeep: blocked (deny): `rm -rf ~`", 2),
    "gemini": ('{"decision": "deny", "reason": "gatekeep: blocked (deny): `rm -rf ~`', "", 0),
    "cursor": ('{"permission": "deny", "user_message": "gatekeep: blocked (deny): `rm -rf ~`', "", 2),
    "copilot": ('{"permissionDecision": "deny", "permissionDecisionReason": "gatekeep: blocked (deny)', "", 0),
    "opencode": ('{"decision": "deny", "reason": "gatekeep: blocked (deny): `rm -rf ~`', "gatekeep: blocked", 2),
}


@pytest.mark.parametrize("agent", list(EVENTS))
def test_a_deny_is_answered_in_the_form_the_host_documents(agent, tmp_path):
    result = hook(agent, EVENTS[agent]("rm -rf ~", str(tmp_path)))
    stdout, stderr, code = ANSWERS[agent]
    assert result.stdout.startswith(stdout) and result.stderr.startswith(stderr) and result.code == code, result
    assert result.stdout.count("\n") == (1 if stdout else 0) and result.stderr.count("\n") == (1 if stderr else 0)


@pytest.mark.parametrize("agent", list(EVENTS))
def test_an_allow_says_nothing_unless_the_host_wants_it_said(agent, tmp_path):
    result = hook(agent, EVENTS[agent]("git status", str(tmp_path)))
    assert result.code == 0 and result.stderr == ""
    said = {"claude": "permissionDecision", "cursor": '{"permission": "allow"}', "opencode": '"decision": "allow"'}
    assert (said[agent] in result.stdout) if agent in said else result.stdout == ""


def test_the_users_policy_and_project_trust_serve_every_agent(paths, tmp_path, audit_log):
    """One policy, one project file, one audit log, whichever agent asks."""
    write(Path(paths.user_policy), "rules:\n  allow: ['npm run build *']\n")
    repo = tmp_path / "repo"
    write(repo / ".gatekeep.yaml", "rules:\n  deny: ['git status *']\n")  # a project's deny rules apply untrusted
    for agent, make in EVENTS.items():
        assert hook(agent, make("npm run build", str(repo))).host_does == RUN, agent
        assert hook(agent, make("git status", str(repo))).host_does == BLOCK, agent
    records = audit.read_last(str(audit_log), 100)
    assert [r["agent"] for r in records] == [a for a in EVENTS for _ in "12"]
    table = subprocess.run([*GATEKEEP, "audit", "tail", "-n", "2"], capture_output=True, text=True, timeout=60).stdout
    assert [line.split()[3] for line in table.splitlines()[1:]] == ["opencode", "opencode"]


SUBDIRECTORIES = [
    ("gemini", lambda repo: gemini_event("git status", str(repo.parent), tool_input={"command": "git status",
                                                                                      "dir_path": "repo"})),
    ("opencode", lambda repo: opencode_event("git status", str(repo.parent), args={"command": "git status",
                                                                                   "workdir": "repo"})),
    ("opencode", lambda repo: opencode_event("git status", "/", args={"command": "git status", "workdir": str(repo)})),
    ("cursor", lambda repo: cursor_event("git status", "", workspace_roots=[str(repo)])),
]  # fmt: skip


@pytest.mark.parametrize("agent,make", SUBDIRECTORIES)
def test_the_command_is_decided_in_the_directory_it_runs_in(agent, make, tmp_path, audit_log):
    repo = tmp_path / "repo"
    write(repo / ".gatekeep.yaml", "rules:\n  deny: ['git status *']\n")
    assert hook(agent, make(repo)).host_does == BLOCK
    assert audit.read_last(str(audit_log), 1)[0]["cwd"] == str(repo)


OTHER_TOOLS = [
    ("claude", claude_event(tool_name="Read", tool_input={"file_path": "/etc/passwd", "command": "rm -rf /"})),
    ("claude", claude_event(tool_name="Monitor", tool_input={"ws": "ws://localhost:1", "description": "logs"})),
    ("codex", codex_event(tool_name="apply_patch", tool_input={"command": "rm -rf /"})),
    ("codex", codex_event(tool_name="mcp__github__create_issue", tool_input={})),
    ("gemini", gemini_event(tool_name="write_file", tool_input={"file_path": "a", "content": "rm -rf /"})),
    ("copilot", copilot_event(toolName="edit", toolArgs='{"path": "a"}')),
    ("copilot", copilot_event(toolName="view", toolArgs=None)),
    ("opencode", opencode_event(tool="read", args={"filePath": "/etc/passwd"})),
]


@pytest.mark.parametrize("agent,data", OTHER_TOOLS)
def test_other_tools_pass_through_without_a_record(agent, data, audit_log):
    result = hook(agent, data)
    assert (result.code, result.stderr, result.host_does) == (0, "", RUN)
    assert result.stdout == ('{"decision": "allow", "reason": ""}\n' if agent == "opencode" else "")
    assert not audit_log.exists()


SHELLS_GATEKEEP_CANNOT_READ = [
    ("claude", claude_event(tool_name="PowerShell", tool_input={"command": "Remove-Item -Recurse C:/"}), ASK),
    ("copilot", copilot_event(toolName="powershell", toolArgs='{"command": "Remove-Item -Recurse C:/"}'), ASK),
]


@pytest.mark.parametrize("agent,data,host_does", SHELLS_GATEKEEP_CANNOT_READ)
def test_a_shell_gatekeep_cannot_read_is_asked_about_or_denied(agent, data, host_does, audit_log):
    result = hook(agent, data)
    assert result.host_does == host_does and "cannot read PowerShell" in result.stdout, result
    assert audit.read_last(str(audit_log), 1)[0]["decision"] == "ask"


@pytest.mark.parametrize("mode", ["bypassPermissions", "auto", "dontAsk", None])
def test_claude_permission_modes_that_may_not_ask_get_a_deny_instead(mode, tmp_path):
    """An ask in bypassPermissions was approved without a word (before 2.1.233), and reportedly
    still is in auto mode: there, and in modes gatekeep does not know, what would be asked is denied."""
    data = claude_event("npm run build", str(tmp_path), permission_mode=mode)
    if mode is None:
        del data["permission_mode"]
    result = hook("claude", data)
    assert result.host_does == BLOCK and "Claude Code may not ask in permission mode" in result.stdout, result
    for asking in ("default", "acceptEdits", "plan"):
        assert hook("claude", claude_event("npm run build", str(tmp_path), permission_mode=asking)).host_does == ASK


def test_a_directory_the_host_may_or_may_not_use_is_decided_both_ways(tmp_path):
    """OpenCode's bash tool took `workdir` only in later versions, Gemini CLI's called it `directory`
    before `dir_path`: the command is decided in each directory it may run in, the strictest counts."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    write(project / ".gatekeep.yaml", "rules:\n  deny: ['cat *']\n")
    elsewhere.mkdir()
    opencode = opencode_event("cat notes", str(project), args={"command": "cat notes", "workdir": str(elsewhere)})
    assert hook("opencode", opencode).host_does == BLOCK
    gemini = gemini_event("cat notes", str(elsewhere), tool_input={"command": "cat notes", "directory": "../project"})
    assert hook("gemini", gemini).host_does == BLOCK
    assert hook("gemini", gemini_event("cat notes", str(elsewhere))).host_does == RUN


GEMINI_MODES = [  # (Gemini CLI's flags, how its stdin is, whether an ask is passed on)
    (("-i", "the task"), "pipe", True),  # interactive with a first prompt
    (("--prompt-interactive=the task",), "pipe", True),
    (("--acp",), "pipe", True),  # an IDE asks for it
    (("-p", "the task"), "pipe", False),  # headless: Gemini would wait for ever
    (("--prompt=the task", "--approval-mode", "yolo"), "pipe", False),
    ((), "null", False),  # no terminal: headless too
    (("-m", "gemini-2.5-flash"), "terminal", True),
    (("-p", "the task"), "terminal", False),
    (None, "pipe", False),  # no Gemini CLI process above the hook: cannot tell, so no ask
]


@pytest.mark.parametrize("flags, stdin, asks", GEMINI_MODES)
def test_gemini_is_asked_only_where_it_can_ask(flags, stdin, asks, tmp_path, audit_log):
    """The hook finds the Gemini CLI process above it and reads its flags and its input (/proc).
    Here that process's input is `stdin`, and the hook reads its event from a file."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps(gemini_event("npm run build", str(tmp_path))))
    argv = ["/bin/sh", "-c", 'exec "$@" < "$EVENT"', "sh", *GATEKEEP, "agent-hook", "gemini"]
    if flags is not None:
        argv = as_gemini(argv, flags)
    terminal = None
    if stdin == "terminal":
        import pty

        terminal = pty.openpty()
    source = {"pipe": subprocess.PIPE, "null": subprocess.DEVNULL}.get(stdin, terminal and terminal[1])
    try:
        done = subprocess.run(argv, stdin=source, capture_output=True, env={**os.environ, "EVENT": str(event)}, timeout=60)
    finally:
        for fd in terminal or ():
            os.close(fd)
    result = Result("gemini", done)
    assert result.host_does == (ASK if asks else BLOCK), result
    if not asks:
        assert "cannot" in result.stdout


@pytest.mark.parametrize("tool, file, host_does", [
    ("write_file", "notes.md", RUN),  # not gatekeep's to judge: Gemini CLI's own policy decides
    ("replace", "src/app.py", RUN),
    ("write_file", ".gemini/settings.json", BLOCK),  # `hooksConfig.enabled: false` turns gatekeep off
    ("replace", "~/.gemini/settings.json", BLOCK),
    ("write_file", "~/.bashrc", BLOCK),
    ("write_file", "~/.gitconfig", ASK),
    ("read_file", ".gemini/settings.json", RUN),
])  # fmt: skip
def test_geminis_file_tools_are_judged_only_for_protected_places(tool, file, host_does, tmp_path, audit_log):
    path = file.replace("~", os.environ["HOME"], 1)
    data = gemini_event("x", str(tmp_path), tool_name=tool, tool_input={"file_path": path, "content": "x"})
    result = hook("gemini", data)
    assert result.host_does == host_does, result
    assert audit_log.exists() == (host_does != RUN)


def patch(*headers: str) -> str:
    """An apply_patch text (OpenCode's, as Codex's) with the given file headers."""
    return "\n".join(["*** Begin Patch", *(f"{h}\n+x" for h in headers), "*** End Patch"])


# (tool, its arguments, what OpenCode then does, whether the call is recorded: judged, not malformed)
OPENCODE_FILE_CALLS = [
    ("write", {"filePath": "notes.md", "content": "x"}, RUN, False),  # not gatekeep's to judge
    ("edit", {"filePath": "src/app.py", "oldString": "a", "newString": "b"}, RUN, False),
    ("write", {"filePath": ".opencode/plugins/x.js", "content": "x"}, BLOCK, True),  # runs at the next start
    ("edit", {"filePath": "opencode.json", "oldString": "[]", "newString": "[\"x\"]"}, BLOCK, True),
    ("multiedit", {"filePath": "~/.bashrc", "edits": []}, BLOCK, True),
    ("write", {"filePath": "~/.gitconfig", "content": "x"}, BLOCK, True),  # asked: OpenCode cannot ask
    ("apply_patch", {"patchText": patch("*** Add File: src/new.py", "*** Update File: src/app.py")}, RUN, False),
    ("apply_patch", {"patchText": patch("*** Update File: src/app.py", "*** Add File: .opencode/plugin/x.ts")}, BLOCK, True),
    ("apply_patch", {"patchText": patch("*** Update File: a.js\n*** Move to: .opencode/plugins/a.js")}, BLOCK, True),
    ("apply_patch", {"patchText": patch("   *** Delete File: .git/hooks/pre-commit")}, BLOCK, True),  # spaces or not
    ("apply_patch", {"patchText": "*** Begin Patch\n*** End Patch"}, BLOCK, False),  # names no file: cannot be told
    ("apply_patch", {"patchText": patch("*** Add File: a\0b")}, BLOCK, False),
    ("apply_patch", {}, BLOCK, False),
    ("read", {"filePath": ".opencode/plugins/x.js"}, RUN, False),
]  # fmt: skip


@pytest.mark.parametrize("tool, args, host_does, recorded", OPENCODE_FILE_CALLS)
def test_opencodes_file_tools_are_judged_only_for_protected_places(tool, args, host_does, recorded, tmp_path, audit_log):
    if "filePath" in args:
        args = {**args, "filePath": args["filePath"].replace("~", os.environ["HOME"], 1)}
    result = hook("opencode", opencode_event("x", str(tmp_path), tool=tool, args=args))
    assert result.host_does == host_does, result
    assert audit_log.exists() == recorded


@pytest.mark.parametrize("version, asks", [
    ("1.0.102", True), ("1.0.110", True), ("1.2.0", True), ("2.0.0", True),
    ("1.0.101", False), ("0.0.340", False), ("", False), ("1.0", False), ("1.0.102-beta", False),
])  # fmt: skip
def test_copilot_is_asked_only_by_a_version_that_honours_an_ask(version, asks, tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_CLI_BINARY_VERSION", version)
    data = json.dumps(copilot_event("npm run build", str(tmp_path))).encode()
    done = subprocess.run([*GATEKEEP, "agent-hook", "copilot"], input=data, capture_output=True, timeout=60)
    result = Result("copilot", done)
    assert result.host_does == (ASK if asks else BLOCK), result


def test_claudes_monitor_tool_is_gated_like_bash(tmp_path):
    data = claude_event(tool_name="Monitor", tool_input={"command": "rm -rf ~", "persistent": True})
    assert hook("claude", data).host_does == BLOCK


@pytest.mark.parametrize("args", ['{"command": "rm -rf ~"}', {"command": "rm -rf ~"}])
def test_copilot_tool_args_may_be_a_json_string_or_an_object(args):
    assert hook("copilot", copilot_event(toolArgs=args)).host_does == BLOCK


@pytest.mark.parametrize("tool", ["Bash", "BASH", "PowerShell"])
def test_copilot_shell_tools_are_gated_whatever_their_case(tool):
    """cc-safety-net accepts "Bash" from Copilot too: a capital letter must not let a command past
    (PowerShell, which gatekeep cannot read, is asked about)."""
    assert hook("copilot", copilot_event("rm -rf ~", toolName=tool)).host_does == (ASK if tool == "PowerShell" else BLOCK)


# --- failing closed, in each host's terms --------------------------------------------------------


def _without(data: dict, key: str) -> dict:
    return {k: v for k, v in data.items() if k != key}


def malformed(agent: str) -> list[tuple[str, dict | bytes]]:
    make = EVENTS[agent]
    cases: list[tuple[str, dict | bytes]] = [
        ("not JSON", b'{"session_id": "abc",'),
        ("empty stdin", b""),
        ("not UTF-8", b'{"tool_name": "Bash\xff"}'),
        ("a JSON array", b'[{"tool_name": "Bash", "tool_input": {"command": "ls"}}]'),
        ("a JSON string", b'"ls"'),
        ("a number for a command", make(5)),
        ("a list for a command", make(["rm", "-rf", "/"])),
        ("null for a command", make(None)),
        ("an empty command", make("")),
        ("a blank command", make(" \n\t")),
        ("a relative cwd", make("ls", "repo")),
        ("a number for a cwd", make("ls", 7)),
    ]
    name_key = {"copilot": "toolName", "opencode": "tool", "cursor": "hook_event_name"}.get(agent, "tool_name")
    cases.append(("no tool name", _without(make(), name_key)))
    if agent != "copilot":  # Copilot's camelCase events carry no event name
        cases.append(("no event name", _without(make(), "hook_event_name")))
        cases.append(("another event", make(hook_event_name="PostToolUse")))
    if agent == "copilot":
        cases.append(("toolArgs not JSON", make(toolArgs="{command: ls")))
        cases.append(("toolArgs a list", make(toolArgs='["ls"]')))
    if agent == "gemini":
        cases.append(("dir_path not a path", make(tool_input={"command": "ls", "dir_path": 5})))
    if agent in ("claude", "codex", "gemini"):
        cases.append(("no tool_input", _without(make(), "tool_input")))
    return cases


MALFORMED = [(agent, name, data) for agent in EVENTS for name, data in malformed(agent)]


@pytest.mark.parametrize("agent,name,data", MALFORMED, ids=[f"{a}-{n}" for a, n, _ in MALFORMED])
def test_a_malformed_or_unexpected_event_blocks(agent, name, data, audit_log):
    result = hook(agent, data)
    assert result.host_does == BLOCK, result
    assert "gatekeep: blocked: " in result.stdout + result.stderr
    assert result.stderr.count("\n") == 1  # one line, never a traceback
    assert not audit_log.exists()  # no command to record


def test_an_event_too_big_to_be_real_blocks(audit_log):
    result = hook("codex", codex_event("x" * (5 << 20)))
    assert result.host_does == BLOCK and "over 4 MiB" in result.stderr
    assert not audit_log.exists()


@pytest.mark.parametrize("agent", list(EVENTS))
def test_a_broken_policy_blocks_and_is_recorded(agent, paths, tmp_path, audit_log):
    write(Path(paths.user_policy), "rules:\n  allow: ['git status *']\n  permit: []\n")
    result = hook(agent, EVENTS[agent]("git status", str(tmp_path)))
    assert result.host_does == BLOCK and "key 'rules.permit'" in result.stderr, result
    (record,) = audit.read_last(str(audit_log), 10)
    assert (record["outcome"], record["agent"], record["session_id"]) == ("deny", agent, SESSIONS[agent])


@pytest.mark.parametrize("agent", list(EVENTS))
@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()], ids=["bug", "ctrl-c"])
def test_a_bug_or_ctrl_c_blocks(agent, error, capsys, monkeypatch, paths):
    import gatekeep.commands.agent_hook as module

    def explode(line, policy, cwd):
        raise error

    monkeypatch.setattr(module, "evaluate", explode)
    code = agent_hook(agent, None, io.BytesIO(json.dumps(EVENTS[agent]("git status")).encode()))
    out, err = capsys.readouterr()
    assert host_reads(agent, code, out, err) == BLOCK, (code, out, err)
    assert err.count("\n") == 1 and "blocked" in err
    assert isinstance(error, KeyboardInterrupt) or "Traceback" in Path(paths.error_log).read_text()


@pytest.mark.parametrize("agent", list(EVENTS))
def test_a_hook_that_hangs_answers_deny_by_itself_before_the_host_gives_up(agent, tmp_path):
    """A hook the host has to kill is let through by every host but Cursor: gatekeep answers first."""
    code = (
        "import io, sys, time\n"
        "import gatekeep.commands.agent_hook as module\n"
        "module.evaluate = lambda *args: time.sleep(60)\n"
        f"event = io.BytesIO({json.dumps(EVENTS[agent]('git status', str(tmp_path))).encode()!r})\n"
        f"sys.exit(module.agent_hook({agent!r}, None, event, deadline=0.5))\n"
    )
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    result = Result(agent, process)
    assert result.host_does == BLOCK and "no decision within 0.5 s" in result.stderr, result


# --- a hook that cannot start: the command `gatekeep install --agent` writes -------------------------

# What each host would do with the bare command (no `|| ...`) when the interpreter is gone: the shell
# exits 127 with "No such file or directory" on stderr. README's agent table says the same.
# (Copilot CLI 1.0.102 blocks on a failing hook; older versions skipped it, as the fallback assumes)
BARE_COMMAND_MISSING = {"claude": RUN, "codex": RUN, "gemini": BLOCK, "cursor": BLOCK, "copilot": BLOCK}


def _run_through_shell(command: str, event: dict) -> subprocess.CompletedProcess:
    """As the hosts run a hook command: through a shell, the event on stdin."""
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event).encode(), capture_output=True, timeout=60)


@pytest.mark.parametrize("agent", list(BARE_COMMAND_MISSING))
def test_a_missing_interpreter_blocks_through_the_installed_command(agent, tmp_path):
    gone = [str(tmp_path / "venv-removed" / "python3"), "-I", "-S", "-c", "pass"]
    event = EVENTS[agent]("git status", str(tmp_path))
    bare = Result(agent, _run_through_shell(f"{shlex.join(gone)} agent-hook {agent}", event))
    assert bare.code == 127 and bare.host_does == BARE_COMMAND_MISSING[agent], bare
    wrapped = Result(agent, _run_through_shell(SETUPS[agent].command(gone), event))
    assert wrapped.host_does == BLOCK, wrapped


LOGIN_SHELLS = [shell for shell in ("sh", "bash", "zsh", "fish") if shutil.which(shell)]


@pytest.mark.parametrize("shell", LOGIN_SHELLS)
@pytest.mark.parametrize("agent", ["codex", "claude", "gemini", "cursor"])
def test_a_hook_killed_by_a_signal_blocks_whatever_the_login_shell(agent, shell, tmp_path):
    """Codex runs the entry with $SHELL -lc; zsh says nothing when a command is killed, and an exit 2
    with nothing on stderr is a failed hook to Codex: the entry's own line must be there."""
    killed = ["/bin/sh", "-c", "kill -9 $$"]
    command = SETUPS[agent].command(killed)
    process = subprocess.run([shell, "-c", command], input=b"{}", capture_output=True, timeout=60)
    result = Result(agent, process)
    assert result.code == 2 and "gatekeep: blocked" in result.stderr and result.host_does == BLOCK, result


@pytest.mark.parametrize("agent", list(BARE_COMMAND_MISSING))
def test_gatekeep_moved_away_blocks_through_the_installed_command(agent, monkeypatch, tmp_path):
    """The interpreter is there but gatekeep is not where the hook looks (reinstalled elsewhere)."""
    from gatekeep.shells import hook as hook_module

    monkeypatch.setattr(hook_module, "import_dirs", lambda: [str(tmp_path / "nowhere")])
    command = SETUPS[agent].command(SETUPS[agent].start())
    result = Result(agent, _run_through_shell(command, EVENTS[agent]("git status", str(tmp_path))))
    assert result.host_does == BLOCK, result
    assert f"cannot import gatekeep from {tmp_path / 'nowhere'}" in result.stdout + result.stderr
    assert f"run: gatekeep install --agent {agent}" in result.stdout + result.stderr


@pytest.mark.parametrize("agent", list(BARE_COMMAND_MISSING))
def test_the_installed_command_decides(agent, tmp_path):
    command = SETUPS[agent].command(SETUPS[agent].start())
    for line, host_does in (("git status", RUN), ("rm -rf ~", BLOCK)):
        result = Result(agent, _run_through_shell(command, EVENTS[agent](line, str(tmp_path))))
        assert result.host_does == host_does, (line, result)


# --- OpenCode: the plugin itself, run by Node as OpenCode runs it ------------------------------------

NODE = shutil.which("node")
HARNESS = """
import plugin from "./gatekeep.mjs";
const hooks = await plugin.server({ directory: process.argv[2] });
const results = [];
for (const [tool, args] of JSON.parse(process.argv[3])) {
  try {
    const given = JSON.stringify(args);
    await hooks["tool.execute.before"]({ tool, sessionID: "ses_1", callID: "call_1" }, { args });
    results.push(JSON.stringify(args) === given ? "run" : "run " + JSON.stringify(args));
  } catch (e) {
    results.push("block: " + e.message);
  }
}
console.log(JSON.stringify({ id: plugin.id, results }));
"""


def run_plugin(tmp_path: Path, calls: list, plugin_text: str | None = None) -> dict:
    """The installed plugin (or `plugin_text`), loaded by Node and called as OpenCode calls it."""
    from gatekeep.main import main

    if plugin_text is None:
        assert main(["install", "--agent", "opencode"]) == 0
        plugin_text = Path(SETUPS["opencode"].path()).read_text()
    work = tmp_path / "node"
    write(work / "gatekeep.mjs", plugin_text)  # .mjs: Node reads it as the ES module OpenCode loads
    write(work / "harness.mjs", HARNESS)
    argv = [NODE, str(work / "harness.mjs"), str(tmp_path), json.dumps(calls)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=work)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed: the OpenCode plugin is not run")
def test_the_opencode_plugin_lets_through_only_what_gatekeep_allows(tmp_path, audit_log):
    calls = [
        ["bash", {"command": "git status"}],
        ["bash", {"command": "rm -rf ~"}],
        ["bash", {"command": "npm run build"}],
        ["read", {"filePath": "/etc/passwd"}],
        ["bash", {}],
        ["write", {"filePath": str(tmp_path / "notes.md"), "content": "x"}],
        ["write", {"filePath": str(tmp_path / ".opencode" / "plugins" / "x.js"), "content": "x"}],
    ]
    found = run_plugin(tmp_path, calls)
    assert found["id"] == "gatekeep"
    allowed, denied, asked, other, malformed_call, write_elsewhere, write_plugin = found["results"]
    assert (allowed, other, write_elsewhere) == ("run", "run", "run")
    assert write_plugin.startswith("block: gatekeep: blocked (deny): write writes to ")
    assert denied.startswith("block: gatekeep: blocked (deny): `rm -rf ~`")
    assert asked.startswith("block: gatekeep: blocked, as it needs approval and OpenCode cannot ask")
    assert malformed_call.startswith("block: gatekeep: blocked: the hook event has no args.command string")
    assert [r["agent"] for r in audit.read_last(str(audit_log), 10)] == ["opencode"] * 4


def plugin_starting(argv: list[str]) -> str:
    """The installed plugin, starting `argv` in place of gatekeep."""
    from gatekeep.main import main

    assert main(["install", "--agent", "opencode"]) == 0
    text = Path(SETUPS["opencode"].path()).read_text()
    start = text.index("const GATEKEEP = ") + len("const GATEKEEP = ")
    return text[:start] + json.dumps(argv) + text[text.index(";\n", start) :]


@pytest.mark.skipif(NODE is None, reason="node is not installed: the OpenCode plugin is not run")
@pytest.mark.parametrize("answer, result", [
    ({"decision": "allow", "reason": "", "args": {"command": "gatekeep run --sandbox -- make"}},
     'run {"command":"gatekeep run --sandbox -- make","workdir":"."}'),  # a contained command replaces its own
    ({"decision": "allow", "reason": ""}, "run"),
    ({"decision": "allow", "args": "make"}, "run"),  # not an object: nothing replaced
    ({"decision": "deny", "reason": "no", "args": {"command": "true"}}, "block: no"),
])  # fmt: skip
def test_the_opencode_plugin_replaces_the_arguments_only_on_an_allow(tmp_path, answer, result):
    plugin = plugin_starting(["/bin/sh", "-c", f"cat >/dev/null; echo '{json.dumps(answer)}'"])
    assert run_plugin(tmp_path, [["bash", {"command": "make", "workdir": "."}]], plugin)["results"] == [result]


@pytest.mark.skipif(NODE is None, reason="node is not installed: the OpenCode plugin is not run")
def test_the_opencode_plugin_blocks_when_gatekeep_cannot_run(tmp_path):
    for argv in ([str(tmp_path / "gone" / "python3")], ["/bin/sh", "-c", "exit 0"], ["/bin/sh", "-c", "kill $$"]):
        plugin = plugin_starting(argv)
        (result,) = run_plugin(tmp_path, [["bash", {"command": "git status"}]], plugin)["results"]
        assert result.startswith("block: gatekeep"), (argv, result)
