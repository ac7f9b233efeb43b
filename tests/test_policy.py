"""Policy loading: layers, errors that name file/line/key, and what no layer can undo."""

from __future__ import annotations

import pytest

from gatekeep.core.errors import PolicyError
from gatekeep.core.paths import get_paths
from gatekeep.judge import project
from gatekeep.judge.gate import evaluate
from gatekeep.judge.policy import load_policy
from tests.conftest import write


@pytest.mark.parametrize(
    "text,line,key,message",
    [
        ("default: maybe\n", 1, "default", "allow, ask or deny"),
        ("timeout: 300\ncolour: red\n", 2, "colour", "unknown key"),
        ("timeout: soon\n", 1, "timeout", "whole number"),
        ("timeout: 0\n", 1, "timeout", "whole number"),
        ("timeout: true\n", 1, "timeout", "whole number"),
        ("rules: [a, b]\n", 1, "rules", "mapping"),
        ("rules:\n  allow: 'git status'\n", 2, "rules.allow", "list"),
        ("rules:\n  permit: []\n", 2, "rules.permit", "unknown key"),
        ("rules:\n  deny:\n    - rm *\n    - 42\n", 4, "rules.deny[1]", "non-empty string"),
        ("rules:\n  deny:\n    - ''\n", 3, "rules.deny[0]", "non-empty string"),
        ("- just\n- a list\n", 1, None, "mapping"),
        ("rules:\n  allow: [unclosed\n", None, None, "invalid YAML"),
        ("default: ask\ndefault: allow\n", None, None, "invalid YAML"),
        ("rules:\n  deny:\n    - {pattern: rm -rf *, but: [x]}\n", 3, "rules.deny[0]", "{pattern: PATTERN"),
        ("rules:\n  deny:\n    - {except: [x]}\n", 3, "rules.deny[0]", "{pattern: PATTERN"),
        ("rules:\n  deny:\n    - {pattern: rm *, except: rm x}\n", 3, "rules.deny[0]", "list of patterns"),
        ("rules:\n  deny:\n    - {pattern: rm *, except: ['']}\n", 3, "rules.deny[0]", "non-empty string"),
        ("rules:\n  allow:\n    - {pattern: rm *, except: [rm x]}\n", 3, "rules.allow[0]", "only ask and deny"),
        ("rules:\n  ask:\n    - {pattern: a | b, except: [a x]}\n", 3, "rules.ask[0]", "pipeline pattern"),
        ("rules:\n  ask:\n    - {pattern: a *, except: [a x | b]}\n", 3, "rules.ask[0]", "not a pipeline"),
        ("loss: allow\n", 1, "loss", "mapping of loss classes"),
        ("loss:\n  docker: allow\n", 2, "loss.docker", "expected one of git, files, containers"),
        ("loss:\n  git: never\n", 2, "loss.git", "ask or allow"),
        ("protect: [.env]\n", 1, "protect", "mapping of read and write"),
        ("protect:\n  open: {ask: [x]}\n", 2, "protect.open", "expected read or write"),
        ("protect:\n  read: {allow: [x]}\n", 2, "protect.read.allow", "expected ask or deny"),
        ("protect:\n  read:\n    ask: x\n", 3, "protect.read.ask", "list of paths"),
        ("protect:\n  read:\n    ask:\n      - {path: x, but: [y]}\n", 4, "protect.read.ask[0]", "{path: PATH"),
        ("protect:\n  read:\n    ask:\n      - ''\n", 4, "protect.read.ask[0]", "non-empty"),
        ("protect:\n  read:\n    ask:\n      - ~root/.ssh\n", 4, "protect.read.ask[0]", "not ~user/"),
    ],
)
def test_a_broken_policy_names_file_line_and_key(paths, text, line, key, message):
    write(paths.user_policy, text)
    with pytest.raises(PolicyError) as error:
        load_policy(paths)
    assert error.value.path == paths.user_policy
    assert message in str(error.value)
    assert str(paths.user_policy) in str(error.value)
    if line is not None:
        assert error.value.line == line
    else:
        assert error.value.line is not None  # YAML syntax errors still give a line
    assert error.value.key == key


def test_missing_user_and_system_files_are_empty_layers(paths):
    policy = load_policy(paths)
    assert [layer.name for layer in policy.layers] == ["built-in", "system", "user"]
    assert policy.default == "ask" and policy.timeout == 300


def test_an_explicit_policy_file_must_exist(paths, tmp_path):
    with pytest.raises(PolicyError, match="does not exist"):
        load_policy(paths, tmp_path / "nope.yaml")


def test_empty_file_and_empty_lists_load(paths):
    write(paths.user_policy, "# nothing yet\n")
    assert load_policy(paths).layers[2].rules == ()
    write(paths.user_policy, "rules:\n  allow:\n  deny: []\n")
    assert load_policy(paths).layers[2].rules == ()


def test_the_user_file_cannot_allow_what_the_system_file_denies(paths):
    write(paths.system_policy, "rules:\n  deny: ['git push *']\n")
    write(paths.user_policy, "default: allow\nrules:\n  allow: ['git push *', 'git *']\n")
    verdict = evaluate("git push origin", load_policy(paths))
    assert verdict.decision == "deny"
    assert "system policy" in verdict.reason


