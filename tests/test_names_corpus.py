"""Names on the hand-labelled corpora (tests/data/CORPUS.md), as `make bench` reports them
(tests/bench/bench_names.py): the subcommand is found and no value reaches the name.

corpus.tsv is the corpus the data was checked against: it holds issue 19's goals, at least
99% found and at most 0.2% of names holding a value. names_heldout.tsv (tools corpus.tsv does
not have, labelled without looking at gatekeep) holds the figures measured when it was made,
so that naming on tools nobody tuned it for does not get worse unnoticed.
"""

from __future__ import annotations

import pytest

from tests.bench import bench_names

FLOORS = {
    "corpus.tsv": (0.99, 0.002),  # found at least, leak at most: the goals
    "names_heldout.tsv": (0.955, 0.025),  # measured 95.8% and 2.21%
}


@pytest.mark.parametrize("corpus", sorted(FLOORS))
def test_names_find_the_subcommand_and_hold_no_value(corpus):
    result = bench_names.score(bench_names.DATA / corpus)
    found, leak = FLOORS[corpus]
    n = result["lines"]
    assert n > 1000
    assert result["found"] / n >= found, result["misses"][:10]
    assert result["leak"] / n <= leak, result["leaks"][:10]


@pytest.mark.parametrize(
    "expected,got,found,leak",
    [
        ("git commit", "git commit", True, False),
        ("git commit", "git commit -m", True, True),
        ("bun run", "bun run src/index.ts", True, True),
        ("swift package init", "swift package", False, False),
        ("resolvectl query", "resolvectl no", False, True),
        ("strace", "./bin/app", False, True),
    ],
)
def test_found_and_leak_are_judged_word_by_word(expected, got, found, leak):
    assert bench_names.judge(expected, got) == (found, leak)
