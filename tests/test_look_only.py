"""With no configuration, a look-only command of a popular tool should rarely ask.

The rows of tests/data/tldr_examples.tsv whose tldr description only displays,
lists or shows (`look`), decided with the built-in policy alone; the logic and
the set-up it runs in are tests/bench/bench_look_only.py's, which also prints
which tools ask (`python tests/bench/bench_look_only.py`).
"""

from __future__ import annotations

import pytest

from tests.bench.bench_look_only import decide_rows, read_rows, shares

# Measured 83.0% allowed (526 of 634 look rows; 108 ask, 0 deny) when this test was written.
# The floor sits 3 points below, so that a few rows lost to a stricter rule do not fail it,
# but a regression in the built-in read-only knowledge does. Raise it as that knowledge grows.
ALLOWED_FLOOR = 80.0
LOOK_ROWS = 634


@pytest.fixture(scope="module")
def look_results():
    # module-scoped: runs under conftest's session isolation (a throw-away GATEKEEP_HOME and HOME)
    return decide_rows(read_rows("look"))


def test_corpus_has_every_look_row(look_results):
    assert len(look_results) == LOOK_ROWS


def test_most_look_only_lines_are_allowed(look_results):
    allowed = shares(look_results)["allow"]
    asked = [row.command for row, verdict in look_results if verdict.decision == "ask"]
    assert allowed >= ALLOWED_FLOOR, f"{allowed:.1f}% allowed, floor {ALLOWED_FLOOR}%; asked: {asked}"


def test_no_look_only_line_is_denied(look_results):
    denied = [(row.command, verdict.reason) for row, verdict in look_results if verdict.decision == "deny"]
    assert denied == []
