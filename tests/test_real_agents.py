"""The real agent CLIs, end to end (issue 37): each runs against a fake model server of ours on the
loopback address (tests/fake_models.py), which asks it to run one tool call; gatekeep's entry is
the one `gatekeep install --agent NAME` wrote. Checked on disk and in the audit log, not in what
the host says: the allowed line ran; a denied, asked or secret-reading line did not, and the
session ended; a broken gatekeep blocks; neither a project's settings nor a file the agent
writes can turn gatekeep off; the host's configuration root is honoured.

The CLIs come from npm at pinned versions (tests/agent_clis.py). Claude Code refuses
`bypassPermissions` as root unless IS_SANDBOX=1, which every run sets (the tests may run as root,
as CI does). Managed settings live in /etc: the tests that need them shadow /etc in a bubblewrap
mount namespace (root only), so that the machine's own are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gatekeep.record import audit
from tests.agent_clis import STORE, cli
from tests.conftest import write
from tests.fake_models import FakeModel

RUN_SECONDS = 120
GATEKEEP = [sys.executable, "-m", "gatekeep"]


@pytest.fixture(scope="module")
def clis() -> dict[str, Path]:
    """Each CLI's command, installed when first asked for."""
    return {}


def _on_path(name: str, clis: dict, monkeypatch) -> Path:
    """The CLI's command, on PATH as for its users (install asks `claude --version`, and has
    `codex app-server` record the hook's trust)."""
    binary = clis.get(name) or clis.setdefault(name, cli(name))
    monkeypatch.setenv("PATH", f"{binary.parent}{os.pathsep}{os.environ['PATH']}")
    return binary


@pytest.fixture
def claude(clis, monkeypatch) -> Path:
    return _on_path("claude", clis, monkeypatch)


@pytest.fixture
def claude_2_1_197(clis, monkeypatch) -> Path:
    """An older Claude Code, from before `onFailure` (2.1.295): the entry's `|| … exit 2` alone blocks."""
    return _on_path("claude-2.1.197", clis, monkeypatch)


@pytest.fixture
def codex(clis, monkeypatch) -> Path:
    return _on_path("codex", clis, monkeypatch)


@pytest.fixture(scope="module")
def gemini_cli() -> Path:
    return cli("gemini")


@pytest.fixture(scope="module")
def codex_cli() -> Path:
    return cli("codex")


@pytest.fixture(scope="module")
def copilot_cli() -> Path:
    return cli("copilot")


@pytest.fixture(scope="module")
def opencode_cli() -> Path:
    return cli("opencode")


@pytest.fixture
def project(isolated_home: Path) -> Path:
    tree = isolated_home / "src" / "app"
    tree.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    return tree


def gatekeep(*args: str, wrap: list[str] = (), python: Path | None = None) -> subprocess.CompletedProcess:
    """Run gatekeep; `python`: through that interpreter (a link to this one, which a test removes
    later to play a virtualenv that is gone), finding gatekeep where this process does."""
    argv, env = [*wrap, *GATEKEEP, *args], None
    if python is not None:
        argv[len(wrap)] = str(python)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done


DENY_TOUCH = "rules:\n  deny: ['touch *']\n"


def user_policy(text: str) -> None:
    write(Path(os.environ["GATEKEEP_HOME"]) / "config" / "policy.yaml", text)


def records() -> list[dict]:
    from gatekeep.core.paths import get_paths

    path = Path(get_paths().audit_log)
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def agents_check(project: Path, wrap: list[str] = ()) -> dict:
    """doctor's check of the agents, run in `project`."""
    doctor = subprocess.run([*wrap, *GATEKEEP, "doctor", "--json"], cwd=project, capture_output=True, text=True)
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "agents"]
    return check


