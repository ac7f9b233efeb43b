"""What gatekeep knows about tools, read from data: which of their forms run code they are given.

The data is the top-level `tools/*.toml` (shipped in the wheel beside `arity/`),
one table per tool, reviewed like code; tests/test_knowledge.py checks every
entry. A table says how the tool's options are read (see options.py) and
which forms run code:

    [make]
    value-options = ["-f", "--file", "-E", "--eval", ...]  # options followed by a value
    optional-value-options = ["-O", "--output-sync"]        # a value only when attached
    code-options = ["-E", "--eval"]        # these run code given on the command line
    program-options = ["-f", "--file"]     # these name a program file: `-`, /dev/stdin,
                                           # /dev/fd/N or a <( ) there is code from a pipe
    checks = ["make-assignments"]          # tool-specific readers, below (CHECKS)

    [python]
    aliases = ["python3", "pypy3"]         # other names (versioned ones, python3.12, too)
    code-options = ["-c"]
    ends-options = ["-c", "-m"]            # what follows is the program's argv
    program-operand = true                 # the first operand is the program file
    stdin-program = true                   # no program, or `-`: it reads its program from input
    interactive-options = ["-i"]           # reads more program from input after the file
    code-modules = ["code", "timeit"]      # `-m MODULE` that runs code it is given

    [git]
    config-options = ["-c", "--config-env"]  # KEY=VALUE settings...
    code-keys = ["alias.*", "core.pager"]    # ...whose keys name a command to run
    [git.rebase]                             # a subcommand: read after the tool's options
    code-options = ["-x", "--exec"]
    [git.bisect.run]
    runs = "runs the command it is given at each step"   # this form always runs code

Every table lists `examples`, lines that start `runs: ` or `safe: `;
tests/test_knowledge.py checks each, so adding a tool is a data change with
its own test.

One table serves every place a broad rule could stretch over such a form:
an allow rule (`make *`, `git *`, `default: allow`) and the built-in
read-only set alike (decide.py asks unless a rule names the form itself).
"""

from __future__ import annotations

import os
import posixpath

from gatekeep import resources
from gatekeep.lazyre import lazy
from gatekeep.options import Parsed, Spec, parse
from gatekeep.shellwords import INTEGER_VARIABLES

# The keys a tool's table may have; any other key holding a table is a subcommand.
LIST_KEYS = (
    "aliases",
    "value-options",
    "optional-value-options",
    "flags",
    "code-options",
    "ends-options",
    "program-options",
    "interactive-options",
    "code-modules",
    "config-options",
    "code-keys",
    "checks",
    "name-options",
    "number-options",
    "maybe-name-options",
)
BOOL_KEYS = ("program-operand", "stdin-program", "name-operands")
EXAMPLES = "examples"  # checked by the tests, not compiled
TEXT_KEYS = ("runs",)

_VERSIONED = lazy(r"(?P<family>[A-Za-z]+?)[0-9][0-9.]*")  # python3.12, ruby3.2, perl5.36
STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/dev/tty"})
_FD_PATH = lazy(r"/(dev|proc/[^/]+)/fd/[0-9]+")


class Knowledge:
    """The compiled tools/*.toml: tables by tool name, with aliases resolved."""

    def __init__(self, tables: dict, aliases: dict) -> None:
        self.tables = tables
        self.aliases = aliases

    def table(self, word: str) -> tuple[str, dict] | None:
        """The tool's name and table for a command word (`/usr/bin/python3.12` -> python), or None."""
        tool = word.rsplit("/", 1)[-1]
        name = self.aliases.get(tool, tool)
        if name in self.tables:
            return name, self.tables[name]
        versioned = _VERSIONED.fullmatch(tool) if tool[-1:].isdigit() else None
        if versioned:
            family = self.aliases.get(versioned["family"], versioned["family"])
            if family in self.tables:
                return family, self.tables[family]
        return None


_knowledge: Knowledge | None = None


