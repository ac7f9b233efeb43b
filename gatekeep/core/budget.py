"""Time limits on work that hostile input could make slow: deciding a line, reading a project file.

`with Limit(seconds) as limit:` raises OutOfTime when the block has used `seconds` of CPU
time; the caller catches it (`except OutOfTime as e: if e.limit is not limit: raise`) and
fails closed: a line that ran out of time asks, a project file that did asks for every line.

Decisions, and why:
- CPU time (ITIMER_PROF, user and system time of the process), not the wall clock. What
  runs away on hostile input is computation (a pattern that backtracks, a quadratic walk),
  and a busy machine stretches the wall clock, not CPU time: a line is not decided
  differently because another job holds the cores. A wait (a FIFO opened for reading, a
  hung network mount) uses no CPU and is not covered.
- A real timer signal, not a watchdog thread: a regular expression runs in C holding the
  GIL, where no other thread can act, but the re module polls for signals as it matches,
  so a signal handler does stop it. ITIMER_VIRTUAL and SIGVTALRM are the parser's (parse.py
  bounds bashlex with them), so the two never disturb each other.
- OutOfTime is a BaseException, so no `except Exception` on the way turns running out of
  time into some other verdict; code that catches everything (parse.py's bashlex guard, a
  finalizer, where Python swallows exceptions) only delays it: the timer fires again every
  REPEAT seconds until the limit's block has ended.
- The signal never raises inside this module's own code (Limit's __enter__ and __exit__),
  which could otherwise leave a limit running after its block has ended; the caller catches
  OutOfTime outside the `with`, so the timer is stopped before any other code runs.
- The handler stays installed once set (it does nothing when no limit is running):
  putting back the default action of SIGPROF, which ends the process, could race with a
  signal already on its way.
- Limits nest (a project file read while a line is being decided): the timer is set for the
  nearest end, and when time is up the outermost limit that ran out is raised, so a line
  out of time is not mistaken for a slow project file.
"""

from __future__ import annotations

import _signal  # signal's own C module, loaded at start-up: `import signal` loads enum, ~1x Python's start-up
import _thread
import sys
import time

REPEAT = 0.05  # seconds of CPU between repeated signals, until the limit's block ends

_running: list[Limit] = []  # outermost first
_owner = None  # the thread the running limits belong to: signal handlers run in the main thread only


class OutOfTime(BaseException):
    """A Limit's time ran out; `limit` says which."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(f"more than {limit.seconds:g} s")
        self.limit = limit


class Limit:
    """At most `seconds` of CPU time for the `with` block (see the module's docstring). Outside
    the main thread, where no signal handler runs, it limits nothing."""

    __slots__ = ("seconds", "end", "_hook", "_idle")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = 0.0
        self._hook = None
        self._idle = False

    def __enter__(self) -> Limit:
        global _owner
        if _running and _thread.get_ident() != _owner:
            self._idle = True
            return self
        if not _running:
            try:
                _signal.signal(_signal.SIGPROF, _on_signal)
            except ValueError:  # not the main thread
                self._idle = True
                return self
            _owner = _thread.get_ident()
            # an OutOfTime raised inside a finalizer is swallowed and reported as "Exception
            # ignored in ..."; for ours there is nothing to report: the timer fires again
            self._hook, sys.unraisablehook = sys.unraisablehook, _quiet_hook(sys.unraisablehook)
        self.end = time.process_time() + self.seconds
        _running.append(self)
        _arm()
        return self

    def __exit__(self, *exc) -> None:
        if self._idle:
            return
        _running.remove(self)
        _arm()
        if self._hook is not None:
            sys.unraisablehook, self._hook = self._hook, None


def _arm() -> None:
    """Set the timer for the nearest end of the limits running, or stop it."""
    if not _running:
        _signal.setitimer(_signal.ITIMER_PROF, 0)
        return
    left = min(limit.end for limit in _running) - time.process_time()
    _signal.setitimer(_signal.ITIMER_PROF, max(left, 0.001), REPEAT)


def _on_signal(signum, frame) -> None:
    if frame is not None and frame.f_globals is globals():
        return  # setting or ending a limit: raising there would leave it running; the timer fires again
    now = time.process_time()
    for limit in _running:  # the outermost first
        if now >= limit.end:
            raise OutOfTime(limit)


def _quiet_hook(previous):
    def hook(unraisable) -> None:
        if not isinstance(unraisable.exc_value, OutOfTime):
            previous(unraisable)

    return hook
