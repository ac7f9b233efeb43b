"""The sandbox: a command run under bubblewrap (`bwrap`), where it can change only the working tree.

What the contained command sees, in the order bubblewrap builds it (a later mount covers an
earlier one):

1. The whole filesystem, read-only; a new /dev, a /proc of its own processes only, and an
   empty, private /tmp (and /var/tmp, /dev/shm).
2. /run emptied: the sockets there (docker's, the user's ssh and gpg agents', D-Bus) reach
   programs outside; only the file /etc/resolv.conf points to, if it lies there, is kept.
3. The home directory emptied and read-only, then each of its dot-entries (toolchains, caches,
   settings) put back read-only: its other entries (documents, other projects, with their
   `.env` files) stay hidden.
4. The working tree, writable, and the policy's `sandbox.writable` places (that exist).
5. Hidden again, as an empty directory or file no one may open: every path an anchored
   `protect: read` entry names that exists (`~/.ssh`, `~/.aws/credentials`, the agents'
   credentials), the home's own dot-entries an unanchored one names (`~/.git-credentials`,
   `~/.netrc`) and its shell and REPL histories (HISTORIES), every file in the
   working tree whose name a `protect: read` entry names (`.env`, `*.pem`: found by walking all
   of the tree but `.git`; a tree of more than MAX_TREE_ENTRIES entries is refused), and
   gatekeep's own directories (its policy, audit log, approvals and the warm checker's socket).
6. Read-only inside the tree, in its top directory and each directory down to the line's own
   (READ_ONLY_IN_TREE): the repository (`.git`: its hooks and config run code when git runs
   outside, and a contained line changes files, never history), the project policy, `.envrc`,
   and the agents' settings, which can run hooks or turn gatekeep off (`.claude`, `.gemini`,
   `.github`, `opencode.json`…); each that does not exist is held by an empty read-only one for
   the run (made before, removed by the last run in the tree to end, if still empty: Hold; a
   process that kills gatekeep with SIGKILL leaves it behind, empty). And what a `protect: write` entry names. Being mount
   points, none of them can be renamed or replaced. Also every `.git` anywhere in the tree (a
   nested repository's, a submodule's pointer), and the directory `core.hooksPath` names in it
   (husky's `.husky`). A `.git` a contained line makes anew (`git init sub`) is renamed
   after the run (disarm_new_repositories); a bare repository's layout is not found.

And: no network but its own loopback (`sandbox.network: on` shares the machine's), its own
process, IPC, host-name and user namespaces, no capabilities and no further user namespaces,
a new session (it cannot push keystrokes into the terminal: TIOCSTI), killed with gatekeep's
process, no unix sockets (a seccomp filter: socket_filter); the user's own uid; the environment without variables that name a secret or an
agent's socket (SECRET_VARIABLES), or hold a URL with a password. Descriptors beyond 0-2 are
not passed in, and a standard input, output or error that is a file goes through a pipe: a
descriptor of a file outside could be reopened through /proc/self/fd (through_pipes).

Not contained: what the command does with the network when it is on; files in the home's
dot-directories whose names an unanchored `protect:` entry names (`~/.local/x/.env`: the
tree walk does not reach there; name such a place with `~/…`).

It fails closed: with no bubblewrap, no user namespaces, or a kernel that refuses, nothing
runs (ContainError, a one-line reason).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import subprocess

from gatekeep.core.errors import FatalError

MAX_TREE_ENTRIES = 200_000
# In the tree, read-only: what runs code when a tool outside runs (git's hooks and config), what
# decides the gate (the project policy) or switches an agent's hooks off (their settings).
READ_ONLY_IN_TREE = (
    ".git", ".gatekeep.yaml", ".envrc", ".claude", ".gemini", ".codex", ".cursor", ".opencode", ".github", ".vscode",
    ".mcp.json", "opencode.json", "opencode.jsonc", ".husky", ".pre-commit-config.yaml", "lefthook.yml",
    "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml", ".devcontainer", ".idea", "mise.toml", ".mise.toml",
)  # fmt: skip
# held by an empty one when missing: all but what asks before it runs code (git init, gatekeep
# trust, direnv allow, mise trust) or runs nothing without other files (.husky: core.hooksPath)
HELD_WHEN_MISSING = frozenset(READ_ONLY_IN_TREE) - {".git", ".gatekeep.yaml", ".envrc", ".husky", "mise.toml", ".mise.toml", ".devcontainer", ".idea"}
# Variables not passed in: what names a secret, or a socket that acts for the user outside.
SECRET_VARIABLES = (
    "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*API_KEY*", "*APIKEY*", "*ACCESS_KEY*", "*PRIVATE_KEY*",
    "*CREDENTIAL*", "*SESSION_KEY*", "AWS_*", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS", "DOCKER_HOST", "KUBECONFIG", "VAULT_*", "*_KEY", "*_PAT", "*DSN*",
    "*DATABASE_URL*", "*CONNECTION_STRING*", "*AUTH_*", "*_AUTH", "*COOKIE*",
)  # fmt: skip
_CREDENTIAL_URL = re.compile(r"://[^/@\s]*:[^/@\s]+@")  # a value that carries a password (`postgres://u:p@h/db`)
PROBE_SECONDS = 10


class ContainError(FatalError):
    """The sandbox cannot be set up: nothing ran."""


BWRAP_PLACES = ("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap")


def bwrap() -> str | None:
    """The bubblewrap to trust: the first of BWRAP_PLACES that root owns, file and directories
    alike, with no one else able to write them. Never one found on PATH: a directory of the tree
    on PATH (an activated `.venv/bin`, `node_modules/.bin`) would let one contained line put a
    `bwrap` there that runs the next line uncontained. GATEKEEP_BWRAP=none turns containment off
    (it can only make gatekeep stricter: the tests use it)."""
    if os.environ.get("GATEKEEP_BWRAP") == "none":
        return None
    return next((place for place in BWRAP_PLACES if _root_only(place)), None)


def _root_only(path: str) -> bool:
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        real = os.path.realpath(path)
        while True:
            found = os.lstat(real)
            if found.st_uid != 0 or found.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not stat.S_ISLNK(found.st_mode):
                return False
            if real == "/":
                return True
            real = os.path.dirname(real)
    except OSError:
        return False


def unavailable() -> str | None:
    """Why containment cannot work here (no bubblewrap, no user namespaces, a refusing kernel),
    or None: bubblewrap is run once, as it will run commands, on `true`."""
    found = bwrap()
    if found is None:
        return "bubblewrap is not installed (`apt install bubblewrap`, or your system's package)"
    probe = [found, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *_NAMESPACES, "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap could not run ({type(e).__name__}: {e})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap failed here: {said[-1] if said else f'exit status {done.returncode}'}"
    return None


_NAMESPACES = (
    "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--new-session", "--die-with-parent",
)  # fmt: skip


def plan(
    argv: list[str],
    cwd: str,
    workspace: str,
    home: str,
    hidden: list[str],
    read_patterns,
    write_patterns,
    writable: list[str],
    network: str,
    nothing: str,
    empty: str,
) -> tuple[list[str], list[str], set[str]]:
    """The bwrap command line that runs `argv` in `cwd` with `workspace` writable (module
    docstring). hidden: absolute paths to hide wherever they are (anchored secrets, gatekeep's
    own); read_patterns / write_patterns: a path -> bool telling whether a file of the tree is
    a secret (hidden) or protected from writing (read-only); nothing: an empty file no one may
    open, bound over hidden files; empty: an empty directory no one may write. Returns the
    command line, the paths it holds that did not exist (Hold.release() removes them after the
    last run), and every `.git` of the tree now (disarm_new_repositories). Raises ContainError."""
    tool = bwrap()
    if tool is None:
        raise ContainError("bubblewrap is not installed (`apt install bubblewrap`)")
    home = os.path.realpath(home)
    workspace = os.path.realpath(workspace)
    if workspace in ("/", home) or home.startswith(workspace.rstrip("/") + "/"):
        raise ContainError(f"{workspace} holds the home directory: the sandbox needs a project directory to make writable")
    args = [tool, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for private in ("/tmp", "/var/tmp", "/dev/shm"):
        args += ["--tmpfs", private]
    args += _run_directory()
    args += _home(home)
    args += ["--bind", workspace, workspace]
    for place in writable:
        real = os.path.realpath(place)
        if real in ("/", home) or home.startswith(real.rstrip("/") + "/"):
            raise ContainError(f"sandbox.writable names {place}, which holds the home directory")
        args += ["--bind-try", real, real]
    secrets, protected, gits = _tree(workspace, read_patterns, write_patterns)
    held: list[str] = []
    done: list[str] = []
    for path in dict.fromkeys([*hidden, *secrets]):
        if not any(path.startswith(d.rstrip("/") + "/") for d in done):  # (inside one hidden already)
            args += _hide(path, nothing)
            done.append(path)
    for directory in _down_to(workspace, os.path.realpath(cwd)):
        for name in READ_ONLY_IN_TREE:
            path = os.path.join(directory, name)
            if os.path.islink(path):  # (bubblewrap binds nothing onto a link: what it reaches, if in the tree)
                real = os.path.realpath(path)
                if real.startswith(workspace.rstrip("/") + "/") and os.path.exists(real):
                    args += ["--ro-bind", real, real]
            elif os.path.lexists(path):
                args += ["--ro-bind", path, path]
            elif name in HELD_WHEN_MISSING and os.path.isdir(directory):
                is_file = name.endswith(("json", "jsonc", "yml", "yaml"))
                args += ["--ro-bind", nothing if is_file else empty, path]
                held.append(path)
    hooks = _hooks_path(workspace)
    for path in dict.fromkeys([*protected, *([hooks] if hooks else [])]):
        args += ["--ro-bind", path, path]
    args += ["--remount-ro", home]  # (the emptied home: nothing written there, once all is bound)
    args += [*_NAMESPACES, "--uid", str(os.getuid()), "--gid", str(os.getgid())]
    if network == "on":
        args += ["--share-net"]  # (after --unshare-all, which it takes back for the network alone)
    args += ["--chdir", os.path.realpath(cwd)]
    for name, value in sorted(os.environ.items()):
        if any(fnmatch.fnmatchcase(name.upper(), p) for p in SECRET_VARIABLES) or _CREDENTIAL_URL.search(value):
            args += ["--unsetenv", name]
    return [*args, "--", *argv], held, gits


def _down_to(top: str, cwd: str) -> list[str]:
    """`top` and each directory below it down to `cwd` (only `top` when cwd is not inside it)."""
    if not cwd.startswith(top.rstrip("/") + "/"):
        return [top]
    found = [top]
    for part in cwd[len(top.rstrip("/")) + 1 :].split("/"):
        found.append(os.path.join(found[-1], part))
    return found


def _remove_if_empty(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)  # (only when empty)
        elif os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) == 0:
            os.unlink(path)
    except OSError:
        pass


class Hold:
    """What the runs in one working tree hold (plan()'s placeholders), shared between them.

    A placeholder is a mount point in each sandbox that binds it; removing it from outside
    detaches those mounts, so a run that ends must not remove one another run still holds. Each
    run registers under the tree's lock (in gatekeep's state directory, hidden from every
    sandbox) before its sandbox is built, and the last to end removes every placeholder any of
    them made that is still empty."""

    def __init__(self, paths, workspace: str) -> None:
        from gatekeep.core.hashing import sha256

        self.workspace = workspace
        self.repositories: set[str] = set()  # the tree's `.git`s before the run
        digest = sha256(workspace.encode()).hexdigest()[:16]
        self.place = os.path.join(paths.state_dir, "sandbox", "trees", digest)
        self.lock_path = os.path.join(paths.lock_dir, f"sandbox-{digest}.lock")
        self.me = os.path.join(self.place, "runs", str(os.getpid()))

    @contextlib.contextmanager
    def _locked(self):
        import fcntl

        os.makedirs(os.path.dirname(self.lock_path), mode=0o700, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def enter(self, planned: list[str]) -> None:
        """Register this run and the placeholders it will make (call with the lock held)."""
        import json

        os.makedirs(os.path.dirname(self.me), mode=0o700, exist_ok=True)
        with open(self.me, "w", encoding="utf-8"):
            pass
        if planned:
            with open(os.path.join(self.place, "held"), "a", encoding="utf-8") as listed:
                listed.write("".join(json.dumps(p) + "\n" for p in planned))

    def release(self) -> None:
        """This run has ended: the last one out removes the placeholders that are still empty."""
        import json

        with self._locked():
            try:
                os.unlink(self.me)
            except OSError:
                pass
            runs = os.path.dirname(self.me)
            if any(_alive(name) for name in os.listdir(runs)):
                return
            listed = os.path.join(self.place, "held")
            try:
                with open(listed, encoding="utf-8") as lines:
                    paths = [json.loads(line) for line in lines if line.strip()]
            except (OSError, ValueError):
                paths = []
            for path in dict.fromkeys(paths):
                _remove_if_empty(path)
            try:
                os.unlink(listed)
            except OSError:
                pass


def _alive(name: str) -> bool:
    """Whether the run registered as `name` (its process id) still runs; a dead one's file goes."""
    if not name.isdigit():
        return False
    try:
        os.kill(int(name), 0)
        return True
    except PermissionError:
        return True
    except OSError:
        return False


