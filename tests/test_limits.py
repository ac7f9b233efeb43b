"""Time limits (budget.py): a check that runs out of time asks, never allows, and says why.

The limits are CPU time. The tests lower them (a whole check's 3 s, in a real process) and
give work that would take far longer: a regular expression that backtracks for minutes,
which only a real signal can stop, since it runs in C.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest

from gatekeep.core import budget
from gatekeep.core.budget import Limit, OutOfTime

RUNAWAY = re.compile(".*" * 26 + "X")  # against "git status --short": minutes of backtracking


def test_a_limit_stops_a_runaway_regular_expression():
    start = time.monotonic()
    with pytest.raises(OutOfTime) as stopped:
        with Limit(0.2) as limit:
            RUNAWAY.fullmatch("git status --short")
    assert stopped.value.limit is limit
    assert time.monotonic() - start < 10  # generous: 0.2 s of CPU; unstopped, minutes
    assert not budget._running


def test_no_signal_comes_after_a_limit_ends():
    with Limit(0.05):
        pass
    start = time.process_time()
    while time.process_time() - start < 0.3:  # longer than the limit: nothing may interrupt this
        sum(range(1000))


def test_the_outermost_limit_that_ran_out_is_the_one_raised():
    with pytest.raises(OutOfTime) as stopped:
        with Limit(0.1) as outer:
            try:
                with Limit(30) as inner:
                    RUNAWAY.fullmatch("git status --short")
            except OutOfTime as e:
                assert e.limit is not inner  # the inner one has time left: not its business
                raise
    assert stopped.value.limit is outer


def test_an_inner_limit_ends_and_the_outer_one_still_holds():
    with pytest.raises(OutOfTime) as stopped:
        with Limit(0.4) as outer:
            with pytest.raises(OutOfTime) as inner_stop:
                with Limit(0.1) as inner:
                    RUNAWAY.fullmatch("git status --short")
            assert inner_stop.value.limit is inner
            RUNAWAY.fullmatch("git status --short")
    assert stopped.value.limit is outer


def test_code_that_swallows_every_exception_only_delays_it():
    swallowed = 0
    with pytest.raises(OutOfTime):
        with Limit(0.1):
            for _ in range(100):
                try:
                    RUNAWAY.fullmatch("git status --short")
                except BaseException:  # as bashlex's guard in parse.py does
                    swallowed += 1
                start = time.process_time()
                while time.process_time() - start < 0.3:  # the timer fires again, here
                    sum(range(1000))
    assert swallowed == 1


def test_a_line_out_of_time_asks_and_says_why(monkeypatch):
    from gatekeep.core.paths import get_paths
    from gatekeep.judge import gate
    from gatekeep.judge.policy import load_policy

    monkeypatch.setattr(gate, "CHECK_SECONDS", 0.2)
    monkeypatch.setattr(gate, "_evaluate", lambda *args: RUNAWAY.fullmatch("git status --short"))
    verdict = gate.evaluate("ls", load_policy(get_paths()))
    assert verdict.decision == "ask" and verdict.firm
    assert "could not finish judging the line within 0.2 s" in verdict.reason


SLOW_CHECK = """
import re, sys
import gatekeep.judge.gate as gate
gate.CHECK_SECONDS = 0.3
runaway = re.compile(".*" * 26 + "X")
real = gate._evaluate
gate._evaluate = lambda *args: runaway.fullmatch("git status --short") or real(*args)
from gatekeep.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("settings", ["", "default: allow\n", "mode: audit\ndefault: allow\n"])
def test_a_real_check_out_of_time_blocks_the_line_and_records_an_ask(paths, settings):
    """Never allowed because time ran out: not under `default: allow`, not in audit mode."""
    from tests.conftest import write

    write(paths.user_policy, settings or "{}\n")
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", SLOW_CHECK, "check", "--no-prompt", "--", "ls"],
        capture_output=True, text=True, timeout=120,
    )
    assert time.monotonic() - start < 30  # generous: 0.3 s of CPU and a start; unstopped, minutes
    assert result.returncode == 1, result.stderr
    assert "could not finish judging the line within 0.3 s" in result.stderr
    assert "Traceback" not in result.stderr
    with open(paths.audit_log, encoding="utf-8") as f:
        record = json.loads(f.read().splitlines()[-1])
    assert record["decision"] == "ask" and record["outcome"] == "deny"


def test_a_limit_outside_the_main_thread_limits_nothing_and_breaks_nothing():
    import threading

    done = []

    def work():
        with Limit(0.01):
            start = time.process_time()
            while time.process_time() - start < 0.1:
                sum(range(1000))
        done.append(True)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    assert done == [True] and not budget._running