def test_the_user_file_cannot_allow_what_the_built_in_policy_denies(paths):
    write(paths.user_policy, "rules:\n  allow: ['rm *', '*']\n")
    assert evaluate("rm -rf /", load_policy(paths)).decision == "deny"


def test_a_user_ask_beats_a_system_allow(paths):
    write(paths.system_policy, "rules:\n  allow: ['git push *']\n")
    write(paths.user_policy, "rules:\n  ask: ['git push *']\n")
    assert evaluate("git push", load_policy(paths)).decision == "ask"


def test_user_default_cannot_be_looser_than_the_system_default(paths):
    write(paths.system_policy, "default: ask\n")
    write(paths.user_policy, "default: allow\n")
    policy = load_policy(paths)
    assert policy.default == "ask" and policy.default_layer.name == "system"
    write(paths.user_policy, "default: deny\n")
    assert load_policy(paths).default == "deny"


def test_user_default_overrides_the_built_in_default(paths):
    write(paths.user_policy, "default: allow\ntimeout: 30\n")
    policy = load_policy(paths)
    assert (policy.default, policy.timeout, policy.default_layer.name) == ("allow", 30, "user")


def test_policy_digest_changes_with_any_layer(paths):
    first = load_policy(paths).sha256
    write(paths.system_policy, "rules:\n  deny: ['x']\n")
    second = load_policy(paths).sha256
    write(paths.user_policy, "rules:\n  deny: ['x']\n")
    third = load_policy(paths).sha256
    assert len({first, second, third}) == 3


def test_gatekeep_policy_variable_names_the_user_file(monkeypatch, tmp_path):
    custom = write(tmp_path / "custom.yaml", "rules:\n  deny: ['git status *']\n")
    monkeypatch.setenv("GATEKEEP_POLICY", str(custom))
    from gatekeep.core.paths import get_paths

    policy = load_policy(get_paths())
    assert policy.layers[2].path == str(custom)
    assert evaluate("git status", policy).decision == "deny"


# (system, user, project, expected (mode, approve)): the system's choice is a floor, a project only tightens
MODE_LAYERS = [
    (None, None, None, ("enforce", "tty")),
    (None, "mode: audit\napprove: both", None, ("audit", "both")),
    ("mode: enforce\napprove: remote", "mode: audit\napprove: tty", None, ("enforce", "remote")),
    ("mode: audit", "mode: enforce", None, ("enforce", "tty")),  # a user may be stricter
    (None, "mode: audit", "mode: enforce\napprove: remote", ("enforce", "remote")),
    (None, "approve: remote", "approve: tty\nmode: audit", ("enforce", "remote")),  # looser: ignored
]


@pytest.mark.parametrize("system,user,project,expected", MODE_LAYERS)
def test_mode_and_approve_by_layer(paths, tmp_path, system, user, project, expected):
    if system:
        write(paths.system_policy, system + "\n")
    if user:
        write(paths.user_policy, user + "\n")
    if project:
        write(tmp_path / "repo" / ".gatekeep.yaml", project + "\n")
    policy = load_policy(paths, cwd=str(tmp_path / "repo"))
    assert (policy.mode, policy.approve) == expected


@pytest.mark.parametrize(
    "text,key",
    [("mode: off\n", "mode"), ("approve: ssh\n", "approve"), ("mode: 1\n", "mode"), ("confirm: y\n", "confirm")],
)
def test_bad_mode_or_approve_is_a_policy_error(paths, text, key):
    write(paths.user_policy, text)
    with pytest.raises(PolicyError) as error:
        load_policy(paths)
    assert f"key '{key}'" in str(error.value)


@pytest.mark.parametrize("system,user,expected", [(None, None, "key"), ("word", "key", "word"), (None, "word", "word")])
def test_confirm_by_layer(paths, system, user, expected):
    if system:
        write(paths.system_policy, f"confirm: {system}\n")
    if user:
        write(paths.user_policy, f"confirm: {user}\n")
    assert load_policy(paths).confirm == expected


# (system, user, project, quiet classes): a user turns a class of loss questions off; the
# system's `ask` is a floor, and a project can only turn a class back on
LOSS_LAYERS = [
    (None, None, None, set()),
    (None, "git: allow\n  containers: allow", None, {"git", "containers"}),
    ("git: ask", "git: allow\n  containers: allow", None, {"containers"}),
    ("git: allow", None, None, {"git"}),
    (None, "git: allow", "git: ask", set()),
    (None, None, "git: allow", set()),  # a repository cannot quiet the user's questions
]


@pytest.mark.parametrize("system,user,project,expected", LOSS_LAYERS)
def test_loss_classes_by_layer(paths, tmp_path, system, user, project, expected):
    for path, text in ((paths.system_policy, system), (paths.user_policy, user), (tmp_path / "repo" / ".gatekeep.yaml", project)):
        if text:
            write(path, f"loss:\n  {text}\n")
    (tmp_path / "repo").mkdir(exist_ok=True)
    policy = load_policy(paths, cwd=str(tmp_path / "repo"))
    assert set(policy.quiet_losses) == expected
    verdict = evaluate("git reset --hard", policy)
    assert ("would lose work" in verdict.reason) == ("git" not in expected), verdict.reason


