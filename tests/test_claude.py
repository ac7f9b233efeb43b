"""Claude Code: the PreToolUse hook (`gatekeep claude-hook`, the older name of `agent-hook claude`) and
`gatekeep rules import`. tests/test_agents.py tests every agent's hook, this one included, the same way.

The hook is run as the real console script with real-shaped events on stdin,
as Claude Code runs it. Claude Code reads exit 2 as "block" and exit 1 as "go
ahead", so every failure here must exit 2 and never print an allow.
"""

from __future__ import annotations

import io
import os
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gatekeep.agents.claude_rules import Converted, convert_entry, convert_settings
from gatekeep.commands.agent_hook import agent_hook
from gatekeep.judge.policy import read_layer
from gatekeep.main import main
from gatekeep.record import audit
from gatekeep.record.policy_edit import add_rule, add_rules
from tests.conftest import write

SCRIPT = Path(sys.executable).with_name("gatekeep")
GATEKEEP = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gatekeep"]


@pytest.fixture
def user_policy(paths) -> Path:
    return Path(paths.user_policy)


@pytest.fixture
def audit_log(paths) -> Path:
    return Path(paths.audit_log)


def event(command: object = "git status", **changes) -> dict:
    """A PreToolUse event for the Bash tool, shaped as Claude Code sends it."""
    data = {
        "session_id": "5f2c9a7e-session",
        "transcript_path": "/home/u/.claude/projects/x/5f2c9a7e.jsonl",
        "cwd": "/",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run it"},
    }
    data.update(changes)
    return data