def shadowed_etc(**mounts: Path) -> list[str]:
    """bwrap arguments: the machine as it is, but /etc a copy in memory of its entries, with each
    of `mounts` (a name in /etc: a directory) bound in (bubblewrap 0.8 has no overlay; its sources
    are the real /etc). The agents read their managed settings there."""
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.skip("the managed settings are in /etc: shadowing it takes root and bubblewrap")
    args = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", "/etc"]
    for name in sorted(os.listdir("/etc")):
        path = f"/etc/{name}"
        args += ["--symlink", os.readlink(path), path] if os.path.islink(path) else ["--ro-bind", path, path]
    for name, source in mounts.items():
        args += ["--dir", f"/etc/{name}", "--bind", str(source), f"/etc/{name}"]
    return [*args, "--"]


class Run:
    """One session of the real CLI: the process, and what the fake model saw."""

    def __init__(self, process: subprocess.CompletedProcess, model: FakeModel) -> None:
        self.process, self.model = process, model
        self.results = model.tool_results()

    def __repr__(self) -> str:
        return f"Run(rc={self.process.returncode}, results={self.results!r}, stderr={self.process.stderr[-500:]!r})"


def _session(argv: list[str], env: dict, project: Path, model: FakeModel) -> Run:
    process = subprocess.run(
        argv, cwd=project, env={**os.environ, **env}, capture_output=True, text=True, timeout=RUN_SECONDS,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert model.requests, f"the agent never reached the fake model: {process.stderr[-1000:]}"
    return Run(process, model)


def run_claude(
    claude: Path, project: Path, command: str = "", *, mode: str = "default", wrap: list[str] = (), **call
) -> Run:
    """`claude -p` in `project`, in permission `mode`, with the fake model asking for Bash(command)
    (or for `call["tool"]` with `call["tool_input"]`)."""
    with FakeModel(command, **call) as model:
        env = {
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "IS_SANDBOX": "1",
        }
        argv = [*wrap, str(claude), "-p", "Do the task.", "--output-format", "json", "--permission-mode", mode]
        return _session(argv, env, project, model)


def run_gemini(
    gemini: Path, project: Path, command: str = "", *, mode: str = "yolo", wrap: list[str] = (), **call
) -> Run:
    """`gemini -p` (headless) in `project`, in approval `mode` (headless Gemini CLI offers its shell
    tool only in yolo), a fixed model (the default routes each prompt through a classifier call),
    with the fake model asking for run_shell_command(command)."""
    with FakeModel(command, tool=call.pop("tool", "run_shell_command"), **call) as model:
        env = {
            "GOOGLE_GEMINI_BASE_URL": model.url,
            "GEMINI_API_KEY": "test-not-a-key",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "NO_COLOR": "1",
        }
        argv = [*wrap, str(gemini), "-p", "Do the task.", "--output-format", "json", "-m", "gemini-2.5-flash"]
        return _session([*argv, "--approval-mode", mode], env, project, model)


def run_codex(codex: Path, project: Path, command: str = "", *, wrap: list[str] = (), **call) -> Run:
    """`codex exec` in `project` against the fake model (a provider set with -c, so that Codex's
    config.toml holds only what install wrote), with its own sandbox and approvals off (its
    sandbox needs a helper of its own in this environment): only gatekeep stands in the way."""
    with FakeModel(command, tool="exec_command", tool_input=call.pop("tool_input", {"cmd": command}), **call) as model:
        provider = f'{{name="fake", base_url="{model.url}/v1", wire_api="responses", env_key="FAKE_OPENAI_KEY"}}'
        argv = [
            *wrap, str(codex), "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox",
            "-c", 'model="gpt-5-codex"', "-c", 'model_provider="fake"', "-c", f"model_providers.fake={provider}",
            "Do the task.",
        ]  # fmt: skip
        return _session(argv, {"FAKE_OPENAI_KEY": "test-not-a-key"}, project, model)


def run_copilot(copilot: Path, project: Path, command: str = "", *, flags: tuple[str, ...] = (), **call) -> Run:
    """`copilot -p` in `project` with every tool allowed (only gatekeep stands in the way),
    offline, with the fake model as its own provider (BYOK, Anthropic's protocol)."""
    tool_input = call.pop("tool_input", {"command": command, "description": "x"})
    with FakeModel(command, tool=call.pop("tool", "bash"), tool_input=tool_input) as model:
        env = {
            "COPILOT_PROVIDER_BASE_URL": model.url,
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_API_KEY": "test-not-a-key",
            "COPILOT_OFFLINE": "true",
            "COPILOT_MODEL": "claude-sonnet-4.5",
            "COPILOT_AUTO_UPDATE": "false",
            # the package it unpacks at its first start (235 MB): once for all tests, not per home
            "COPILOT_CACHE_HOME": str(STORE / "copilot-cache"),
        }
        argv = [str(copilot), "-p", "Do the task.", "--allow-all-tools", "--no-color", *flags]
        return _session(argv, env, project, model)


def run_opencode(opencode: Path, project: Path, command: str = "", **call) -> Run:
    """`opencode run` in `project`, the fake model its provider (through the Anthropic SDK OpenCode
    bundles, set in OPENCODE_CONFIG_CONTENT, so that the user's configuration directory holds only
    what install wrote), and npm's registry the fake model too: what OpenCode fetches is seen
    (`model.fetched`), and fails at once. OpenCode takes its directory from PWD, not from the
    process's own: set, as a shell sets it."""
    tool_input = call.pop("tool_input", {"command": command, "description": "x"})
    with FakeModel(command, tool=call.pop("tool", "bash"), tool_input=tool_input) as model:
        options = {"baseURL": f"{model.url}/v1", "apiKey": "test-not-a-key"}
        provider = {"fake": {"npm": "@ai-sdk/anthropic", "options": options, "models": {"m": {}}}}
        env = {
            "OPENCODE_CONFIG_CONTENT": json.dumps({"provider": provider, "model": "fake/m"}),
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "npm_config_registry": f"{model.url}/npm/",
            "PWD": str(project),
        }
        return _session([str(opencode), "run", "Do the task."], env, project, model)


def gemini_settings() -> Path:
    """The user's Gemini CLI settings, holding the API-key sign-in it needs before anything runs."""
    root = Path(os.environ.get("GEMINI_CLI_HOME") or os.environ["HOME"])
    path = root / ".gemini" / "settings.json"
    if not path.exists():
        write(path, json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    return path


class Host:
    """How the common cases install and run one host's real CLI, headless and unable to ask."""

    FIXTURES = {
        "claude": "claude", "claude-2.1.197": "claude_2_1_197", "gemini": "gemini_cli", "codex": "codex",
        "copilot": "copilot_cli", "opencode": "opencode_cli",
    }  # fmt: skip
    # what the record says of a line that asks, in the mode run here: denied by gatekeep, or
    # passed on to the host, which denies it by itself when nobody can answer (Copilot CLI)
    ASKED = {"copilot": "ask"}

    def __init__(self, key: str, request) -> None:
        """`key`: the host's `--agent` name, or that name and a version other than the one pinned."""
        self.name = key.split("-")[0]
        self.binary = request.getfixturevalue(self.FIXTURES[key])

    def install(self, python: Path | None = None) -> None:
        if self.name == "gemini":
            gemini_settings()
        gatekeep("install", "--agent", self.name, python=python)

    def run(self, project: Path, command: str) -> Run:
        if self.name == "claude":
            return run_claude(self.binary, project, command, mode="bypassPermissions")
        if self.name == "codex":
            return run_codex(self.binary, project, command)
        if self.name == "copilot":
            return run_copilot(self.binary, project, command)
        if self.name == "opencode":
            return run_opencode(self.binary, project, command)
        return run_gemini(self.binary, project, command)


HOSTS = ["claude", "claude-2.1.197", "gemini", "codex", "copilot", "opencode"]


@pytest.fixture(params=HOSTS)
def host(request) -> Host:
    host = Host(request.param, request)
    host.install()
    return host


def test_each_host_runs_an_allowed_line_and_records_it(host, project):
    run = host.run(project, "touch made-by-agent && git status --short")
    assert (project / "made-by-agent").exists(), run
    assert run.process.returncode == 0
    [record] = [r for r in records() if r.get("agent") == host.name]
    assert (record["command"], record["outcome"], record["cwd"]) == (
        "touch made-by-agent && git status --short", "allow", str(project)
    )  # fmt: skip


@pytest.mark.parametrize("line, policy, decision", [
    ("touch denied-file", DENY_TOUCH, "deny"),
    ("mkdir ~/made-outside && touch denied-file", "", "ask"),  # an ask, where nobody can answer it
])  # fmt: skip
def test_each_host_does_not_run_a_denied_or_asked_line_and_the_session_ends(host, project, line, policy, decision):
    user_policy(policy)
    run = host.run(project, line)  # within RUN_SECONDS: a hang fails here
    assert not (project / "denied-file").exists(), run
    assert run.process.returncode == 0, run
    outcome = Host.ASKED.get(host.name, "deny") if decision == "ask" else "deny"
    assert [(r["decision"], r["outcome"]) for r in records()] == [(decision, outcome)]
    assert records()[0]["rule"] == ("touch *" if decision == "deny" else None)  # a rule's deny, not a broken policy's
    assert any("gatekeep: blocked" in r or "gatekeep: needs approval" in r for r in run.results), run


def test_each_host_reads_no_secret(host, project):
    write(project / ".env", "API_TOKEN=hunter2-very-secret\n")
    run = host.run(project, "cat .env")
    assert run.results and not any("hunter2" in r for r in run.results), run
    assert not any("hunter2" in json.dumps(body) for body in run.model.requests)
    assert records()[-1]["outcome"] == Host.ASKED.get(host.name, "deny")


def test_each_host_is_blocked_by_a_broken_policy(host, project):
    user_policy("deny: [unclosed\n")
    run = host.run(project, "touch made")
    assert not (project / "made").exists(), run
    assert records()[-1]["outcome"] == "deny"


def test_each_host_is_blocked_when_gatekeep_is_gone(host, project, tmp_path):
    """Installed from a virtualenv that is removed later: the entry, unchanged (Codex still
    trusts it), cannot start gatekeep, and its `|| sh -c '…; exit 2'` blocks."""
    python = tmp_path / "venv" / "bin" / "python3"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    host.install(python=python)
    python.unlink()
    run = host.run(project, "touch made")
    assert not (project / "made").exists(), run
    assert records() == []


# (host, the variable that moves its configuration, where the entry then is, under it)
CONFIGURATION_ROOTS = [
    ("claude", "CLAUDE_CONFIG_DIR", "settings.json"),
    ("gemini", "GEMINI_CLI_HOME", ".gemini/settings.json"),
    ("codex", "CODEX_HOME", "hooks.json"),
    ("copilot", "COPILOT_HOME", "hooks/gatekeep.json"),
    ("opencode", "XDG_CONFIG_HOME", "opencode/plugins/gatekeep.js"),
]


@pytest.mark.parametrize("name, variable, entry", CONFIGURATION_ROOTS)
def test_each_hosts_configuration_root_is_honoured(name, variable, entry, request, project, tmp_path, monkeypatch):
    root = tmp_path / "configuration-root"
    monkeypatch.setenv(variable, str(root))
    host = Host(name, request)
    host.install()  # (Codex's trust goes into $CODEX_HOME/config.toml)
    assert f"agent-hook {name}" in (root / entry).read_text()
    assert not (Path(os.environ["HOME"]) / f".{name}").exists()
    user_policy(DENY_TOUCH)
    run = host.run(project, "touch denied-file")
    assert not (project / "denied-file").exists(), run
    assert [(r["outcome"], r["rule"]) for r in records()] == [("deny", "touch *")]
    gatekeep("install", "--agent", name, "--remove")
    assert not (root / entry).exists() or f"agent-hook {name}" not in (root / entry).read_text()


@pytest.fixture
def installed(claude: Path) -> Path:
    """gatekeep's entry in the user's Claude Code settings, as `install --agent claude` writes it."""
    gatekeep("install", "--agent", "claude")
    return Path(os.environ["HOME"]) / ".claude" / "settings.json"


def test_claude_code_before_on_failure_gets_an_entry_without_it(claude_2_1_197, claude, monkeypatch):
    """`onFailure` is written for the Claude Code on PATH that knows it (2.1.295 and later), and
    only then; without it, the entry's `|| … exit 2` blocks (the host cases, with 2.1.197)."""
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    for binary, on_failure in ((claude_2_1_197, None), (claude, "block")):
        gatekeep("install", "--agent", "claude", "--remove")
        path = os.environ["PATH"].split(os.pathsep)
        monkeypatch.setenv("PATH", os.pathsep.join([str(binary.parent), *(d for d in path if d != str(binary.parent))]))
        gatekeep("install", "--agent", "claude")
        [handler] = json.loads(settings.read_text())["hooks"]["PreToolUse"][-1]["hooks"]
        assert handler.get("onFailure") == on_failure, binary


def test_an_asked_line_does_not_run_where_nobody_can_answer(claude, installed, project, isolated_home):
    run = run_claude(claude, project, "mkdir ~/made-outside")  # outside the working tree: asks
    assert not (isolated_home / "made-outside").exists(), run
    assert run.process.returncode == 0
    assert [(r["decision"], r["outcome"]) for r in records()] == [("ask", "ask")]


def test_an_asked_line_is_denied_where_claude_may_not_ask(claude, installed, project, isolated_home):
    run = run_claude(claude, project, "mkdir ~/made-outside", mode="bypassPermissions")
    assert not (isolated_home / "made-outside").exists(), run
    assert any("may not ask" in r for r in run.results), run
    assert [(r["decision"], r["outcome"]) for r in records()] == [("ask", "deny")]


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_a_project_that_turns_hooks_off_is_reported_by_doctor(claude, installed, project, name):
    """A project's disableAllHooks turns the user's entry off (the real CLI runs the line); doctor,
    run in the project, says so and how to fix it."""
    write(project / ".claude" / name, '{"disableAllHooks": true}\n')
    run = run_claude(claude, project, "touch ungated", mode="bypassPermissions")
    assert (project / "ungated").exists() and not records(), run  # what the managed entry is for
    check = agents_check(project)
    assert not check["ok"] and "disableAllHooks" in check["detail"] and "--managed" in check["fix"]


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_no_project_turns_the_managed_entry_off(claude, project, tmp_path, isolated_home, name):
    managed = tmp_path / "etc-claude-code"
    managed.mkdir()
    wrap = shadowed_etc(**{"claude-code": managed})
    gatekeep("install", "--agent", "claude", "--managed", wrap=wrap)
    assert (managed / "managed-settings.d" / "gatekeep.json").exists()
    assert not (isolated_home / ".claude" / "settings.json").exists()
    write(project / ".claude" / name, '{"disableAllHooks": true, "env": {"CLAUDE_CODE_SIMPLE": "1"}}\n')
    run = run_claude(claude, project, "mkdir ~/planted", mode="bypassPermissions", wrap=wrap)
    assert not (isolated_home / "planted").exists(), run
    assert [(r["decision"], r["outcome"]) for r in records()] == [("ask", "deny")]
    check = agents_check(project, wrap)
    assert check["ok"] and "managed" in check["detail"], check


@pytest.mark.parametrize("tool", ["Write", "Edit", "Bash"])
@pytest.mark.parametrize("name", [".claude/settings.local.json", ".claude/settings.json"])
def test_the_agent_cannot_write_the_settings_that_turn_gatekeep_off(claude, installed, project, tool, name):
    target = project / name
    if tool == "Edit":
        write(target, '{"model": "x"}\n')
        call = {"tool": "Edit", "tool_input": {"file_path": str(target), "old_string": '"model": "x"', "new_string": '"disableAllHooks": true'}}
    elif tool == "Write":
        call = {"tool": "Write", "tool_input": {"file_path": str(target), "content": '{"disableAllHooks": true}\n'}}
    else:
        call = {"tool": "Bash", "tool_input": {"command": f"mkdir -p .claude && echo '{{\"disableAllHooks\": true}}' > {name}"}}
    run = run_claude(claude, project, mode="bypassPermissions", **call)
    assert not target.exists() or "disableAllHooks" not in target.read_text(), run
    assert records()[-1]["outcome"] == "deny" and "coding agent's settings" in records()[-1]["reason"]


def test_the_file_tools_pass_through_elsewhere(claude, installed, project):
    run = run_claude(claude, project, mode="bypassPermissions", tool="Write",
                     tool_input={"file_path": str(project / "notes.md"), "content": "hello\n"})  # fmt: skip
    assert (project / "notes.md").read_text() == "hello\n", run
    assert records() == []  # not gatekeep's to judge: no record


def test_each_host_runs_a_contained_line_in_the_sandbox(host, project, isolated_home):
    """With `sandbox.contain`, what would ask only for running the project's code is allowed with
    the command replaced by `gatekeep run --sandbox -- bash -c …`, which every host here runs."""
    from gatekeep.contain.sandbox import unavailable

    if unavailable() is not None:
        pytest.skip(f"no sandbox here: {unavailable()}")
    user_policy("sandbox:\n  contain: true\n")
    write(project / "build.py", f"open('out.txt', 'w').write('built')\nopen({str(isolated_home / 'escaped')!r}, 'w')\n")
    run = host.run(project, "python3 build.py")
    assert (project / "out.txt").read_text() == "built", run  # it ran, in the tree
    assert not (isolated_home / "escaped").exists(), run  # and could not write outside it
    assert [r["outcome"] for r in records()] == ["contained"]


@pytest.mark.parametrize("switch", [{"enabled": False}, {"disabled": ["gatekeep"]}])
def test_a_project_that_turns_gemini_hooks_off_is_reported_by_doctor(gemini_cli, project, switch):
    gemini_settings()
    gatekeep("install", "--agent", "gemini")
    write(project / ".gemini" / "settings.json", json.dumps({"hooksConfig": switch}))
    run = run_gemini(gemini_cli, project, "touch ungated")
    assert (project / "ungated").exists() and not records(), run  # a trusted folder's settings win
    check = agents_check(project)
    assert not check["ok"] and "hooksConfig" in check["detail"], check


@pytest.mark.parametrize("tool", ["write_file", "replace", "run_shell_command"])
def test_gemini_cannot_write_the_settings_that_turn_gatekeep_off(gemini_cli, project, tool):
    gemini_settings()
    gatekeep("install", "--agent", "gemini")
    target = project / ".gemini" / "settings.json"
    off = '{"hooksConfig": {"enabled": false}}'
    if tool == "replace":
        write(target, '{"model": {}}\n')
        tool_input = {"file_path": str(target), "old_string": '{"model": {}}', "new_string": off, "instruction": "x"}
    elif tool == "write_file":
        tool_input = {"file_path": str(target), "content": off}
    else:
        tool_input = {"command": f"mkdir -p .gemini && echo '{off}' > .gemini/settings.json"}
    run = run_gemini(gemini_cli, project, tool=tool, tool_input=tool_input)
    assert not target.exists() or "hooksConfig" not in target.read_text(), run
    assert records()[-1]["outcome"] == "deny" and "coding agent's settings" in records()[-1]["reason"]


@pytest.mark.parametrize("switch", [{"enabled": False}, {"disabled": ["gatekeep"]}])
def test_no_project_turns_geminis_managed_entry_off(gemini_cli, project, tmp_path, isolated_home, switch):
    system = tmp_path / "etc-gemini-cli"
    system.mkdir()
    wrap = shadowed_etc(**{"gemini-cli": system})
    gemini_settings()
    gatekeep("install", "--agent", "gemini", "--managed", wrap=wrap)
    settings = json.loads((system / "settings.json").read_text())
    assert settings["hooksConfig"] == {"enabled": True}
    [handler] = settings["hooks"]["BeforeTool"][-1]["hooks"]
    assert handler["name"].startswith("gatekeep-")
    gatekeep("install", "--agent", "gemini", "--managed", wrap=wrap)  # a reinstall keeps its name
    assert json.loads((system / "settings.json").read_text())["hooks"]["BeforeTool"][-1]["hooks"] == [handler]
    write(project / ".gemini" / "settings.json", json.dumps({"hooksConfig": switch}))
    run = run_gemini(gemini_cli, project, "mkdir ~/planted", wrap=wrap)
    assert not (isolated_home / "planted").exists(), run
    assert [(r["decision"], r["outcome"]) for r in records()] == [("ask", "deny")]
    gatekeep("install", "--agent", "gemini", "--managed", "--remove", wrap=wrap)
    assert not (system / "settings.json").exists()  # gatekeep made it, and nothing else is in it


def test_codex_trusts_the_hook_install_wrote_and_again_after_a_reinstall(codex, project, tmp_path):
    said = json.loads(gatekeep("install", "--agent", "codex", "--json").stdout)
    assert said["action"] == "installed" and "trusts" in said["notes"][0], said
    python = tmp_path / "other-venv" / "bin" / "python3"  # a reinstall from another virtualenv: a new hash
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    gatekeep("install", "--agent", "codex", python=python)
    user_policy(DENY_TOUCH)
    run = run_codex(codex, project, "touch denied-file")
    assert not (project / "denied-file").exists(), run
    assert [(r["outcome"], r["rule"]) for r in records()] == [("deny", "touch *")]
    check = agents_check(project)
    assert check["ok"], check


def test_an_untrusted_codex_hook_is_reported(codex_cli, project, monkeypatch):
    """codex is not on PATH at install: the trust cannot be recorded, and both install and
    doctor say so (Codex then runs its commands ungated, as the real CLI shows)."""
    done = gatekeep("install", "--agent", "codex")
    assert "WARNING" in done.stderr and "/hooks" in done.stdout + done.stderr
    run = run_codex(codex_cli, project, "touch ungated")
    assert (project / "ungated").exists() and not records(), run
    monkeypatch.setenv("PATH", f"{codex_cli.parent}{os.pathsep}{os.environ['PATH']}")
    check = agents_check(project)
    assert not check["ok"] and "does not trust" in check["detail"], check


def trust_codex_project(project: Path) -> None:
    """What `codex exec --trust` (or Codex's question in a new folder) records."""
    config = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    with open(config, "a") as f:
        f.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')


@pytest.mark.parametrize("key", ["hooks", "codex_hooks"])
def test_a_project_that_turns_codex_hooks_off_is_reported_by_doctor(codex, project, key):
    """A trusted project's .codex/config.toml turns every hook off there (an untrusted one's is
    not read, and doctor says nothing of it)."""
    gatekeep("install", "--agent", "codex")
    write(project / ".codex" / "config.toml", f"[features]\n{key} = false\n")
    assert agents_check(project)["ok"]
    trust_codex_project(project)
    run = run_codex(codex, project, "touch ungated")
    assert (project / "ungated").exists() and not records(), run  # what the managed entry is for
    check = agents_check(project)
    assert not check["ok"] and "hooks = false" in check["detail"] and "--managed" in check["fix"], check


def test_no_project_turns_codexs_managed_entry_off(codex, project, tmp_path, isolated_home):
    """The machine's requirements.toml pins the hooks feature on, and its hook needs no trust."""
    system = tmp_path / "etc-codex"
    system.mkdir()
    write(system / "requirements.toml", 'allowed_web_search_modes = ["disabled"]\n')  # the machine's own
    wrap = shadowed_etc(codex=system)
    said = json.loads(gatekeep("install", "--agent", "codex", "--managed", "--json", wrap=wrap).stdout)
    assert said["action"] == "installed" and said["notes"] == [], said
    assert not (isolated_home / ".codex" / "hooks.json").exists()
    write(project / ".codex" / "config.toml", "[features]\nhooks = false\n")
    trust_codex_project(project)
    user_policy(DENY_TOUCH)
    run = run_codex(codex, project, "touch denied-file", wrap=wrap)
    assert not (project / "denied-file").exists(), run
    assert [(r["outcome"], r["rule"]) for r in records()] == [("deny", "touch *")]
    check = agents_check(project, wrap)
    assert check["ok"] and "managed" in check["detail"], check
    gatekeep("install", "--agent", "codex", "--managed", "--remove", wrap=wrap)
    assert (system / "requirements.toml").read_text() == 'allowed_web_search_modes = ["disabled"]\n'


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_a_project_that_turns_copilot_hooks_off_is_reported_by_doctor(copilot_cli, project, name):
    gatekeep("install", "--agent", "copilot")
    write(project / ".github" / "copilot" / name, '{"disableAllHooks": true}\n')
    run = run_copilot(copilot_cli, project, "touch ungated", flags=("--trust-folder",))
    assert (project / "ungated").exists() and not records(), run  # a trusted folder's setting wins
    check = agents_check(project)
    assert not check["ok"] and "disableAllHooks" in check["detail"], check


@pytest.mark.parametrize("tool", ["create", "edit", "bash"])
def test_copilot_cannot_write_the_settings_that_turn_gatekeep_off(copilot_cli, project, tool):
    gatekeep("install", "--agent", "copilot")
    target = project / ".github" / "copilot" / "settings.json"
    off = '{"disableAllHooks": true}'
    if tool == "edit":
        write(target, '{"banner": "never"}')
        tool_input = {"path": str(target), "old_str": '{"banner": "never"}', "new_str": off}
    elif tool == "create":
        tool_input = {"path": str(target), "file_text": off}
    else:
        tool_input = {"command": f"mkdir -p .github/copilot && echo '{off}' > .github/copilot/settings.json", "description": "x"}
    run = run_copilot(copilot_cli, project, tool=tool, tool_input=tool_input)
    assert not target.exists() or "disableAllHooks" not in target.read_text(), run
    assert records()[-1]["outcome"] == "deny" and "coding agent's settings" in records()[-1]["reason"]


def test_opencode_fetches_nothing_to_load_the_plugin(opencode_cli, project):
    """With a plugin present, OpenCode installs its plugin SDK from npm before it starts a session
    (offline, a minute of waiting at each start): gatekeep's needs none, and install says so."""
    gatekeep("install", "--agent", "opencode")
    run = run_opencode(opencode_cli, project, "touch made-by-agent")
    assert (project / "made-by-agent").exists(), run
    assert run.model.fetched == [], run
    assert not (Path(os.environ["XDG_CONFIG_HOME"]) / "opencode" / "node_modules" / "@opencode-ai").exists()


@pytest.mark.parametrize("tool", ["write", "edit", "bash"])
def test_opencode_cannot_write_a_project_plugin(opencode_cli, project, tool):
    """A project plugin runs as the user when OpenCode next starts there, and can change a command
    after gatekeep's hook has passed it: OpenCode's own file tools may not write one either."""
    gatekeep("install", "--agent", "opencode")
    plugin = "export default { id: 'x', server: async () => ({}) }"
    target = project / ".opencode" / "plugins" / "x.js"
    if tool == "edit":
        target = project / "opencode.json"
        write(target, '{"plugin": []}')
        tool_input = {"filePath": str(target), "oldString": '"plugin": []', "newString": '"plugin": ["./x.js"]'}
    elif tool == "write":
        tool_input = {"filePath": str(target), "content": plugin}
    else:
        tool_input = {"command": f"mkdir -p .opencode/plugins && echo \"{plugin}\" > .opencode/plugins/x.js", "description": "x"}
    run = run_opencode(opencode_cli, project, tool=tool, tool_input=tool_input)
    assert not target.exists() or "x.js" not in target.read_text(), run
    assert records()[-1]["outcome"] == "deny" and "coding agent's settings" in records()[-1]["reason"]


def test_a_project_plugin_is_reported_by_doctor(opencode_cli, project):
    gatekeep("install", "--agent", "opencode")
    assert agents_check(project)["ok"]
    write(project / ".opencode" / "plugins" / "x.js", "export default { id: 'x', server: async () => ({}) }\n")
    check = agents_check(project)
    assert not check["ok"] and "project plugin" in check["detail"], check
