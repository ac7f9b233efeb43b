"""`startup-files`: a tool that reads a file of the repository at every start, which can name code to
run (`.mvn/jvm.config`: `-javaagent:x.jar`), runs that code even for `--version`. Where such a file
is, in the directory the command runs in or above, none of its forms is read-only; a line that
writes one and then runs the tool asks as for any program it writes.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.judge.gate import evaluate
from gatekeep.judge.policy import load_policy
from tests.conftest import write

# (line, the file that makes it run code, where the line runs: "" or a subdirectory)
CASES = [
    ("mvn --version", ".mvn/jvm.config", ""),
    ("mvn --version", ".mvn/jvm.config", "module/src"),  # mvn finds .mvn above it
    ("mvn --version", ".mvn/maven.config", ""),
    ("mvn --version", ".mvn/extensions.xml", ""),
    ("cd module && mvn --version", ".mvn/jvm.config", ""),
    ("sbt --version", ".jvmopts", ""),
    ("sbt --version", ".sbtopts", ""),
    ("rails --version", "bin/rails", "app/models"),
    ("dotnet --version", "global.json", ""),
    ("yarn --version", ".yarnrc.yml", ""),
    ("yarn --version", ".yarnrc", "packages/a"),
    ("yarn --version", ".corepack.env", ""),  # corepack: COREPACK_ENABLE_UNSAFE_CUSTOM_URLS=1 there
    ("pnpm --version", ".corepack.env", ""),
    ("npm ls", ".corepack.env", ""),
]


@pytest.fixture
def repo(tmp_path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    for sub in ("module/src", "app/models", "packages/a", "module"):
        (tmp_path / "repo" / sub).mkdir(parents=True, exist_ok=True)
    return tmp_path / "repo"


def decide(line: str, cwd: Path) -> tuple[str, str]:
    verdict = evaluate(line, load_policy(get_paths(), cwd=str(cwd)), str(cwd))
    return verdict.decision, verdict.reason


@pytest.mark.parametrize("line,startup,where", CASES)
def test_a_startup_file_makes_every_form_ask(repo, line, startup, where):
    cwd = repo / where
    assert decide(line, cwd)[0] == "allow"  # without it: only shows a version
    write(repo / startup, "-javaagent:evil.jar\n")
    decision, reason = decide(line, cwd)
    assert decision == "ask" and f"starts by reading {repo / startup}" in reason


@pytest.mark.parametrize(
    "line",
    [
        "mkdir -p .mvn && echo -javaagent:x.jar > .mvn/jvm.config && mvn --version",
        "printf 'yarnPath: x.cjs\\n' > .yarnrc.yml; yarn --version",
        "echo '-J-javaagent:x.jar' > .sbtopts && sbt --version",
    ],
)
def test_a_line_that_writes_one_and_starts_the_tool_asks(repo, line):
    decision, reason = decide(line, repo)
    assert decision == "ask" and "and runs it" in reason


def test_a_cd_to_a_directory_known_only_at_run_time_asks(repo):
    decision, reason = decide('cd "$PROJECT" && mvn --version', repo)
    assert decision == "ask" and "wherever it runs" in reason


def test_other_tools_and_other_files_are_untouched(repo):
    write(repo / ".mvn" / "jvm.config", "-Xmx1g\n")
    write(repo / "global.json", "{}\n")
    assert decide("java -version", repo)[0] == "allow"
    assert decide("git status", repo)[0] == "allow"
    assert decide("node --version", repo)[0] == "allow"


def test_the_users_own_file_in_the_home_directory_does_not_count():
    """`~/.cargo/config.toml` is the user's own, not a repository's: a project below the home
    directory is judged by the files between it and the home directory."""
    home = Path.home()
    project = home / "src" / "app"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(home / ".cargo" / "config.toml", "[build]\nrustc-wrapper = 'sccache'\n")
    assert decide("cargo --version", project)[0] == "allow"
    write(home / "src" / ".cargo" / "config.toml", "[build]\nrustc-wrapper = './x'\n")
    decision, reason = decide("cargo --version", project)
    assert decision == "ask" and f"starts by reading {home / 'src' / '.cargo' / 'config.toml'}" in reason
