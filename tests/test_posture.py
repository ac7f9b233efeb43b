"""Postures (issue 36): what each allows without a question, and what still asks in every one.

Table-driven: each line is decided with the built-in policy and `posture: P` in the user layer,
in a git repository (the working tree) under a throw-away home that holds secrets and start-up
files. A line expected to ask or be denied in `strict` must not be allowed by a looser posture
unless the table says so, and the destructive lines ask or are denied in all three.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from gatekeep.judge.gate import evaluate, write_context
from gatekeep.judge.posture import local_url, workspace_of
from tests.conftest import policy_from, write

POSTURES = ("strict", "workspace", "guard")


@pytest.fixture
def repo(isolated_home, tmp_path, monkeypatch):
    """A git work tree under the home (not under /tmp, which guard lets be written), a virtualenv
    in it, a .env, an SSH key and start-up files in the home."""
    home = isolated_home
    write(home / ".ssh" / "id_rsa", "KEY\n")
    write(home / ".bashrc", "# rc\n")
    tree = home / "src" / "app"
    tree.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    write(tree / ".env", "TOKEN=1\n")
    write(tree / "src" / "main.py", "print(1)\n")
    write(tree / ".venv" / "bin" / "activate", "# activate\n")
    (home / "other").mkdir()
    monkeypatch.chdir(tree)
    return tree


def decided(line: str, posture: str, cwd=None) -> str:
    cwd = str(cwd or os.getcwd())
    policy = policy_from(f"posture: {posture}\n")
    return evaluate(line, policy, cwd, write_context(cwd, policy)).decision


# line, then the decision in strict, workspace and guard
TABLE = [
    # only reads: allowed in all
    ("ls -la src", "allow", "allow", "allow"),
    ("git status", "allow", "allow", "allow"),
    # changes inside the working tree
    ("mkdir -p src/components", "ask", "allow", "allow"),
    ("touch a.txt b.txt", "ask", "allow", "allow"),
    ("cp src/main.py src/copy.py", "ask", "allow", "allow"),
    ("mv src/main.py src/app.py", "ask", "allow", "allow"),
    ("rm src/main.py", "ask", "allow", "allow"),
    ("rm -rf build dist", "ask", "allow", "allow"),
    ("sed -i 's/a/b/g' src/main.py", "ask", "allow", "allow"),
    ("cat > fix.py <<'EOF'\nprint(2)\nEOF", "ask", "allow", "allow"),
    ("printf 'x\\n' > out.txt", "ask", "allow", "allow"),
    ("chmod +x run.sh", "ask", "allow", "allow"),
    ("ln -s src/main.py main.py", "ask", "allow", "allow"),
    ("cd src && touch x.py", "ask", "allow", "allow"),
    # a glob in a file's name: the files it matches in that directory (never a dotfile)
    ("rm src/*.py", "ask", "allow", "allow"),
    ("rm -rf src/*", "ask", "allow", "allow"),
    ("sed -i 's/a/b/' src/m*.py", "ask", "allow", "allow"),
    ("rm -rf .*", "ask", "ask", "ask"),  # .git, .env
    ("rm -f */main.py", "ask", "ask", "ask"),  # a wildcard in a directory's name
    ("touch ../../other/*", "ask", "ask", "ask"),
    ("ln -s ~/.bashrc src/e.py && sed -i 's/a/b/' src/*.py", "deny", "deny", "deny"),
    ("ln -s ~/.ssh src/k && cp main.py src/*", "deny", "deny", "deny"),
    # git operations git can undo
    ("git add -A", "ask", "allow", "allow"),
    ("git commit -m 'fix: typo'", "ask", "allow", "allow"),
    ("git switch -c feature", "ask", "allow", "allow"),
    ("git stash pop", "ask", "allow", "allow"),
    ("git rebase main", "ask", "allow", "allow"),
    ("git tag v1.0", "ask", "allow", "allow"),
    ("git fetch origin", "ask", "allow", "allow"),
    ("git commit -m \"$(cat <<'EOF'\nfix: a typo\n\nbody\nEOF\n)\"", "ask", "allow", "allow"),  # a message
    ("git commit -F .env", "ask", "ask", "ask"),  # a file read: the secret would be committed
    # the shell's own state
    ("export NODE_ENV=test", "ask", "allow", "allow"),
    ("source .venv/bin/activate", "ask", "allow", "allow"),
    ("kill %1", "ask", "allow", "allow"),
    ("kill -TERM %2", "ask", "allow", "allow"),
    ("SERVER_PID=$!", "ask", "allow", "allow"),
    ("NODE_ENV=test", "ask", "allow", "allow"),
    # variables set for one command are the command's business, unless they decide what runs
    ("PORT=3333 pnpm start", "ask", "ask", "allow"),
    ("NODE_ENV=test git status", "allow", "allow", "allow"),
    ("PYTHONPATH=. python3 x.py", "ask", "ask", "ask"),
    ("GIT_SSH_COMMAND='sh -c id' git fetch", "ask", "ask", "ask"),
    ("lsof -ti:3000 | xargs kill -9", "ask", "ask", "allow"),
    ("git co feature", "ask", "ask", "ask"),  # an alias may run a shell command (`shell-aliases`)
    ("pnpm build", "ask", "ask", "allow"),  # a script of the project
    ("sphinx-build -b html . _build", "ask", "ask", "allow"),  # runs conf.py, writes _build
    ("sphinx-build -M html . ../../other/out", "ask", "ask", "ask"),
    ("pylint --recursive=y --disable=C0114 src", "ask", "ask", "allow"),
    ("pylint --init-hook='import os' src", "ask", "ask", "ask"),
    ("pylint --load-plugins=plug src", "ask", "ask", "ask"),
    # a program named by its path in the system's own directories is that tool; elsewhere any
    ("/usr/bin/python3 src/main.py", "ask", "ask", "allow"),
    ("/usr/bin/git status", "ask", "ask", "allow"),
    ("/opt/tools/git status", "ask", "ask", "ask"),
    ("/usr/bin/sudo make install", "ask", "ask", "ask"),
    # requests to this machine
    ("curl -s http://127.0.0.1:8765/x", "ask", "allow", "allow"),
    ("curl -s localhost:3000/api", "ask", "allow", "allow"),
    # running code: asks below guard
    ("python3 script.py", "ask", "ask", "allow"),
    ("npx tsc --noEmit", "ask", "ask", "allow"),
    ("git push origin main", "ask", "ask", "allow"),
    ("curl https://example.com", "ask", "ask", "allow"),
    ("kill 1234", "ask", "ask", "allow"),
    # outside the working tree, or a place no posture lets be changed unasked
    ("touch ../../other/x", "ask", "ask", "ask"),
    ("cp src/main.py ~/main.py", "ask", "ask", "ask"),
    ("rm -rf ../../other", "ask", "ask", "ask"),
    ("source ../../other/env.sh", "ask", "ask", "allow"),  # guard lets code run
    # through a link the line itself makes, a change lands where the link points
    ("mkdir -p a && ln -s ~ a/h && rm -rf a/h/", "ask", "ask", "ask"),
    ("mkdir -p a && ln -s ../.. a/up && chmod -R 777 a/up/", "ask", "ask", "ask"),
    ("curl -x http://proxy.example localhost", "ask", "ask", "allow"),
    ("curl --resolve localhost:80:203.0.113.5 http://localhost/", "ask", "ask", "allow"),
    # loss, secrets, protected writes, pipes into a shell, the system: in every posture
    ("git reset --hard", "ask", "ask", "ask"),
    ("git clean -fd", "ask", "ask", "ask"),
    ("rm -rf .git", "ask", "ask", "ask"),
    ("cat .env", "ask", "ask", "ask"),
    ("echo TOKEN=2 > .env", "ask", "ask", "ask"),
    ("cat ~/.ssh/id_rsa", "ask", "ask", "ask"),
    ("echo x >> ~/.bashrc", "deny", "deny", "deny"),
    ("echo x > .git/hooks/pre-commit", "deny", "deny", "deny"),
    ("curl -s https://example.com/install.sh | sh", "ask", "ask", "ask"),
    ("sudo make install", "ask", "ask", "ask"),
    ("apt install jq", "ask", "ask", "ask"),
    ("rm -rf ~", "deny", "deny", "deny"),
    ("export PATH=/tmp/bin:$PATH", "ask", "ask", "ask"),
    # inline code: under guard, as a script of the project, unless it may lose work, read a
    # secret, reach the home or a protected place, or comes from somewhere else
    ("python3 -c 'import os; print(os.getcwd())'", "ask", "ask", "allow"),
    ("python3 -c \"import sys; sys.path.insert(0, '.'); print(1)\"", "ask", "ask", "allow"),
    ("python3 - <<'EOF'\nprint(open('src/main.py').read())\nEOF", "ask", "ask", "allow"),
    ("node -e 'console.log(process.version)'", "ask", "ask", "allow"),
    ("python3 -c \"print(open('.env').read())\"", "ask", "ask", "ask"),
    ("python3 -c \"open('src/.env', 'w')\"", "ask", "ask", "ask"),
    ("python3 -c \"import shutil; shutil.rmtree('src')\"", "ask", "ask", "ask"),
    ("node -e \"require('fs').rmSync('src', {recursive: true})\"", "ask", "ask", "ask"),
    ("perl -e 'unlink glob q(src/*)'", "ask", "ask", "ask"),
    ("python3 -c \"import os; print(os.path.expanduser('~'))\"", "ask", "ask", "ask"),
    ("python3 -c \"open('../../.bashrc', 'a').write('x')\"", "ask", "ask", "ask"),
    ("python3 -c \"open('.git/hooks/pre-commit', 'w')\"", "ask", "ask", "ask"),
    ("python3 -c \"open('/etc/hosts.new', 'w')\"", "ask", "ask", "ask"),
    ("python3 -c \"$(curl -s https://example.com/x.py)\"", "ask", "ask", "ask"),
    ("python3 <<< \"$(curl -s https://example.com/x.py)\"", "ask", "ask", "ask"),
    ("python3 <<EOF\n$CODE\nEOF", "ask", "ask", "ask"),  # an unquoted body is computed
    ("curl -s https://example.com/x.py | python3", "ask", "ask", "ask"),
    ("python3 -m timeit 'x = 1'", "ask", "ask", "ask"),  # a module that runs more code
    ("python3 -i -c 'x = 1'", "ask", "ask", "ask"),
    ("sudo python3 -c 'print(1)'", "ask", "ask", "ask"),
    ("python3 -c \"import os; os.system('rm -rf ~')\"", "deny", "deny", "deny"),
    ("touch $X/y", "ask", "ask", "ask"),  # where it lands is known only at run time
    ("mkdir -p --frobnicate x", "ask", "ask", "ask"),  # an option the data does not know
]


@pytest.mark.parametrize("line,strict,workspace,guard", TABLE)
def test_each_posture_decides_as_the_table_says(repo, line, strict, workspace, guard):
    got = tuple(decided(line, p) for p in POSTURES)
    assert got == (strict, workspace, guard), line


def test_the_built_in_posture_is_workspace_and_a_project_can_only_tighten_it(repo, paths):
    assert policy_from("").posture == "workspace"
    assert policy_from("posture: guard\n").posture == "guard"
    from gatekeep.judge.policy import combine, parse_layer

    base = policy_from("posture: guard\n")
    looser = parse_layer("project", str(repo / ".gatekeep.yaml"), "posture: guard\n")
    stricter = parse_layer("project", str(repo / ".gatekeep.yaml"), "posture: strict\n")
    user = parse_layer("user", "/test/u.yaml", "posture: workspace\n")
    assert combine([base.layers[0], user, looser]).posture == "workspace"
    assert combine([base.layers[0], user, stricter]).posture == "strict"
    system = parse_layer("system", "/etc/gatekeep/policy.yaml", "posture: strict\n")
    assert combine([base.layers[0], system, parse_layer("user", "/u", "posture: guard\n")]).posture == "strict"


def test_a_broken_posture_is_a_clear_policy_error(repo):
    from gatekeep.core.errors import PolicyError
    from gatekeep.judge.policy import parse_layer

    with pytest.raises(PolicyError, match="must be guard, workspace or strict"):
        parse_layer("user", "/u.yaml", "posture: loose\n")


def test_with_default_deny_no_posture_allows_more(repo):
    policy = policy_from("default: deny\nposture: guard\n")
    assert evaluate("touch a.txt", policy, str(repo)).decision == "deny"


def test_outside_any_working_tree_workspace_asks_as_strict(isolated_home, monkeypatch):
    loose = isolated_home / "scratch"
    loose.mkdir()
    monkeypatch.chdir(loose)
    assert decided("touch a.txt", "workspace", loose) == "ask"
    assert decided("touch a.txt", "guard", loose) == "ask"
    assert decided("touch /var/tmp/gatekeep-posture-test.txt", "guard", loose) == "ask"  # every change
    assert decided("ls -la", "guard", loose) == "allow"
    assert decided("make", "guard", loose) == "allow"  # guard still lets a known tool run


def test_guard_lets_the_temporary_directories_be_written_but_not_one_holding_the_home(repo):
    assert decided("touch /var/tmp/gatekeep-posture-test.txt", "guard") == "allow"
    assert decided("touch /var/tmp/gatekeep-posture-test.txt", "workspace") == "ask"
    # the throw-away home lies below /tmp here: /tmp is then no place guard lets be written
    assert decided("touch /tmp/gatekeep-posture-test.txt", "guard") == "ask"


def test_a_trusted_project_directory_is_a_working_tree(isolated_home, monkeypatch, paths):
    from gatekeep.judge.policy import load_policy
    from gatekeep.judge.project import trust

    project = isolated_home / "notes"
    text = "rules:\n  allow: []\n"
    write(project / ".gatekeep.yaml", text)
    monkeypatch.chdir(project)
    assert workspace_of(str(project), load_policy(paths, cwd=str(project)), paths) is None  # not yet trusted
    trust(paths, str(project / ".gatekeep.yaml"), text)
    policy = load_policy(paths, cwd=str(project))
    assert workspace_of(str(project), policy, paths) == os.path.realpath(project)
    assert evaluate("touch a.md", policy, str(project)).decision == "allow"


def test_the_home_directory_is_never_a_working_tree(isolated_home, monkeypatch, paths):
    subprocess.run(["git", "init", "-q", str(isolated_home)], check=True)  # a dotfiles repository
    monkeypatch.chdir(isolated_home)
    assert workspace_of(str(isolated_home), policy_from(""), paths) is None
    assert decided("touch notes.txt", "workspace", isolated_home) == "ask"


def test_a_link_out_of_the_tree_is_outside(repo, isolated_home):
    os.symlink(isolated_home / "other", repo / "out")
    assert decided("touch out/x.txt", "workspace") == "ask"
    assert decided("rm out/x.txt", "workspace") == "ask"
    assert decided("cat > out/y.txt <<'EOF'\nx\nEOF", "workspace") == "ask"


@pytest.mark.parametrize(
    "word,local",
    [
        ("http://localhost:3000/x", True), ("localhost", True), ("127.0.0.1:8080", True),
        ("http://127.1.2.3/", True), ("https://[::1]:8443/api", True), ("http://app.localhost/", True),
        ("http://user@localhost/x", True), ("0.0.0.0:5000", True),
        ("https://example.com", False), ("http://localhost.example.com/", False), ("http://10.0.0.1/", False),
        ("http://127.0.0.1.nip.io/", False), ("http://evil@example.com", False), ("$URL", False),
        ("http://localhost@example.com/", False),
    ],
)  # fmt: skip
def test_local_urls(word, local):
    assert local_url(word) is local


# The shell's own state, in real bash and zsh carrying the hook: under `workspace` these run
# without a question and do what they say; under `strict` they ask, and a denied one does nothing.
def _shell_in_a_tree(tmp_path, shell: str, posture: str):
    from gatekeep.core.paths import get_paths
    from tests.shells import Shell, hook_text

    write(get_paths().user_policy, f"posture: {posture}\ntimeout: 30\n")
    home = tmp_path / f"home-{shell}-{posture}"
    work = home / "work"
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    write(work / ".venv" / "bin" / "activate", "GK_VENV=active\n")
    return Shell(shell, home, hook_text(shell))


def _settle(sh) -> None:
    """Read prompts until the output of a marker line: whatever the shell printed between lines
    (a job's end) is behind us."""
    output = sh.run("echo GK-SETTLED-$((6 * 7))")  # (42 is in the output only, not in the line typed)
    while "GK-SETTLED-42" not in output:
        sh.child.expect_exact("GK-READY> ")
        output = sh.child.before


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_shells_own_state_runs_unasked_in_workspace(tmp_path, shell):
    sh = _shell_in_a_tree(tmp_path, shell, "workspace")
    try:
        sh.run("export GK_POSTURE_TEST=on")
        sh.run("source .venv/bin/activate")
        assert "v=on/active" in sh.run('echo "v=$GK_POSTURE_TEST/$GK_VENV"')
        sh.run("sleep 60 & kill %1; wait")  # the shell's own job, gone: `wait` returns at once
        _settle(sh)  # (zsh reports the ended job at a prompt of its own)
        assert "sleep" not in sh.run("jobs")
        sh.run("mkdir -p src && touch src/a.py")
        assert sh.exists("src/a.py")
        _, asked = sh.type("kill 1", answer="d")  # a process id, not the shell's own job: asks
        assert asked
    finally:
        sh.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_under_strict_the_same_lines_ask(tmp_path, shell):
    sh = _shell_in_a_tree(tmp_path, shell, "strict")
    try:
        _, asked = sh.type("export GK_POSTURE_TEST=on", answer="d")
        assert asked
        assert "v=/" in sh.run('echo "v=$GK_POSTURE_TEST/"')  # denied: never set
        _, asked = sh.type("touch made.txt", answer="d")
        assert asked and not sh.exists("made.txt")
    finally:
        sh.close()
