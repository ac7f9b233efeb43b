"""Naming: which words form a command's name (`npm run build`, `git commit`).

The data is the tools' tables in `tools/*.toml` (knowledge.py reads the same tables for
effects): one table per tool, one nested table per subcommand, and these keys name them:
- `arity = N`: names starting with this tool or subcommand have N words (`[aws]` arity = 3:
  `aws ec2 describe-instances`); `name-examples` lines (`LINE -> NAME`) are tests;
- `subcommands = [...]`: every word that may follow it in a name (`[bun]`: run, install...);
  a word it does not list is a value, and `[]` says it has none (`[pgrep]`);
- `runner = true`: its operands are a command it runs (`[npx]`, `[poetry.run]`): no word
  after it joins the name, and an "always" answer then allows the exact line only;
- `value-options`: the options whose value is the next word (`git -C dir`), as the judge
  reads them; naming takes those of the tool and of every subcommand on the way;
- `flag-aliases`: the spellings of one option, for flag-equivalent deny rules (match.py).
A tool's aliases (`podman` for docker) and versioned names (`python3.12`) share its table.
Options and values never become words of a name (ArityTable says how a name is walked).
knowledge.load_table builds the table over the loaded data: this module reads none itself, so
that the judge of a form may ask for its name (knowledge._help_only) without an import circle.
"""

from __future__ import annotations

_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UNKNOWN_TOOL_CHARS = _LOWER | frozenset("0123456789-")
_NAME_CHARS = _UNKNOWN_TOOL_CHARS | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ_:,")
# a closed list's word after an option that may take a value is skipped as that value at most
# this often (`resolvectl --legend no --type MX query`); then the name ends
_MAX_SKIPPED = 3
_MAX_NAME_WORDS = 8


def looks_like_subcommand(word: str) -> bool:
    """For a tool the data does not know: lower-case letters, digits and dashes, starting with a
    letter (`deploy`, `get-pods`). Paths, files (a dot), URLs, numbers, e-mail addresses,
    host:port pairs, assignments and upper-case words (`INFO`, `PATCH`) are values."""
    return word[:1] in _LOWER and set(word) <= _UNKNOWN_TOOL_CHARS


def looks_like_name_word(word: str) -> bool:
    """For a place the data opens to any name word (`npm run SCRIPT`, `kubectl get TYPE`): as
    looks_like_subcommand, and also camelCase (`assembleRelease`), `_`, and `:`- or `,`-joined
    parts that each start with a letter (`exec:java`, `deploy,svc`, gradle's `:app:build`;
    `localhost:8080` is a value)."""
    if word[:1] not in _LOWER and not (word[:1] == ":" and word[1:2] in _LOWER) or not set(word) <= _NAME_CHARS:
        return False
    parts = [part for chunk in word.split(",") for part in chunk.split(":")]
    return all(part[:1].isalpha() for part in parts[word.startswith(":") :])


