"""Project policies (.gatekeep.yaml): deny and ask apply at once, allow only once trusted by content hash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.judge import project
from gatekeep.judge.gate import evaluate
from gatekeep.judge.policy import load_policy
from tests.conftest import write

PROJECT = """\
timeout: 20
rules:
  allow: ["make *", "rm -rf /"]
  ask: ["git commit *"]
  deny: ["git push *"]
"""


def gatekeep(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    """The real command, run in `cwd` (the test's GATEKEEP_HOME and HOME come through the environment)."""
    return subprocess.run(
        [sys.executable, "-m", "gatekeep", *argv], cwd=cwd, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def repo(tmp_path) -> Path:
    write(tmp_path / "repo" / ".gatekeep.yaml", PROJECT)
    (tmp_path / "repo" / "src" / "deep").mkdir(parents=True)
    return tmp_path / "repo"


def decide(line: str, cwd: Path) -> str:
    return evaluate(line, load_policy(get_paths(), cwd=str(cwd)), str(cwd)).decision


# (line, verdict while untrusted, verdict once trusted)
CASES = [
    ("git push origin main", "deny", "deny"),  # project deny: no trust needed
    ("git commit -m x", "ask", "ask"),  # project ask: no trust needed
    ("make test", "ask", "allow"),  # project allow: only once trusted
    ("make -j4 all", "ask", "allow"),
    ("rm -rf /", "deny", "deny"),  # a trusted project cannot allow what the built-in policy denies
    ("git status", "allow", "allow"),  # the built-in allow still counts
    ("make test && git push", "deny", "deny"),
    ("echo hi > .gatekeep.yaml", "deny", "deny"),  # the project policy is protected like the user's
    ("tee src/.gatekeep.yaml", "deny", "deny"),
    ("gatekeep trust", "ask", "ask"),  # an agent typing the approval still meets a prompt
]


@pytest.mark.parametrize("line,untrusted,trusted", CASES)
def test_project_rules_by_trust(repo, line, untrusted, trusted):
    deep = repo / "src" / "deep"  # the nearest .gatekeep.yaml above the directory counts
    assert decide(line, deep) == untrusted
    assert gatekeep(repo, "trust").returncode == 0
    assert decide(line, deep) == trusted


def test_outside_the_project_its_rules_do_not_apply(repo, tmp_path):
    assert decide("git push", repo) == "deny"
    assert decide("git push", tmp_path) == "ask"  # the built-in default


def test_every_project_file_above_counts_and_a_nested_one_hides_none_of_its_parents_rules(repo):
    write(repo / "src" / ".gatekeep.yaml", "rules:\n  deny: ['make *']\n  allow: ['git push *']\n")
    assert project.find_project_file(str(repo / "src" / "deep")) == str(repo / "src" / ".gatekeep.yaml")
    assert project.find_project_files(str(repo / "src" / "deep")) == [
        str(repo / ".gatekeep.yaml"),
        str(repo / "src" / ".gatekeep.yaml"),
    ]
    assert decide("make test", repo / "src") == "deny"
    assert decide("git push", repo / "src") == "deny"  # the outer file's deny still holds
    assert gatekeep(repo / "src", "trust").returncode == 0  # trusting the inner one does not loosen the outer
    assert decide("git push", repo / "src") == "deny"


def test_editing_the_file_revokes_trust(repo):
    gatekeep(repo, "trust")
    assert decide("make test", repo) == "allow"
    with open(repo / ".gatekeep.yaml", "a") as f:
        f.write("# one more comment\n")
    assert decide("make test", repo) == "ask"
    gatekeep(repo, "trust")
    assert decide("make test", repo) == "allow"


def test_a_trusted_file_copied_elsewhere_is_not_trusted(repo, tmp_path):
    gatekeep(repo, "trust")
    shutil.copytree(repo, tmp_path / "clone")
    assert decide("make test", tmp_path / "clone") == "ask"
    assert decide("make test", repo) == "allow"


def test_revoke(repo):
    assert gatekeep(repo, "trust").returncode == 0
    result = gatekeep(repo / "src", "trust", "--revoke")
    assert result.returncode == 0, result.stderr
    assert "revoked" in result.stdout
    assert decide("make test", repo) == "ask"
    again = gatekeep(repo, "trust", "--revoke")
    assert again.returncode == 1
    assert "was not trusted" in again.stderr


def test_revoke_forgets_every_version(repo):
    gatekeep(repo, "trust")
    (repo / ".gatekeep.yaml").write_text(PROJECT + "# v2\n")
    gatekeep(repo, "trust")
    assert len(list(Path(get_paths().trust_dir).iterdir())) == 2
    gatekeep(repo, "trust", "--revoke")
    assert list(Path(get_paths().trust_dir).iterdir()) == []
    (repo / ".gatekeep.yaml").write_text(PROJECT)  # the first version again: still revoked
    assert decide("make test", repo) == "ask"


def test_trust_shows_what_it_trusts_and_names_the_file(repo):
    result = gatekeep(repo / "src", "trust")
    assert result.returncode == 0
    assert str(repo / ".gatekeep.yaml") in result.stdout
    assert "allow make *" in result.stdout


def test_trust_without_a_project_file(tmp_path):
    result = gatekeep(tmp_path, "trust")
    assert result.returncode == 2
    assert result.stderr.startswith("gatekeep: no .gatekeep.yaml in")


def test_a_broken_project_file_is_never_trusted_and_makes_every_line_ask(repo):
    (repo / ".gatekeep.yaml").write_text("rules:\n  allow: [make *\n")
    result = gatekeep(repo, "trust")
    assert result.returncode == 2
    assert "policy error" in result.stderr
    assert not Path(get_paths().trust_dir).exists()
    assert decide("git status", repo) == "ask"  # even what the built-in policy allows
    assert decide("rm -rf /", repo) == "deny"  # and deny still denies
    check = gatekeep(repo, "check", "--no-prompt", "--", "cd ..")
    assert check.returncode == 1
    assert "every line asks until it is fixed" in check.stderr


@pytest.mark.parametrize(
    "settings,default,timeout",
    [
        ("default: allow\ntimeout: 900\n", "ask", 300),  # looser: ignored, trusted or not
        ("default: deny\ntimeout: 5\n", "deny", 5),  # stricter: applies
    ],
)
def test_a_project_can_only_tighten_default_and_timeout(repo, settings, default, timeout):
    (repo / ".gatekeep.yaml").write_text(settings)
    gatekeep(repo, "trust")
    policy = load_policy(get_paths(), cwd=str(repo))
    assert (policy.default, policy.timeout) == (default, timeout)


def test_rules_list_marks_untrusted_allow_rules(repo):
    listed = json.loads(gatekeep(repo, "rules", "list", "--json").stdout)["rules"]
    project_rules = {(r["verdict"], r["pattern"], r.get("untrusted", False)) for r in listed if r["layer"] == "project"}
    assert project_rules == {
        ("allow", "make *", True),
        ("allow", "rm -rf /", True),
        ("ask", "git commit *", False),
        ("deny", "git push *", False),
    }
    assert "run `gatekeep trust` there" in gatekeep(repo, "rules", "list").stdout


def test_rules_test_names_the_project_layer(repo):
    gatekeep(repo, "trust")
    result = json.loads(gatekeep(repo, "rules", "test", "--json", "--", "make test").stdout)
    assert result["decision"] == "allow"
    assert result["commands"][0]["layer"] == "project"


def test_check_uses_the_project_of_its_cwd(repo, tmp_path):
    gatekeep(repo, "trust")
    assert gatekeep(tmp_path, "check", "-q", "--no-prompt", "--cwd", str(repo), "--", "make test").returncode == 0
    assert gatekeep(tmp_path, "check", "-q", "--no-prompt", "--", "make test").returncode == 1
    records = [json.loads(line) for line in Path(get_paths().audit_log).read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["allow", "deny"]


def test_each_project_has_its_own_cache(repo, tmp_path):
    other = write(tmp_path / "other" / ".gatekeep.yaml", "rules:\n  deny: ['make *']\n").parent
    for _ in range(2):
        assert decide("make test", repo) == "ask"
        assert decide("make test", other) == "deny"
    names = sorted(os.listdir(get_paths().cache_dir))
    assert len([n for n in names if n.startswith("policy-12-")]) == 2


@pytest.mark.parametrize(
    "text,why",
    [
        ("rules:\n  deny: ['x *']\n" + "# padding\n" * 8000, "larger than 64 KiB"),
        ("rules: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 32 deep"),
        ("rules:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 300)), "policy error"),
        ("[" * 1000 + "\n", "nested more than 32 deep"),
        ("- " * 1000 + "x\n", "nested too deeply to read"),  # block nesting, no bracket to count
        ("? " * 1000 + "x\n", "nested too deeply to read"),
        ("rules:\n  deny: ['\xff']\n".encode("latin-1").decode("utf-8", "surrogateescape"), "not UTF-8 text"),
    ],
)
def test_a_hostile_project_file_is_bounded_and_makes_every_line_ask(tmp_path, text, why):
    repo = tmp_path / "hostile"
    (repo / "sub").mkdir(parents=True)
    (repo / ".gatekeep.yaml").write_bytes(text.encode("utf-8", "surrogateescape"))
    for line in ("ls", "cd /"):  # even what only looks: every line in the repository asks
        result = gatekeep(repo / "sub", "check", "--no-prompt", "--", line)
        assert result.returncode == 1, result.stderr
        assert why in result.stderr and "every line asks until it is fixed" in result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert gatekeep(tmp_path, "check", "--no-prompt", "--", "ls").returncode == 0  # outside it, nothing changes


def _bytes_dir(parent: Path, name: bytes) -> Path:
    """A directory whose name is not valid UTF-8, or a skip where the file system refuses one."""
    try:
        os.mkdir(os.path.join(os.fsencode(parent), name))
    except OSError as e:  # macOS's file systems take only UTF-8 names
        pytest.skip(f"the file system refuses a name that is not UTF-8 ({e.strerror})")
    return parent / os.fsdecode(name)


def test_a_project_file_whose_path_is_not_utf8_makes_every_line_there_ask(tmp_path):
    odd = _bytes_dir(tmp_path, b"caf\xe9")
    write(odd / ".gatekeep.yaml", "rules:\n  deny: ['git push *']\n")
    for line in ("ls", "cd /"):
        result = gatekeep(odd, "check", "--no-prompt", "--", line)
        assert result.returncode == 1, result.stderr  # was exit 2: UnicodeEncodeError on every line
        assert "not UTF-8" in result.stderr and "rename the directory" in result.stderr
        assert "caf\\xe9" in result.stderr  # the name shown with its byte escaped, not a surrogate
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert gatekeep(odd, "check", "--no-prompt", "--", "git push").returncode == 1


def test_a_directory_not_utf8_inside_a_project_is_judged_as_usual(repo):
    odd = _bytes_dir(repo, b"\xff")
    assert gatekeep(odd, "check", "--no-prompt", "--", "ls").returncode == 0
    denied = gatekeep(odd, "check", "--no-prompt", "--", "git push origin main")
    assert denied.returncode == 1 and "git push *" in denied.stderr  # the project's deny rule still holds


def test_a_fifo_in_place_of_the_project_file_never_blocks(tmp_path):
    from gatekeep.judge.policy import read_project_text

    fifo = tmp_path / ".gatekeep.yaml"
    os.mkfifo(fifo)
    result = subprocess.run(  # a separate process: a read that blocks would hang the test run
        [sys.executable, "-c", f"from gatekeep.judge.policy import read_project_text as r; print(r({str(fifo)!r}))"],
        capture_output=True, text=True, timeout=30,
    )
    assert "not a regular file" in result.stdout
    assert "not a regular file" in str(read_project_text(str(fifo)))


@pytest.mark.parametrize("kind", ["directory", "fifo", "dangling symlink", "symlink to a directory"])
def test_a_project_file_that_is_no_regular_file_makes_every_line_ask_with_a_message(tmp_path, kind):
    """Its deny rules must not vanish in silence: the layer is broken, as a file that does not parse is."""
    project_dir = tmp_path / "proj"
    project_dir.mkdir()
    where = project_dir / ".gatekeep.yaml"
    if kind == "directory":
        where.mkdir()
    elif kind == "fifo":
        os.mkfifo(where)
    elif kind == "dangling symlink":
        where.symlink_to(tmp_path / "gone.yaml")
    else:
        (tmp_path / "d").mkdir()
        where.symlink_to(tmp_path / "d")
    assert project.find_project_files(str(project_dir)) == [str(where)]
    for line in ("ls", "git status"):
        result = gatekeep(project_dir, "check", "--no-prompt", "--", line)
        assert result.returncode != 0, result.stderr  # not allowed: it asks, and no one answers
        assert ".gatekeep.yaml" in result.stderr, result.stderr
    trusted = gatekeep(project_dir, "trust")  # never waits on a FIFO, never trusts what it cannot read
    assert trusted.returncode != 0 and ".gatekeep.yaml" in trusted.stderr, trusted.stderr


def test_a_project_file_the_parser_fails_on_in_any_way_makes_every_line_ask(tmp_path, monkeypatch):
    import gatekeep.judge.policy as policy_module

    real = policy_module.parse_layer

    def crash(name, path, text):
        if name == "project":
            raise TypeError("a shape the parser was not written for")
        return real(name, path, text)

    write(tmp_path / "odd" / ".gatekeep.yaml", "rules: {}\n")
    monkeypatch.setattr(policy_module, "parse_layer", crash)
    layers = load_policy(get_paths(), cwd=str(tmp_path / "odd")).layers
    (layer,) = [layer for layer in layers if layer.name == "project"]
    assert "the parser failed on it (TypeError)" in layer.error


def test_a_project_file_that_takes_too_long_to_read_makes_every_line_ask(tmp_path):
    """The limit is 2 s of CPU time; the test lowers it to 0.05 s and gives a file that takes ~0.3 s
    (its `%YAML` line leaves it to the round-trip loader: yamlio.load_plain would read it in 10 ms)."""
    text = "%YAML 1.2\n---\nrules:\n  deny: [" + ", ".join(["'x'"] * 4000) + "]\n"
    repo = write(tmp_path / "slow" / ".gatekeep.yaml", text).parent
    code = (
        "import sys; import gatekeep.judge.policy as p; p.PROJECT_READ_SECONDS = 0.05;"
        "from gatekeep.main import main; sys.exit(main(sys.argv[1:]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "check", "--no-prompt", "--", "ls"],
        cwd=repo, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "took more than 0.05 s to read" in result.stderr and "every line asks" in result.stderr


def test_a_deny_rule_of_many_stars_costs_milliseconds_not_minutes(tmp_path):
    """26 `*` and an X: as a regular expression a 10-character line took 9 s and `git status
    --short` more than 40 s. Asserted generously: a whole check, process start included."""
    import time

    repo = write(tmp_path / "stars" / ".gatekeep.yaml", "rules:\n  deny: ['" + "*" * 26 + "X']\n").parent
    for line, code in (("ls -la /tm", 0), ("git status --short", 0), ("echo X", 1)):
        start = time.monotonic()
        result = gatekeep(repo, "check", "--no-prompt", "--", line)
        assert time.monotonic() - start < 5
        assert result.returncode == code, result.stderr


@pytest.mark.parametrize(
    "line,decision",
    [
        ("cd repo && git push origin main", "deny"),  # typed outside the repository, run inside it
        ("cd repo/src/deep; git push", "deny"),
        ("cd repo && git status", "ask"),  # git after cd asks whatever the rules say
        ("cd repo && make test", "ask"),  # its allow rules were trusted for lines typed there, not here
        ("git push origin main", "ask"),  # without the cd, the project is not where it runs
    ],
)
def test_a_cd_on_the_line_brings_the_project_rules_of_where_it_leads(repo, line, decision):
    assert gatekeep(repo, "trust").returncode == 0
    outside = repo.parent
    policy = load_policy(get_paths(), cwd=str(outside))
    assert evaluate(line, policy, str(outside)).decision == decision


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_in_a_gated_shell_a_hostile_project_asks_and_costs_no_time(tmp_path, shell):
    """In real interactive bash and zsh with the hook: a repository whose project file the parser
    cannot read asks for every line (was an internal error on each), and one whose deny rule
    backtracked for minutes decides in the usual time."""
    import time

    from tests.shells import Shell, hook_text

    session = Shell(shell, tmp_path / shell, hook_text(shell))
    try:
        write(session.work / "nested" / ".gatekeep.yaml", "[" * 1000 + "\n")
        write(session.work / "stars" / ".gatekeep.yaml", "rules:\n  deny: ['" + "*" * 26 + "X']\n")
        session.run("cd stars")
        start = time.monotonic()
        assert "internal error" not in session.run("ls -la /tm")
        assert time.monotonic() - start < 5  # generous: was 9 s, and `git status --short` 40 s
        output, asked = session.type("cd ../nested", answer="o")  # the project starts at the directory
        output, asked = session.type("ls", answer="d")
        assert asked and "internal error" not in output and "nested more than 32 deep" in output
    finally:
        session.close()
