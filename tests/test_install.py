"""`gatekeep install`: a marked block at the end of the rc file, never twice, removable."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gatekeep.agents import setup as agent_setup
from gatekeep.main import main
from tests.conftest import write


@pytest.mark.parametrize("shell,rc", [("bash", ".bashrc"), ("zsh", ".zshrc")])
def test_install_is_idempotent_and_removable(isolated_home, capsys, shell, rc):
    path = isolated_home / rc
    path.write_text("# mine\nalias ll='ls -l'\n")
    assert main(["install", "--shell", shell]) == 0
    assert main(["install", "--shell", shell]) == 0
    text = path.read_text()
    assert text.startswith("# mine\nalias ll='ls -l'\n")
    assert text.count("# >>> gatekeep >>>") == 1 and text.rstrip().endswith("# <<< gatekeep <<<")
    assert f"-I -m gatekeep hook {shell}" in text
    assert main(["install", "--shell", shell, "--remove"]) == 0
    assert path.read_text() == "# mine\nalias ll='ls -l'\n"
    assert main(["install", "--shell", shell, "--remove"]) == 0
    assert "no gatekeep block" in capsys.readouterr().out


def test_zsh_install_follows_zdotdir(isolated_home, monkeypatch, tmp_path):
    monkeypatch.setenv("ZDOTDIR", str(tmp_path / "zdot"))
    assert main(["install", "--shell", "zsh"]) == 0
    assert (tmp_path / "zdot" / ".zshrc").exists() and not (isolated_home / ".zshrc").exists()


def test_the_installed_block_loads_the_hook_in_interactive_shells_only(isolated_home):
    main(["install", "--shell", "bash"])

    def loaded(*flags: str) -> str:
        script = f"source {isolated_home / '.bashrc'}; echo loaded=${{__gatekeep_loaded-no}}"
        return subprocess.run(["bash", *flags, "-c", script], capture_output=True, text=True, timeout=60).stdout

    assert "loaded=no" in loaded()
    assert "loaded=1" in loaded("-i")


# --- coding agents: `gatekeep install --agent NAME` ----------------------------------------------

AGENT_FILES = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
    "copilot": ".copilot/hooks/gatekeep.json",
    "opencode": ".xdg_config_home/opencode/plugins/gatekeep.js",  # conftest's XDG_CONFIG_HOME
}
# Settings a user already has, which every install and remove must keep, in their order.
THEIRS = {
    "claude": {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm run test:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "lint-on-edit"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-done"}]}],
        },
    },
    "codex": {"hooks": {"PreToolUse": [{"matcher": "^apply_patch$", "hooks": [{"type": "command", "command": "x"}]}]}},
    "gemini": {"theme": "GitHub", "hooksConfig": {"enabled": True}, "hooks": {"AfterTool": [{"hooks": []}]}},
    "cursor": {"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}},
}


REAL_CLAUDE_VERSION = agent_setup.claude_version


@pytest.fixture(autouse=True)
def no_claude_on_path(monkeypatch):
    """Which Claude Code is installed decides a key; these tests choose (see the version test)."""
    import gatekeep.agents.setup as setup

    monkeypatch.setattr(setup, "claude_version", lambda: None)


def agent_file(home, agent: str):
    return home / AGENT_FILES[agent]


@pytest.mark.parametrize("agent", list(AGENT_FILES))
def test_agent_install_says_which_file_and_twice_changes_nothing(isolated_home, capsys, agent):
    path = agent_file(isolated_home, agent)
    assert main(["install", "--agent", agent]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gatekeep hook registered with ") and f" in {path}\n" in out
    first = path.read_bytes()
    assert f"agent-hook {agent}".encode() in first
    assert main(["install", "--agent", agent, "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert {k: said[k] for k in ("agent", "file", "action")} == {"agent": agent, "file": str(path), "action": "unchanged"}
    assert isinstance(said["notes"], list) and all(isinstance(n, str) for n in said["notes"])
    assert path.read_bytes() == first
    assert main(["install", "--agent", agent, "--remove"]) == 0
    assert "removed" in capsys.readouterr().out
    assert not path.exists() or f"agent-hook {agent}" not in path.read_text()
    assert main(["install", "--agent", agent, "--remove", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["action"] == "absent"


@pytest.mark.parametrize("agent", list(THEIRS))
def test_agent_install_keeps_every_other_setting(isolated_home, agent):
    path = agent_file(isolated_home, agent)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(THEIRS[agent], indent=4))
    assert main(["install", "--agent", agent]) == 0
    installed = json.loads(path.read_text())
    assert list(installed) == list(THEIRS[agent]) + (["hooks"] if "hooks" not in THEIRS[agent] else [])
    for key, value in THEIRS[agent].items():
        if key != "hooks":
            assert installed[key] == value
    for event, groups in THEIRS[agent]["hooks"].items():
        assert installed["hooks"][event][: len(groups)] == groups  # theirs first, as they were
    assert main(["install", "--agent", agent, "--remove"]) == 0
    assert json.loads(path.read_text()) == THEIRS[agent]


EXPECTED_ENTRIES = {
    # (where gatekeep's entry is, the entry without its command)
    "claude": (("hooks", "PreToolUse", -1), {"matcher": "Bash|Monitor|PowerShell|Write|Edit|MultiEdit|NotebookEdit", "timeout": 30}),
    "codex": (("hooks", "PreToolUse", -1), {"matcher": "^Bash$", "timeout": 30, "statusMessage": "gatekeep"}),
    "gemini": (("hooks", "BeforeTool", -1), {"matcher": "^(run_shell_command|write_file|replace)$", "timeout": 30000, "name": "gatekeep"}),
    "cursor": (("hooks", "beforeShellExecution", -1), {"failClosed": True}),
    "copilot": (("hooks", "preToolUse", -1), {"type": "command", "timeoutSec": 30}),
}


@pytest.mark.parametrize("agent", list(EXPECTED_ENTRIES))
def test_each_agent_gets_the_entry_its_host_documents(isolated_home, agent):
    assert main(["install", "--agent", agent]) == 0
    settings = json.loads(agent_file(isolated_home, agent).read_text())
    where, expected = EXPECTED_ENTRIES[agent]
    entry = settings
    for key in where:
        entry = entry[key]
    handler = entry["hooks"][0] if "hooks" in entry else entry
    found = {**{k: v for k, v in entry.items() if k != "hooks"}, **handler}
    command = found.pop("bash" if agent == "copilot" else "command")
    assert command.endswith(f"agent-hook {agent} || {agent_setup.BLOCK_ON_FAILURE}") or agent == "copilot"
    assert command.endswith("exit 2'") or agent == "copilot"
    assert {k: v for k, v in found.items() if k in expected} == expected
    assert settings.get("version", 1) == 1


def test_an_older_claude_hook_entry_is_replaced_not_doubled(isolated_home):
    path = agent_file(isolated_home, "claude")
    older = {"type": "command", "command": "/home/u/.venv/bin/gatekeep claude-hook"}
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [older]}]}}))
    assert main(["install", "--agent", "claude"]) == 0
    (group,) = json.loads(path.read_text())["hooks"]["PreToolUse"]
    assert group["matcher"] == "Bash|Monitor|PowerShell|Write|Edit|MultiEdit|NotebookEdit" and "agent-hook claude" in group["hooks"][0]["command"]


@pytest.mark.parametrize("version,on_failure", [("2.1.330 (Claude Code)", True), ("2.1.294 (Claude Code)", False)])
def test_claude_blocks_on_hook_failure_where_its_version_knows_how(isolated_home, monkeypatch, version, on_failure):
    import gatekeep.agents.setup as setup

    monkeypatch.setattr(setup, "claude_version", REAL_CLAUDE_VERSION)  # with a `claude` of this version on PATH
    bin_dir = isolated_home / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(f"#!/bin/sh\necho '{version}'\n")
    (bin_dir / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert setup.claude_version() == tuple(int(n) for n in version.split()[0].split("."))
    assert main(["install", "--agent", "claude"]) == 0
    handler = json.loads(agent_file(isolated_home, "claude").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    assert handler.get("onFailure") == ("block" if on_failure else None)


@pytest.mark.parametrize(
    "variable,agent,inside",
    [
        ("CLAUDE_CONFIG_DIR", "claude", "settings.json"),
        ("CODEX_HOME", "codex", "hooks.json"),
        ("COPILOT_HOME", "copilot", "hooks/gatekeep.json"),
    ],
)
def test_agent_install_follows_the_hosts_own_directory_variable(isolated_home, monkeypatch, tmp_path, variable,
                                                                agent, inside):  # fmt: skip
    monkeypatch.setenv(variable, str(tmp_path / "elsewhere"))
    assert main(["install", "--agent", agent]) == 0
    assert (tmp_path / "elsewhere" / inside).exists() and not agent_file(isolated_home, agent).exists()


BAD_SETTINGS = [
    ("claude", "{ not json", "is not JSON"),
    ("claude", "[1, 2]", "is not a JSON object"),
    ("codex", '{"hooks": []}', "'hooks' is not an object"),
    ("gemini", '{"hooks": {"BeforeTool": {}}}', "hooks.BeforeTool is not a list"),
    ("cursor", '{"version": 2, "hooks": {}}', "hooks version 2"),
]


@pytest.mark.parametrize("agent,text,message", BAD_SETTINGS)
def test_settings_gatekeep_cannot_read_are_left_alone(isolated_home, capsys, agent, text, message):
    path = agent_file(isolated_home, agent)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert main(["install", "--agent", agent]) == 2
    err = capsys.readouterr().err
    assert message in err and "nothing changed" in err and err.count("\n") == 1
    assert path.read_text() == text


@pytest.mark.parametrize("args", [[], ["--shell", "bash", "--agent", "claude"]])
def test_install_takes_one_shell_or_one_agent(capsys, args):
    assert main(["install", *args]) == 2
    assert "give one of --shell, --agent or --export" in capsys.readouterr().err


def test_codex_install_says_the_hook_must_be_trusted(isolated_home, capsys):
    assert main(["install", "--agent", "codex"]) == 0
    assert "/hooks" in capsys.readouterr().out


def test_a_symlinked_settings_file_is_written_through_the_link(isolated_home, tmp_path):
    """Settings kept in a dotfiles repository stay there: the link is kept, its target changes."""
    target = tmp_path / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    target.write_text('{"model": "opus"}')
    link = agent_file(isolated_home, "claude")
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    assert main(["install", "--agent", "claude"]) == 0
    assert link.is_symlink() and "agent-hook claude" in target.read_text()
    assert main(["install", "--shell", "bash"]) == 0  # the rc file the same way
    rc_target = tmp_path / "dotfiles" / "bashrc"
    rc_target.write_text("# mine\n")
    (isolated_home / ".bashrc").unlink()
    (isolated_home / ".bashrc").symlink_to(rc_target)
    assert main(["install", "--shell", "bash"]) == 0
    assert (isolated_home / ".bashrc").is_symlink() and "# >>> gatekeep >>>" in rc_target.read_text()


@pytest.mark.parametrize("text", ['{"timeout": 1e400}', '{"note": "\\udcff"}', b'{"note": "\xff"}'])
def test_settings_that_json_cannot_write_back_are_left_alone(isolated_home, capsys, text):
    path = agent_file(isolated_home, "codex")
    path.parent.mkdir(parents=True)
    data = text if isinstance(text, bytes) else text.encode()
    path.write_bytes(data)
    assert main(["install", "--agent", "codex"]) == 2
    assert "cannot write back" in capsys.readouterr().err
    assert path.read_bytes() == data


def test_claudes_on_failure_is_kept_when_claude_is_not_on_path_this_time(isolated_home, monkeypatch):
    monkeypatch.setattr(agent_setup, "claude_version", lambda: (2, 1, 330))
    assert main(["install", "--agent", "claude"]) == 0
    monkeypatch.setattr(agent_setup, "claude_version", lambda: None)
    assert main(["install", "--agent", "claude"]) == 0
    handler = json.loads(agent_file(isolated_home, "claude").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    assert handler["onFailure"] == "block"


# --- `gatekeep uninstall`: everything install put in comes out, and the warm checker stops -----


def _gatekeep(*args: str, env=None) -> subprocess.CompletedProcess:
    import sys

    return subprocess.run([sys.executable, "-m", "gatekeep", *args], capture_output=True, text=True, timeout=60, env=env)


def test_uninstall_purge_leaves_no_file_or_process_of_gatekeep(isolated_home, monkeypatch):
    import os
    import time
    from pathlib import Path

    from gatekeep.core.paths import get_paths

    bashrc = isolated_home / ".bashrc"
    bashrc.write_text("# mine\nalias ll='ls -l'\n")
    claude = agent_file(isolated_home, "claude")
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps(THEIRS["claude"], indent=4))
    before = {p: p.read_text() for p in (bashrc, claude)}
    for shell in ("bash", "zsh"):
        assert _gatekeep("install", "--shell", shell).returncode == 0
    for agent in AGENT_FILES:
        assert _gatekeep("install", "--agent", agent).returncode == 0
    assert _gatekeep("install", "--export", "http://127.0.0.1:4318/v1/logs").returncode == 0
    unit = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user" / "gatekeep-export.service"
    assert unit.exists()
    assert (isolated_home / ".zshrc").exists()  # made by install: it did not exist
    _gatekeep("rules", "add", "make *")
    served = {k: v for k, v in os.environ.items() if k != "GATEKEEP_SERVER"}
    import sys

    client = [sys.executable, "-c", "import sys; from gatekeep.server.client import main; sys.exit(main())"]
    first = subprocess.run([*client, "check", "--no-prompt", "--", "ls"], env=served, timeout=60)
    assert first.returncode == 0  # decided by the client, which then starts a server, as the hooks' does
    server_dir = get_paths().server_dir
    deadline = time.monotonic() + 20
    while not (os.path.isdir(server_dir) and any(n.endswith(".lock") for n in os.listdir(server_dir))):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    marker = f"serve({server_dir!r})".encode()

    def servers() -> list[str]:
        found = []
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                cmdline, stat = (entry / "cmdline").read_bytes(), (entry / "stat").read_text()
            except OSError:
                continue
            if marker in cmdline and stat.rsplit(")", 1)[-1].split()[0] != "Z":
                found.append(entry.name)
        return found

    assert servers()
    done = _gatekeep("uninstall", "--purge", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["stopped"] and not servers()  # the warm checker, its spare and workers
    assert bashrc.read_text() == before[bashrc]  # the user's own lines, as they were
    assert not (isolated_home / ".zshrc").exists()  # install made it: gone with the block
    assert not unit.exists() and not unit.parent.joinpath("default.target.wants", unit.name).is_symlink()
    assert json.loads(claude.read_text()) == THEIRS["claude"]  # their settings kept, the hook out
    for agent in AGENT_FILES:
        if agent != "claude":  # files install made for the other hosts are gone
            assert not agent_file(isolated_home, agent).exists(), agent
    paths = get_paths()
    assert not os.path.exists(paths.state_dir) and not os.path.exists(paths.user_policy)
    assert not os.path.exists(paths.config_dir)


def test_uninstall_without_purge_keeps_the_policy_and_records(isolated_home):
    from gatekeep.core.paths import get_paths

    assert _gatekeep("install", "--shell", "bash").returncode == 0
    _gatekeep("rules", "add", "make *")
    done = _gatekeep("uninstall")
    assert done.returncode == 0 and "--purge removes them" in done.stdout
    assert not (isolated_home / ".bashrc").exists()  # install made it, and it held nothing else
    assert "make *" in open(get_paths().user_policy).read()


def test_a_bash_login_shell_is_gated_after_install(isolated_home):
    """tmux, a macOS terminal, an ssh login: bash reads ~/.profile, not ~/.bashrc. After install a
    real login shell loads the hook, and a denied line does not run; --remove takes it out again."""
    import os

    import pexpect

    from gatekeep.core.paths import get_paths
    from tests.conftest import write

    write(get_paths().user_policy, "rules:\n  deny: ['touch denied-*']\n")
    (isolated_home / ".profile").write_text("export FROM_PROFILE=1\n")
    (isolated_home / ".bashrc").write_text("PS1='GK-LOGIN> '\n")
    assert main(["install", "--shell", "bash"]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BASH_FUNC", "PROMPT_COMMAND", "PS0"))}
    env.update(HOME=str(isolated_home), TERM="dumb")
    child = pexpect.spawn("bash", ["--login", "-i"], env=env, encoding="utf-8", timeout=30, cwd=str(isolated_home))
    try:
        child.expect_exact("GK-LOGIN> ")
        child.sendline('echo "profile=$FROM_PROFILE"')  # a login shell: ~/.profile was read
        child.expect_exact("profile=1")
        child.expect_exact("GK-LOGIN> ")
        child.sendline("touch denied-1; touch ok-1")  # the gate is on: the whole line is denied
        child.expect_exact("GK-LOGIN> ")
        assert "denied" in child.before
        assert not (isolated_home / "denied-1").exists() and not (isolated_home / "ok-1").exists()
    finally:
        child.close(force=True)
    assert main(["install", "--shell", "bash", "--remove"]) == 0
    assert (isolated_home / ".profile").read_text() == "export FROM_PROFILE=1\n"


def test_a_login_file_that_loads_bashrc_already_is_left_alone(isolated_home):
    profile = isolated_home / ".bash_profile"
    profile.write_text('[ -f ~/.bashrc ] && . ~/.bashrc\n')
    assert main(["install", "--shell", "bash"]) == 0
    assert profile.read_text() == '[ -f ~/.bashrc ] && . ~/.bashrc\n'


def test_install_path_puts_a_directory_on_path_and_keeps_it_until_remove(isolated_home, capsys):
    rc = isolated_home / ".bashrc"
    rc.write_text("# mine\n")
    odd = isolated_home / "my bin's $dir"
    assert main(["install", "--shell", "bash", "--path", str(odd)]) == 0
    assert f"{odd} is on PATH in new bash sessions" in capsys.readouterr().out
    assert main(["install", "--shell", "bash"]) == 0  # a later install keeps it
    assert main(["install", "--shell", "bash", "--path", "~/other"]) == 0  # ~ is the home
    assert main(["install", "--shell", "bash", "--path", str(odd)]) == 0  # not twice
    text = rc.read_text()
    assert text.count("# >>> gatekeep >>>") == 1 and text.count("# gatekeep install --path") == 2
    lines = [line for line in text.splitlines() if line.endswith("# gatekeep install --path")]
    script = "PATH=/usr/bin:/bin\n" + "\n".join(lines) + '\necho "$PATH"\n'
    shown = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True, timeout=30).stdout
    assert shown.strip() == f"{isolated_home}/other:{odd}:/usr/bin:/bin"
    assert main(["install", "--shell", "bash", "--remove"]) == 0
    assert rc.read_text() == "# mine\n"


@pytest.mark.parametrize(
    "args", [["--agent", "claude", "--path", "/x"], ["--shell", "bash", "--remove", "--path", "/x"]]
)
def test_install_path_goes_with_shell_alone(isolated_home, capsys, args):
    assert main(["install", *args]) == 2
    assert "--path goes with --shell" in capsys.readouterr().err


# --- OpenCode's plugin SDK: nothing to fetch at its start --------------------------------------------

OPENCODE_SDK = "@opencode-ai/plugin"


def opencode_dir(home) -> Path:
    return home / ".xdg_config_home" / "opencode"  # conftest's XDG_CONFIG_HOME


def test_opencode_install_says_its_sdk_is_there_and_remove_takes_that_back(isolated_home, capsys):
    folder = opencode_dir(isolated_home)
    assert main(["install", "--agent", "opencode"]) == 0
    assert "OpenCode fetches nothing at its start" in capsys.readouterr().out
    lock = json.loads((folder / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == {OPENCODE_SDK: "*"}
    assert list((folder / "node_modules").iterdir()) == []
    assert main(["install", "--agent", "opencode"]) == 0  # again: nothing more to say of it
    assert "OpenCode" not in capsys.readouterr().out.split("\n", 2)[2]
    assert main(["install", "--agent", "opencode", "--remove"]) == 0
    assert "took out the package-lock.json" in capsys.readouterr().out
    assert not (folder / "package-lock.json").exists() and not (folder / "node_modules").exists()


# what OpenCode's directory holds already (npm's), and whether OpenCode would still fetch the SDK
NPM_DIRECTORIES = [
    ({"node_modules/": "", "package-lock.json": {"packages": {"": {"dependencies": {OPENCODE_SDK: "1.18.33"}}}}}, False),
    ({"package.json": {"dependencies": {"left-pad": "1.3.0"}}}, True),
    ({"node_modules/": "", "package.json": {"dependencies": {"left-pad": "1.3.0"}},
      "package-lock.json": {"packages": {"": {"dependencies": {OPENCODE_SDK: "1.18.33"}}}}}, True),
    ({"package-lock.json": {"packages": {"": {"dependencies": {OPENCODE_SDK: "1.18.33"}}}}}, True),
    ({"node_modules/": "", "package-lock.json": "not JSON"}, True),
]  # fmt: skip


@pytest.mark.parametrize("files, fetches", NPM_DIRECTORIES)
def test_opencode_install_leaves_npms_own_directory_alone(isolated_home, capsys, files, fetches):
    folder = opencode_dir(isolated_home)
    for name, content in files.items():
        if name.endswith("/"):
            (folder / name).mkdir(parents=True)
        else:
            write(folder / name, content if isinstance(content, str) else json.dumps(content))
    before = {p.name: p.read_bytes() if p.is_file() else None for p in folder.iterdir()}
    assert main(["install", "--agent", "opencode"]) == 0
    out = capsys.readouterr().out
    assert (f"OpenCode will install {OPENCODE_SDK}" in out) == fetches, out
    assert {p.name: p.read_bytes() if p.is_file() else None for p in folder.iterdir() if p.name != "plugins"} == before
    assert main(["install", "--agent", "opencode", "--remove"]) == 0
    assert {p.name: p.read_bytes() if p.is_file() else None for p in folder.iterdir() if p.name != "plugins"} == before


def test_opencode_remove_keeps_a_lock_npm_has_rewritten(isolated_home):
    folder = opencode_dir(isolated_home)
    assert main(["install", "--agent", "opencode"]) == 0
    changed = json.dumps({"packages": {"": {"dependencies": {OPENCODE_SDK: "1.18.33", "left-pad": "1.3.0"}}}})
    (folder / "package-lock.json").write_text(changed)
    assert main(["install", "--agent", "opencode", "--remove"]) == 0
    assert (folder / "package-lock.json").read_text() == changed and (folder / "node_modules").is_dir()


# --- Codex's managed requirements: gatekeep's block in the machine's requirements.toml --------------

THEIR_REQUIREMENTS = 'allowed_approval_policies = ["untrusted", "on-request"]\n\n[mcp_servers.docs]\nidentity = { command = "docs-mcp" }\n'


def codex_requirements(current: str | None, remove: bool = False) -> str | None:
    setup = agent_setup.SETUPS["codex"]
    return setup.requirements(current, setup.start(True), remove)


@pytest.mark.parametrize("theirs", [None, THEIR_REQUIREMENTS])
def test_codex_managed_requirements_hold_gatekeeps_hook_and_keep_the_machines_own(theirs):
    import tomllib

    text = codex_requirements(theirs)
    parsed = tomllib.loads(text)
    assert parsed["features"] == {"hooks": True}
    [group] = parsed["hooks"]["PreToolUse"]
    [handler] = group["hooks"]
    assert group["matcher"] == "^Bash$" and handler["type"] == "command" and handler["timeout"] == 30
    assert handler["command"] == agent_setup.SETUPS["codex"].command(agent_setup.SETUPS["codex"].start(True))
    assert text.startswith(theirs or "")
    assert codex_requirements(text) == text  # again: the same block, not a second one
    assert codex_requirements(text, remove=True) == theirs  # out again: the machine's own, as it was


@pytest.mark.parametrize("theirs, why", [
    ("[features]\nhooks = false\n", "features or hooks of its own"),
    ("features.hooks = false\n", "features or hooks of its own"),
    ('[[hooks.PreToolUse]]\nmatcher = "x"\n', "features or hooks of its own"),
    ("[features\n", "is not TOML"),
])  # fmt: skip
def test_codex_managed_requirements_that_set_features_or_hooks_are_not_merged(theirs, why):
    from gatekeep.core.errors import FatalError

    with pytest.raises(FatalError, match=why):
        codex_requirements(theirs)