def _run_directory() -> list[str]:
    if not os.path.isdir("/run"):
        return []
    args = ["--tmpfs", "/run"]
    resolver = os.path.realpath("/etc/resolv.conf")
    if resolver.startswith("/run/") and os.path.isfile(resolver):
        args += ["--ro-bind", resolver, resolver]
    if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
        args += ["--tmpfs", "/var/run"]
    return args


def _home(home: str) -> list[str]:
    """The home emptied, and its dot-entries put back read-only (module docstring, 3)."""
    args = ["--tmpfs", home]
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return args
    for name in names:
        if name.startswith(".") and name not in (".", ".."):
            path = os.path.join(home, name)
            args += ["--ro-bind", path, path] if not os.path.islink(path) else ["--symlink", os.readlink(path), path]
    return args


def _hide(path: str, nothing: str) -> list[str]:
    if os.path.islink(path) or not os.path.lexists(path):
        return []  # (a link is hidden where it points, if that is hidden; the sandbox never makes a path)
    if os.path.isdir(path):
        return ["--perms", "000", "--tmpfs", path, "--remount-ro", path]
    return ["--ro-bind", nothing, path]


def _tree(workspace: str, is_secret, is_protected, strict: bool = True) -> tuple[list[str], list[str], set[str]]:
    """The files of the tree to hide and to make read-only, and every `.git` in it (a link
    too), by a walk of all of it (module docstring, 5): virtualenvs and `node_modules` too, since
    what a contained line may write (a `pyvenv.cfg`, a directory moved into `node_modules`) must
    never decide what is hidden next time. Every `.git` that is no link is read-only, and not
    walked. Past MAX_TREE_ENTRIES entries: ContainError when `strict`, else what was found."""
    secrets, protected, gits = [], [], set()
    budget, todo = MAX_TREE_ENTRIES, [workspace]
    while todo:
        current = todo.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            budget -= 1
            if budget < 0:
                if not strict:
                    return secrets, protected, gits
                raise ContainError(
                    f"the working tree {workspace} holds more than {MAX_TREE_ENTRIES:,} entries:"
                    " the sandbox cannot find every secret in it"
                )
            if entry.name == ".git":
                gits.add(entry.path)
            if entry.is_symlink():
                continue  # (a link out of the tree reaches only what the sandbox shows there)
            if entry.name == ".git":
                protected.append(entry.path)  # (a repository's config and hooks run code when git runs outside)
            elif is_secret(entry.path):
                secrets.append(entry.path)
            elif is_protected(entry.path):
                protected.append(entry.path)
            elif entry.is_dir(follow_symlinks=False):
                todo.append(entry.path)
    return secrets, protected, gits


