"""What gatekeep knows about tools (tools/*.toml) and the one option parser that reads them.

Every example in the data is a test: a `runs:` line must have a form only a rule
naming it may allow, and a `safe:` line must not. The parser is tested on its
own, table-driven, for the ways tools take options.
"""

from __future__ import annotations

import os

import pytest
import tomllib

from gatekeep.core import resources
from gatekeep.judge.gate import evaluate, read_line
from gatekeep.name.checks import CHECKS, LOSS_CHECKS
from gatekeep.name.knowledge import compile_tools, load_knowledge
from gatekeep.name.options import Spec, parse
from tests.conftest import policy_from, write

TOOLS_DIR = resources.data_dir("tools")
SOURCES = tuple((name, open(os.path.join(TOOLS_DIR, name), encoding="utf-8").read()) for name in sorted(os.listdir(TOOLS_DIR)) if name.endswith(".toml"))


def _examples():
    def walk(path, table):
        for example in table.get("examples", ()):
            kind, line = example.split(": ", 1)
            yield pytest.param(kind, line, id=f"{path}: {example}")
        for key, value in table.items():
            if isinstance(value, dict):
                yield from walk(f"{path} {key}", value)

    for _, text in SOURCES:
        for tool, table in tomllib.loads(text).items():
            yield from walk(tool, table)


EXAMPLES = list(_examples())


def test_the_shipped_data_compiles():
    tables, aliases = compile_tools(SOURCES)
    assert "make" in tables and aliases["python3"] == "python"


def test_every_tool_has_examples_of_both_kinds_where_it_has_a_safe_use():
    for _, text in SOURCES:
        for tool, table in tomllib.loads(text).items():
            kinds = {e.split(":", 1)[0] for e in table.get("examples", ())}
            nested = any(isinstance(v, dict) and v.get("examples") for v in table.values())
            syntax_only = not (set(table) & {"code-options", "program-options", "checks", "runs", "config-options"})
            assert "runs" in kinds or nested or syntax_only, f"[{tool}] has no example of the form that runs code"


def test_every_check_is_used_by_the_data():
    def used(key):  # a subcommand may be called `checks` too (gh pr checks): a table, not a list
        return {c for _, text in SOURCES for t in _tables(tomllib.loads(text)) if isinstance(t.get(key), list) for c in t[key]}

    assert used("checks") == set(CHECKS)
    assert used("loss-checks") == set(LOSS_CHECKS)


def _tables(data):
    for table in data.values():
        if isinstance(table, dict):
            yield table
            yield from _tables({k: v for k, v in table.items() if isinstance(v, dict)})


@pytest.mark.parametrize(
    "text,message",
    [
        ("[x]\nvalue-option = ['-f']\n", "unknown key 'value-option'"),
        ("[x]\ncode-options = '-e'\n", "must be a list"),
        ("[x]\nchecks = ['no-such-check']\n", "no check named no-such-check"),
        ("[x]\nprogram-operand = 'yes'\n", "must be true or false"),
        ("[x]\nexamples = ['x']\n", "examples must be lines"),
        ("[x]\naliases = ['y']\n[y]\n", "names another tool"),
    ],
)
def test_broken_data_is_refused_with_the_tool_named(text, message):
    with pytest.raises(ValueError, match=message):
        compile_tools((("bad.toml", text),))


@pytest.fixture(scope="module")
def quiet_policy():
    # the built-in policy, in `posture: strict`: what the data says a form does, before a posture
    # lets some changes through unasked (tests/test_posture.py)
    return policy_from("posture: strict\n")


@pytest.fixture(scope="module")
def broad_policy():
    return policy_from("default: allow\nrules:\n  allow: ['*']\n")  # a user who allows everything


CREDENTIALS = (".ssh/id_rsa", ".ssh/id_rsa.pub", ".ssh/known_hosts", ".aws/credentials", ".kube/config")
PROJECT_FILES = (".env", ".env.example", "config/master.key", "certs/server.key", "notes.md", "app.log")


