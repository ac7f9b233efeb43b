"""A bug's traceback goes to the error log, never to the terminal; the user gets one line."""

from __future__ import annotations

import os


def internal_error_line(error: BaseException) -> str:
    """Log `error`'s traceback; the one line that says it blocked, and where the details are."""
    import traceback

    log = None
    try:
        from gatekeep.core.paths import get_paths

        log = get_paths().error_log
        os.makedirs(os.path.dirname(log), mode=0o700, exist_ok=True)
        # private, as the audit log is: a traceback shows the line it was checking, and its paths
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
        with open(fd, "a", encoding="utf-8") as f:
            f.write("".join(traceback.format_exception(error)) + "\n")
        where = f"Details: {log}"
    except Exception as e:  # never a traceback on the terminal: one line says where it could not go
        reason = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
        where = f"The details could not be written to {log or 'the error log'} ({reason})"
        where += ": set GATEKEEP_HOME to a writable directory"
    return f"gatekeep: internal error ({type(error).__name__}: {error}); blocked. {where}"