def repositories(workspace: str) -> set[str]:
    """Every `.git` (directory, file or link) in the tree, by _tree's walk."""
    return _tree(workspace, lambda path: False, lambda path: False, strict=False)[2]


def disarm_new_repositories(before: set[str], workspace: str) -> list[str]:
    """A repository a contained line made in the tree (`git init sub`, a `.git` file pointing
    elsewhere) would run its config and hooks when git is used there, outside the sandbox: each
    `.git` that was not there before the run is renamed `.git-made-contained` (never removed), and
    the new names are returned to be said."""
    renamed = []
    for path in sorted(repositories(workspace) - before):
        target = path + "-made-contained"
        n = 1
        while os.path.lexists(target):
            n += 1
            target = f"{path}-made-contained-{n}"
        try:
            os.rename(path, target)
        except OSError:
            continue
        renamed.append(target)
    return renamed


def _hooks_path(workspace: str) -> str | None:
    """The directory git takes hooks from when it is set inside the tree (`core.hooksPath`:
    husky's `.husky`, a `.githooks`), or None."""
    try:
        done = subprocess.run(
            ["git", "-C", workspace, "config", "--get", "core.hooksPath"],
            capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.strip()
    if done.returncode != 0 or not value:
        return None
    real = os.path.realpath(os.path.join(workspace, os.path.expanduser(value)))
    return real if real.startswith(workspace.rstrip("/") + "/") and os.path.isdir(real) else None


# A seccomp filter (classic BPF, as bubblewrap's --seccomp takes it): socket(AF_UNIX, …) fails,
# since connecting to a socket ignores a read-only mount and a socket in the home's dot-entries
# (Docker Desktop's, an ssh ControlMaster's, gpg-agent's) acts for the user outside; io_uring,
# which can open and connect sockets past the filter, fails too, as does every call of another
# processor's ABI (i386's socketcall, x32).
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 41, 425), "aarch64": (0xC00000B7, 198, 425)}  # (arch, socket, io_uring_setup)
_LD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _EACCES, _AF_UNIX = 1, 13, 1


