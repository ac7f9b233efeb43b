"""Which terminal: the controlling terminal of a process, named by its device.

A question opens /dev/tty, whose name is the same in every terminal; the lock that
keeps questions on one terminal from interleaving, the audit, `pending` and `watch`
need the terminal's own name (/dev/pts/3), and the approver console needs to know
whether it reads the terminal of a gated shell. Linux keeps the controlling
terminal of each process in /proc/PID/stat; elsewhere these return None, and the
callers fall back on the names of the standard streams.

The approver console (`gatekeep console`, `watch`) also asks: which terminals it reads, whether
a request was asked on one of them, and whether it runs on the terminal of a gated shell.
"""

from __future__ import annotations

import os
import sys

from gatekeep.core import process


def controlling_device(pid: int | str = "self") -> int | None:
    """The device number of `pid`'s controlling terminal; None when it has none, or /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        # the 7th field, tty_nr; the 2nd, (comm), may hold spaces and parentheses: split after its last ")"
        device = int(stat.rsplit(b")", 1)[1].split()[4])
    except (OSError, ValueError, IndexError):
        return None
    return device or None


def controlling_terminal() -> str | None:
    """The device name of the controlling terminal of the process the decision is for (process.py);
    None when it has none or this is not Linux."""
    device = controlling_device(process.ids()[0])
    if device is None:
        return None
    major, minor = os.major(device), os.minor(device)
    if 136 <= major <= 143:  # Unix98 pseudo-terminals
        return f"/dev/pts/{(major - 136) * 256 + minor}"
    name = os.path.realpath(f"/dev/char/{major}:{minor}")  # udev's link to every character device
    return name if name.startswith("/dev/") and not name.startswith("/dev/char/") else f"/dev/char/{major}:{minor}"


def terminal_name() -> str | None:
    """The name of the terminal a question is asked on (/dev/pts/3), which the per-terminal lock,
    `pending`, `watch` and the audit show. The question opens /dev/tty, the controlling terminal,
    whose own name is the same in every terminal: the kernel's record names the real one (and a
    stream redirected from another terminal, `</dev/pts/7`, does not stand in for it). Without
    /proc, the first standard stream on a terminal other than /dev/tty names it."""
    return controlling_terminal() or stream_terminal()


def terminal_of_streams() -> str:
    """The terminal the standard streams are on (stream_terminal), else this process: who answers
    from the approver console."""
    return stream_terminal() or f"pid {process.ids()[0]}"


def stream_terminal() -> str | None:
    """The first standard stream's terminal other than /dev/tty, whose name is the same in every
    terminal; else /dev/tty, if a stream is on it; else None."""
    generic = None
    for fd in (0, 1, 2):
        try:
            name = os.ttyname(fd)
        except OSError:
            continue
        if name != "/dev/tty":
            return name
        generic = name
    return generic


def terminals_of(fd: int) -> set[int]:
    """The devices of the terminal `fd` reads and of the controlling terminal (0 for none is left out).
    /dev/tty, the same name in every terminal, stands for the controlling terminal."""
    found = set()
    try:
        device = os.fstat(fd).st_rdev
    except OSError:
        device = None
    if device is not None and device != os.makedev(5, 0):
        found.add(device)
    found.add(controlling_device())
    return found - {0, None}


def asked_on(tty: str | None, terminals: set[int]) -> bool:
    """Was a question asked on the terminal named `tty` one of `terminals`? Compared by device, not by name."""
    try:
        return bool(tty) and os.stat(tty).st_rdev in terminals
    except (OSError, TypeError, ValueError):
        return tty == terminal_of_streams()


def gated_shell_on_this_terminal() -> int | None:
    """The pid of a gated shell above this process on the same terminal, if any. GATEKEEP_HOOK
    names the shell that loaded the hook; an environment without it, or a shell on another
    terminal, is not one. When /proc cannot tell, it is assumed to be one."""
    hook = os.environ.get("GATEKEEP_HOOK", "").split()
    if len(hook) < 4 or not hook[3].isdigit():
        return None
    shell = int(hook[3])
    if not os.path.isdir("/proc/self"):
        return shell  # no way to tell (not Linux)
    shell_terminal = controlling_device(shell)
    if shell_terminal is None:
        return None  # that shell has ended (the variable was inherited from it), or has no terminal
    # the terminal the keys are read from counts, not only the controlling one: `setsid gatekeep
    # console` has none, yet reads the shell's terminal
    return shell if shell_terminal in terminals_of(sys.stdin.fileno()) else None


def multiplexer() -> str | None:
    """tmux or screen, when this process runs inside one: their send-keys can type into it."""
    return "tmux" if os.environ.get("TMUX") else "screen" if os.environ.get("STY") else None
