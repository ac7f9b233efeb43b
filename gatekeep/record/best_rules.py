"""Which suggested rules would remove the most asks: `gatekeep scan` and `gatekeep audit stats` both use it."""

from __future__ import annotations

import collections

TOP_SUGGESTIONS = 5


def best_suggestions(
    asked: list[tuple[str, ...]], count: int = TOP_SUGGESTIONS, min_gain: float = 0
) -> tuple[list[str], int]:
    """Greedily pick the rules that would stop the most prompts; a line stops asking once all its
    suggestions are picked. Returns the rules and how many asked lines they cover.

    A rule's gain is what it does toward the lines still open: a whole line for a line that needs
    only it, a share for a line that needs others too. Picking stops below `min_gain`."""
    chosen: list[str] = []
    open_lines = [set(s) for s in asked if s]
    for _ in range(count):
        gains = collections.Counter()
        for needed in open_lines:
            remaining = needed.difference(chosen)
            if remaining:
                for suggestion in remaining:
                    gains[suggestion] += 1 / len(remaining)
        best = max(gains, key=lambda s: (gains[s], s), default=None)
        if best is None or gains[best] < min_gain - 1e-9:  # shares of a line add up inexactly
            break
        chosen.append(best)
    covered = sum(1 for needed in open_lines if needed <= set(chosen))
    return chosen, covered


def removals(asked: list[tuple[str, ...]], rules: list[str]) -> list[int]:
    """How many more asked lines stop asking as each of `rules` is added, in order.

    A line that needs two rules counts for the second, so the numbers add up to
    what best_suggestions() says the rules cover together.
    """
    needs = [set(s) for s in asked if s]
    added: set[str] = set()
    counts, done = [], 0
    for rule in rules:
        added.add(rule)
        now = sum(1 for needed in needs if needed <= added)
        counts.append(now - done)
        done = now
    return counts