class ArityTable:
    """The naming data of tools/*.toml, and the naming rules that read it.

    A name is walked word by word from the tool. At each prefix (`git`, `git stash`) the next
    operand joins the name when:
    - the prefix lists its subcommands (`[subcommands]`, or other entries that extend it) and
      the word is one of them; with a `[subcommands]` list no other word ever joins;
    - the prefix has no such list, its arity (that of the longest prefix in `[arity]`) asks for
      more words, and the word looks like a name word (looks_like_name_word: a value does not);
    - the data does not know the tool at all, the word comes right after the tool, nothing
      else has joined, and it looks like a subcommand (looks_like_subcommand).
    Options are read as options.py reads them, with the value options the data gives for the
    tool and its subcommands. Under a closed list, a word that is not listed but follows an
    option that may take a value is skipped as that value (at most _MAX_SKIPPED times); so is a
    `+word` right after the tool (`cargo +nightly build`: a toolchain, `chmod +x f`: a mode).
    """

    def __init__(self, knowledge) -> None:
        self._knowledge = knowledge  # knowledge.Knowledge: the tables, unpacked as lines name them
        self._tools: dict[str, tuple[dict, dict, dict, frozenset]] = {}  # typed tool word -> _naming
        self._specs: dict = {}

    def _data(self, tool: str) -> tuple[dict, dict, dict, frozenset]:
        """The tool's (arity, value options, subcommand lists, runners), each keyed by prefix."""
        data = self._tools.get(tool)
        if data is None:
            found = self._knowledge.table(tool)
            if found is None:
                return _NOTHING  # not kept: a server meets endless words no tool is called
            data = self._tools[tool] = _naming(tool, found[1])
        return data

    def known(self, tool: str) -> bool:
        """Whether the data has a table for the tool (its name, an alias or a versioned name)."""
        return self._knowledge.table(tool) is not None

    def flag_aliases(self, name: str) -> dict | None:
        """The spellings of the options of the command named `name` (`rm`, `git push`): a
        spelling -> its canonical spelling (or spellings: `-D` is `-d -f`), or None."""
        words = name.split(" ")
        found = self._knowledge.table(words[0])
        table = found[1] if found else None
        for word in words[1:]:
            table = table["sub"].get(word) if table else None
        return table.get("flag-aliases") if table else None

    def runner_inner(self, argv: list[str]) -> list[str] | None:
        """The command a runner runs (`npx -y touch x`, `pnpm dlx cowsay hi`, `npm exec -- rm x`:
        `runner` tables), or None when argv is no runner or names no command."""
        from gatekeep.name.options import next_operand

        if not argv:
            return None
        tool = argv[0].rsplit("/", 1)[-1]
        runners = self._data(tool)[3]
        if not runners:
            return None
        prefix, i = tool, 1
        if prefix not in runners:
            j, _ = next_operand(argv, 1, self._spec(tool))
            if j < 0 or f"{tool} {argv[j]}" not in runners:
                return None
            prefix, i = f"{tool} {argv[j]}", j + 1
        j, _ = next_operand(argv, i, self._spec(prefix))
        return argv[j:] if j >= 0 else None

    def walk(self, argv: list[str]) -> tuple[list[int], bool]:
        """The indexes in argv of the name's words (the tool's first), and whether the name is short: a place the data
        opens to a name word (`npm run SCRIPT`) holds a value there (`npm run 'x | sh'`,
        `bun run src/index.ts`), so `tool sub *` would stand for every name word at once."""
        if not argv:
            return [], False
        from gatekeep.name.options import next_operand

        tool = argv[0].rsplit("/", 1)[-1]
        prefix, found, i, skipped = tool, [0], 1, 0
        known = self.known(tool)
        arity, _, subcommands, runners = self._data(tool)
        while i < len(argv) and len(found) < _MAX_NAME_WORDS and prefix not in runners:  # a runner's are values
            j, after_option = next_operand(argv, i, self._spec(prefix))
            if j < 0:
                break
            word = argv[j]
            if word[:1] == "+" and prefix == tool and skipped < _MAX_SKIPPED:  # `cargo +nightly build`: a toolchain
                skipped += 1
                i = j + 1
                continue
            longer = f"{prefix} {word}"
            closed = subcommands.get(prefix)
            if longer in arity or longer in subcommands or (closed is not None and word in closed):
                pass
            elif closed is not None:
                if after_option and skipped < _MAX_SKIPPED:  # probably that option's value
                    skipped += 1
                    i = j + 1
                    continue
                break
            elif not known:
                if j == 1 and looks_like_subcommand(word):
                    found.append(j)
                break  # one word at most: nothing says the tool nests deeper
            elif len(found) >= _count(arity, prefix):
                break
            elif not looks_like_name_word(word):
                return found, True
            found.append(j)
            prefix, i = longer, j + 1
        return found, False

    def runs_command(self, argv: list[str], found: list[int]) -> bool:
        """Whether the name (`found`, from walk) is that of a runner: `poetry run pytest` runs
        pytest, so `poetry run *` would allow any command at all."""
        tool = argv[0].rsplit("/", 1)[-1]
        return " ".join([tool, *(argv[i] for i in found[1:])]) in self._data(tool)[3]

    def name(self, argv: list[str]) -> str:
        """The command's name: its tool word as typed, then the name's other words (no options, no values)."""
        return " ".join(argv[i] for i in self.walk(argv)[0])

    def _spec(self, prefix: str):
        """How options are read after `prefix`: the value options of the tool and of each
        subcommand on the way (`[value-options]` keys may be prefixes: `"docker run"`)."""
        spec = self._specs.get(prefix)
        if spec is None:
            from gatekeep.name.options import spec_for

            words = prefix.split(" ")
            value_options = self._data(words[0])[1]
            prefixes = (" ".join(words[:n]) for n in range(1, len(words) + 1))
            spec = self._specs[prefix] = spec_for(frozenset().union(*(value_options.get(p, ()) for p in prefixes)))
        return spec

_NOTHING: tuple[dict, dict, dict, frozenset] = ({}, {}, {}, frozenset())


def _count(arity: dict[str, int], prefix: str) -> int:
    """How many words a name starting with `prefix` has: the arity of its longest prefix in
    the table, or its own length when only a subcommand list names it."""
    words = prefix.split(" ")
    for n in range(len(words), 0, -1):
        count = arity.get(" ".join(words[:n]))
        if count is not None:
            return count
    return len(words)


def _naming(tool: str, table: dict) -> tuple[dict, dict, dict, frozenset]:
    """What naming reads from a tool's table and its subcommands', keyed by prefix as typed
    (`podman compose` from docker's table): arity, value options, subcommand lists, runners."""
    arity: dict[str, int] = {}
    values: dict[str, frozenset] = {}
    lists: dict[str, frozenset] = {}
    runners: set[str] = set()
    todo = [(tool, table)]
    while todo:
        prefix, table = todo.pop()
        if "arity" in table:
            arity[prefix] = table["arity"]
        if "value-options" in table:
            values[prefix] = table["value-options"]
        if "subcommands" in table:
            lists[prefix] = table["subcommands"]
        if table.get("runner"):
            runners.add(prefix)
        todo += [(f"{prefix} {word}", sub) for word, sub in table["sub"].items()]
    return arity, values, lists, frozenset(runners)
