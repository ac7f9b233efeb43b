"""The command line: exit codes, --json shapes, audit records, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from gatekeep.agents.hosts import HOSTS
from gatekeep.cli import cli
from gatekeep.main import main, read_agent_hook_args, read_check_args
from gatekeep.record import audit
from tests.conftest import write

REPO = Path(__file__).resolve().parent.parent


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_exit_codes_on_the_built_in_policy(capsys):
    assert run(capsys, "check", "--", "rm -rf ~")[0] == 1
    assert run(capsys, "check", "--", "git status")[0] == 0
    assert run(capsys, "check", "--", "npm install")[0] == 1  # ask, and no prompt yet


def test_check_json_shape(capsys, paths):
    write(paths.user_policy, "rules:\n  allow: ['git status *']\n  deny: ['rm *']\n")
    code, out, _ = run(capsys, "check", "--json", "--", "git status && rm -rf build")
    assert code == 1
    data = json.loads(out)
    assert uuid.UUID(data["id"]).version == 4
    assert data["command"] == "git status && rm -rf build"
    assert (data["decision"], data["outcome"]) == ("deny", "deny")
    assert "'rm *'" in data["reason"] and str(paths.user_policy) in data["reason"]
    assert data["commands"] == [
        {
            "argv": ["git", "status"],
            "name": "git status",
            "decision": "allow",
            "rule": "git status *",
            "suggestion": "git status *",
        },
        {
            "argv": ["rm", "-rf", "build"],
            "name": "rm",
            "decision": "deny",
            "rule": "rm *",
            "suggestion": "rm -rf build",
        },
    ]
    assert data["suggestions"] == []


def test_check_json_for_the_hanging_input(capsys):
    code, out, _ = run(capsys, "check", "--json", "--", "echo x'${'")
    data = json.loads(out)
    assert code == 1
    assert (data["decision"], data["outcome"]) == ("ask", "deny")
    assert "could not be fully parsed" in data["reason"]


def test_check_writes_one_complete_audit_record(capsys, paths, tmp_path):
    code, out, _ = run(capsys, "check", "--json", "--cwd", str(tmp_path), "--", "git status")
    (record,) = audit.read_last(paths.audit_log, 10)
    assert set(audit.FIELDS) <= set(record)
    assert record["id"] == json.loads(out)["id"]
    assert record["ts"].endswith("Z") and "T" in record["ts"]
    assert record["cwd"] == str(tmp_path)
    assert (record["decision"], record["outcome"], record["prompted"], record["answer"], record["timed_out"]) == (
        "allow",
        "allow",
        False,
        None,
        False,
    )
    assert len(record["policy_sha256"]) == 64
    assert Path(paths.audit_log).stat().st_mode & 0o777 == 0o600


def test_a_broken_policy_blocks_check_but_not_the_other_commands(capsys, paths):
    write(paths.user_policy, "rules:\n  allow: ['git status *']\n  permit: []\n")
    code, _, err = run(capsys, "check", "--", "git status")
    assert code == 2
    assert f"{paths.user_policy}, line 3, key 'rules.permit'" in err
    assert len(err.strip().splitlines()) == 1
    (record,) = audit.read_last(paths.audit_log, 10)
    assert record["outcome"] == "deny"
    assert run(capsys, "paths")[0] == 0
    assert run(capsys, "audit", "tail")[0] == 0
    code, _, err = run(capsys, "rules", "list")
    assert code == 2 and "line 3" in err


def test_an_explicit_policy_that_does_not_exist_is_an_error(capsys, tmp_path):
    code, _, err = run(capsys, "check", "--policy", str(tmp_path / "nope.yaml"), "--", "ls")
    assert code == 2 and "does not exist" in err


def test_an_unwritable_audit_log_blocks_the_line(capsys, monkeypatch, tmp_path):
    home = tmp_path / "gk"
    write(home / "state", "a file where the state directory should be")
    monkeypatch.setenv("GATEKEEP_HOME", str(home))
    code, _, err = run(capsys, "check", "--", "git status")
    assert code == 2 and "cannot write the audit log" in err


def test_an_internal_error_blocks_with_one_line_and_a_log(capsys, monkeypatch, paths):
    import gatekeep.commands.check as check_module

    def explode(line, policy, cwd, **names):
        raise RuntimeError("boom")

    monkeypatch.setattr(check_module, "evaluate", explode)
    code, _, err = run(capsys, "check", "--", "git status")
    assert code == 2
    assert err.count("\n") == 1 and "internal error (RuntimeError: boom); blocked" in err
    assert "Traceback" in Path(paths.error_log).read_text()
    assert Path(paths.error_log).stat().st_mode & 0o777 == 0o600  # private: it shows the line and its paths


def test_the_error_log_is_private_even_if_it_was_created_loose(capsys, monkeypatch, paths):
    import gatekeep.commands.check as check_module

    Path(paths.error_log).parent.mkdir(parents=True, exist_ok=True)
    Path(paths.error_log).touch(mode=0o644)
    monkeypatch.setattr(check_module, "evaluate", lambda line, policy, cwd: 1 / 0)
    assert run(capsys, "check", "--", "git status")[0] == 2
    assert Path(paths.error_log).stat().st_mode & 0o777 == 0o600


def test_usage_errors_exit_2(capsys):
    assert run(capsys, "check")[0] == 2
    assert run(capsys, "rules", "add", "x", "--sideways")[0] == 2
    assert run(capsys, "frobnicate")[0] == 2


def test_rules_add_list_remove(capsys, paths):
    assert run(capsys, "rules", "add", "npm run build *")[0] == 0
    assert run(capsys, "rules", "add", "--deny", "curl * | sh")[0] == 0
    code, out, _ = run(capsys, "rules", "list", "--json")
    data = json.loads(out)
    user = [(r["verdict"], r["pattern"]) for r in data["rules"] if r["layer"] == "user"]
    assert user == [("allow", "npm run build *"), ("deny", "curl * | sh")]
    assert data["default"]["verdict"] == "ask" and data["timeout"] == 300
    assert any(r["layer"] == "built-in" for r in data["rules"])
    _, text, _ = run(capsys, "rules", "list")
    assert "npm run build *" in text and "built-in" in text
    assert run(capsys, "check", "--", "npm run build --watch")[0] == 0
    assert run(capsys, "rules", "remove", "npm run build *")[0] == 0
    assert run(capsys, "rules", "remove", "npm run build *")[0] == 1
    assert run(capsys, "check", "--", "npm run build --watch")[0] == 1


def test_check_without_the_double_dash_says_how_to_pass_the_line(capsys):
    code, _, err = run(capsys, "check", "ls", "-la")
    assert code == 2 and "put it after `--`: gatekeep check -- 'ls -la'" in err


def test_rules_add_says_what_it_stores_and_refuses_or_warns_as_a_user_would_want(capsys, paths):
    code, _, err = run(capsys, "rules", "add", "*")
    assert code == 2 and "would allow every command" in err
    assert run(capsys, "rules", "add", "--deny", "*")[0] == 0  # denying everything is the user's call
    code, out, err = run(capsys, "rules", "add", "git push:*", "curl -s http://127.0.0.1:*", "gti *", "rm -rf ~")
    assert code == 0
    assert "'git push:*' (stored as 'git push *')" in out
    assert "'curl -s http://127.0.0.1:*' in" in out  # a port's `:*` stays as it is
    assert "'gti' is no command here" in err
    assert "can never apply: deny beats allow" in err
    _, out, _ = run(capsys, "rules", "list", "--json")
    user = [r["pattern"] for r in json.loads(out)["rules"] if r["layer"] == "user" and r["verdict"] == "allow"]
    assert user == ["git push *", "curl -s http://127.0.0.1:*", "gti *", "rm -rf ~"]


def test_rules_add_takes_exceptions_for_ask_and_deny_only(capsys, paths, tmp_path):
    code, out, _ = run(capsys, "rules", "add", "--deny", "rm -rf *", "--except", "rm -rf /tmp/*")
    assert code == 0 and "except 'rm -rf /tmp/*'" in out
    _, out, _ = run(capsys, "rules", "list", "--json")
    (rule,) = [r for r in json.loads(out)["rules"] if r["layer"] == "user"]
    assert rule["except"] == ["rm -rf /tmp/*"]
    _, text, _ = run(capsys, "rules", "list")
    assert "except rm -rf /tmp/*" in text
    assert run(capsys, "check", "--no-prompt", "--", "rm -rf ./build")[0] == 1
    code, _, err = run(capsys, "rules", "add", "git *", "--except", "git push *")
    assert code == 2 and "only ask and deny rules take exceptions" in err


def test_rules_take_another_file_with_policy(capsys, tmp_path):
    team = tmp_path / "team.yaml"
    assert run(capsys, "rules", "add", "--ask", "git push *", "--policy", str(team))[0] == 0
    assert "git push *" in team.read_text()
    code, out, _ = run(capsys, "rules", "list", "--json", "--policy", str(team))
    assert any(r["pattern"] == "git push *" and r["path"] == str(team) for r in json.loads(out)["rules"])


def test_rules_test_explains_each_command_without_auditing(capsys, paths):
    write(paths.user_policy, "rules:\n  allow: ['git status *']\n  deny: ['rm *']\n")
    code, out, _ = run(capsys, "rules", "test", "--", "sudo /bin/rm x; git status")
    assert code == 0
    assert out.startswith("verdict: deny")
    assert "`rm x`" in out and "'rm *'" in out and "user policy" in out
    code, out, _ = run(capsys, "rules", "test", "--json", "--", "sudo /bin/rm x")
    (command,) = json.loads(out)["commands"]
    cwd = os.getcwd()  # relative words are also tried where the command runs (normalize.place)
    assert command["forms"] == ["sudo /bin/rm x", "/bin/rm x", "rm x", f"sudo /bin/rm {cwd}/x", f"/bin/rm {cwd}/x", f"rm {cwd}/x"]
    assert command["layer"] == "user"
    assert command["allow_form"] == "sudo /bin/rm x"  # only an allow rule naming sudo itself could allow it
    assert not Path(paths.audit_log).exists()


def test_audit_tail_table_json_and_filter(capsys, paths):
    run(capsys, "check", "--", "git status")
    run(capsys, "check", "--", "rm -rf ~")
    run(capsys, "check", "--", "echo '\x1b[31mred\u202e'")
    code, out, _ = run(capsys, "audit", "tail", "-n", "5")
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out and "\\e[31mred\\u{202e}" in out
    lines = out.splitlines()
    assert len(lines) == 4 and "deny" in lines[2] and "rm * ~ *" in lines[2]
    assert lines[0].split()[:4] == ["TIME", "(UTC)", "OUTCOME", "FROM"]
    shell = audit.read_last(paths.audit_log, 1)[0]["shell"]  # check's --shell, else from $SHELL
    assert lines[3].split()[3] == (shell or "-")
    _, out, _ = run(capsys, "audit", "tail", "--json", "--outcome", "allow")
    assert [json.loads(line)["command"] for line in out.splitlines()] == ["git status", "echo '\x1b[31mred\u202e'"]
    _, out, _ = run(capsys, "audit", "tail", "--json", "-n", "1")
    assert json.loads(out)["command"].startswith("echo")


def test_paths_follow_gatekeep_home(capsys, tmp_path):
    code, out, _ = run(capsys, "paths", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["user_policy"] == str(tmp_path / "gatekeep" / "config" / "policy.yaml")
    assert data["audit_log"] == str(tmp_path / "gatekeep" / "state" / "audit.jsonl")
    assert data["lock_dir"].startswith(str(tmp_path / "gatekeep"))
    assert data["cache_dir"] == str(tmp_path / "gatekeep" / "state" / "cache")
    assert data["server_dir"] == str(tmp_path / "gatekeep" / "state" / "server")


def test_a_real_process(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "gatekeep", "check", "--", "rm -rf ~"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("gatekeep: blocked (deny)")
    assert result.stdout == ""


# `check` with the hooks' kind of arguments is read without click (main.py); both readings must agree.
CHECK_ARGS = [
    ["--", "git status"],
    ["--", "git", "status"],
    ["--no-prompt", "-q", "--", "ls -la"],
    ["--json", "--quiet", "--cwd", "/tmp", "--", "x"],
    ["--cwd=/srv", "--shell", "zsh", "--", "make"],
    ["--shell=bash", "--policy", "p.yaml", "--no-prompt", "--", "a", "--", "b"],
    ["--policy=p.yaml", "--", "-x"],
    ["--cwd", "--json", "--", "x"],  # click takes the next word as the value, whatever it is
    ["--shell", "bash", "--quiet", "--names-on-request", "--", "gti status"],
    ["--shell", "zsh", "--shell-names", "ll gs\nf", "--", "gti"],
    ["--shell-names", "", "--", "gti"],  # a shell with no aliases or functions
]
LEFT_TO_CLICK = [
    ["--help", "--", "x"],
    ["-h", "--", "x"],
    [
        "--",
    ],
    ["git status"],
    ["--sideways", "--", "x"],
    ["--json=1", "--", "x"],
    ["-qh", "--", "x"],
    ["--policy=", "--", "x"],
    ["--policy", ".", "--", "x"],  # a directory: click explains
    ["--cwd"],
]


def _click_reading(args: list[str]) -> dict:
    command = cli.commands["check"]
    params = command.make_context("check", list(args)).params
    return {
        "line": " ".join(params["command_line"]),
        "policy_file": params["policy_file"],
        "prompt": not params["no_prompt"],
        "as_json": params["as_json"],
        "cwd": params["cwd"],
        "quiet": params["quiet"],
        "shell": params["shell"],
        "names_on_request": params["names_on_request"],
        "can_contain": params["can_contain"],
        "shell_names": params["shell_names"],
    }


@pytest.mark.parametrize("args", CHECK_ARGS)
def test_check_arguments_read_without_click_as_click_reads_them(args):
    assert read_check_args(["check", *args]) == _click_reading(args)


@pytest.mark.parametrize("args", LEFT_TO_CLICK)
def test_other_check_arguments_are_left_to_click(args):
    assert read_check_args(["check", *args]) is None


HOOK_ARGS = [[], ["--policy", "p.yaml"], ["--policy=p.yaml"], ["--policy", "/a b/p.yaml"]]
HOOK_LEFT_TO_CLICK = [
    ["--help"], ["-h"], ["--policy"], ["--policy="], ["--policy", "."], ["--policy", "-h"], ["--json"],
    ["--policy", "a", "--policy", "b"], ["--policy", "a", "extra"], ["--pol", "a"],
]  # fmt: skip
HOOKS = [["claude-hook"]] + [["agent-hook", name] for name in HOSTS]


@pytest.mark.parametrize("command", HOOKS, ids=" ".join)
@pytest.mark.parametrize("args", HOOK_ARGS)
def test_agent_hook_arguments_read_without_click_as_click_reads_them(command, args):
    context = cli.commands[command[0]].make_context(command[0], [*command[1:], *args])
    params = {"agent": "claude", **context.params}
    assert read_agent_hook_args([*command, *args]) == params


@pytest.mark.parametrize("command", HOOKS, ids=" ".join)
@pytest.mark.parametrize("args", HOOK_LEFT_TO_CLICK)
def test_other_agent_hook_arguments_are_left_to_click(command, args):
    assert read_agent_hook_args([*command, *args]) is None


@pytest.mark.parametrize("args", [["agent-hook"], ["agent-hook", "vim"], ["agent-hook", "--policy", "p"]])
def test_an_agent_hook_without_a_known_agent_is_left_to_click(args):
    assert read_agent_hook_args(args) is None


def test_every_agent_hook_option_is_known_to_the_fast_reader():
    for command in ("claude-hook", "agent-hook"):
        options = {o for p in cli.commands[command].params for o in p.opts} - {"-h", "--help"}
        assert options - {"agent"} == {"--policy"}


def test_every_check_option_is_known_to_the_fast_reader():
    from gatekeep import main as main_module

    options = {o for p in cli.commands["check"].params for o in p.opts if o.startswith("-")} - {"-h", "--help"}
    assert options == set(main_module._FLAGS) | set(main_module._VALUES)


# Each costs from 0.2x (getpass) to 1x (dataclasses, with inspect) Python's start-up.
SLOW_IMPORTS = ("click", "ruamel", "bashlex", "filelock", "dataclasses", "inspect", "getpass", "typing")
# what the hooks' way of starting Python (-I -S) spares a typical line: each costs it
# 0.05x-1x Python's start-up (issue 6; see records.py, lazyre.py, paths.py, jsontext.py)
STDLIB_IMPORTS = ("re", "json", "pathlib", "collections", "functools", "enum", "hashlib", "shlex", "unicodedata")
TYPICAL = ["git status", "ls -la", "npm run build", "git log --oneline | head", "cd src && make test"]


def test_an_agent_hook_imports_none_of_the_slow_libraries(tmp_path):
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(tmp_path)}
    event["tool_input"] = {"command": "git status"}
    code = "import sys; from gatekeep.main import main; main(['claude-hook']); "
    code += f"print(sorted(m for m in sys.modules if m.split('.')[0] in {SLOW_IMPORTS}), file=sys.stderr)"
    argv = [sys.executable, "-c", code]
    runs = [subprocess.run(argv, input=json.dumps(event), capture_output=True, text=True, timeout=60) for _ in "12"]
    assert all('"allow"' in r.stdout for r in runs), runs
    assert runs[1].stderr.strip() == "[]", runs[1].stderr


def test_a_plain_check_imports_none_of_the_slow_libraries():
    code = "import sys; from gatekeep.main import main; main(['check', '--no-prompt', '--', 'git status']); "
    code += f"print(sorted(m for m in sys.modules if m.split('.')[0] in {SLOW_IMPORTS}))"
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    # the first run compiles the policy and fills the caches, reading YAML without ruamel (yamlio.load_plain)
    assert first.returncode == 0 and "ruamel.yaml" not in first.stdout, first.stdout + first.stderr
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert again.stdout.strip() == "[]", again.stdout + again.stderr


@pytest.mark.parametrize("line", TYPICAL)
def test_a_typical_line_started_as_the_hooks_do_imports_no_costly_stdlib_module(line):
    from gatekeep.shells.hook import import_dirs

    code = f"import sys; sys.path += {import_dirs()!r}; from gatekeep.main import main; "
    code += f"main(['check', '--no-prompt', '-q', '--', {line!r}]); "
    code += f"print(sorted(m for m in sys.modules if m in {SLOW_IMPORTS + STDLIB_IMPORTS}))"
    argv = [sys.executable, "-I", "-S", "-c", code]
    subprocess.run(argv, capture_output=True, text=True, timeout=60)  # fills the caches
    warm = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert warm.stdout.strip() == "[]", warm.stdout + warm.stderr


# what a line that needs bashlex may not import: bashlex needs re, enum, functools and collections;
# `inspect` is in sys.modules as bashlex_loader's stand-in, and ast, dis and tokenize show the real one
PARSER_LINES = ["echo \"$HOME\"", "for f in *.py; do wc -l $f; done", "git commit -m \"$(cat <<'EOF'\nx\nEOF\n)\""]
NOT_FOR_THE_PARSER = ("click", "ruamel", "dataclasses", "ast", "dis", "tokenize", "pathlib", "typing", "json")


@pytest.mark.parametrize("line", PARSER_LINES)
def test_a_line_that_needs_the_parser_imports_no_costly_module(line):
    """dataclasses (through crosscheck) and inspect (through bashlex's PLY) cost such a line ~15 ms."""
    from gatekeep.shells.hook import import_dirs

    code = f"import sys; sys.path += {import_dirs()!r}; from gatekeep.main import main; "
    code += f"main(['check', '--no-prompt', '-q', '--', {line!r}]); "
    code += "assert 'bashlex.parser' in sys.modules; "
    code += f"print(sorted(m for m in sys.modules if m in {NOT_FOR_THE_PARSER}))"
    argv = [sys.executable, "-I", "-S", "-c", code]
    subprocess.run(argv, capture_output=True, text=True, timeout=60)  # fills the caches
    warm = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert warm.stdout.strip() == "[]", warm.stdout + warm.stderr


def test_inspect_deferred_for_bashlex_still_works():
    code = (
        "import sys; from gatekeep.read import bashlex_loader; bashlex_loader.load(); "
        "assert 'ast' not in sys.modules; import inspect; "
        "print(inspect.getsourcefile(bashlex_loader) == bashlex_loader.__file__, type(sys.modules['inspect']).__name__)"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "module"], done.stdout + done.stderr


@pytest.mark.parametrize(
    "line,decision", [("make deploy", "deny"), ("npm install", "ask"), ("git status", "allow"), ("git reset --hard", "ask")]
)
def test_audit_mode_blocks_nothing_and_records_what_would_have_happened(capsys, paths, line, decision):
    write(paths.user_policy, "mode: audit\nrules:\n  deny: ['make deploy']\n")
    code, _, err = run(capsys, "check", "--", line)
    assert code == 0
    (record,) = audit.read_last(paths.audit_log, 1)
    assert (record["decision"], record["outcome"], record["mode"], record["prompted"]) == (
        decision,
        "allow",
        "audit",
        False,
    )
    assert ("it would " + decision in err) == (decision != "allow")


@pytest.mark.parametrize("line", ["rm -rf ~", ":(){ :|:& };:", "echo x >> ~/.bashrc", "sudo rm -rf /"])
def test_audit_mode_still_blocks_what_the_built_in_policy_denies(capsys, paths, line):
    write(paths.user_policy, "mode: audit\nrules:\n  allow: ['*']\n")
    code, _, err = run(capsys, "check", "--", line)
    assert code == 1 and "blocked even in audit mode" in err
    (record,) = audit.read_last(paths.audit_log, 1)
    assert (record["decision"], record["outcome"], record["mode"]) == ("deny", "deny", "audit")


def test_an_enforcing_system_policy_keeps_a_user_from_audit_mode(capsys, paths):
    write(paths.system_policy, "mode: enforce\n")
    write(paths.user_policy, "mode: audit\n")
    assert run(capsys, "check", "--", "rm -rf ~")[0] == 1
    assert "mode" not in audit.read_last(paths.audit_log, 1)[0]


def test_a_check_process_runs_without_the_cycle_collector_and_a_caller_keeps_it():
    import gc

    code = "import gc, sys; from gatekeep import main as m; sys.argv = ['gatekeep'] + sys.argv[1:]; "
    code += "code = m.main(); print(gc.isenabled(), code)"
    argv = [sys.executable, "-c", code, "check", "--no-prompt", "--", "ls"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "0"], done.stderr
    assert main(["check", "--no-prompt", "-q", "--", "ls"]) == 0 and gc.isenabled()