@pytest.fixture
def workdir(isolated_home, tmp_path, monkeypatch):
    """A git working tree with a .env beside its code, under a home with credentials, where the
    examples run. It lies below /tmp, so only /var/tmp stays a temporary directory here."""
    from gatekeep.judge import writes

    monkeypatch.setattr(writes, "TEMPORARY", ("/var/tmp",))
    monkeypatch.delenv("TMPDIR", raising=False)
    for name in CREDENTIALS:
        write(isolated_home / name, "secret\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name in PROJECT_FILES:
        write(repo / name, "x\n")
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(repo)
    return repo


@pytest.mark.parametrize("kind,line", EXAMPLES)
def test_each_example_in_the_data(kind, line, quiet_policy, broad_policy, workdir):
    """runs: only a rule naming the form allows it; safe: no such form. reads: allowed with no
    configuration; changes: not. loses: asks, saying what would be lost, even when everything is
    allowed; secret: asks, even when everything is allowed."""
    _, normalized = read_line(line)
    forms = [n.exact_form for n in normalized if n.exact_form]
    if kind in ("runs", "safe"):
        assert bool(forms) is (kind == "runs"), forms
        return
    quiet, broad = evaluate(line, quiet_policy), evaluate(line, broad_policy)
    if kind == "reads":
        assert quiet.decision == "allow", quiet.reason
    elif kind == "changes":
        assert quiet.decision != "allow", quiet.reason
        assert "would lose" not in broad.reason and "secret" not in broad.reason, broad.reason
    elif kind == "loses":
        assert (broad.decision, "would lose" in broad.reason) == ("ask", True), broad.reason
    else:
        assert (quiet.decision, broad.decision) == ("ask", "ask"), (quiet.reason, broad.reason)
        assert "secret" in broad.reason or "credential" in broad.reason, broad.reason


@pytest.mark.parametrize("kind,line", [e for e in EXAMPLES if e.values[0] == "runs"])
def test_a_broad_allow_rule_does_not_stretch_over_a_form_that_runs_code(kind, line, broad_policy):
    assert evaluate(line, broad_policy).decision != "allow"


def test_a_rule_naming_the_option_allows_it():
    policy = policy_from("rules:\n  allow: ['make *', 'make --eval *']\n")
    assert evaluate("make --eval 'x:=1'", policy).decision == "allow"
    assert evaluate("make --ev 'x:=1'", policy).decision == "ask"  # the rule names --eval as written


def test_versioned_and_pathed_names_find_their_table():
    knowledge = load_knowledge()
    assert knowledge.table("/usr/bin/python3.12")[0] == "python"
    assert knowledge.table("perl5.36")[0] == "perl"
    assert knowledge.table("gsed")[0] == "sed"
    assert knowledge.table("frobnicate") is None


SPEC = Spec(
    values=frozenset({"-f", "--file", "-e", "--eval", "-o"}),
    optional=frozenset({"-i", "--in-place"}),
    long=frozenset({"--file", "--eval", "--in-place", "--environment", "--verbose"}),
    single_dash=frozenset({"-ex"}),
    code=frozenset({"--eval", "-e", "-ex"}),
)

PARSES = [
    (["-f", "x", "a"], [("-f", "x")], ["a"]),
    (["-fx", "a"], [("-f", "x")], ["a"]),
    (["-vf", "x"], [("-v", None), ("-f", "x")], []),
    (["-vfx"], [("-v", None), ("-f", "x")], []),
    (["--file=x"], [("--file", "x")], []),
    (["--file", "x"], [("--file", "x")], []),
    (["--fi", "x"], [("--file", "x")], []),  # a unique abbreviation
    (["--ev=x"], [("--eval", "x")], []),
    (["--e", "x"], [("--eval", "x")], []),  # ambiguous with --environment: read as the code option
    (["--env"], [("--environment", None)], []),
    (["--ver"], [("--verbose", None)], []),
    (["--nosuch", "x"], [("--nosuch", None)], ["x"]),  # unknown: no value
    (["-i.bak", "a"], [("-i", ".bak")], ["a"]),
    (["-i", "a"], [("-i", None)], ["a"]),  # an optional value only attaches
    (["-vi"], [("-v", None), ("-i", None)], []),
    (["--in-place=.b"], [("--in-place", ".b")], []),
    (["-ex", "cmd"], [("-ex", None)], ["cmd"]),  # a single-dash long option, read whole
    (["a", "-f", "x", "b"], [("-f", "x")], ["a", "b"]),  # options anywhere (GNU permutation)
    (["--", "-f", "x"], [], ["-f", "x"]),
    (["-", "x"], [], ["-", "x"]),
]


@pytest.mark.parametrize("args,options,operands", PARSES)
def test_the_option_parser(args, options, operands):
    parsed = parse(args, SPEC)
    assert (parsed.options, parsed.operands) == (options, operands)


def test_a_program_operand_ends_the_tools_own_options():
    spec = Spec(values=frozenset({"-c"}), code=frozenset({"-c"}), ends=frozenset({"-c"}), program_operand=True)
    assert parse(["-u", "script.py", "-c", "x"], spec).operands == ["script.py", "-c", "x"]
    assert parse(["-c", "code", "-x"], spec).options == [("-c", "code")]
    assert parse(["-uc", "code", "-x"], spec).operands == ["-x"]


DENY_RM = "default: allow\nrules:\n  allow: ['*']\n  deny: ['rm *']\n"


@pytest.mark.parametrize(
    "line",
    [
        "rsync -e 'rm -rf ~' a b:c",
        "git rebase -x 'rm -rf build' main",
        "git bisect run rm -rf build",
        "git submodule foreach rm -rf build",
        "tar --checkpoint-action=exec='rm -rf build' -cf x.tar .",
        "split --filter='rm -rf build' notes.md",
        "man -P 'rm -rf build' ls",
        "fd -e tmp -x rm",
        "npx -c 'rm -rf build'",
        "go test -exec rm ./...",
    ],
)
def test_deny_rules_see_the_command_a_code_running_form_carries(line):
    assert evaluate(line, policy_from(DENY_RM)).decision == "deny"


def test_a_carried_command_computed_at_run_time_is_never_allowed_even_by_a_rule_naming_the_form():
    policy = policy_from("rules:\n  allow: ['rsync -e *', 'ssh *']\n")
    assert evaluate("rsync -e ssh a b:c", policy).decision == "allow"
    assert evaluate('rsync -e "$RSH" a b:c', policy).decision == "ask"
