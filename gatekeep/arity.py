"""The arity table: how many words form a command's name (`npm run build`, `git commit`).

The table is data, in the top-level `arity/*.toml` files (see resources.py):
`[arity]` maps a command prefix to a word count, `[value-options]` lists, per
tool, the options whose value is the next word (`git -C dir`, `kubectl -n ns`).
Flags never count as words; the longest prefix found decides.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from gatekeep import resources

# An unknown tool's second word joins the name only if it looks like a subcommand:
# lower-case letters, digits and dashes. Paths, files (a dot), URLs and values do not.
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*")


@dataclass(frozen=True)
class ArityTable:
    arity: dict[str, int]
    value_options: dict[str, frozenset[str]]

    def positional_words(self, argv: list[str]) -> list[str]:
        """The tool and its non-option words, with each value option's value skipped."""
        tool = argv[0]
        takes_value = self.value_options.get(tool, frozenset())
        words, i = [tool], 1
        while i < len(argv):
            word = argv[i]
            if word == "--":
                words.extend(argv[i + 1 :])
                break
            if word.startswith("-") and word != "-":
                i += 2 if word in takes_value else 1
                continue
            words.append(word)
            i += 1
        return words

    def lookup(self, argv: list[str]) -> str | None:
        """The name by the longest matching prefix, or None for a tool the table does not know."""
        words = self.positional_words(argv)
        for n in range(len(words), 0, -1):
            count = self.arity.get(" ".join(words[:n]))
            if count is not None:
                return " ".join(words[:count])
        return None

    def name(self, argv: list[str]) -> str:
        if not argv:
            return ""
        known = self.lookup(argv)
        if known is not None:
            return known
        words = self.positional_words(argv)
        if len(words) > 1 and _SUBCOMMAND.fullmatch(words[1]):
            return " ".join(words[:2])
        return words[0]


@lru_cache(maxsize=1)
def load_table() -> ArityTable:
    arity: dict[str, int] = {}
    value_options: dict[str, frozenset[str]] = {}
    for path in sorted(resources.data_dir("arity").glob("*.toml")):
        with path.open("rb") as f:
            data = tomllib.load(f)
        for prefix, entry in data.get("arity", {}).items():
            arity[prefix] = entry["arity"]
        for tool, options in data.get("value-options", {}).items():
            value_options[tool] = frozenset(options)
    return ArityTable(arity, value_options)