def socket_filter() -> bytes:
    """The filter's program for this processor (ContainError where it has none)."""
    import platform
    import struct

    found = _SECCOMP_ARCH.get(platform.machine())
    if found is None:
        raise ContainError(f"the sandbox has no socket filter for this processor ({platform.machine()})")
    arch, socket_nr, io_uring_nr = found
    program = [
        (_LD, 0, 0, 4),  # 0: the calling ABI
        (_JEQ, 1, 0, arch),  # 1: this processor's -> 3
        (_RET, 0, 0, _ERRNO | _EPERM),  # 2: another's
        (_LD, 0, 0, 0),  # 3: the call's number
        (_JGE, 5, 0, 0x40000000),  # 4: x32 -> 10
        (_JEQ, 4, 0, io_uring_nr),  # 5: io_uring_setup -> 10
        (_JEQ, 0, 2, socket_nr),  # 6: socket -> 7, else -> 9
        (_LD, 0, 0, 16),  # 7: its first argument (the family), low 32 bits
        (_JEQ, 1, 0, _AF_UNIX),  # 8: AF_UNIX -> 10
        (_RET, 0, 0, _ALLOW),  # 9
        (_RET, 0, 0, _ERRNO | _EACCES),  # 10
    ]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def through_pipes() -> list[tuple[int, int, int]]:
    """Standard input, output and error that are files (`< ~/.bashrc`, `> out.txt`, `1< f`) could
    be reopened through /proc/self/fd/N, for writing or reading, outside every mount the sandbox
    makes read-only or hides: each is put through a pipe instead, copied by a child process
    (from the file into the pipe for input, from the pipe into the file for output), and the
    sandbox gets no descriptor of the file. Standard error that is the same file as standard
    output (`> out.txt 2>&1`) goes through the same pipe, so that the two keep their order there
    (two copiers would write each stream's chunks in between the other's). Returns (fd, the
    file's descriptor kept aside, the copier or None) for each output, for _drain() once the run
    has ended."""
    import stat

    copiers = []
    output = None  # standard output's file (device, inode), once it goes through a pipe
    for fd in (0, 1, 2):
        try:
            found = os.fstat(fd)
        except OSError:
            continue
        mode = found.st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISBLK(mode)):
            continue
        if fd == 2 and output == (found.st_dev, found.st_ino):
            kept = os.dup(fd)
            os.dup2(1, fd)  # standard output's pipe
            copiers.append((fd, kept, None))
            continue
        if fd == 1:
            output = (found.st_dev, found.st_ino)
        read_end, write_end = os.pipe()
        source, target = (fd, write_end) if fd == 0 else (read_end, fd)
        pid = os.fork()
        if pid == 0:  # the copier
            try:
                os.close(read_end if fd == 0 else write_end)
                while chunk := os.read(source, 1 << 16):
                    while chunk:
                        chunk = chunk[os.write(target, chunk) :]
            except OSError:
                pass
            os._exit(0)
        ours = read_end if fd == 0 else write_end
        os.close(write_end if fd == 0 else read_end)
        kept = os.dup(fd) if fd else None  # (not inheritable: no child of ours gets it)
        os.dup2(ours, fd)
        os.close(ours)
        if fd:
            copiers.append((fd, kept, pid))
    return copiers