def load_knowledge() -> Knowledge:
    """tools/*.toml, compiled once per change of those files (cache.py), read once per process."""
    global _knowledge
    if _knowledge is None:
        from gatekeep.cache import cached
        from gatekeep.paths import get_paths

        directory = resources.data_dir("tools")
        names = sorted(name for name in os.listdir(directory) if name.endswith(".toml"))
        sources = tuple((name, _read(os.path.join(directory, name))) for name in names)
        _knowledge = Knowledge(*cached(get_paths().cache_dir, "tools-1", sources, lambda: compile_tools(sources)))
    return _knowledge


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def compile_tools(sources) -> tuple[dict, dict]:
    """The tables of every file, checked: an unknown key, a wrong type or a tool defined twice is
    a ValueError that names the file and the tool (tests load the shipped data this way)."""
    import tomllib

    tables: dict = {}
    aliases: dict = {}
    for file_name, text in sources:
        for tool, table in tomllib.loads(text).items():
            where = f"{file_name}: [{tool}]"
            if tool in tables:
                raise ValueError(f"{where} is defined twice")
            tables[tool] = _compile_table(table, where)
            for alias in table.get("aliases", ()):
                if alias in aliases or alias in tables:
                    raise ValueError(f"{where}: the alias {alias!r} names another tool too")
                aliases[alias] = tool
    clash = sorted(set(aliases) & set(tables))
    if clash:
        raise ValueError(f"the alias {clash[0]!r} names another tool too")
    return tables, aliases


def _compile_table(table: dict, where: str) -> dict:
    compiled: dict = {"sub": {}}
    for key, value in table.items():
        if key == EXAMPLES:
            if not isinstance(value, list) or not all(isinstance(v, str) and v.startswith(("runs: ", "safe: ")) for v in value):
                raise ValueError(f"{where}: examples must be lines that start with 'runs: ' or 'safe: '")
        elif isinstance(value, dict):
            compiled["sub"][key] = _compile_table(value, f"{where}.{key}")
        elif key in LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ValueError(f"{where}: {key} must be a list of non-empty strings")
            compiled[key] = tuple(value) if key in ("checks", "code-keys", "aliases") else frozenset(value)
        elif key in BOOL_KEYS:
            if type(value) is not bool:
                raise ValueError(f"{where}: {key} must be true or false")
            compiled[key] = value
        elif key in TEXT_KEYS:
            if not isinstance(value, str) or not value:
                raise ValueError(f"{where}: {key} must be a sentence")
            compiled[key] = value
        else:
            raise ValueError(f"{where}: unknown key {key!r}")
    unknown = set(compiled.get("checks", ())) - set(CHECKS)
    if unknown:
        raise ValueError(f"{where}: no check named {', '.join(sorted(unknown))}")
    return compiled


def spec_of(table: dict) -> Spec:
    values = table.get("value-options", frozenset())
    optional = table.get("optional-value-options", frozenset())
    code = table.get("code-options", frozenset())
    named = (
        values | optional | code | table.get("flags", frozenset()) | table.get("ends-options", frozenset())
    ) | table.get("program-options", frozenset())
    named |= table.get("interactive-options", frozenset()) | table.get("config-options", frozenset())
    long = frozenset(o for o in named if o.startswith("--"))
    single_dash = frozenset(o for o in named if o.startswith("-") and not o.startswith("--") and len(o) > 2)
    ends = table.get("ends-options", frozenset())
    return Spec(values, optional, long, single_dash, code, ends, table.get("program-operand", False))


def runs_code(argv: list[str], fed: bool) -> str | None:
    """Why `argv` runs code it was given, or None: a code-running option (`make --eval`,
    `git rebase -x`), a program read from a pipe or standard input (`make -f -`,
    `python3 /dev/stdin`, `awk -f <(…)`, `python3` fed by `<<<`), or a form that always
    runs a command (`git bisect run`). `fed`: the command's input is a pipe, here-string or heredoc."""
    if not argv:
        return None
    found = load_knowledge().table(argv[0])
    if found is None:
        return None
    name, table = found
    return _judge(name, table, table, argv[1:], fed, argv[0].rsplit("/", 1)[-1])


def _judge(name: str, table: dict, root: dict, args: list[str], fed: bool, shown: str) -> str | None:
    if "runs" in table:
        return f"{shown} {table['runs']}"
    parsed = parse(args, spec_of(table))
    why = _judge_parsed(table, root, parsed, fed, shown, args)
    if why:
        return why
    if parsed.first_operand >= 0 and table["sub"]:
        sub = table["sub"].get(args[parsed.first_operand])
        if sub is not None:
            return _judge(name, sub, root, args[parsed.first_operand + 1 :], fed, f"{shown} {args[parsed.first_operand]}")
    return None