@pytest.mark.parametrize(
    "text,message",
    [
        ("[" * 1000 + "\n", "nested too deeply to read"),  # was RecursionError: an internal error
        ("- " * 1000 + "x\n", "nested too deeply to read"),
        ("rules:\n  deny: [x]\n" + "#" * 200_000 + "\n", None),  # the user's own file has no size limit
    ],
)
def test_a_user_policy_the_parser_cannot_read_is_one_line_and_blocks(paths, text, message):
    import subprocess
    import sys

    write(paths.user_policy, text)
    argv = [sys.executable, "-m", "gatekeep", "check", "--no-prompt", "--", "ls"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if message is None:
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert message in result.stderr and str(paths.user_policy) in result.stderr


def test_a_user_policy_whose_path_is_not_utf8_still_works(tmp_path):
    import os
    import subprocess
    import sys

    try:
        os.mkdir(os.path.join(os.fsencode(tmp_path), b"\xfe"))
    except OSError as e:
        pytest.skip(f"the file system refuses a name that is not UTF-8 ({e.strerror})")
    policy = write(tmp_path / os.fsdecode(b"\xfe") / "policy.yaml", "rules:\n  allow: ['make *']\n")
    for how in (["--policy", str(policy)], []):
        env = {**os.environ, "GATEKEEP_POLICY": str(policy)}
        result = subprocess.run(
            [sys.executable, "-m", "gatekeep", "check", "--no-prompt", *how, "--", "make test"],
            capture_output=True, text=True, timeout=60, env=env,
        )
        assert result.returncode == 0, result.stderr  # was UnicodeEncodeError: exit 2 on every line
        assert "\\xfe" in result.stderr or "\\udcfe" in result.stderr


# load_policy keeps the last policy it loaded, by everything it was read from: a process that
# judges many lines (a warm checker's worker, `scan`) gets the same Policy back only while no
# file, path or trust it came from has changed.
def _edit_user(paths, tmp, monkeypatch):
    write(paths.user_policy, "rules:\n  deny:\n    - git push\n")
    return lambda policy: ("deny", "git push", ()) in _layer(policy, "user").rules


def _other_user_file(paths, tmp, monkeypatch):
    other = write(tmp / "other.yaml", open(paths.user_policy).read())
    monkeypatch.setenv("GATEKEEP_POLICY", str(other))
    return lambda policy: str(_layer(policy, "user").path) == str(other)


def _edit_system(paths, tmp, monkeypatch):
    write(paths.system_policy, "rules:\n  ask:\n    - ls\n")
    return lambda policy: ("ask", "ls", ()) in _layer(policy, "system").rules


def _trust_project(paths, tmp, monkeypatch):
    file = tmp / "repo" / ".gatekeep.yaml"
    project.trust(paths, str(file), file.read_text())
    return lambda policy: ("allow", "make test", ()) in _layer(policy, "project").rules


def _layer(policy, name):
    return next(layer for layer in policy.layers if layer.name == name)


@pytest.mark.parametrize("change", [_edit_user, _other_user_file, _edit_system, _trust_project])
def test_the_policy_kept_is_used_only_while_nothing_it_came_from_changed(tmp_path, monkeypatch, change):
    write(get_paths().user_policy, "rules:\n  allow:\n    - git status\n")
    write(tmp_path / "repo" / ".gatekeep.yaml", "rules:\n  allow:\n    - make test\n")
    repo = str(tmp_path / "repo")
    first = load_policy(get_paths(), None, repo)
    assert load_policy(get_paths(), None, repo) is first  # nothing changed: the very same policy
    shows_change = change(get_paths(), tmp_path, monkeypatch)
    assert not shows_change(first)
    again = load_policy(get_paths(), None, repo)
    assert again is not first and shows_change(again)


def test_a_user_policy_too_large_to_read_blocks_every_line_with_a_message(paths):
    from gatekeep.judge.policy import MAX_POLICY_BYTES

    filler = "# " + "x" * 1000 + "\n"
    write(paths.user_policy, "rules:\n  allow: ['ls *']\n" + filler * (MAX_POLICY_BYTES // len(filler) + 1))
    with pytest.raises(PolicyError, match="larger than 4 MiB, so gatekeep does not read it"):
        load_policy(paths)


def test_a_user_policy_that_takes_too_long_to_read_blocks_every_line_with_a_message(paths, monkeypatch):
    import gatekeep.judge.policy as policy_module

    monkeypatch.setattr(policy_module, "POLICY_READ_SECONDS", 0.01)
    # flow mappings: the slowest shape for the parser that reads what the fast reader is not sure of
    write(paths.user_policy, "rules: {allow: [" + ", ".join(f"{{a{i}: b}}" for i in range(20000)) + "]}\n")
    with pytest.raises(PolicyError, match="took more than 0.01 s to read"):
        load_policy(paths)