def _drain(copiers) -> None:
    """Put the output files back in place of their pipes (whose last writer here goes, so each
    copier sees the end) and wait for the copiers to finish."""
    if not copiers:
        return
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    for fd, kept, _ in copiers:
        os.dup2(kept, fd)
        os.close(kept)
    for _, _, pid in copiers:
        try:
            if pid is not None:
                os.waitpid(pid, 0)
        except OSError:
            pass


def run_contained(args: list[str]) -> int:
    """Run bubblewrap with `args` (plan()) and wait: the command's exit status (bubblewrap gives
    128 + N when a signal N ended it). Raises ContainError when bubblewrap fails before the
    command starts (it says why on standard error): then nothing ran.

    gatekeep waits as `time` does: an interrupt from the terminal reaches bubblewrap, which
    ends and takes the command with it (--die-with-parent); a SIGTERM or SIGHUP sent to gatekeep
    is passed on. Descriptors beyond 0-2 are not passed in."""
    import signal

    program = socket_filter()
    copiers = through_pipes()
    filter_read, filter_write = os.pipe()
    os.write(filter_write, program)  # (a few dozen bytes: the pipe holds them)
    os.close(filter_write)
    status_read, status_write = os.pipe()
    command = [args[0], "--json-status-fd", str(status_write), "--seccomp", str(filter_read), *args[1:]]
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP)}
    try:
        process = subprocess.Popen(command, pass_fds=(status_write, filter_read), close_fds=True)
    except OSError as e:
        raise ContainError(f"bubblewrap could not start ({e.strerror})") from None
    finally:
        os.close(status_write)
        os.close(filter_read)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGQUIT, signal.SIG_IGN)
        for passed in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(passed, lambda number, frame: process.send_signal(number))
        code = process.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        _drain(copiers)
    with os.fdopen(status_read, "rb") as status:
        said = status.read(1 << 16).decode(errors="replace")
    if code < 0:  # bubblewrap itself ended by a signal (an interrupt): the command with it
        return 128 - code
    if '"exit-code"' not in said:  # (it says so once the command has run; it printed why not)
        raise ContainError(f"bubblewrap stopped before the command ran (exit status {code}; its reason is above)")
    return code


