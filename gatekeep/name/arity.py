"""The arity table: which words form a command's name (`npm run build`, `git commit`).

The table is data, in the top-level `arity/*.toml` files (see resources.py):
- `[arity]` maps a command prefix to how many words its names have (`aws` = 3:
  `aws ec2 describe-instances`), with an example and the name it must get;
- `[subcommands]` maps a prefix to every word that may follow it in a name
  (`bun = ["add", "install", ...]`); a word it does not list is a value, and
  `[]` says the tool has no subcommands (`pgrep = []`);
- `[runners]` `names = [...]`: names whose operands are a command they run
  (`npx`, `poetry run`): no word after them joins the name, and an "always"
  answer then allows the exact line only;
- `[value-options]` lists, per tool or prefix, the options whose value is the
  next word (`git -C dir`, `kubectl -n ns`, `"docker run" = ["-e", ...]`);
- `[flags.NAME]` (in flags.toml) the spellings of one option, for
  flag-equivalent deny rules (see match.py).
Options and values never become words of a name (ArityTable says how a name is walked).
"""

from __future__ import annotations

import marshal
import os

from gatekeep.core import resources

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
    """The merged arity/*.toml data, and the naming rules that read it.

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

    def __init__(self, tools: dict[str, bytes | tuple], flag_aliases: dict[str, dict[str, str]]) -> None:
        # per tool, packed (marshal bytes) until a line first names it: a check unpacks the one
        # or two tools it meets, not the 2,000 the data knows (cf. knowledge.Knowledge)
        self._tools = tools
        self.flag_aliases = flag_aliases  # command name -> option spelling -> canonical spelling
        self._specs: dict = {}

    def _data(self, tool: str) -> tuple[dict, dict, dict, frozenset]:
        """The tool's (arity, value options, subcommand lists, runners), each keyed by prefix."""
        data = self._tools.get(tool, _NOTHING)
        if type(data) is bytes:
            data = self._tools[tool] = marshal.loads(data)
        return data

    def runner_inner(self, argv: list[str]) -> list[str] | None:
        """The command a runner runs (`npx -y touch x`, `pnpm dlx cowsay hi`, `npm exec -- rm x`:
        `[runners]` names), or None when argv is no runner or names no command."""
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
        known = tool in self._tools
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

    @property
    def tools(self):
        """The tools the data knows: every first word of `[arity]`, `[subcommands]`..."""
        return self._tools.keys()


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


_table: ArityTable | None = None


def load_table() -> ArityTable:
    """The table from arity/*.toml, compiled once per change of those files (cache.py), read once per process."""
    global _table
    if _table is None:
        _table = _load_table()
    return _table


def _load_table() -> ArityTable:
    from gatekeep.core.cache import cached_files
    from gatekeep.core.paths import get_paths

    directory = resources.data_dir("arity")
    names = sorted(name for name in os.listdir(directory) if name.endswith(".toml"))  # glob would compile a regex

    def build(texts: list[str]) -> tuple:
        return _compile(tuple(zip(names, texts, strict=True)))

    files = [os.path.join(directory, name) for name in names]
    return ArityTable(*cached_files(get_paths().cache_dir, "arity-5", files, build))


def _compile(sources: tuple[tuple[str, str], ...]) -> tuple[dict[str, bytes], dict]:
    """Per tool, its packed (arity, value options, subcommand lists, runners); and flag aliases."""
    import tomllib

    tools: dict[str, tuple[dict, dict, dict, set]] = {}
    flag_aliases: dict[str, dict[str, str]] = {}

    def of(prefix: str) -> tuple[dict, dict, dict, set]:
        return tools.setdefault(prefix.split(" ", 1)[0], ({}, {}, {}, set()))

    for _, text in sources:
        data = tomllib.loads(text)
        for prefix, entry in data.get("arity", {}).items():
            of(prefix)[0][prefix] = entry["arity"]
        for prefix, options in data.get("value-options", {}).items():
            of(prefix)[1][prefix] = frozenset(options)
        for prefix, words in data.get("subcommands", {}).items():
            of(prefix)[2][prefix] = frozenset(words)
        for name in data.get("runners", {}).get("names", ()):
            of(name)[3].add(name)
        flag_aliases.update(data.get("flags", {}))
    packed = {tool: marshal.dumps((a, v, s, frozenset(r))) for tool, (a, v, s, r) in tools.items()}
    return packed, flag_aliases
