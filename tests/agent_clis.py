"""The real coding-agent CLIs, from npm at pinned versions, for tests/test_real_agents.py.

Each is installed once into .agent-clis/PACKAGE@VERSION in the repository (ignored by git), under a
lock, so that parallel test workers share one install; npm's cache goes beside it, never into a
home directory. Where npm is missing or the install fails, the tests that need the CLI skip with
the reason, unless GATEKEEP_REQUIRE_AGENTS=1 (CI sets it): then they fail.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / ".agent-clis"
# name: (npm package, version, the command it installs)
PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.328", "claude"),
    "claude-2.1.197": ("@anthropic-ai/claude-code", "2.1.197", "claude"),  # before onFailure (2.1.295)
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
    "codex": ("@openai/codex", "0.169.0", "codex"),
    "copilot": ("@github/copilot", "1.0.102", "copilot"),
    "opencode": ("opencode-ai", "1.18.33", "opencode"),
}
INSTALL_SECONDS = 600


def _missing(why: str):
    if os.environ.get("GATEKEEP_REQUIRE_AGENTS") == "1":
        pytest.fail(f"GATEKEEP_REQUIRE_AGENTS=1, but {why}", pytrace=False)
    pytest.skip(why)


def cli(name: str) -> Path:
    """The path of agent `name`'s command, installed first if it is not yet."""
    package, version, command = PINNED[name]
    place = STORE / f"{package.replace('/', '+')}@{version}"
    binary = place / "node_modules" / ".bin" / command
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        _missing(f"npm is not installed, so {package}@{version} cannot be")
    STORE.mkdir(exist_ok=True)
    with open(STORE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            place.mkdir(exist_ok=True)
            env = {**os.environ, "npm_config_cache": str(STORE / ".npm-cache"), "npm_config_update_notifier": "false"}
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(place), f"{package}@{version}"],
                capture_output=True, text=True, env=env, timeout=INSTALL_SECONDS,
            )  # fmt: skip
            if done.returncode != 0 or not binary.exists():
                _missing(f"npm could not install {package}@{version}: {done.stderr.strip()[-400:]}")
    return binary
