"""Which terminal: the controlling terminal of a process, named by its device.

A question opens /dev/tty, whose name is the same in every terminal; the lock that
keeps questions on one terminal from interleaving, the audit, `pending` and `watch`
need the terminal's own name (/dev/pts/3), and the approver console needs to know
whether it reads the terminal of a gated shell. Linux keeps the controlling
terminal of each process in /proc/PID/stat; elsewhere these return None, and the
callers fall back on the names of the standard streams.
"""

from __future__ import annotations

import os


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
    """The device name of this process's controlling terminal; None when it has none or this is not Linux."""
    device = controlling_device()
    if device is None:
        return None
    major, minor = os.major(device), os.minor(device)
    if 136 <= major <= 143:  # Unix98 pseudo-terminals
        return f"/dev/pts/{(major - 136) * 256 + minor}"
    name = os.path.realpath(f"/dev/char/{major}:{minor}")  # udev's link to every character device
    return name if name.startswith("/dev/") and not name.startswith("/dev/char/") else f"/dev/char/{major}:{minor}"
