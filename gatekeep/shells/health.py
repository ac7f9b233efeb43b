"""Is the gate working in this shell? The checks `gatekeep doctor` runs, each problem with its fix.

It runs as a child of the shell and cannot see the shell's functions or
unexported settings, so it reads what the hook exports once it has finished
loading (shell/gatekeep.bash, shell/gatekeep.zsh):

    GATEKEEP_HOOK="bash 5.2.15 ps0 PID INTERPRETER"
    GATEKEEP_HOOK="zsh 5.9 preexec+TRAPDEBUG PID INTERPRETER"

A child shell started without the hook (`bash --norc`, `zsh -f`) inherits the
variable, so it counts only when PID is doctor's parent process, and when that
parent, if it is a shell, is the kind of shell the variable names. (`exec bash
--norc` keeps the PID and the kind, so that one case goes unnoticed; the
built-in policy asks before such a line.) Run doctor directly at the prompt:
in a subshell or under sudo its parent is not the shell.

The checks, in order: the hook is loaded here; the shell's version is one the
hook supports; history settings; the policy loads; the audit log is writable
and private; the interpreter the hook calls is still there.

History settings: only bash's matter. The bash gate reads the line back from
history, so ignorespace, ignoredups/erasedups, HISTIGNORE, `set +o history`,
`shopt -u cmdhist` and a tiny HISTSIZE would hide a line from it; the hook
restores every one of them (and promptvars) before each prompt, and PS0 blocks
a line that still missed history. None of those is a problem, and doctor only
names the ones it sees in its environment. What the hook cannot restore is
its own prompt hook: when an exported PROMPT_COMMAND no longer runs it, or an
exported BASHOPTS shows promptvars off (PS0 then is not expanded: no gate),
that is reported. zsh hands preexec the typed line whatever its history
settings (HIST_IGNORE_SPACE, HIST_NO_STORE, HISTSIZE=0, HISTORY_IGNORE and a
zshaddhistory that returns 1 were tried), so there is nothing to check there.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from typing import NamedTuple

MECHANISMS = {"bash": "ps0", "zsh": "preexec+TRAPDEBUG"}
EXPLAINED = {"ps0": "PS0 line gate", "preexec+TRAPDEBUG": "preexec + TRAPDEBUG"}
MINIMUM = {"bash": (4, 4), "zsh": (5, 0)}
RC_FILES = {"bash": "~/.bashrc", "zsh": "~/.zshrc"}
ESCAPE = {"bash": "bash --norc", "zsh": "zsh -f"}
SHELLS = ("bash", "zsh", "sh", "dash", "ksh", "mksh", "fish", "tcsh", "csh", "nu")
REINSTALL = "reinstall gatekeep, then open a new terminal (the hook bakes the path in when it loads)"


class Check(NamedTuple):
    name: str
    ok: bool
    detail: str
    fix: str | None = None


class Hook(NamedTuple):
    """What GATEKEEP_HOOK says."""

    shell: str
    version: str
    mechanism: str
    pid: int
    interpreter: str


def run_checks() -> list[Check]:
    """Every check, in order, for the shell this process is a child of."""
    parent = os.getppid()
    parent_exe = process_exe(parent)
    hook, hook_check = check_hook(os.environ.get("GATEKEEP_HOOK"), parent, parent_exe)
    shell, shell_check = check_shell(hook, parent_exe)
    return [
        hook_check,
        shell_check,
        check_history(shell, hook),
        check_policy(),
        check_managed(),
        check_audit_log(),
        check_install(hook),
        check_server(),
        check_sandbox(),
        check_review(),
    ]


def parse_hook(value: str) -> Hook | None:
    parts = value.split(" ", 4)
    if len(parts) != 5 or parts[0] not in MECHANISMS or not parts[3].isdigit():
        return None
    shell, version, mechanism, pid, interpreter = parts
    return Hook(shell, version, mechanism, int(pid), interpreter)


def check_hook(value: str | None, parent: int, parent_exe: str) -> tuple[Hook | None, Check]:
    """What GATEKEEP_HOOK says, when the hook that set it was loaded by this shell (doctor's parent)."""
    here = shell_kind(parent_exe)
    load = _how_to_load(shell_kind(shell_exe(parent_exe)))
    if not value:
        if here == "bash" and login_shell(parent):
            from gatekeep.shells.hook import login_file

            detail = f"not loaded in this login shell, which reads {login_file()}, not ~/.bashrc"
            fix = "gatekeep install --shell bash (it makes login shells load ~/.bashrc too), then open a new terminal"
            return None, Check("hook", False, detail, fix)
        return None, Check("hook", False, "not loaded in this shell (GATEKEEP_HOOK is not set)", load)
    hook = parse_hook(value)
    if hook is None:
        return None, Check("hook", False, f"GATEKEEP_HOOK={value!r} is not what the hook sets", f"unset it; {load}")
    if hook.pid != parent or (here is not None and here != hook.shell):
        detail = (
            f"GATEKEEP_HOOK comes from the {hook.shell} hook of PID {hook.pid}, not from this {here or 'shell'} "
            f"(PID {parent}): inherited, so the hook is not known to be loaded here"
        )
        fix = f"run gatekeep doctor directly at the prompt, not in a subshell or script; if you did, {load}"
        return None, Check("hook", False, detail, fix)
    if hook.mechanism != MECHANISMS[hook.shell]:
        detail = f"the {hook.shell} hook says it gates with {hook.mechanism!r}, not {MECHANISMS[hook.shell]!r}"
        return None, Check("hook", False, detail, "open a new terminal, so that this gatekeep's hook loads")
    return hook, Check("hook", True, f"loaded in this {hook.shell} (PID {hook.pid}): {EXPLAINED[hook.mechanism]}")


def login_shell(pid: int) -> bool:
    """Whether process `pid` is a login shell: its argv[0] starts with `-` (`-bash`), or it was
    started with --login or -l (Linux only: elsewhere it cannot be told, and doctor says the usual)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return argv[0].startswith(b"-") or any(a in (b"--login", b"-l") for a in argv[1:])


def _how_to_load(kind: str | None) -> str:
    if kind not in RC_FILES:
        return "use bash 4.4+ or zsh, and load the hook there: gatekeep install --shell bash (or zsh)"
    line = f'eval "$(gatekeep hook {kind})"'
    return f"gatekeep install --shell {kind} (or add {line} last in {RC_FILES[kind]}), then open a new terminal"


def process_exe(pid: int) -> str:
    """The program process `pid` runs, "" when it cannot be told (Linux only: elsewhere doctor relies on $SHELL)."""
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def shell_kind(path: str) -> str | None:
    """ "bash", "zsh", "fish"... for a shell's path (also bash5.2, zsh-5.9), None for anything else."""
    name = re.sub(r"[-\d.]+$", "", os.path.basename(path))
    return name if name in SHELLS else None


def shell_exe(parent_exe: str) -> str:
    """The shell doctor was typed in: its parent process when that is a shell, else $SHELL."""
    return parent_exe if shell_kind(parent_exe) is not None else os.environ.get("SHELL", "")


def check_shell(hook: Hook | None, parent_exe: str) -> tuple[str | None, Check]:
    """The shell's kind, and whether the hook supports its version: from GATEKEEP_HOOK, else `SHELL --version`
    (SHELL as shell_exe finds it)."""
    if hook is not None:
        return hook.shell, _supported(hook.shell, hook.version, "the loaded hook")
    exe = shell_exe(parent_exe)
    shell = shell_kind(exe)
    if shell is None:
        detail = f"cannot tell which shell this is (not the parent process, nor $SHELL={exe!r})"
        return None, Check("shell", False, detail, "use bash 4.4 or newer, or zsh, with SHELL set to it")
    return shell, _supported(shell, _version_of(exe, shell), exe)


def _version_of(exe: str, shell: str) -> str:
    if shell not in MINIMUM:
        return ""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    found = re.search(r"version (\d+(?:\.\d+)*)" if shell == "bash" else r"^zsh (\d+(?:\.\d+)*)", out)
    return found.group(1) if found else ""


def _supported(shell: str, version: str, source: str) -> Check:
    if shell not in MINIMUM:
        return Check("shell", False, f"{shell} ({source}): gatekeep gates bash and zsh only", "use bash 4.4+ or zsh")
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
    needed = ".".join(map(str, MINIMUM[shell]))
    if len(numbers) < 2:
        detail = f"{shell}: cannot read its version ({source} says {version!r})"
        return Check("shell", False, detail, f"use {shell} {needed} or newer")
    if numbers < MINIMUM[shell]:
        detail = f"{shell} {version} (from {source}) is too old: the hook needs {shell} {needed} or newer"
        fix = "install a newer bash (macOS: brew install bash) or use zsh" if shell == "bash" else "install a newer zsh"
        return Check("shell", False, detail, fix)
    detail = f"{shell} {version} (from {source}) is supported"
    if shell == "bash" and numbers < (5, 1):
        detail += "; a trap on INT stops the gate before bash 5.1 (the hook warns at each prompt while one is set)"
    return Check("shell", True, detail)


def check_history(shell: str | None, hook: Hook | None) -> Check:
    """See the module docstring: what can hide a line from the gate, and what the hook restores itself."""
    if shell == "zsh":
        return Check("history", True, "zsh passes the typed line to preexec whatever its history settings")
    if shell != "bash":
        return Check("history", True, "nothing to check for this shell")
    if hook is None:
        return Check("history", True, "no hook here; once loaded, it restores the history settings it needs")
    env = os.environ
    command = env.get("PROMPT_COMMAND")
    if command is not None and "__gatekeep_prompt" not in command:
        detail = "the exported PROMPT_COMMAND no longer runs the hook's prompt function: nothing restores them"
        return Check(
            "history", False, detail, 'put eval "$(gatekeep hook bash)" last in ~/.bashrc; open a new terminal'
        )
    options = env.get("BASHOPTS")
    if options is not None and "promptvars" not in options.split(":"):
        detail = "promptvars is off (exported BASHOPTS): PS0 is not expanded, so no line is checked"
        return Check("history", False, detail, "shopt -s promptvars")
    seen = [f"{name}={env[name]!r}" for name in ("HISTCONTROL", "HISTIGNORE", "HISTSIZE") if env.get(name)]
    if "SHELLOPTS" in env and "history" not in env["SHELLOPTS"].split(":"):
        seen.append("set +o history")
    restored = f" (seen: {', '.join(seen)})" if seen else ""
    detail = f"the hook restores what it needs before every prompt{restored} and blocks a line that missed history"
    return Check("history", True, detail)


def check_policy() -> Check:
    from gatekeep.core.errors import FatalError
    from gatekeep.core.paths import current_directory, get_paths
    from gatekeep.judge.policy import load_policy

    try:
        policy = load_policy(get_paths(), None, current_directory())
    except FatalError as e:  # a PolicyError says which file and line
        fix = "gatekeep rules edit (it saves only a policy that loads); until then every other line you type is blocked"
        return Check("policy", False, str(e), fix)
    broken = [layer for layer in policy.layers if layer.error]
    if broken:
        fix = f"fix {broken[0].path}, or work outside that directory"
        return Check("policy", False, f"{broken[0].error}; every line here asks until it loads", fix)
    detail = f"loads: mode {policy.mode}, approve {policy.approve}, default {policy.default}"
    detail += f" (from the {policy.default_layer.name} policy)"
    if policy.mode == "audit":
        detail += "; mode audit blocks nothing, it only records"
    files = [f"{layer.name} {layer.path}" for layer in policy.layers if layer.text and layer.name != "built-in"]
    return Check("policy", True, detail + (f"; files: {', '.join(files)}" if files else ""))


def check_managed() -> Check:
    """The organization's managed policy (judge/managed.py): that only root can change it, what it
    locks, and which of the user's settings it refuses."""
    from gatekeep.core.errors import FatalError
    from gatekeep.core.paths import current_directory, get_paths
    from gatekeep.judge.managed import managed_files, skipped
    from gatekeep.judge.policy import load_policy

    paths = get_paths()
    files = managed_files(paths.managed_dir)
    if isinstance(files, FatalError):
        fix = "as root, make the directory and its files root's and writable by no one else (or remove them)"
        return Check("managed policy", False, f"ignored, and every line asks: {files}", fix)
    left_out = skipped(paths.managed_dir)
    if left_out:
        why = f"{', '.join(left_out)} in {paths.managed_dir} {'is' if len(left_out) == 1 else 'are'} not read"
        return Check("managed policy", False, why, "only *.yaml files (not hidden ones) are read: rename them")
    if not files:
        return Check("managed policy", True, f"none ({paths.managed_dir} holds no *.yaml file)")
    detail = f"{len(files)} file{'s' if len(files) > 1 else ''} in {paths.managed_dir}, only root can change them"
    try:
        policy = load_policy(paths, None, current_directory())
    except FatalError:
        return Check("managed policy", True, detail + " (see the policy check)")
    if policy.locked:
        detail += f"; locks allow rules for {', '.join(repr(rule.pattern) for rule in policy.locked)}"
    if policy.trust_locked_by is not None:
        detail += "; no project may be trusted"
    if policy.refused:
        detail += "; refused: " + "; ".join(policy.refused)
        return Check("managed policy", False, detail, "remove those settings from your policy: they do not count")
    return Check("managed policy", True, detail)


def check_sandbox() -> Check:
    """Whether containment (`sandbox.contain`, contain/sandbox.py) works here, when the policy asks for it."""
    from gatekeep.contain.sandbox import unavailable
    from gatekeep.core.errors import FatalError
    from gatekeep.core.paths import current_directory, get_paths
    from gatekeep.judge.policy import load_policy

    try:
        settings = load_policy(get_paths(), None, current_directory()).sandbox
    except FatalError:
        return Check("sandbox", True, "nothing is contained while the policy does not load (see the policy check)")
    why = unavailable()
    if not settings.contain:
        detail = "off (sandbox.contain is not set): lines that run code ask"
        return Check("sandbox", True, detail + (f"; it could not work here anyway: {why}" if why else ""))
    if why is not None:
        fix = "install bubblewrap (apt install bubblewrap), and allow unprivileged user namespaces"
        return Check("sandbox", False, f"sandbox.contain is on, but containment is off here: {why}; those lines ask", fix)
    return Check("sandbox", True, f"on: lines that only run code or change the tree run contained, network {settings.network}")


def check_review() -> Check:
    """Whether the reviewer the policy names (`review.command`, review/reviewer.py) can be started:
    found on PATH, or an executable file. It is not run: a model may cost money."""
    import shutil

    from gatekeep.core.errors import FatalError
    from gatekeep.core.paths import current_directory, get_paths
    from gatekeep.judge.policy import load_policy

    try:
        review = load_policy(get_paths(), None, current_directory()).review
    except FatalError:
        return Check("reviewer", True, "no reviewer runs while the policy does not load (see the policy check)")
    if not review.command:
        return Check("reviewer", True, "none (review.command is not set): every question waits for an answer")
    program = review.command[0]
    found = shutil.which(program)
    if found is None:
        detail = f"review.command names {program!r}, which is not found here: it gives no verdict, so nothing is reviewed"
        return Check("reviewer", False, detail, "install it (gatekeep-review-llm: pip install 'gatekeep[llm]'), or fix review.command")
    said = f"{found}, within {review.timeout} s; {len(review.allow)} allow and {len(review.deny)} deny descriptions"
    return Check("reviewer", True, said)


def check_audit_log() -> Check:
    """Writable and private, without writing a record: an append-mode open that writes nothing, or os.access."""
    from gatekeep.core.paths import get_paths

    path = get_paths().audit_log
    quoted = shlex.quote(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return _audit_log_creatable(path)
    if not stat.S_ISREG(info.st_mode):
        return Check("audit log", False, f"{path} is not a regular file", f"mv {quoted} {quoted}.old")
    if info.st_uid != os.getuid():
        detail = f"{path} belongs to another user (uid {info.st_uid})"
        return Check("audit log", False, detail, f'sudo chown "$USER" {quoted}')
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        detail = f"{path} is mode {mode:04o}: other users can read the command lines you type"
        return Check("audit log", False, detail, f"chmod 600 {quoted}")
    try:
        with open(path, "ab"):
            pass
    except OSError as e:
        detail = f"{path} cannot be appended to ({e.strerror}): every line is blocked until it can"
        return Check("audit log", False, detail, f"chmod u+w {quoted}")
    return Check("audit log", True, f"{path} is writable, mode {mode:04o}")


def _audit_log_creatable(path: str) -> Check:
    existing = os.path.dirname(path)
    while not os.path.isdir(existing):  # the nearest directory that exists must let us create the rest
        if os.path.lexists(existing):
            return Check("audit log", False, f"{existing} is in the way of {path}", f"move {existing} away")
        existing = os.path.dirname(existing)
    if not os.access(existing, os.W_OK | os.X_OK):
        detail = f"{path} cannot be created ({existing} is not writable): every line is blocked until it can"
        return Check("audit log", False, detail, f"chmod u+rwx {shlex.quote(existing)}, or set GATEKEEP_HOME")
    return Check("audit log", True, f"{path} does not exist yet; the first check creates it (mode 0600)")


def check_install(hook: Hook | None) -> Check:
    """The interpreter the loaded hook calls (else this gatekeep's), and the import dirs `gatekeep hook` bakes in."""
    from gatekeep.shells.hook import import_dirs

    interpreter = hook.interpreter if hook is not None else sys.executable
    calls = "the loaded hook calls" if hook is not None else "`gatekeep hook` would call"
    if not (os.path.isfile(interpreter) and os.access(interpreter, os.X_OK)):
        detail = f"{calls} {interpreter}, which is missing or not executable: every line is blocked"
        escape = ESCAPE[hook.shell] if hook is not None else "bash --norc"
        return Check("install", False, detail, f"{REINSTALL}; meanwhile `{escape}` opens a shell without the hook")
    try:
        missing = [d for d in import_dirs() if not os.path.isdir(d)]
    except (AttributeError, ImportError, ValueError):  # find_spec found no such module
        missing = ["(a library gatekeep needs is not installed)"]
    if missing:
        return Check("install", False, f"gatekeep's import directories are gone: {', '.join(missing)}", REINSTALL)
    detail = f"{calls} {interpreter}"
    if os.path.realpath(interpreter) != os.path.realpath(sys.executable):
        detail += f" (this doctor runs {sys.executable}: another installation)"
    return Check("install", True, detail)


def check_server() -> Check:
    """The warm checker (gatekeep/server/): off, running (its pid, from the lock beside each
    socket), not running, or a directory that is not private, which it and the clients refuse."""
    from gatekeep.core.paths import get_paths

    if os.environ.get("GATEKEEP_SERVER") == "off":
        return Check("server", True, "off (GATEKEEP_SERVER=off): every check runs in a process of its own")
    directory = get_paths().server_dir
    quoted = shlex.quote(directory)
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return Check("server", True, "the warm checker has not started yet; the next line you type starts it")
    mode = stat.S_IMODE(info.st_mode)
    slower = "every check runs without the warm checker, slower"
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return Check("server", False, f"{directory} is not a directory of yours: {slower}", f"mv {quoted} {quoted}.old")
    if mode & 0o077:
        return Check("server", False, f"{directory} is not private (mode {mode:04o}): {slower}", f"chmod 700 {quoted}")
    running = sorted(pid for pid in _server_pids(directory))
    if not running:
        return Check("server", True, "the warm checker is not running; the next line you type starts it")
    pids = ", ".join(str(pid) for pid in running)
    return Check("server", True, f"the warm checker runs (PID {pids}), in {directory}")


def _server_pids(directory: str):
    """The pids in the locks beside the sockets in `directory` that are gatekeep servers still
    running (by their command line, where /proc shows it)."""
    for name in os.listdir(directory):
        if not name.endswith(".sock.lock"):
            continue
        try:
            with open(os.path.join(directory, name), encoding="ascii") as f:
                pid = int(f.read().strip() or 0)
        except (OSError, ValueError):
            continue
        if pid <= 0:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"gatekeep.server.daemon" in f.read():
                    yield pid
            continue
        except FileNotFoundError:
            if os.path.isdir("/proc/self"):
                continue  # no such process
        except OSError:
            continue
        try:
            os.kill(pid, 0)  # no /proc: that a process has the pid
            yield pid
        except OSError:
            pass