def prepare(argv: list[str], cwd: str, policy, paths) -> tuple[list[str], Hold]:
    """plan() for `argv` run in `cwd` under `policy`: its working tree (posture.workspace_of; none
    is refused, as is one in the home's dot-entries: `~/.config` is settings, not a project), its protected paths and `sandbox:` settings, and gatekeep's
    own directories hidden; and the run registered in its tree (Hold: release() it once the run
    has ended). Raises ContainError."""
    from gatekeep.judge.containment import expand_place
    from gatekeep.judge.posture import workspace_of

    home = os.path.expanduser("~")
    workspace = workspace_of(cwd, policy, paths)
    if workspace is None:
        raise ContainError(
            f"{cwd} is in no working tree (a git work tree, or a trusted project's directory): the sandbox"
            " would not know what it may change"
        )
    inside_home = workspace[len(os.path.realpath(home)) + 1 :] if workspace.startswith(os.path.realpath(home) + "/") else ""
    if inside_home.startswith("."):
        raise ContainError(f"{workspace} is the home's own settings (~/{inside_home.split('/')[0]}), not a project")
    reads = [e for e in policy.protected if e.action == "read"]
    writes = [e for e in policy.protected if e.action == "write"]
    hidden = [*_anchored(reads, home, workspace), *_home_secrets(reads, home), paths.config_dir, paths.state_dir]
    if paths.user_policy not in hidden:
        hidden.append(paths.user_policy)
    settings = policy.sandbox
    writable = [expand_place(w, home) for w in settings.writable]
    hold = Hold(paths, os.path.realpath(workspace))
    with hold._locked():
        args, held, gits = plan(
            argv,
            cwd,
            workspace,
            home,
            hidden,
            lambda path: _protected(reads, path, home),
            lambda path: _protected(writes, path, home),
            writable,
            settings.network,
            *_nothing(paths),
        )
        hold.enter(held)
    hold.repositories = gits
    return args, hold


