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
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "a", encoding="utf-8") as f:
            f.write("".join(traceback.format_exception(error)) + "\n")
        where = f"Details: {log}"
    except Exception as e:  # never a traceback on the terminal: one line says where it could not go
        reason = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
        where = f"The details could not be written to {log or 'the error log'} ({reason})"
        where += ": set GATEKEEP_HOME to a writable directory"
    return f"gatekeep: internal error ({type(error).__name__}: {error}); blocked. {where}"