def hook(data: dict | bytes, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    stdin = data if isinstance(data, bytes) else json.dumps(data).encode()
    return subprocess.run([*GATEKEEP, "claude-hook", *args], input=stdin, capture_output=True, cwd=cwd, timeout=60)


def decision(result: subprocess.CompletedProcess) -> dict:
    """The hook's answer, checked for its exact shape."""
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(b"\n") == 1
    answer = json.loads(result.stdout)
    assert list(answer) == ["hookSpecificOutput"]
    output = answer["hookSpecificOutput"]
    assert list(output) == ["hookEventName", "permissionDecision", "permissionDecisionReason"]
    assert output["hookEventName"] == "PreToolUse"
    return output


# --- the hook's decisions -------------------------------------------------------------------------

DECISIONS = [
    ("git status", "allow", "gatekeep: allowed: `git status` as a built-in read-only command", None),
    ("rm -rf /", "deny", "gatekeep: blocked (deny): `rm -rf /` is denied by rule 'rm * / *'", None),
    (
        "npm run build --watch",
        "ask",
        "gatekeep: needs approval: `npm run build --watch` matches no rule",
        "to allow it from now on: gatekeep rules add 'npm run build *'",
    ),
]


@pytest.mark.parametrize("command,verdict,starts,suggestion", DECISIONS)
def test_a_bash_call_gets_the_gates_decision_and_one_audit_record(
    paths, tmp_path, command, verdict, starts, suggestion, audit_log
):
    result = hook(event(command, cwd=str(tmp_path)))
    output = decision(result)
    assert output["permissionDecision"] == verdict
    assert output["permissionDecisionReason"].startswith(starts)
    if suggestion is None:
        assert "gatekeep rules add" not in output["permissionDecisionReason"]
    else:
        assert output["permissionDecisionReason"].endswith(suggestion)
    (record,) = audit.read_last(str(audit_log), 10)
    assert set(audit.FIELDS) <= set(record)
    assert record["command"] == command and record["cwd"] == str(tmp_path)
    assert (record["shell"], record["agent"], record["session_id"]) == (None, "claude", "5f2c9a7e-session")
    assert record["tool"] == "Bash"
    assert (record["decision"], record["outcome"]) == (verdict, verdict)  # ask: Claude Code asks its user
    assert (record["prompted"], record["answer"], record["timed_out"]) == (False, None, False)
    assert record["policy_sha256"]


def test_the_users_rules_apply(paths, tmp_path, user_policy):
    write(user_policy, "rules:\n  allow: ['npm run build *']\n  deny: ['git status *']\n")
    assert decision(hook(event("npm run build --watch", cwd=str(tmp_path))))["permissionDecision"] == "allow"
    output = decision(hook(event("git status", cwd=str(tmp_path))))
    assert output["permissionDecision"] == "deny"
    assert str(user_policy) in output["permissionDecisionReason"]


def test_the_policy_option_names_another_user_policy(tmp_path):
    strict = write(tmp_path / "agent.yaml", "rules:\n  deny: ['git status *']\n")
    result = hook(event("git status", cwd=str(tmp_path)), "--policy", str(strict))
    assert decision(result)["permissionDecision"] == "deny"


def test_it_decides_in_the_events_cwd_not_its_own(paths, tmp_path, user_policy):
    repo, other = tmp_path / "repo", tmp_path / "other"
    other.mkdir()
    write(repo / ".gatekeep.yaml", "rules:\n  deny: ['git status *']\n")  # a project's deny rules apply at once
    write(user_policy, "rules:\n  allow: ['echo *']\n")
    write_inside = f"echo hi > {repo}/notes.txt"
    cases = [
        # (event cwd, the hook process's own cwd, command, decision)
        (str(repo), other, "git status", "deny"),
        (str(other), repo, "git status", "allow"),
        (str(repo), other, write_inside, "allow"),
        (str(other), repo, write_inside, "ask"),  # a write outside the directory asks
        (None, repo, "git status", "deny"),  # no cwd in the event: the process's own
        (None, other, "git status", "allow"),
    ]
    for cwd, process_cwd, command, expected in cases:
        data = event(command, cwd=cwd)
        if cwd is None:
            del data["cwd"]
        output = decision(hook(data, cwd=process_cwd))
        assert output["permissionDecision"] == expected, (cwd, process_cwd, command, output)


@pytest.mark.parametrize("tool", ["Read", "Glob", "WebFetch", "mcp__github__create_issue"])
def test_other_tools_pass_through_without_a_decision_or_a_record(paths, tool, audit_log):
    data = event(tool_name=tool, tool_input={"file_path": "/etc/passwd", "command": "rm -rf /"})
    result = hook(data)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert not audit_log.exists()


# Claude Code's own file tools: (tool, file, permission mode, decision; None: passed through, no record)
FILE_TOOL_CASES = [
    ("Write", "notes.md", "default", None),  # the host's own permissions decide
    ("Edit", "/srv/elsewhere/x.py", "default", None),  # outside the project too: the host asks itself
    ("Write", ".claude/settings.local.json", "default", "deny"),  # would turn gatekeep off
    ("Edit", ".claude/settings.json", "bypassPermissions", "deny"),
    ("MultiEdit", "~/.claude/settings.json", "default", "deny"),
    ("Write", ".gemini/settings.json", "default", "deny"),
    ("Write", ".github/hooks/hooks.json", "default", "deny"),
    ("Write", "~/.bashrc", "default", "deny"),  # a start-up file
    ("Edit", ".git/hooks/pre-commit", "default", "deny"),
    ("Write", ".gatekeep.yaml", "default", "deny"),
    ("Write", "/etc/passwd", "default", "deny"),
    ("NotebookEdit", "~/.ssh/notes.ipynb", "default", "deny"),
    ("Write", "~/.gitconfig", "default", "ask"),  # settings that make programs run commands
    ("Write", "~/.gitconfig", "bypassPermissions", "deny"),  # an ask Claude Code may not ask
    ("Write", "~/.local/bin/git", "default", "ask"),  # a directory on PATH
]


@pytest.mark.parametrize("tool, file, mode, expected", FILE_TOOL_CASES)
def test_the_file_tools_are_judged_only_for_protected_places(tool, file, mode, expected, tmp_path, audit_log):
    home = os.environ["HOME"]
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    path = file.replace("~", home, 1)
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    data = event(tool_name=tool, tool_input={key: path, "content": "x"}, cwd=str(repo), permission_mode=mode)
    result = hook(data)
    if expected is None:
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
        assert not audit_log.exists()
        return
    assert decision(result)["permissionDecision"] == expected
    [record] = [json.loads(line) for line in audit_log.read_text().splitlines()]
    assert (record["tool"], record["command"], record["outcome"]) == (tool, f"{tool} {path}", expected)


@pytest.mark.parametrize("tool_input", [{}, {"file_path": ""}, {"file_path": 7}, {"file_path": "a\0b"}])
def test_a_file_tool_call_without_a_file_blocks(tool_input, audit_log):
    result = hook(event(tool_name="Write", tool_input=tool_input))
    assert result.returncode == 2 and b"gatekeep: blocked" in result.stderr


def test_an_ask_is_found_by_audit_tail(capsys):
    decision(hook(event("npm run build")))
    decision(hook(event("git status")))
    assert main(["audit", "tail", "--json", "--outcome", "ask"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["command"] == "npm run build"


# --- failing closed: exit 2, one line on stderr, nothing on stdout, never exit 1 ---------------------

MALFORMED = [
    ("not JSON", b'{"session_id": "abc",', "not JSON"),
    ("empty stdin", b"", "not JSON"),
    ("not UTF-8", b'{"tool_name": "Bash\xff"}', "not JSON"),
    ("a JSON array", b'[{"tool_name": "Bash", "tool_input": {"command": "ls"}}]', "JSON list, not an object"),
    ("a JSON string", b'"ls"', "JSON str, not an object"),
    ("no tool_input", {k: v for k, v in event().items() if k != "tool_input"}, "tool_input is not an object"),
    ("tool_input not an object", event(tool_input="ls"), "tool_input is not an object"),
    ("no command", event(tool_input={"description": "Run it"}), "no tool_input.command"),
    ("a number for a command", event(5), "no tool_input.command"),
    ("a list for a command", event(["rm", "-rf", "/"]), "no tool_input.command"),
    ("null for a command", event(None), "no tool_input.command"),
    ("an empty command", event(""), "tool_input.command is empty"),
    ("a blank command", event(" \n\t"), "tool_input.command is empty"),
    ("no tool_name", {k: v for k, v in event().items() if k != "tool_name"}, "no tool_name"),
    ("another event", event(hook_event_name="PostToolUse"), "expected a PreToolUse event, got 'PostToolUse'"),
    ("no event name", {k: v for k, v in event().items() if k != "hook_event_name"}, "expected a PreToolUse event"),
    ("a relative cwd", event(cwd="repo"), "cwd is not an absolute path"),
    ("a number for a cwd", event(cwd=7), "cwd is not an absolute path"),
]


@pytest.mark.parametrize("data,message", [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED])
def test_a_malformed_event_blocks(paths, data, message, audit_log):
    result = hook(data)
    assert result.returncode == 2
    assert result.stdout == b""
    err = result.stderr.decode()
    assert err.startswith("gatekeep: blocked: ") and message in err
    assert err.count("\n") == 1
    assert not audit_log.exists()  # no command to record


def test_a_broken_user_policy_blocks_and_is_recorded(paths, tmp_path, user_policy, audit_log):
    write(user_policy, "rules:\n  allow: ['git status *']\n  permit: []\n")
    result = hook(event("git status", cwd=str(tmp_path)))
    assert (result.returncode, result.stdout) == (2, b"")
    err = result.stderr.decode()
    assert err.count("\n") == 1 and f"{user_policy}, line 3, key 'rules.permit'" in err
    (record,) = audit.read_last(str(audit_log), 10)
    assert (record["decision"], record["outcome"], record["session_id"]) == ("deny", "deny", "5f2c9a7e-session")
    assert (record["shell"], record["agent"]) == (None, "claude")


def test_a_missing_policy_file_blocks(tmp_path):
    result = hook(event("git status"), "--policy", str(tmp_path / "nope.yaml"))
    assert (result.returncode, result.stdout) == (2, b"")
    assert b"does not exist" in result.stderr


def test_an_unwritable_audit_log_blocks(monkeypatch, tmp_path):
    home = tmp_path / "gk"
    write(home / "state", "a file where the state directory should be")
    monkeypatch.setenv("GATEKEEP_HOME", str(home))
    result = hook(event("git status"))
    assert (result.returncode, result.stdout) == (2, b"")
    assert b"cannot write the audit log" in result.stderr


def _stdin(monkeypatch, data: dict) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(data).encode())))


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_a_bug_or_ctrl_c_in_the_hook_exits_2(capsys, monkeypatch, paths, error):
    import gatekeep.commands.agent_hook as module

    def explode(line, policy, cwd):
        raise error

    monkeypatch.setattr(module, "evaluate", explode)
    _stdin(monkeypatch, event("git status"))
    assert main(["claude-hook"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "blocked" in err
    assert isinstance(error, KeyboardInterrupt) or "Traceback" in Path(paths.error_log).read_text()
    # and the function alone, as tests and other callers use it
    assert agent_hook("claude", None, io.BytesIO(json.dumps(event("git status")).encode())) == 2


def test_ctrl_c_outside_the_hooks_body_exits_2_for_claude_but_1_elsewhere(capsys, monkeypatch):
    """click turns Ctrl-C into Abort, which main() reports as blocked (1): Claude Code would go ahead."""
    import gatekeep.commands.agent_hook as hook_module
    import gatekeep.commands.paths_cmd as paths_module

    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(hook_module, "agent_hook", interrupt)
    monkeypatch.setattr(paths_module, "paths_show", interrupt)
    _stdin(monkeypatch, event("git status"))
    assert main(["claude-hook"]) == 2
    assert main(["paths"]) == 1
    assert capsys.readouterr().out == ""


def test_usage_errors_exit_2():
    result = subprocess.run([*GATEKEEP, "claude-hook", "--sideways"], input=b"{}", capture_output=True, timeout=60)
    assert (result.returncode, result.stdout) == (2, b"")


# --- rules import: the conversion -------------------------------------------------------------------

EVERY = "would allow every command; set `default: allow` in the policy if you really mean it"
CONVERSIONS = [
    # (entry, verdict, pattern, why it was skipped)
    ("Bash(npm run test:*)", "allow", "npm run test *", None),
    ("Bash(git push:*)", "ask", "git push *", None),
    ("Bash(rm -rf:*)", "deny", "rm -rf *", None),
    ("Bash(git status)", "allow", "git status", None),
    ("Bash(git diff *)", "allow", "git diff *", None),
    ("Bash(curl * | sh)", "deny", "curl * | sh", None),
    ("Bash(  npm   test  )", "allow", "npm test", None),
    ("Bash(echo $(date))", "allow", "echo $(date)", None),
    ("Bash", "allow", None, EVERY),
    ("Bash(*)", "allow", None, EVERY),
    ("Bash(:*)", "allow", None, EVERY),
    ("Bash()", "allow", None, EVERY),
    ("Bash(* *)", "allow", None, EVERY),
    ("Bash", "deny", "*", None),
    ("Bash(*)", "ask", "*", None),
    ("Bash(:*)", "deny", "*", None),
    ("Read(./src/**)", "allow", None, "an allow adds nothing"),
    ("Edit", "allow", None, "an allow adds nothing"),
    ("Edit", "deny", None, "names no path"),
    ("Read(**)", "deny", None, "names every path"),
    ("WebFetch(domain:docs.python.org)", "deny", None, "not a shell command"),
    ("mcp__github__create_issue", "ask", None, "not a shell command"),
    ("bash(ls)", "allow", None, "not a shell command"),
    ("Bash(git log", "allow", None, "not a rule of the form Tool or Tool(specifier)"),
    ("Bash(git log))", "allow", None, "not a rule of the form Tool or Tool(specifier)"),
    ("Bash(echo (x)", "allow", None, "not a rule of the form Tool or Tool(specifier)"),
    ("Bash(ls) x", "allow", None, "not a rule of the form Tool or Tool(specifier)"),
    ("", "allow", None, "not a rule of the form Tool or Tool(specifier)"),
    (5, "allow", None, "not a string"),
    ({"tool": "Bash"}, "deny", None, "not a string"),
    ("Bash(npm test && npm run build)", "allow", None, "one command at a time"),
    ("Bash(make; make install)", "deny", None, "one command at a time"),
    # an allow never widens: no part of a pipeline may be any command at all
    ("Bash(* | *)", "allow", None, "any command in a part of a pipeline"),
    ("Bash(curl * | *)", "allow", None, "any command in a part of a pipeline"),
    ("Bash(* | grep x)", "allow", None, "any command in a part of a pipeline"),
    ("Bash(* | *)", "deny", "* | *", None),  # denying every pipeline only tightens
    ("Bash(git log * | head *)", "allow", "git log * | head *", None),
]


@pytest.mark.parametrize("entry,verdict,pattern,skipped", CONVERSIONS)
def test_convert_entry(entry, verdict, pattern, skipped):
    converted = convert_entry(entry, verdict)
    assert (converted.entry, converted.verdict, converted.pattern) == (entry, verdict, pattern)
    if skipped is None:
        assert converted.skipped is None
    else:
        assert skipped in converted.skipped


def test_a_pattern_compile_rule_refuses_is_skipped_with_its_reason(monkeypatch):
    import gatekeep.agents.claude_rules as module

    def refuse(pattern, verdict, layer, path):
        raise ValueError(f"bad pattern {pattern!r}")

    monkeypatch.setattr(module, "compile_rule", refuse)
    assert convert_entry("Bash(git status)", "allow") == Converted(
        "Bash(git status)", "allow", None, "bad pattern 'git status'"
    )


def test_convert_settings_takes_deny_first_and_ignores_other_keys():
    settings = {
        "permissions": {
            "allow": ["Bash(ls)"],
            "ask": ["Bash(git push:*)"],
            "deny": ["Bash(rm:*)"],
            "defaultMode": "acceptEdits",
            "additionalDirectories": ["../x"],
        },
        "hooks": {},
    }
    assert [(c.verdict, c.pattern) for c in convert_settings(settings)] == [
        ("deny", "rm *"),
        ("ask", "git push *"),
        ("allow", "ls"),
    ]
    assert convert_settings({"permissions": {}}) == []
    assert convert_settings({"permissions": {"allow": None}}) == []


@pytest.mark.parametrize(
    "settings,message",
    [
        ([], 'no "permissions" object'),
        ({}, 'no "permissions" object'),
        ({"permissions": ["Bash(ls)"]}, 'no "permissions" object'),
        ({"permissions": {"allow": "Bash(ls)"}}, '"permissions.allow" is not a list'),
        ({"permissions": {"deny": {"Bash": 1}}}, '"permissions.deny" is not a list'),
    ],
)
def test_convert_settings_refuses_a_file_without_permission_lists(settings, message):
    with pytest.raises(ValueError, match=message):
        convert_settings(settings)


# --- rules import: the command ---------------------------------------------------------------------

SETTINGS = {
    "permissions": {
        "allow": [
            "Bash(npm run test:*)",
            "Bash(git status)",
            "Bash(git diff *)",
            "Bash(git push:*)",  # also under deny below: Claude's deny wins, and so does ours
            "Bash",
            "Read(./src/**)",
            "mcp__github__create_issue",
            "Bash(git log",
        ],
        "ask": ["Bash(docker run:*)"],
        "deny": ["Bash(rm -rf:*)", "Bash(git push:*)"],
    }
}
IMPORTED = [
    ("allow", "npm run test *"),
    ("allow", "git status"),
    ("allow", "git diff *"),
    ("ask", "docker run *"),
    ("deny", "rm -rf *"),
    ("deny", "git push *"),
]
COMMENTED = """\
# my policy — hand written
default: ask   # keep asking

rules:
  # things I trust
  allow: ["make test"]
  deny:
    - curl * | sh   # never
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def user_rules(capsys) -> list[tuple[str, str]]:
    code, out, _ = run(capsys, "rules", "list", "--json")
    assert code == 0
    return [(r["verdict"], r["pattern"]) for r in json.loads(out)["rules"] if r["layer"] == "user"]


def test_import_adds_the_bash_rules(capsys, paths, tmp_path, user_policy):
    source = write(tmp_path / "settings.json", json.dumps(SETTINGS))
    code, out, _ = run(capsys, "rules", "import", str(source))
    assert code == 0
    assert sorted(user_rules(capsys)) == sorted(IMPORTED)
    lines = out.splitlines()
    assert lines[0] == "added deny rule 'rm -rf *' (from Bash(rm -rf:*))"
    assert "added allow rule 'npm run test *' (from Bash(npm run test:*))" in lines
    assert any(line.startswith("not added: allow rule 'git push *'") and "under deny" in line for line in lines)
    assert any(line.startswith("skipped allow Read(./src/**): gatekeep protects paths") for line in lines)
    assert lines[-1] == (
        f"6 added, 0 already present, 1 kept under another verdict, 4 skipped (from {source} into {user_policy})"
    )
    assert run(capsys, "check", "--", "npm run test -- --watch")[0] == 0
    assert run(capsys, "check", "--", "git push origin main")[0] == 1


def test_import_keeps_comments_and_never_loosens_a_rule(capsys, paths, tmp_path, user_policy):
    write(user_policy, COMMENTED)
    source = write(
        tmp_path / "settings.json", json.dumps({"permissions": {"allow": ["Bash(curl * | sh)", "Bash(ls)"]}})
    )
    code, out, _ = run(capsys, "rules", "import", str(source))
    assert code == 0
    text = user_policy.read_text()
    for kept in ("# my policy — hand written", "default: ask   # keep asking", "# things I trust", "# never"):
        assert kept in text
    assert read_layer("user", user_policy).rules == (
        ("allow", "make test", ()),
        ("allow", "ls", ()),
        ("deny", "curl * | sh", ()),
    )
    assert "1 added, 0 already present, 1 kept under another verdict, 0 skipped" in out


def test_importing_twice_adds_nothing(capsys, paths, tmp_path, user_policy):
    source = write(tmp_path / "settings.json", json.dumps(SETTINGS))
    run(capsys, "rules", "import", str(source))
    before = user_policy.read_text()
    code, out, _ = run(capsys, "rules", "import", str(source))
    assert code == 0
    assert user_policy.read_text() == before
    assert out.splitlines()[-1].startswith("0 added, 6 already present, 1 kept under another verdict, 4 skipped")
    assert sorted(user_rules(capsys)) == sorted(IMPORTED)


def test_dry_run_writes_nothing(capsys, paths, tmp_path, user_policy):
    source = write(tmp_path / "settings.json", json.dumps(SETTINGS))
    code, out, _ = run(capsys, "rules", "import", "--dry-run", str(source))
    assert code == 0
    assert not user_policy.exists()
    assert not Path(paths.lock_dir).exists()
    assert "would add deny rule 'rm -rf *' (from Bash(rm -rf:*))" in out.splitlines()
    assert out.splitlines()[-1].startswith("dry run, nothing written: 6 would be added, 0 already present")
    write(user_policy, COMMENTED)
    code, out, _ = run(capsys, "rules", "import", "--dry-run", str(source))
    assert user_policy.read_text() == COMMENTED
    assert "6 would be added" in out


def test_import_into_another_policy_file(capsys, paths, tmp_path, user_policy):
    source = write(tmp_path / "settings.json", json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    team = tmp_path / "team.yaml"
    assert run(capsys, "rules", "import", str(source), "--policy", str(team))[0] == 0
    assert read_layer("user", team).rules == (("deny", "rm *", ()),)
    assert not user_policy.exists()


@pytest.mark.parametrize(
    "content,message",
    [
        (None, "the file does not exist"),
        ("{not json", "it is not JSON"),
        ("", "it is not JSON"),
        ("[1, 2]", 'no "permissions" object'),
        ('{"hooks": {}}', 'no "permissions" object'),
        ('{"permissions": {"allow": "Bash(ls)"}}', '"permissions.allow" is not a list'),
        (b"\xff\xfe{}", "cannot read it"),
    ],
)
def test_a_bad_settings_file_exits_2_with_one_line(capsys, paths, tmp_path, content, message, user_policy):
    source = tmp_path / "settings.json"
    if isinstance(content, bytes):
        source.write_bytes(content)
    elif content is not None:
        source.write_text(content)
    code, out, err = run(capsys, "rules", "import", str(source))
    assert code == 2 and out == ""
    assert err.startswith(f"gatekeep: cannot import {source}: ") and message in err
    assert err.count("\n") == 1
    assert not user_policy.exists()


def test_a_broken_policy_is_not_imported_into(capsys, paths, tmp_path, user_policy):
    broken = "rules:\n  allow: [unclosed\n"
    write(user_policy, broken)
    source = write(tmp_path / "settings.json", json.dumps(SETTINGS))
    assert run(capsys, "rules", "import", str(source))[0] == 2
    assert user_policy.read_text() == broken


# --- policy_edit.add_rules ---------------------------------------------------------------------------


def test_add_rules_locks_and_writes_once(monkeypatch, paths, user_policy):
    import gatekeep.record.policy_edit as module

    writes, locks = [], []
    real_write, real_locked = module._write, module.locked
    monkeypatch.setattr(module, "_write", lambda policy, data: writes.append(policy) or real_write(policy, data))
    monkeypatch.setattr(module, "locked", lambda p, policy: locks.append(policy) or real_locked(p, policy))
    rules = [("ls *", "allow"), ("rm *", "deny"), ("ls   *", "allow"), ("git push *", "ask")]
    assert add_rules(paths, user_policy, rules) == ["added", "added", "exists", "added"]
    assert (len(writes), len(locks)) == (1, 1)
    assert add_rules(paths, user_policy, rules) == ["exists"] * 4
    assert (len(writes), len(locks)) == (1, 2)  # nothing new: not rewritten
    assert add_rules(paths, user_policy, [("ls *", "deny")], move=False) == ["kept as allow"]
    assert add_rules(paths, user_policy, [("ls *", "deny")], write=False) == ["moved from allow"]
    assert len(writes) == 1 and len(locks) == 3  # a dry run takes no lock
    assert add_rule(paths, user_policy, "ls *", "deny") == "moved from allow"
    assert read_layer("user", user_policy).rules == (("ask", "git push *", ()), ("deny", "rm *", ()), ("deny", "ls *", ()))


def test_add_rules_into_an_empty_rules_key(paths, user_policy):
    write(user_policy, "default: ask\nrules:\n")
    assert add_rules(paths, user_policy, [("ls *", "allow")]) == ["added"]
    assert read_layer("user", user_policy).rules == (("allow", "ls *", ()),)


PATH_RULES = [
    # (Claude entry, verdict, protect action, gatekeep path)
    ("Read(./.env)", "deny", "read", ".env"),
    ("Read(~/.ssh/**)", "ask", "read", "~/.ssh"),
    ("Read(//etc/shadow)", "deny", "read", "/etc/shadow"),
    ("Read(/config/secrets.yml)", "deny", "read", "config/secrets.yml"),
    ("Read(**/*.pem)", "ask", "read", "*.pem"),
    ("Edit(./migrations/**)", "deny", "write", "migrations/**"),
    ("Read(**/secrets/**)", "deny", "read", "secrets/**"),
    ("Write(~/.bashrc)", "ask", "write", "~/.bashrc"),
]


@pytest.mark.parametrize("entry,verdict,action,path", PATH_RULES)
def test_read_and_edit_rules_become_protected_paths(entry, verdict, action, path):
    converted = convert_entry(entry, verdict)
    assert (converted.action, converted.pattern, converted.skipped) == (action, path, None)


def test_import_protects_what_claude_may_not_read_or_edit(capsys, paths, tmp_path, user_policy, monkeypatch):
    settings = {"permissions": {"deny": ["Read(./notes/**)", "Edit(./notes/**)"], "ask": ["Read(./draft.md)"]}}
    source = write(tmp_path / "settings.json", json.dumps(settings))
    code, out, _ = run(capsys, "rules", "import", str(source))
    assert code == 0, out
    assert "added protect.read.deny 'notes/**' (from Read(./notes/**))" in out.splitlines()
    project = tmp_path / "project"
    write(project / "notes" / "plan.md", "x")
    write(project / "draft.md", "x")
    monkeypatch.chdir(project)
    code, _, err = run(capsys, "check", "--", "cat notes/plan.md")
    assert (code, "protect.read.deny" in err) == (1, True), err
    code, _, err = run(capsys, "check", "--", "echo x > notes/new.md")
    assert (code, "protect.write.deny" in err) == (1, True), err
    assert run(capsys, "check", "--", "cat draft.md")[0] == 1  # asks, and nobody is at a terminal to answer
    assert run(capsys, "check", "--", "cat README.md")[0] == 0
    # a second import adds nothing, and says so
    code, out, _ = run(capsys, "rules", "import", str(source))
    assert "3 already present" in out.splitlines()[-1]