def _protected(entries, path: str, home: str) -> bool:
    from gatekeep.judge.protect import protects

    return any(protects(e, path, home) for e in entries)


def _anchored(entries, home: str, workspace: str) -> list[str]:
    """The existing paths the anchored entries name (`~/.aws/credentials`, `/etc/shadow`, the
    matches of `/etc/ssh/ssh_host_*_key`); /proc is the sandbox's own. Under the home, only what
    the sandbox shows (a dot-entry, the tree): the rest of the home is hidden already."""
    import glob

    from gatekeep.judge.protect import anchor

    found = []
    real_home = os.path.realpath(home)
    for entry in entries:
        fixed = anchor(entry.path, home)
        if fixed is None or fixed == "/proc" or fixed.startswith("/proc/"):
            continue
        pattern = home + entry.path[1:] if entry.path.startswith("~") else entry.path
        matched = [fixed] if fixed == pattern.rstrip("/") else glob.glob(glob.escape(fixed) + pattern[len(fixed) :])
        for path in matched:
            real = os.path.realpath(path)
            inside_home = real.startswith(real_home + "/")
            shown = real.startswith(workspace.rstrip("/") + "/") or real[len(real_home) + 1 :].startswith(".")
            if os.path.lexists(path) and (not inside_home or shown):
                found.append(real)
    return found


# The home's files that hold what was typed, passwords included: hidden from a contained line,
# though the gate lets a command read them (`gatekeep scan ~/.bash_history`, `history`).
HISTORIES = (".bash_history", ".zsh_history", ".histfile", ".python_history", ".node_repl_history", ".psql_history",
             ".mysql_history", ".sqlite_history", ".lesshst", ".local/share/fish/fish_history")  # fmt: skip


def _home_secrets(entries, home: str) -> list[str]:
    """The home's own dot-entries an unanchored entry names (`~/.git-credentials`, `~/.netrc`,
    `~/.pgpass`), and its HISTORIES: shown read-only with the rest, they would be read."""
    try:
        names = [n for n in os.listdir(home) if n.startswith(".")]
    except OSError:
        return []
    real = os.path.realpath(home)
    found = [f"{real}/{n}" for n in names if _protected(entries, f"{real}/{n}", home)]
    return found + [f"{real}/{h}" for h in HISTORIES if os.path.isfile(f"{real}/{h}")]


def _nothing(paths) -> tuple[str, str]:
    """Paths.sandbox_nothing (an empty file of mode 000) and Paths.sandbox_empty (an empty
    directory of mode 555), made when missing."""
    path, empty = paths.sandbox_nothing, paths.sandbox_empty
    os.makedirs(empty, mode=0o700, exist_ok=True)
    if not os.path.isfile(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o000)
        os.close(fd)
    os.chmod(path, 0o000)
    os.chmod(empty, 0o555)
    return path, empty
