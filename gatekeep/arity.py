"""The arity table: how many words form a command's name (`npm run build`, `git commit`).

The table is data, in the top-level `arity/*.toml` files (see resources.py):
`[arity]` maps a command prefix to a word count, `[value-options]` lists, per
tool, the options whose value is the next word (`git -C dir`, `kubectl -n ns`),
and `[flags.NAME]` (in flags.toml) the spellings of one option, for
flag-equivalent deny rules (see match.py).
Flags never count as words; the longest prefix found decides.
"""

from __future__ import annotations

import os

from gatekeep import resources
from gatekeep.lazyre import lazy
from gatekeep.records import cached_property

# For a tool the table does not know, the word right after it joins the name
# when it looks like a subcommand: lower-case letters, digits and dashes, and no
# option before it. Paths, files (a dot), URLs, numbers and option values do
# not. Erring towards the longer name keeps `tool *` from swallowing the
# tool's other subcommands; measured by tests/bench/bench_names.py.
_SUBCOMMAND = lazy(r"[a-z][a-z0-9-]*")


class ArityTable:
    """The merged arity/*.toml data, and the naming rules that read it."""

    def __init__(
        self, arity: dict[str, int], value_options: dict[str, frozenset[str]], flag_aliases: dict[str, dict[str, str]]
    ) -> None:
        self.arity = arity
        self.value_options = value_options
        self.flag_aliases = flag_aliases  # command name -> option spelling -> canonical spelling

    def positional(self, argv: list[str]) -> list[int]:
        """Indexes of the tool and its non-option words; each value option's value is skipped."""
        tool = argv[0].rsplit("/", 1)[-1]
        takes_value = self.value_options.get(tool, frozenset())
        found, i = [0], 1
        while i < len(argv):
            word = argv[i]
            if word == "--":
                found.extend(range(i + 1, len(argv)))
                break
            if word.startswith("-") and word != "-":
                i += 2 if word in takes_value else 1
                continue
            found.append(i)
            i += 1
        return found

    def name_end(self, argv: list[str]) -> int:
        """How many words of argv it takes to reach the last word of the command's name."""
        if not argv:
            return 0
        indexes = self.positional(argv)
        # no prefix in the table is longer than `longest` words: trying longer ones, each joined
        # anew, made naming a command of 65,000 words take 20 s (quadratic in its words); the
        # same lookups, so the same name. (A short command tries all its words without reading
        # the whole table for `longest`.)
        longest = len(indexes) if len(indexes) <= 4 else min(len(indexes), self.longest)
        words = [argv[0].rsplit("/", 1)[-1], *(argv[i] for i in indexes[1:longest])]
        for n in range(len(words), 0, -1):
            count = self.arity.get(" ".join(words[:n]))
            if count is not None:
                return indexes[min(count, len(indexes)) - 1] + 1
        if len(argv) > 1 and _SUBCOMMAND.fullmatch(argv[1]):
            return 2
        return 1

    @cached_property
    def longest(self) -> int:
        """The most words any prefix of the table has."""
        return max((prefix.count(" ") + 1 for prefix in self.arity), default=1)

    @cached_property
    def tools(self) -> frozenset[str]:
        return frozenset(prefix.split(" ", 1)[0] for prefix in self.arity)

    def name(self, argv: list[str]) -> str:
        """The command's name: its tool word as typed, then the name's other words (no options)."""
        end = self.name_end(argv)
        return " ".join(argv[i] for i in self.positional(argv[:end]))


_table: ArityTable | None = None


def load_table() -> ArityTable:
    """The table from arity/*.toml, compiled once per change of those files (cache.py), read once per process."""
    global _table
    if _table is None:
        _table = _load_table()
    return _table


def _load_table() -> ArityTable:
    from gatekeep.cache import cached_files
    from gatekeep.paths import get_paths

    directory = resources.data_dir("arity")
    names = sorted(name for name in os.listdir(directory) if name.endswith(".toml"))  # glob would compile a regex

    def build(texts: list[str]) -> tuple:
        return _compile(tuple(zip(names, texts, strict=True)))

    files = [os.path.join(directory, name) for name in names]
    return ArityTable(*cached_files(get_paths().cache_dir, "arity-2", files, build))


def _compile(sources: tuple[tuple[str, str], ...]) -> tuple[dict, dict, dict]:
    import tomllib

    arity: dict[str, int] = {}
    value_options: dict[str, frozenset[str]] = {}
    flag_aliases: dict[str, dict[str, str]] = {}
    for _, text in sources:
        data = tomllib.loads(text)
        for prefix, entry in data.get("arity", {}).items():
            arity[prefix] = entry["arity"]
        for tool, options in data.get("value-options", {}).items():
            value_options[tool] = frozenset(options)
        flag_aliases.update(data.get("flags", {}))
    return arity, value_options, flag_aliases