def _judge_parsed(table: dict, root: dict, parsed: Parsed, fed: bool, shown: str, args: list[str]) -> str | None:
    optional = table.get("optional-value-options", frozenset())
    for option, value in parsed.options:
        if option in table.get("code-options", ()) and (value is not None or option not in optional):
            return f"{shown} runs code given with {option}"
        if option in table.get("program-options", ()) and value is not None and from_a_pipe(value):
            return f"{shown} reads its program from standard input or a pipe ({option} {value})"
    modules = table.get("code-modules", ())
    for module in parsed.values("-m"):
        if module in modules:
            return f"{shown} -m {module} runs code it is given"
    if table.get("program-operand"):
        program = parsed.operands[:1]
        reads_input = not program and not parsed.has(*table.get("ends-options", ())) or program == ["-"]
        interactive = parsed.has(*table.get("interactive-options", ()))
        if fed and table.get("stdin-program") and (reads_input or interactive):
            return f"{shown} runs a program read from its input (a pipe, here-string or heredoc)"
        if program and from_a_pipe(program[0]):
            return f"{shown} runs a program produced by another command or read from standard input ({program[0]})"
    keys = root.get("code-keys", ())
    for option in table.get("config-options", ()):
        for setting in parsed.values(option):
            key = setting.replace("=", " ", 1).split(None, 1)[0] if setting.strip() else ""
            if _code_key(key, keys):
                return f"{shown} runs what {option} {key} names"
    for check in table.get("checks", ()):
        why = CHECKS[check](parsed, shown, root, args)
        if why:
            return why
    return None


def from_a_pipe(value: str) -> bool:
    """A program file that is really standard input, a pipe or a process substitution."""
    if value.startswith(("<(", ">(", "=(")):
        return True
    path = posixpath.normpath(value) if "/" in value else value
    return path in STDIN_FILES or bool(_FD_PATH.fullmatch(path))


def git_code_key(key: str) -> bool:
    """Whether git runs what the config key `key` names (`alias.x`, `core.pager`): tools/vcs.toml."""
    found = load_knowledge().table("git")
    return found is not None and _code_key(key, found[1].get("code-keys", ()))


def _code_key(key: str, patterns) -> bool:
    import fnmatch  # only when a config option is given: fnmatch imports re

    key = key.lower()
    return any(fnmatch.fnmatchcase(key, pattern.lower()) for pattern in patterns)


# ---------------------------------------------------------------------------
# Checks: readers for what a table cannot say, named by the data's `checks`.
# Each gets the parsed arguments, the command as shown, the tool's root table and the raw arguments.
# ---------------------------------------------------------------------------

# sed's `e` command, or the `e` flag of an `s` command
_SED_EXECUTE = lazy(r"(?:^|[;}\n]|\d|\$)\s*e(?:\s|$)|(?:^|[;\s])s(.).*?\1.*?\1[gpiIm0-9w]*e")
_AWK_CODE = lazy(r"system\s*\(|\|&?\s*getline|\|&|\|\s*\"|print[^;]*[>|]")


