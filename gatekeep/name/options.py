"""Reading a command's options the way the tool itself reads them, driven by its data (tools/*.toml).

One parser for every tool: short options and their clusters (`-xvf FILE`,
`-fFILE`), attached and separate values (`--file=F`, `--file F`), optional
values that only ever attach (`-i.bak`, `--in-place=.bak`), single-dash long
options a tool declares (`gdb -ex`, `zip -TT`), `--` ending the options, and
GNU abbreviations of long options (`--ev` is `--eval`).

An abbreviation is read the safe way: when a prefix could stand for an option
that runs code, or else for one that writes a file, it is read as that option
even if the tool would call it ambiguous, or does not take abbreviations at
all; otherwise a unique prefix of a known option is that option, and anything
else stays as written (an option the data does not know: knowledge.py).
Options gatekeep does not know take no value.
"""

from __future__ import annotations

from gatekeep.core.records import record


class Spec(
    record(
        "Spec",
        "values optional long single_dash code ends program_operand commands writes",
        defaults=(
            frozenset(), frozenset(), frozenset(), frozenset(), frozenset(), frozenset(), False, frozenset(), frozenset()
        ),
    )
):
    """How a tool's options are read.

    values: options followed by a value (separate or attached); optional: options whose
    value is only ever attached; long: every `--long` option the data names; single_dash:
    `-word` options read whole, not as a cluster; code: options that run code (preferred
    when an abbreviation is ambiguous); ends: options after which the rest is the
    program's own argv (`python -c CODE ARGS`); program_operand: the first operand is a
    program, and what follows it is that program's argv; commands: options followed by a
    command of their own, up to a `;` or `+` (find's `-exec CMD {} ;`), their value; writes:
    options whose value is a file written (preferred after `code` for an ambiguous abbreviation).
    """

    __slots__ = ()


def spec_for(
    values: frozenset[str],
    named: frozenset[str] = frozenset(),
    optional: frozenset[str] = frozenset(),
    code: frozenset[str] = frozenset(),
    ends: frozenset[str] = frozenset(),
    program_operand: bool = False,
    commands: frozenset[str] = frozenset(),
    writes: frozenset[str] = frozenset(),
) -> Spec:
    """A Spec whose `long` and `single_dash` options are those among `values` and `named` (every
    other option the data names): `--long` ones, and single-dash ones longer than a letter."""
    every = values | named
    long = frozenset(o for o in every if o.startswith("--"))
    single_dash = frozenset(o for o in every if o.startswith("-") and not o.startswith("--") and len(o) > 2)
    single_dash |= frozenset(o for o in commands if not o.startswith("--") and len(o) > 2)
    return Spec(values, optional, long, single_dash, code, ends, program_operand, commands, writes)


class Parsed(record("Parsed", "options operands first_operand")):
    """options: (option as canonically spelled, value or None) in order; operands: the other
    words (after `--` too); first_operand: the index in the arguments of the first operand, or -1."""

    __slots__ = ()

    def values(self, *names: str) -> list[str]:
        return [value for option, value in self.options if option in names and value is not None]

    def has(self, *names: str) -> bool:
        return any(option in names for option, _ in self.options)


def parse(args: list[str], spec: Spec) -> Parsed:
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    first = -1
    i = 0
    while i < len(args):
        word = args[i]
        if word[:1] != "-" or word == "-":  # an operand: the most words, so tested first
            first = i if first < 0 else first
            operands.append(word)
            if spec.program_operand:
                operands += args[i + 1 :]  # the program's own arguments, whatever they look like
                break
            i += 1
            continue
        if word == "--":
            first = i + 1 if first < 0 and i + 1 < len(args) else first
            operands += args[i + 1 :]
            break
        i = _option(args, i, spec, options)
        if options and options[-1][0] in spec.ends:
            operands += args[i + 1 :]
            break
        i += 1
    return Parsed(options, operands, first)


def _option(args: list[str], i: int, spec: Spec, options: list) -> int:
    """The option word args[i] (and its value, if it takes the next word) added to `options`;
    returns the index of the last word read."""
    word = args[i]
    name, equals, value = word.partition("=")
    if word.startswith("--") and len(word) > 2:
        return _whole(long_option(name, spec), equals, value, args, i, spec, options)
    if name in spec.single_dash:
        return _whole(name, equals, value, args, i, spec, options)
    return _cluster(args, i, spec, options)


def _whole(name: str, equals: str, value: str, args: list[str], i: int, spec: Spec, options: list) -> int:
    """An option read as one word (`--file=F`, `--file F`, `-ex CMD`); returns the index of the last word read."""
    if name in spec.commands:  # `-exec CMD ARGS ;`: the command is the option's value
        end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
        options.append((name, " ".join(args[i + 1 : end])))
        return end
    if equals:
        options.append((name, value))
    elif name in spec.values and i + 1 < len(args):
        i += 1
        options.append((name, args[i]))
    else:
        options.append((name, None))
    return i


def _cluster(args: list[str], i: int, spec: Spec, options: list) -> int:
    """`-abc`, `-fFILE`, `-f FILE`: each letter an option until one takes a value. Returns the
    index of the last word read."""
    word = args[i]
    for j in range(1, len(word)):
        name = "-" + word[j]
        rest = word[j + 1 :]
        if name in spec.values:
            if rest:
                options.append((name, rest))
            elif i + 1 < len(args):
                i += 1
                options.append((name, args[i]))
            else:
                options.append((name, None))
            return i
        if name in spec.optional:
            options.append((name, rest or None))
            return i
        options.append((name, None))
        if name in spec.ends:
            return i
    return i


def long_option(name: str, spec: Spec) -> str:
    """`--ev` as `--eval`: the option a GNU abbreviation stands for (see the module docstring)."""
    if name in spec.long:
        return name
    for preferred in (spec.code, spec.writes):  # the safe reading of an ambiguous prefix
        found = sorted(option for option in preferred if option.startswith(name) and option.startswith("--"))
        if found:
            return found[0]
    known = [option for option in spec.long if option.startswith(name)]
    return known[0] if len(known) == 1 else name


def next_operand(args: list[str], start: int, spec: Spec) -> tuple[int, bool]:
    """Where the first operand at or after `start` is (-1 if there is none), read as parse() reads
    options, and whether it comes right after an option that took no value but looks as if it
    could (`--legend no`, `-o out`: an option the data does not know; see may_take_value)."""
    options: list[tuple[str, str | None]] = []
    i = start
    after = False
    while i < len(args):
        word = args[i]
        if word[:1] != "-" or word == "-":
            return i, after
        if word == "--":
            return (i + 1 if i + 1 < len(args) else -1), False
        last = _option(args, i, spec, options)
        if options and options[-1][0] in spec.ends:
            return -1, False  # the rest is another program's argv
        after = options[-1][1] is None and may_take_value(word)
        i = last + 1
    return -1, False


# Long options that never take a value, whatever the tool: the word after one is no value of it.
_FLAG_WORDS = frozenset(
    "all force quiet verbose debug help version yes dry-run json recursive global save-dev interactive "
    "watch silent no-color color list update upgrade".split()
)


def may_take_value(option: str) -> bool:
    """Whether an option nobody described may take the next word as its value: one letter
    (`-o out`) or a long option (`--legend no`), but not a cluster of letters (`-la`), a
    `--no-…` switch or a long option that is a flag everywhere (`--verbose`, `--force`)."""
    if option.startswith("--"):
        name = option[2:]
        return "=" not in name and not name.startswith("no-") and name not in _FLAG_WORDS
    return len(option) == 2
