"""Every test runs with its own GATEKEEP_HOME, HOME and XDG dirs under tmp_path (fixtures shared by a
module or the session get a throw-away set of their own).

The guard is autouse, so a test that forgets cannot write to the real home
directory, and no developer's own policy can change a test's result. It also
turns the warm checker off (GATEKEEP_SERVER=off), except in tests/test_server.py.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.judge.policy import Policy, combine, load_policy, parse_layer


def _isolate(monkeypatch: pytest.MonkeyPatch, root: Path) -> Path:
    home = root / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GATEKEEP_HOME", str(root / "gatekeep"))
    monkeypatch.setenv("GATEKEEP_SYSTEM_POLICY", str(root / "etc" / "policy.yaml"))
    monkeypatch.setenv("GATEKEEP_MANAGED_DIR", str(root / "etc" / "policy.d"))
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(home / f".{name.lower()}"))
    monkeypatch.delenv("GATEKEEP_POLICY", raising=False)
    # Every check decides in its own process, as with no warm checker running; tests/test_server.py
    # turns the server on where it tests it (a server per test HOME would outlive the test).
    monkeypatch.setenv("GATEKEEP_SERVER", "off")
    agents = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME", "GEMINI_CLI_SYSTEM_SETTINGS_PATH")
    for name in (*agents, "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "OPENCODE_CONFIG_CONTENT"):
        # agents' settings: under HOME too
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(scope="session", autouse=True)
def isolated_session(tmp_path_factory):
    """The same isolation for module- and session-scoped fixtures, which are set up before any test's own."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield _isolate(monkeypatch, tmp_path_factory.mktemp("session"))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    return _isolate(monkeypatch, tmp_path)


@pytest.fixture
def terminal():
    """A pseudo-terminal a question can be asked on (tests/shells.py's Terminal)."""
    from tests.shells import Terminal

    t = Terminal()
    yield t
    t.close()


@pytest.fixture
def paths():
    return get_paths()


def policy_from(text: str) -> Policy:
    """The built-in policy plus `text` as the user layer."""
    base = load_policy(get_paths())
    user = parse_layer("user", Path("/test/policy.yaml"), text)
    return combine([base.layers[0], user])


def write(path: str | Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def race(target, count: int, *args) -> None:
    """Run `target(worker, *args)` in `count` real, separate processes at once; all must succeed."""
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=target, args=(w, *args)) for w in range(count)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(timeout=300)
        assert p.exitcode == 0