def _sed_script(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    scripts = parsed.values("-e", "--expression")
    if not scripts and not parsed.has("-f", "--file"):
        scripts = parsed.operands[:1]
    if any(_SED_EXECUTE.search(script) for script in scripts):
        return f"{shown} runs a shell command from its script (e)"
    return None


def _awk_program(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    programs = parsed.values("-e", "--source")
    if not programs and not parsed.has("-f", "--file", "-E", "--exec"):
        programs = parsed.operands[:1]
    if any(_AWK_CODE.search(program) for program in programs):
        return f"{shown} runs commands from its program"
    return None


def _dc_program(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    if any("!" in program for program in parsed.values("-e", "--expression")):
        return f"{shown} runs a shell command from its program (!)"
    return None


def _less_commands(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`less +!cmd`, `less '+|cmd'`: a start-up command that runs a shell command."""
    if any(w.startswith("+") and ("!" in w or "|" in w) for w in parsed.operands):
        return f"{shown} runs a shell command from a + start-up command"
    return None


def _vim_commands(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    commands = parsed.values("-c", "--cmd") + [w[1:] for w in parsed.operands if w.startswith("+")]
    if any("!" in c or "system(" in c for c in commands):
        return f"{shown} runs a shell command given with -c or +"
    return None


def _tar_old_style(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`tar cIf 'cmd' x.tar`: tar's first word without a dash is a cluster of option letters."""
    first = parsed.operands[:1]
    if first and first[0].isalpha() and set(first[0]) & {"I", "F"}:
        return f"{shown} runs the program its old-style option I or F names"
    return None


# make variables whose value make runs as a command or shell; and `VAR != cmd`, `$(shell …)`
_MAKE_RUNNERS = frozenset({"SHELL", ".SHELLFLAGS", "MAKESHELL", "MAKEFLAGS", "MFLAGS", "MAKEFILES"})
_MAKE_ASSIGNMENT = lazy(r"(?s)(?P<name>[^\s=:!?+]+)\s*(?P<op>:::=|::?=|\?=|\+=|!=|=)(?P<value>.*)")


def _make_assignments(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`make 'X:=$(shell cmd)'`, `make 'X!=cmd'`, `make SHELL=…`: a command-line variable that runs a command."""
    for word in parsed.operands:
        m = _MAKE_ASSIGNMENT.fullmatch(word) if "=" in word else None
        if m and (m["op"] == "!=" or m["name"] in _MAKE_RUNNERS or "$" in m["value"] or "`" in m["value"]):
            return f"{shown} sets the variable {m['name']}, which runs a command"
    return None


def _output_pipe(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`strace -o '|cmd'`: output piped to a command."""
    if any(v.startswith(("|", "!")) for v in parsed.values("-o", "--output")):
        return f"{shown} pipes its output to a command (-o |…)"
    return None


def _crontab_install(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    if parsed.operands or parsed.has("-e"):
        return f"{shown} installs jobs that cron will run"
    return None


_CONFIG_READS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l",
                 "--list", "--unset", "--unset-all", "--remove-section", "--rename-section", "-e", "--edit")


def _config_set(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`git config alias.x '!cmd'`, `git config set core.pager cmd`: a key that runs a command
    (`git config --get core.pager` and `git config get core.pager` only read it)."""
    operands = parsed.operands
    if operands[:1] == ["set"]:
        operands = operands[1:]
    elif operands[:1] in (["get"], ["list"], ["unset"], ["edit"], ["rename-section"], ["remove-section"]):
        return None
    if len(operands) < 2 or any(option.startswith(_CONFIG_READS) for option, _ in parsed.options):
        return None
    if _code_key(operands[0], root.get("code-keys", ())):
        return f"{shown} sets {operands[0]}, which runs a command"
    return None


def _shell_without_hook(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """An interactive shell that skips its start-up files, where gatekeep's hook lives."""
    words = list(parsed.operands)
    late_options = []
    while words and words[0][:1] in ("+", "-") and words[0] != "-":  # `+x`, `+o NAME`, options after them
        late_options.append(words[0])
        words = words[2:] if words[0] in ("+o", "+O", "-o", "-O", "--rcfile", "--init-file") else words[1:]
    if words or parsed.has("-c") or "-c" in late_options:
        return None  # runs a script or a file, not an interactive shell
    tool = shown.split(" ", 1)[0]
    if tool not in ("bash", "zsh"):
        return f"{shown} starts an interactive shell gatekeep has no hook for"
    skips = {"--norc", "--noprofile", "--posix", "-f", "--no-rcs", "--no-globalrcs", "--rcfile", "--init-file", "-r"}
    if parsed.has(*skips) or skips & set(late_options):
        return f"{shown} starts an interactive shell without its start-up files, so without gatekeep's hook"
    return None


def _root_shell(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`sudo -s`, `sudo -i`, `doas -s`: a shell as root, whose start-up files do not load gatekeep's hook."""
    if parsed.has("-s", "-i", "--shell", "--login"):
        return f"{shown} starts a shell as root or another user, without gatekeep's hook"
    return None


def _su_shell(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    if parsed.has("-c", "--command"):
        return None
    return f"{shown} starts a shell as another user, whose start-up files may not load gatekeep's hook"


# Shell builtins that read a number or a variable's name from an argument. zsh evaluates the
# numbers as arithmetic (`printf %d`, `shift`, `exit`, `test -t`...), and both shells evaluate
# the subscript of a name (`read "$x"`, `unset "$x"`, `test -v "$x"`), so an argument that is not
# a literal number, or a plain name, runs whatever command a variable's value holds in a subscript.
_NUMBER = lazy(r"[+-]?[0-9]+")
_NAME = lazy(r"[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?")
_NUMERIC_CONVERSIONS = frozenset("diouxXeEfFgGaAc")
_PRINTF_CONVERSION = lazy(r"%[-+ #0'I]*(\*|[0-9]*)(\.(\*|[0-9]*))?[hlLqjzt]*(.)")


def _arithmetic(word: str) -> bool:
    """Whether bash or zsh could evaluate something other than a literal number in `word`."""
    return not _NUMBER.fullmatch(word)


def _number_operand(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`shift N`, `exit N`, `return N`, `break N`, `repeat N CMD`: N must be a literal number."""
    for option, value in parsed.options:
        if value is not None and _arithmetic(value):
            return f"{shown} evaluates {value} as arithmetic (zsh), which can run a command a variable holds"
    if parsed.operands and _arithmetic(parsed.operands[0]):
        return f"{shown} evaluates {parsed.operands[0]} as arithmetic (zsh), which can run a command a variable holds"
    return None


def _name_operands(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`read NAME`, `unset NAME`, `export NAME=v`, `getopts SPEC NAME`, `read -t N`: a name (the
    table's name-options' values, and its operands if name-operands) must be plain, a number (its
    number-options' values) literal, and a value assigned to an integer variable too."""
    table = _table_of(root, shown)
    numbers = [v for o, v in parsed.options if v is not None and o in table.get("number-options", ())]
    names = [v for o, v in parsed.options if v is not None and o in table.get("name-options", ())]
    operands = parsed.operands if table.get("name-operands") else []
    if shown.split(" ", 1)[0] == "getopts":
        operands = parsed.operands[1:2]
    for word in operands:
        name, equals, value = word.partition("=")
        names.append(name.removesuffix("+"))
        if equals and name.removesuffix("+") in INTEGER_VARIABLES and _arithmetic(value):
            return f"{shown} assigns {name} as arithmetic, which can run a command a variable holds"
    for number in numbers:
        if not _arithmetic(number):
            continue
        if number[:1].isalpha() or number[:1] in "_$'\"":
            names.append(number)  # zsh: a word that is no number is taken as the variable's name
        else:
            return f"{shown} evaluates {number} as arithmetic (zsh), which can run a command a variable holds"
    for name in names:
        if not _NAME.fullmatch(name):
            return f"{shown} takes {name} as a variable's name, and evaluates a subscript in it"
    for option, value in parsed.options:  # a name in one shell, text in the other: it must not be computed
        if value is not None and option in table.get("maybe-name-options", ()) and ("$" in value or "`" in value):
            return f"{shown} may take {value} as a variable's name (zsh), and evaluate a subscript in it"
    return None


def _table_of(root: dict, shown: str) -> dict:
    """The (sub)table a check runs for: the root, or the subcommand `shown` names after the tool."""
    table = root
    for word in shown.split(" ")[1:]:
        table = table["sub"].get(word, table)
    return table


def _test_operands(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`test -t FD` (zsh: arithmetic) and `test -v NAME` (a subscript in NAME is evaluated)."""
    for flag, operand in zip(args, args[1:]):
        if flag == "-t" and _arithmetic(operand):
            return f"{shown} evaluates {operand} as arithmetic (zsh), which can run a command a variable holds"
        if flag == "-v" and not _NAME.fullmatch(operand):
            return f"{shown} takes {operand} as a variable's name, and evaluates a subscript in it"
    return None


def _printf_arithmetic(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """zsh's printf and print -f evaluate the argument of every numeric conversion (%d, %x, %f...,
    and a * width or precision) as arithmetic: each such argument must be a literal number."""
    names = parsed.values("-v")
    if any(not _NAME.fullmatch(name) for name in names):
        return f"{shown} takes {names[0]} as a variable's name, and evaluates a subscript in it"
    formats = parsed.values("-f") or parsed.operands[:1]
    arguments = parsed.operands if parsed.values("-f") else parsed.operands[1:]
    if not formats or not arguments:
        return None
    kinds = []
    for m in _PRINTF_CONVERSION.finditer(formats[0].replace("%%", "")):
        kinds += ["number"] * ((m[1] == "*") + (m[3] == "*"))
        kinds.append("number" if m[4] in _NUMERIC_CONVERSIONS else "text")
    if "$" in formats[0] or "`" in formats[0]:
        kinds = ["number"]  # a format computed at run time: any argument may be a number
    for i, argument in enumerate(arguments):
        if kinds and kinds[i % len(kinds)] == "number" and _arithmetic(argument):
            return f"{shown} evaluates {argument} as arithmetic (zsh), which can run a command a variable holds"
    return None


CHECKS = {
    "number-operand": _number_operand,
    "name-operands": _name_operands,
    "test-operands": _test_operands,
    "printf-arithmetic": _printf_arithmetic,
    "sed-script": _sed_script,
    "awk-program": _awk_program,
    "dc-program": _dc_program,
    "less-commands": _less_commands,
    "vim-commands": _vim_commands,
    "tar-old-style": _tar_old_style,
    "make-assignments": _make_assignments,
    "output-pipe": _output_pipe,
    "crontab-install": _crontab_install,
    "config-set": _config_set,
    "shell-without-hook": _shell_without_hook,
    "root-shell": _root_shell,
    "su-shell": _su_shell,
}
