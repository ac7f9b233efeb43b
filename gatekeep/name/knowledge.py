"""What gatekeep knows about tools, read from data: which of their forms run code they are given.

The data is the top-level `tools/*.toml` (shipped in the wheel, see resources.py),
one table per tool, reviewed like code; tests/test_knowledge.py checks every
entry. A table says how the tool's options are read (see options.py) and
which forms run code:

    [make]
    value-options = ["-f", "--file", "-E", "--eval", ...]  # options followed by a value
    optional-value-options = ["-O", "--output-sync"]        # a value only when attached
    code-options = ["-E", "--eval"]        # these run code given on the command line
    program-options = ["-f", "--file"]     # these name a program file: `-`, /dev/stdin,
                                           # /dev/fd/N or a <( ) there is code from a pipe
    checks = ["make-assignments"]          # tool-specific readers (checks.py)

    [python]
    aliases = ["python3", "pypy3"]         # other names (versioned ones, python3.12, too)
    code-options = ["-c"]
    ends-options = ["-c", "-m"]            # what follows is the program's argv
    program-operand = true                 # the first operand is the program file
    stdin-program = true                   # no program, or `-`: it reads its program from input
                                           # (without program-operand: whenever it is fed)
    interactive-options = ["-i"]           # reads more program from input after the file
    code-modules = ["code", "timeit"]      # `-m MODULE` that runs code it is given

    [git]
    config-options = ["-c", "--config-env"]  # KEY=VALUE settings...
    code-keys = ["alias.*", "core.pager"]    # ...whose keys name a command to run
    [git.rebase]                             # a subcommand: read after the tool's options
    code-options = ["-x", "--exec"]
    [git.bisect.run]
    runs = "runs the command it is given at each step"   # this form always runs code

A form's command is also read as a script of its own when the data says where it
is: `script-options` (`rsync -e CMD`, `git rebase -x CMD`) or `script-operands`
(`git bisect run CMD ARGS`), so that deny rules see the command inside too; and
`shell-calls` with `shell-language` name the functions through which an
interpreter's inline code runs a shell command (`os.system`, `execSync`,
`system`): the literal commands they are given are read too (inline.py).

Every table lists `examples`, lines that start with their kind (`runs:`, `safe:`,
`reads:`, `changes:`, `loses:`, `secret:`, see EXAMPLE_KINDS);
tests/test_knowledge.py checks each, so adding a tool is a data change with
its own test.

One table serves every place a broad rule could stretch over such a form:
an allow rule (`make *`, `git *`, `default: allow`) and the built-in
read-only set alike (decide.py asks unless a rule names the form itself).
"""

from __future__ import annotations

import marshal
import os
import posixpath

from gatekeep.core import resources
from gatekeep.core.lazyre import lazy
from gatekeep.core.records import record
from gatekeep.name.options import Parsed, Spec, parse, spec_for

# Every key whose words are options the table knows (loss-options holds groups: `-d -f`).
OPTION_KEYS = (
    "value-options",
    "optional-value-options",
    "flags",
    "code-options",
    "ends-options",
    "program-options",
    "interactive-options",
    "config-options",
    "name-options",
    "number-options",
    "maybe-name-options",
    "script-options",
    "read-only-if",
    "state-options",
    "write-options",
    "loss-options",
    "removes-with",
    "secret-options",
    "credential-options",
    "content-options",
    "reads-trees-with",
    "pattern-options",
    "command-options",
    "text-options",
    "hidden-with",
    "tree-name-options",
    "secret-unless",
    "connect-options",
)
# The keys a tool's table may have; any other key holding a table is a subcommand.
LIST_KEYS = (
    *OPTION_KEYS,
    "aliases",
    "code-modules",
    "code-keys",
    "loss-keys",
    "checks",
    "script-assignments",
    "default-programs",
    "startup-files",
    "loss-operands",
    "loss-checks",
    "loss-unless",
    "secret-operands",
    "shell-calls",
    "loss-calls",
    "home-calls",
    "writes-files",
    "read-only-operands",
    "subcommands",
    "help-words",
    "network-subcommands",
    "read-only-operations",
    "parameter-files",
    "jq-options",
)
BOOL_KEYS = (
    "program-operand",
    "stdin-program",
    "name-operands",
    "script-operands",
    "read-only",
    "sql-operands",
    "reads-no-content",
    "options-anywhere",
    "reads-operands",
    "reads-trees",
    "old-style-options",
    "removes-operands",
    "config-files",
    "abbreviated-subcommands",
    "program-strings",
    "pathspec-operands",
    "pattern-operand",
    "operands-not-paths",
    "runner",
    "wrapper",
    "wrapper-assignments",
    "harmless-wrapper",
    "named-through",
    "bare",
    "changes-operands",
    "shell-aliases",
    "dash-operands",
    "needs-network",
    "parameter-options",
)
# What each key says: docs/knowledge.md's schema is rendered from this (knowledge_doc.py), and
# tests/test_knowledge.py holds it to the keys above.
SCHEMA = {
    "aliases": "other names of the tool (versioned ones, python3.12, are found too); of a subcommand, its other names",
    "examples": "lines that start with their kind (runs, safe, reads, changes, loses, secret): each is a test",
    "arity": "how many words the names of the tool (or subcommand) have (`aws ec2 describe-instances`: 3)",
    "subcommands": "every word that may follow it in a name; any other is a value (`[]`: it has none)",
    "runner": "its operands are a command it runs (`npx`, `poetry run`): no word joins the name after it",
    "wrapper": "it runs the command that follows its options (`sudo`, `nice`, `timeout`): deny and ask rules see it",
    "wrapper-positionals": "words between a wrapper's options and its command (`timeout DURATION`)",
    "wrapper-assignments": "a wrapper that takes `NAME=value` words before its command (`env`)",
    "harmless-wrapper": "it runs its command as it is, later or more gently: allow rules see through it (`nice`)",
    "named-through": "its command's name is that of the command it runs (`sudo apt install` is `apt install`)",
    "bare": "a `NAME *` rule would allow anything at all (a shell); every wrapper is bare too",
    "name-examples": "lines and the name each gets (`git -C src push origin main -> git push`): each is a test",
    "flag-aliases": "spellings of one option, for flag-equivalent deny rules (`\"--recursive\" = \"-r\"`)",
    "value-options": "options followed by a value, separate or attached",
    "optional-value-options": "options whose value is only ever attached (`-i.bak`)",
    "flags": "options that take no value and only change what is shown",
    "command-options": "options followed by a command of their own, up to `;` or `+` (find's `-exec`)",
    "options-anywhere": "the tool's options may follow its subcommands (`kubectl get pods -n dev`)",
    "old-style-options": "a first word without a dash is a cluster of its options (`tar tvf x.tar`)",
    "read-only": "the form only reads: in the built-in read-only set when every option on the line is known",
    "read-only-operations": "subcommands that only read and take only `parameter-options` (`aws ec2 describe-vpcs`):"
    " each is a table of its own with no operand",
    "parameter-options": "every `--long` option is a parameter of the call the form makes, sent to the service (aws's"
    " operations): a value follows it unless another option does; it is no unknown option",
    "jq-options": "options whose value is a jq program, which shows a secret as jq's does (`gh … --jq env`)",
    "parameter-files": "prefixes of a parameter's value that make the tool read a file and send it"
    " (`file://`, `@`): such a form is not read-only",
    "read-only-if": "options that make the form read-only (`git branch --list`)",
    "max-operands": "with more operands the form does more than read (`hostname NAME`)",
    "help-words": "options and words that, after its name and alone, only show help (`--help`, aws's `help`)",
    "read-only-operands": "shapes (globs) every operand must have for the form to be read-only (`date +FORMAT`)",
    "state-options": "options that change something (the clock, a file in place, a process)",
    "write-options": "options whose value is a file the form writes",
    "write-operands": "which operands are written: all, last (`cp A B`) or second (`uniq IN OUT`)",
    "writes-files": "files the form writes without naming them (`npm pkg set` writes package.json)",
    "reads-operands": "every operand is only read (`source F`), whatever else the form does",
    "operands-not-paths": "no word of the form names a file (`kill -9 $PID`, `tr / _`)",
    "text-options": "options whose value is text, never a file (`cut -d /`)",
    "reads-no-content": "the form reads names and metadata, never a file's content (`ls`, `stat`)",
    "content-options": "options whose file such a form does read, and print back (`du --files0-from`)",
    "reads-trees": "the form reads its directory operands whole, files and all (`rg`)",
    "reads-trees-with": "options that make it read them whole (`grep -r`, `diff -r`; `-d=recurse`: with that value)",
    "hidden-with": "options without which such a form skips hidden files (`rg --hidden`)",
    "tree-name-options": "options whose globs keep such a form to the files they match (`find -name`)",
    "pattern-operand": "its first operand is a pattern, not a path, unless a pattern option is given",
    "pattern-options": "options that give the pattern, or mean there is none (`grep -e`, `rg --files`)",
    "removes-with": "options with which its operands are removed, trees and all (`rm -r`)",
    "removes-operands": "its operands are removed whatever its options (`rm`): judged against the working tree",
    "config-files": "a config option's value without `=` is a file of settings, which may name programs",
    "abbreviated-subcommands": "it takes any unique prefix of a subcommand for it (npm's `pub` is `publish`):"
    " deny, ask and lock rules see the full name",
    "program-strings": "the strings of its inline program may name files it reads (`getline < \".env\"`; sed's `r F`)",
    "pathspec-operands": "its operands are patterns it matches itself, against every path it knows (git's pathspecs)",
    "loss": "what the form throws away, beyond recovery: it asks whatever rule allows the tool",
    "loss-class": "which class of loss: git, files, containers, cluster, infra, databases",
    "loss-options": "option groups that make it lose work (`-d -f`: both)",
    "loss-unless": "options with which it loses nothing: a dry run (`--dry-run`)",
    "loss-operands": "operands that make it lose work (`kubectl delete namespace`)",
    "loss-checks": "checks that tell (checks.py: a force push to `+main`, SQL that drops a table)",
    "secret": "what secret the form shows: it asks whatever rule allows the tool",
    "secret-options": "when given, only these make the form show it (`--raw`)",
    "secret-bare": "what secret the form shows when no operand picks what it shows (`env`, `printenv`)",
    "secret-unless": "options that show only what their value picks: not a secret unless it may pick everything",
    "secret-operands": "operands that make it show one (`kubectl get secret`), or globs they match (`*token*`)",
    "credential-options": "options whose file is a secret used, never shown (`ssh -i KEY`)",
    "runs": "the form always runs a command it is given",
    "code-options": "options that run code given on the line (`make --eval`)",
    "program-options": "options that name a program file: from a pipe or stdin it is code nobody saw",
    "program-operand": "its first operand is a program file, and the rest that program's arguments",
    "stdin-program": "with no program, or `-`, it reads its program from its input",
    "interactive-options": "options that read more program from its input after the file",
    "ends-options": "options after which the rest is the program's own arguments (`python -c`)",
    "code-modules": "`-m MODULE` values that run code they are given (`python -m code`)",
    "config-options": "options that set configuration (`git -c KEY=VALUE`)...",
    "code-keys": "...and the configuration keys whose value is a command to run",
    "loss-keys": "...and those that make it throw away what it would otherwise keep (`clean.requireForce`)",
    "default-programs": "files it runs when none is named (`make` runs ./Makefile; globs: `go test` runs *_test.go)",
    "startup-files": "files it reads at every start from the directory it runs in or one above, which can make it"
    " run code they name (`.mvn/jvm.config`): where one is, no form of it is read-only, `--version` included",
    "script-options": "options whose value is a shell command, read as a script of its own",
    "script-operands": "its operands are a command it runs (`npm exec -- CMD`), read as one",
    "script-assignments": "`NAME=VALUE` operands whose value is a command (`make CC=…`)",
    "shell-calls": "functions through which its inline code runs a shell command (`os.system`)",
    "shell-language": "the string syntax of that code: python, js, perl or ruby",
    "loss-calls": "names through which its inline code deletes files (`rmtree`, `unlinkSync`): under guard it asks",
    "home-calls": "names through which its inline code finds the home directory (`expanduser`): under guard it asks",
    "checks": "tool-specific readers of the form (checks.py)",
    "name-options": "options whose value is a variable's name (evaluated by the shell)",
    "maybe-name-options": "options whose value may be a variable's name",
    "number-options": "options whose value the shell evaluates as arithmetic",
    "name-operands": "its operands are variables' names",
    "sql-operands": "its operands are SQL",
    "effect": "what the form does beyond reading, for postures (posture.py): changes (only the files its data"
    " names), recoverable (what its tool can undo: git add, commit…), shell-state (only the shell's own:"
    " export, cd, job control), fetches (requests to its URL operands), system (changes the machine:"
    " a package installed for everyone)",
    "changes-operands": "its operands are the files it changes in place (`touch`, `mkdir`, `chmod`)",
    "dash-operands": "a word that is none of its options is text it prints, not an unknown option (`echo ---`)",
    "shell-aliases": "a subcommand it does not know may be an alias that runs a shell command (git's `!`): guard asks",
    "needs-network": "it works only by reaching a service outside the machine's files: another machine (`git push`,"
    " `curl`) or a daemon (`docker`); a sandbox without the network would only make it fail, so it is asked,"
    " never contained (contain/sandbox.py)",
    "network-subcommands": "its subcommands (the first operand) that reach another machine, for a tool with no"
    " table for each (`npm install`, `pip download`): as `needs-network`",
    "connect-options": "options that name another place to connect to (curl's `--proxy`, `--resolve`): the request"
    " may leave the machine whatever its URL says",
}
EXAMPLES = "examples"  # checked by the tests, not compiled
# runs: a form that runs code (a rule must name it); safe: none does; reads: the form only reads;
# changes: it does more than read; loses: it throws work away; secret: it reads a secret
EXAMPLE_KINDS = ("runs: ", "safe: ", "reads: ", "changes: ", "loses: ", "secret: ")
TEXT_KEYS = ("runs", "loss", "loss-class", "write-operands", "secret", "secret-bare", "shell-language", "effect")
INT_KEYS = ("max-operands", "arity", "wrapper-positionals")
# naming's tests (tests/test_arity.py), not compiled: `LINE -> NAME`
NAME_EXAMPLES = "name-examples"
FLAG_ALIASES = "flag-aliases"  # the one key that holds a table and is no subcommand
LOSS_CLASSES = ("git", "files", "containers", "cluster", "infra", "databases")
WRITE_OPERANDS = ("all", "last", "second")
EFFECTS = ("changes", "recoverable", "shell-state", "fetches", "system")
SHELL_LANGUAGES = ("python", "js", "perl", "ruby")  # the string syntaxes inline.py reads

ASSIGNMENT = lazy(r"[A-Za-z_][A-Za-z_0-9]*=")
_VERSIONED = lazy(r"(?P<family>[A-Za-z]+?)[0-9][0-9.]*")  # python3.12, ruby3.2, perl5.36
STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/dev/tty"})
_FD_PATH = lazy(r"(^|/)(dev|proc/[^/]+)/fd/[0-9]+$")
_PROC_ROOT = lazy(r"^/proc/[^/]+/root(?=/)")  # /proc/self/root/dev/stdin is /dev/stdin


class Knowledge:
    """The compiled tools/*.toml: tables by tool name, with aliases resolved.

    From the cache each table comes packed (marshal bytes) and is unpacked when a line
    first names its tool: a check unpacks one or two tables, not sixty.
    """

    def __init__(self, tables: dict, aliases: dict) -> None:
        self.tables = tables
        self.aliases = aliases

    def table(self, word: str, versioned: bool = True) -> tuple[str, dict] | None:
        """The tool's name and table for a command word (`/usr/bin/python3.12` -> python), or None.
        `versioned` False: by its name or an alias only, never a version number's family: a word
        that lets allow rules see through it (a wrapper) must be that program, not `nohup2`."""
        tool = word.rsplit("/", 1)[-1]
        name = self.aliases.get(tool, tool)
        if versioned and name not in self.tables and tool[-1:].isdigit():
            versioned = _VERSIONED.fullmatch(tool)
            if versioned:
                name = self.aliases.get(versioned["family"], versioned["family"])
        table = self.tables.get(name)
        if table is None:
            return None
        if type(table) is bytes:
            table = self.tables[name] = marshal.loads(table)
        return name, table


_knowledge: Knowledge | None = None


def load_knowledge() -> Knowledge:
    """tools/*.toml, compiled once per change of those files (cache.py), read once per process."""
    global _knowledge
    if _knowledge is None:
        from gatekeep.core.cache import cached_files
        from gatekeep.core.paths import get_paths

        directory = resources.data_dir("tools")
        names = sorted(name for name in os.listdir(directory) if name.endswith(".toml"))

        def build(texts: list[str]) -> tuple:
            return _packed(compile_tools(tuple(zip(names, texts, strict=True))))

        files = [os.path.join(directory, name) for name in names]
        tables, aliases = cached_files(get_paths().cache_dir, "tools-7", files, build)
        _knowledge = Knowledge(dict(tables), aliases)
    return _knowledge


_table = None


def load_table():
    """Naming (arity.ArityTable) over the same tables: it reads them as lines name their tools."""
    global _table
    if _table is None:
        from gatekeep.name.arity import ArityTable

        _table = ArityTable(load_knowledge())
    return _table


def _packed(compiled: tuple[dict, dict]) -> tuple[dict, dict]:
    tables, aliases = compiled
    return {name: marshal.dumps(table) for name, table in tables.items()}, aliases


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
            if tables[tool].get("options-anywhere"):  # `kubectl get pods -n dev`: the tool's own options
                _inherit(tables[tool], tables[tool])
            for alias in table.get("aliases", ()):
                if alias in aliases or alias in tables:
                    raise ValueError(f"{where}: the alias {alias!r} names another tool too")
                aliases[alias] = tool
    clash = sorted(set(aliases) & set(tables))
    if clash:
        raise ValueError(f"the alias {clash[0]!r} names another tool too")
    return tables, aliases


INHERITED = ("value-options", "optional-value-options", "flags")


def _inherit(root: dict, table: dict) -> None:
    """A tool whose own options may follow its subcommands (`options-anywhere`): every
    subcommand reads them too (value options take their values, and all are known)."""
    for sub in table["sub"].values():
        for key in INHERITED:
            if key in root:
                sub[key] = sub.get(key, frozenset()) | root[key]
        _inherit(root, sub)


def _compile_table(table: dict, where: str) -> dict:
    compiled: dict = {"sub": {}}
    for key, value in table.items():
        if key == EXAMPLES:
            if not isinstance(value, list) or not all(isinstance(v, str) and v.startswith(EXAMPLE_KINDS) for v in value):
                raise ValueError(f"{where}: examples must be lines that start with {', '.join(EXAMPLE_KINDS)}")
        elif key == NAME_EXAMPLES:
            if not isinstance(value, list) or not all(isinstance(v, str) and " -> " in v for v in value):
                raise ValueError(f"{where}: name-examples must be lines `LINE -> NAME`")
        elif key == FLAG_ALIASES:
            if not isinstance(value, dict) or not all(
                isinstance(v, str) or isinstance(v, list) and all(isinstance(w, str) for w in v) for v in value.values()
            ):
                raise ValueError(f"{where}: flag-aliases must map each spelling to one or a list of spellings")
            compiled[key] = value
        elif isinstance(value, dict):
            compiled["sub"][key] = sub = _compile_table(value, f"{where}.{key}")
            for alias in value.get("aliases", ()):  # `npm list` is `npm ls`
                if alias in table or alias in compiled["sub"]:
                    raise ValueError(f"{where}.{key}: the alias {alias!r} names another subcommand too")
                compiled["sub"][alias] = sub
        elif key in LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ValueError(f"{where}: {key} must be a list of non-empty strings")
            ordered = ("checks", "code-keys", "loss-keys", "aliases", "loss-options", "loss-checks")
            compiled[key] = tuple(value) if key in ordered else frozenset(value)
        elif key in BOOL_KEYS:
            if type(value) is not bool:
                raise ValueError(f"{where}: {key} must be true or false")
            compiled[key] = value
        elif key in TEXT_KEYS:
            if not isinstance(value, str) or not value:
                raise ValueError(f"{where}: {key} must be a sentence")
            if key == "loss-class" and value not in LOSS_CLASSES:
                raise ValueError(f"{where}: loss-class must be one of {', '.join(LOSS_CLASSES)}")
            if key == "write-operands" and value not in WRITE_OPERANDS:
                raise ValueError(f"{where}: write-operands must be one of {', '.join(WRITE_OPERANDS)}")
            if key == "shell-language" and value not in SHELL_LANGUAGES:
                raise ValueError(f"{where}: shell-language must be one of {', '.join(SHELL_LANGUAGES)}")
            if key == "effect" and value not in EFFECTS:
                raise ValueError(f"{where}: effect must be one of {', '.join(EFFECTS)}")
            compiled[key] = value
        elif key in INT_KEYS:
            if type(value) is not int or value < (1 if key == "arity" else 0):
                raise ValueError(f"{where}: {key} must be a whole number" + (" from 1" if key == "arity" else ""))
            compiled[key] = value
        else:
            raise ValueError(f"{where}: unknown key {key!r}")
    for operation in compiled.get("read-only-operations", ()):  # `aws ec2 describe-vpcs --vpc-ids x`
        if operation in compiled["sub"]:
            raise ValueError(f"{where}: {operation} is a table and a read-only operation")
        compiled["sub"][operation] = {"sub": {}, "read-only": True, "parameter-options": True, "max-operands": 0}
    from gatekeep.name.checks import CHECKS, LOSS_CHECKS

    unknown = (set(compiled.get("checks", ())) - set(CHECKS)) | (set(compiled.get("loss-checks", ())) - set(LOSS_CHECKS))
    if unknown:
        raise ValueError(f"{where}: no check named {', '.join(sorted(unknown))}")
    return compiled


# A table's Spec, made once: the tables live as long as the process, and a line asks for the same
# ones several times (naming, form, reads, writes), as `scan` does for thousands of lines. Keyed by
# the table's id, with the table itself kept in the entry, so that no id is ever reused for another.
_specs: dict[int, tuple[dict, Spec]] = {}


def spec_of(table: dict) -> Spec:
    """The options of a tool's (or subcommand's) table, as options.parse reads them."""
    kept = _specs.get(id(table))
    if kept is None or kept[0] is not table:
        kept = _specs[id(table)] = (table, _spec_of(table))
    return kept[1]


def _spec_of(table: dict) -> Spec:
    values = table.get("value-options", frozenset())
    optional = table.get("optional-value-options", frozenset())
    code = table.get("code-options", frozenset())
    ends = table.get("ends-options", frozenset())
    commands, writes = table.get("command-options", frozenset()), table.get("write-options", frozenset())
    program = table.get("program-operand", False)
    return spec_for(values, known_options(table), optional, code, ends, program, commands, writes)


_known: dict[int, tuple[dict, frozenset[str]]] = {}


def known_options(table: dict) -> frozenset[str]:
    """Every option a tool's (or subcommand's) table names, whatever it does: an option outside
    this set is one gatekeep knows nothing about (`tar --index-file`), never a harmless one."""
    kept = _known.get(id(table))
    if kept is None or kept[0] is not table:
        words = [w.split("=", 1)[0] for key in OPTION_KEYS for group in table.get(key, ()) for w in group.split()]
        kept = _known[id(table)] = (table, frozenset(w for w in words if w.startswith("-")) | HELP)
    return kept[1]


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


# a setting given as KEY=VALUE, its key a dotted name (`build.jobs=4`); anything else is a file's name
_KEY_VALUE = lazy(r"[A-Za-z0-9_.-]+=")


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
    if table.get("stdin-program") and not table.get("program-operand") and fed:  # psql <<EOF
        return f"{shown} runs commands read from its input (a pipe, here-string or heredoc)"
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
            if root.get("config-files") and not _KEY_VALUE.match(setting):  # `cargo --config x.toml`, `./a=b.conf`
                return f"{shown} reads settings from {setting}, which can name programs to run ({option})"
            key = _setting_key(setting)
            from gatekeep.name.checks import code_key  # only when a config option is given

            if code_key(key, keys):
                return f"{shown} runs what {option} {key} names"
    if "checks" in table:
        from gatekeep.name.checks import CHECKS  # only for the tools that have one

        for check in table["checks"]:
            why = CHECKS[check](parsed, shown, root, args)
            if why:
                return why
    return None


class Form(
    record(
        "Form",
        "read_only loss loss_class secret writes removes unknown effect changed operands options network",
        defaults=(None, None, None, (), (), (), None, (), (), (), False),
    )
):
    """What one command's form does, by the data: only reads (read_only); loses work (loss says
    what, loss_class which class of loss: git, files...); reads a secret (secret says how); writes
    the files named by its write options and operands (writes); removes the trees its operands
    name (removes: `rm -r`, judged against the working tree by decide.py); unknown: the options
    on the line the data does not know for that form, which make its effect unknown (never
    read-only: `tar -tf x --index-file F` writes F); effect: what the form's table (or the nearest
    table above it that says) does beyond reading (`effect`: changes, recoverable…), changed: the operands it changes in place
    (`changes-operands`), operands and options: those given, as the form's own table reads them;
    network: a table on its way says it reaches a service outside (`needs-network`, `network-subcommands`)."""

    __slots__ = ()


HELP = frozenset({"--help", "--version"})


def form_of(argv: list[str], fed: str | None = None) -> Form:
    """The form `argv` is in, by tools/*.toml; `fed` is the text on its input (a here-string, a
    heredoc, a file redirected in) or checks.FROM_A_PIPE, or a function that returns it when asked."""
    if not argv:
        return Form(False)
    shown = argv[0].rsplit("/", 1)[-1]
    found = load_knowledge().table(argv[0])
    if found is None:  # `--version` and `--help` of any tool only show something
        return Form(bool(argv[1:]) and set(argv[1:]) <= HELP)
    table, args, root = found[1], _old_style(found[1], argv[1:]), found[1]
    state, loss, loss_class, secret, writes, removes = False, None, root.get("loss-class"), None, [], []
    unknown: list[str] = []
    effect, network = None, False
    while True:
        parsed = _parse(args, table)
        network = network or table.get("needs-network", False)
        if parsed.first_operand >= 0 and args[parsed.first_operand] in table.get("network-subcommands", ()):
            network = True
        loss_class = table.get("loss-class", loss_class)
        effect = table.get("effect", effect)  # a subcommand's own, or its tool's (`ip address add`: system)
        state = state or parsed.has(*table.get("state-options", ()))
        writes += [v for o, v in parsed.options if v is not None and o in table.get("write-options", ())]
        writes += _written_operands(table.get("write-operands"), parsed.operands)
        if table.get("removes-operands") or parsed.has(*table.get("removes-with", ())):
            removes += parsed.operands
        loss = loss or _loss(table, parsed, shown, root, args, fed) or _loss_key(table, parsed, shown)
        hidden = [w for w in parsed.operands if _secret_operand(w, table.get("secret-operands", frozenset()))]
        secret = secret or (f"{shown} {hidden[0]} shows credentials" if hidden else None)
        options = table.get("secret-options", ())  # when given, only these make the form read a secret
        spared = parsed.has(*table.get("secret-unless", ())) and not any(
            _SHOWS_ALL.search(v) for v in parsed.values(*table.get("secret-unless", ()))
        )
        if not secret and "secret" in table and (parsed.has(*options) if options else True) and not spared:
            secret = f"{shown}: {table['secret']}"
        if not secret and "jq-options" in root:  # `gh api user --jq env`: jq's environment, GH_TOKEN and all
            secret = _jq_secret(parsed.values(*root["jq-options"]), shown)
        if not secret and "secret-bare" in table and not spared and not _named(table, parsed.operands):
            secret = f"{shown}: {table['secret-bare']}"  # `env`, `printenv`, `export -p`: all of it
        sub = table["sub"].get(args[parsed.first_operand]) if parsed.first_operand >= 0 and table["sub"] else None
        # the options this level reads: all of them, or those before its subcommand's name
        own = parsed if sub is None else parse(args[: parsed.first_operand], spec_of(table))
        known = known_options(table)
        if not table.get("dash-operands"):
            parameters = table.get("parameter-options", False)
            unknown += [o for o, _ in own.options if o not in known and not (parameters and o.startswith("--"))]
        if sub is None:
            break
        shown += " " + args[parsed.first_operand]
        table, args = sub, args[parsed.first_operand + 1 :]
    read_only = bool(table.get("read-only")) and not state and not writes and not unknown
    if read_only and table.get("parameter-options"):  # `--cli-input-json file://x.json`: a file read and sent
        prefixes = tuple(root.get("parameter-files", ()))
        read_only = not (prefixes and any(v is not None and v.startswith(prefixes) for _, v in parsed.options))
    if read_only and "checks" in table and parsed.has(*table.get("program-options", ())):
        read_only = False  # `awk -f x.awk`, `sed -f x.sed`: a program nobody has seen, read from a file
    shapes = table.get("read-only-operands")
    if read_only and shapes:  # `date +%F` shows the time, `date 010112002020` sets the clock
        from fnmatch import fnmatchcase

        read_only = all(any(fnmatchcase(w, shape) for shape in shapes) for w in parsed.operands)
    if read_only and len(parsed.operands) > table.get("max-operands", len(parsed.operands)):
        read_only = _affirmed(parsed, table.get("read-only-if", ()))  # `git branch NAME` makes one, `git branch -l X` lists
    elif not read_only and not state and not writes and not unknown and _affirmed(parsed, table.get("read-only-if", ())):
        read_only = True
    if not read_only and args and set(args) <= HELP and not state:
        read_only = True
    if not read_only and "help-words" in root and not state and not writes and not removes:
        read_only = _help_only(argv, root)
    # every word that is not an option: an option's value read as an operand is judged too
    changed = tuple(a for a in args if not a.startswith("-")) if table.get("changes-operands") else ()
    return Form(
        read_only, loss, loss_class if loss else None, secret, tuple(writes), tuple(removes), tuple(unknown),
        effect, changed, tuple(parsed.operands), tuple(o for o, _ in parsed.options), network,
    )  # fmt: skip


# a flag's value that turns it off, as Go's flag package takes it (`terraform fmt -check=false` writes)
_OFF = frozenset({"false", "f", "0", "no", "off"})


def _affirmed(parsed: Parsed, options) -> bool:
    """Whether one of `options` is given and not turned off by its value (`-check=false`)."""
    return any(o in options and (v is None or v.lower() not in _OFF) for o, v in parsed.options)


def _parse(args: list[str], table: dict) -> Parsed:
    """`args` read by the options of `table`, a form's whose `--long` options are its call's
    parameters (`parameter-options`) as _parameters reads them."""
    return _parameters(args, table) if table.get("parameter-options") else parse(args, spec_of(table))


def _parameters(args: list[str], table: dict) -> Parsed:
    """`args` of a form whose `--long` options are parameters of the call it makes (aws's
    `--instance-ids i-1 i-2`): an option the table names is read as its spec says; any other
    `--long` one takes the words after it up to the next option (a list parameter takes several),
    unless it is written `--name=value`; a single-dash option the table does not name stays a
    flag, and so unknown."""
    spec = spec_of(table)
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    first, i = -1, 0
    while i < len(args):
        word = args[i]
        if word == "--":  # the rest are operands
            first = i + 1 if first < 0 and i + 1 < len(args) else first
            operands += args[i + 1 :]
            break
        if word == "-" or not word.startswith("-"):
            first = i if first < 0 else first
            operands.append(word)
            i += 1
            continue
        name, equals, _ = word.partition("=")
        if name.startswith("--") and name not in spec.long and not equals:
            values = []
            while i + 1 < len(args) and not args[i + 1].startswith("-"):
                i += 1
                values.append(args[i])
            options += [(name, v) for v in values] or [(name, None)]
            i += 1
            continue
        takes_value = name in spec.values and not equals and i + 1 < len(args)
        options += parse(args[i : i + 2] if takes_value else [word], spec).options
        i += 2 if takes_value else 1
    return Parsed(options, operands, first)


def _jq_secret(programs: list[str], shown: str) -> str | None:
    """Why a jq program given to another tool shows a secret, judged by jq's own `secret-operands`
    (`env`, `$ENV`), or None."""
    if not programs:
        return None
    jq = load_knowledge().table("jq")
    kinds = jq[1].get("secret-operands", frozenset()) if jq else frozenset()
    shown_env = [p for p in programs if _secret_operand(p, kinds)]
    return f"{shown}: its jq program {shown_env[0]} prints the environment" if shown_env else None


def _help_only(argv: list[str], root: dict) -> bool:
    """Whether the line only asks for help: every word after the tool is a word of its name or
    one of its `help-words`, one of those is given (`docker run --help`, `aws ec2 help`, `gcloud
    help compute`), and every name word is one the data knows: a subcommand it has a table for,
    or one of a closed `subcommands` list, below which the tool checks the rest itself. A word
    it does not know may be an alias that runs a shell command (`git x -h`, `gh x --help`, aws's
    `!` aliases) or a script (`npm run build --help`): that line is not help."""
    help_words = root["help-words"]
    if not any(w in help_words for w in argv[1:]):
        return False  # (before the walk: most lines of these tools ask for no help)
    found = set(load_table().walk(argv)[0])
    table: dict | None = root
    for i, word in enumerate(argv[1:], 1):
        if word in help_words:
            continue  # `aws ec2 help`: the name may take it in, it still asks for help
        if i not in found:
            return False
        if table is None:
            continue  # below a word of a closed list: the tool itself knows the rest
        sub = table["sub"].get(word)
        if sub is not None:
            table = sub
        elif word in table.get("subcommands", ()):
            table = None
        else:
            return False
    return True


def files_written(argv: list[str]) -> list[str]:
    """The files the form writes by the data: its write options' values and written operands,
    and the files its table says it writes without naming them (`npm pkg set` writes
    package.json: `writes-files`), for decide.py to see a line run what it wrote."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None:
        return []
    written: list[str] = []
    for table, parsed in _down(found[1], argv[1:]):
        written += [v for o, v in parsed.options if v is not None and o in table.get("write-options", ())]
        written += list(table.get("writes-files", ()))
    if written and table.get("write-operands") == "last":
        return written  # `cp -t DIR A B`: the option names the destination, every operand is read
    return written + _written_operands(table.get("write-operands"), parsed.operands)


def paths_named(argv: list[str]) -> bool:
    """Whether the form's words may name files at all: not when its table says
    `operands-not-paths` (`kill -9 $PID`, `sleep $N`: a PID, a number, a job)."""
    found = load_knowledge().table(argv[0]) if argv else None
    return found is None or not found[1].get("operands-not-paths", False)


class Tree(record("Tree", "path hidden names", defaults=(True, ()))):
    """A directory a form reads whole: whether it reads hidden files too (rg and ag skip them
    unless told), and the name globs it keeps to (find -name X -exec …), () for every file."""

    __slots__ = ()


_NOT_PATHS = frozenset({"(", ")", "!", ",", "-", ";", "+", "{}"})


def trees_read(argv: list[str]) -> list[Tree]:
    """The directories the form reads whole, files and all (`grep -r X src`, `rg X`, `diff -r a b`,
    `git grep --untracked`, `find . -exec cat {} +`): its operands when its table says
    `reads-trees`, or one of its `reads-trees-with` options is given (`OPTION=VALUE` for an
    option with that value: `grep -d recurse`); `.` when it names none (`grep -R X`)."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None:
        return []
    for table, parsed in _down(found[1], argv[1:]):
        if table.get("reads-trees") or _given(parsed, table.get("reads-trees-with", ())):
            operands = [w for w in parsed.operands if w not in _NOT_PATHS]
            skip = table.get("pattern-operand", False) and not parsed.has(*table.get("pattern-options", ()))
            operands = operands[1:] if skip else operands
            hidden = not table.get("hidden-with") or parsed.has(*table.get("hidden-with", ()))
            names: tuple[str, ...] = ()
            if not any(w in ("!", "-not", "-o", "-or", ",") for w in argv):
                names = tuple(parsed.values(*table.get("tree-name-options", ())))
            return [Tree(w, hidden, names) for w in operands or ["."]]
    return []


def _given(parsed: Parsed, options) -> bool:
    """Whether one of `options` is given: an option, or `OPTION=VALUE` for it with that value or
    an abbreviation of it, as the tool takes one (`grep -d rec`: the safe reading of `-d re` too)."""
    for wanted in options:
        name, equals, value = wanted.partition("=")
        if any(o == name and (not equals or bool(v) and value.startswith(v)) for o, v in parsed.options):
            return True
    return False


def read_operands(argv: list[str]) -> list[str]:
    """The operands the data says the form only reads: those beside its written ones (`cp A B`
    reads A: write-operands = "last"), and all of them when its table says `reads-operands`."""
    deepest = _deepest(argv)
    if deepest is None:
        return []
    table, parsed = deepest
    if table.get("reads-operands"):
        return list(parsed.operands)
    written = _written_operands(table.get("write-operands"), parsed.operands)
    return [w for w in parsed.operands if w not in written] if written else []


# a format that may show everything, the environment included (`{{json .}}`, `{{.Config}}`, `{{printf "%v" .}}`:
# a dot that picks no field); a service's or task's `.Spec` and a plugin's `.Settings` hold the environment too
_SHOWS_ALL = lazy(r"(?i)env|config|json|spec|settings|(?<![\w\]])\.(?![\w.])|^\s*$")


def _secret_operand(word: str, kinds: frozenset[str]) -> bool:
    """An operand that makes the form show a secret: a kind it names (`secret/db`, `secrets`), or
    a glob among the kinds matching it whole (`*token*` for `npm config get //r/:_authToken`)."""
    if not kinds:
        return False
    if _kinds(word) & kinds:
        return True
    from fnmatch import fnmatchcase

    lowered = word.lower()
    return any("*" in kind and fnmatchcase(lowered, kind) for kind in kinds)


def _kinds(word: str) -> frozenset[str]:
    """The kinds an operand names, for loss- and secret-operands: `secret/db` and
    `secrets,configmaps` name secrets (kubectl's ways), `NS` names ns."""
    return frozenset(w for w in word.lower().split("/", 1)[0].split(","))


def _written_operands(which: str | None, operands: list[str]) -> list[str]:
    if which == "all":
        return list(operands)
    if which == "last":
        return operands[-1:] if len(operands) >= 2 else []
    if which == "second":
        return operands[1:2]
    return []


def _loss(table: dict, parsed: Parsed, shown: str, root: dict, args: list[str], fed: str | None) -> str | None:
    """What the form would lose, if it is one that throws work away: `loss` says what, and, when
    the table has them, only these make it one: an option group (`-d -f`: both), an operand
    (`kubectl delete namespace`), or a check (a force push to `+main`, SQL that drops a table)."""
    if "loss" not in table or parsed.has(*table.get("loss-unless", ())):  # a dry run loses nothing
        return None
    what = f"{shown}: {table['loss']}"
    groups, checks = table.get("loss-options", ()), table.get("loss-checks", ())
    operands = table.get("loss-operands", frozenset())
    if not (groups or operands or checks):
        return what
    given = {option for option, _ in parsed.options}
    if any(set(group.split()) <= given for group in groups):
        return what
    if any(_kinds(word) & operands for word in parsed.operands):
        return what
    if checks:
        from gatekeep.name.checks import LOSS_CHECKS

        text = fed() if callable(fed) else fed
        if any(LOSS_CHECKS[check](parsed, args, text, root) for check in checks):
            return what
    return None


def _named(table: dict, operands: list[str]) -> list[str]:
    """The operands that pick what a `secret-bare` form shows (`printenv HOME`); a wrapper's
    assignments pick nothing (`env FOO=1` shows the whole environment, FOO too)."""
    if table.get("wrapper-assignments"):
        return [w for w in operands if not ASSIGNMENT.match(w)]
    return list(operands)


def _loss_key(table: dict, parsed: Parsed, shown: str) -> str | None:
    """A setting given on the line (`git -c clean.requireForce=false clean`) whose key makes the
    tool throw away what it would otherwise keep: the table's `loss-keys`."""
    keys = table.get("loss-keys")
    if not keys:
        return None
    from gatekeep.name.checks import code_key

    for option in table.get("config-options", ()):
        for setting in parsed.values(option):
            key = _setting_key(setting)
            if code_key(key, keys):
                return f"{shown}: {option} {key} lets it throw away work it would otherwise keep"
    return None


def _setting_key(setting: str) -> str:
    """The key of a config option's `KEY=VALUE` (or `KEY VALUE`) setting."""
    return setting.replace("=", " ", 1).split(None, 1)[0] if setting.strip() else ""


def scripts_in(argv: list[str]) -> list[str]:
    """The shell commands a form carries for the tool to run (`rsync -e 'ssh -p 2'`, `git bisect
    run make test`, tar's `--checkpoint-action=exec=CMD`), to be read as scripts of their own."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None:
        return []
    scripts: list[str] = []
    for table, parsed in _down(found[1], argv[1:]):
        options = table.get("script-options", ())
        scripts += [value.removeprefix("exec=") for option, value in parsed.options if option in options and value]
        variables = table.get("script-assignments", ())  # `make CC=rm`: a variable whose value is a command
        scripts += [w.split("=", 1)[1] for w in parsed.operands if "=" in w and w.split("=", 1)[0] in variables]
        if table.get("script-operands") and parsed.operands:
            import shlex  # here: shlex imports re, which typical lines never need

            scripts.append(shlex.join(parsed.operands))
        if table.get("shell-calls"):  # `python3 -c 'os.system("CMD")'`: the literal CMD
            from gatekeep.name.inline import UNKNOWN, shell_commands
            from gatekeep.read.parse import parse_line

            # several -e are one program, a line each (`perl -e 'system' -e '"rm -rf ~"'`)
            code = "\n".join(parsed.values(*table.get("code-options", ())))
            # scripts are joined into one: one that does not parse (a stray quote) would swallow
            # the others, so it stands as a command nobody knows, which any deny rule could be
            commands = shell_commands(code, table["shell-language"], table["shell-calls"]) if code else []
            scripts += [c if parse_line(c).complete else UNKNOWN for c in commands]
    return scripts


def visible_code(argv: list[str], stdin_text: str | None) -> tuple[str, str, dict] | None:
    """(code, language, table) when the whole program an interpreter of a language gatekeep
    reads (`shell-language`) runs is on the line: the values of its code options (`python3 -c
    CODE`, `node -e`), or, with no program file and no code option, the heredoc or here-string
    it is fed (`python3 <<'EOF'`, `python3 - <<<CODE`: `stdin_text`). None for anything else: a program file, a
    module or option that runs more code (`-m timeit`, `-i`), a program from a pipe."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None or not found[1].get("shell-language"):
        return None
    table = found[1]
    parsed = parse(argv[1:], spec_of(table))
    code_options = set(table.get("code-options", ()))
    given = [option for option, _ in parsed.options]
    if set(given) & (set(table.get("interactive-options", ())) | set(table.get("program-options", ()))):
        return None
    if set(parsed.values("-m")) & set(table.get("code-modules", ())):
        return None
    if code_options & set(given):
        code = "\n".join(parsed.values(*code_options))
    elif stdin_text is not None and parsed.operands in ([], ["-"]) and table.get("stdin-program"):
        code = stdin_text
    else:
        return None
    return code, table["shell-language"], table


def reads_no_content(argv: list[str]) -> bool:
    """Whether the form reads no file's content, only names and metadata (`ls`, `stat`, `cd`):
    it may name a protected file (protect.py). Its tool's content-options (`file -f LIST`,
    `du --files0-from=F`) read a file whose lines it prints back: not such a form."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None or not found[1].get("reads-no-content", False):
        return False
    content = found[1].get("content-options")
    return not (content and parse(argv[1:], spec_of(found[1])).has(*content))


_STRING = lazy(r'"((?:[^"\\]|\\.)*)"')


def pathspecs(argv: list[str]) -> bool:
    """Whether the form's operands are patterns the tool matches itself (git's pathspecs:
    `git log -p -- '*.[e]nv'`), for a table that says `pathspec-operands`."""
    found = load_knowledge().table(argv[0]) if argv else None
    return found is not None and found[1].get("pathspec-operands", False)


def program_strings(argv: list[str]) -> list[str]:
    """The string literals of the form's inline program (awk's `getline < ".env"`, `ARGV[1] =
    ".env"`): names it may read, for tools whose table says `program-strings`."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None or not found[1].get("program-strings"):
        return []
    table = found[1]
    from gatekeep.name.checks import program_texts

    parsed = parse(argv[1:], spec_of(table))  # awk's and sed's inline program options
    programs = program_texts(parsed, ("-e", "--source", "--expression"), tuple(table.get("program-options", ())))
    if "sed-script" in table.get("checks", ()):  # sed's `r FILE`, `R FILE`
        from gatekeep.name import sedscript

        return [path for program in programs for path in sedscript.read(program).reads]
    return [m.group(1) for program in programs for m in _STRING.finditer(program)]


def pattern_operand(argv: list[str]) -> str | None:
    """The form's pattern operand (grep's pattern, sed's script), text matched or run, never a
    file, when its table says `pattern-operand` and no pattern option stands in for it."""
    deepest = _deepest(argv)
    if deepest is None:
        return None
    table, parsed = deepest
    if not table.get("pattern-operand") or parsed.has(*table.get("pattern-options", ())) or not parsed.operands:
        return None
    return parsed.operands[0]


def text_values(argv: list[str]) -> list[str]:
    """The values of the form's text options: delimiters, formats, fields, never a file."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None:
        return []
    return [v for table, parsed in _down(found[1], argv[1:]) for v in parsed.values(*table.get("text-options", ()))]


def credential_values(argv: list[str]) -> list[str]:
    """The values of the form's credential options: secrets it uses without showing them
    (`ssh -i KEY`, `docker run --env-file .env`)."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None:
        return []
    return [v for table, parsed in _down(found[1], argv[1:]) for v in parsed.values(*table.get("credential-options", ()))]


def _old_style(table: dict, args: list[str]) -> list[str]:
    """`tar tvf x.tar` as `tar -tvf x.tar`: a first word without a dash is a cluster of options
    for a tool whose table says `old-style-options`."""
    if not (table.get("old-style-options") and args and args[0][:1].isalpha() and args[0].isalnum()):
        return args
    values, rest, out = table.get("value-options", frozenset()), list(args[1:]), []
    for letter in args[0]:  # each letter that takes a value takes the next word, in order: `cIf id x.tar`
        out.append("-" + letter)
        if "-" + letter in values and rest:
            out.append(rest.pop(0))
    return out + rest


def _deepest(argv: list[str]) -> tuple[dict, Parsed] | None:
    """(table, parsed arguments) of the last subcommand `argv` names (_down), or None for a tool
    the data does not know."""
    found = load_knowledge().table(argv[0]) if argv else None
    if found is None:
        return None
    deepest = None
    for deepest in _down(found[1], argv[1:]):
        pass
    return deepest


def _down(table: dict, args: list[str]):
    """(table, parsed arguments) of the tool and of each subcommand named in turn (`docker compose
    up` -> docker's, compose's, up's), each reading the words after its subcommand's name."""
    args = _old_style(table, args)
    while True:
        parsed = _parse(args, table)
        yield table, parsed
        sub = table["sub"].get(args[parsed.first_operand]) if parsed.first_operand >= 0 and table["sub"] else None
        if sub is None:
            return
        table, args = sub, args[parsed.first_operand + 1 :]


def program_files(argv: list[str]) -> list[str]:
    """The files a command runs as a program, as written: its command word when that is a path
    (`./build.sh`), its program operand (`python3 x.py`, `sh s`, `source env.sh`), the values of
    its program options (`make -f F`, `sed -f F`), or the files it reads when none is given
    (`make` reads ./Makefile); and always the files it reads at every start (`startup-files`)."""
    if not argv:
        return []
    files = [argv[0]] if "/" in argv[0] else []
    found = load_knowledge().table(argv[0])
    if found is None:
        return files
    table = found[1]
    parsed = parse(argv[1:], spec_of(table))
    given = [v for option, v in parsed.options if v is not None and option in table.get("program-options", ())]
    if table.get("program-operand") and parsed.operands and not parsed.has(*table.get("ends-options", ())):
        given.append(parsed.operands[0])
    defaults = table.get("default-programs", ())
    for sub, _ in list(_down(table, argv[1:]))[1:]:  # a subcommand's own (`go test` runs *_test.go)
        defaults = sub.get("default-programs", defaults)
    return files + (given or list(defaults)) + sorted(table.get("startup-files", ()))  # run whatever it is given


def unabbreviated(argv: list[str]) -> tuple[str, ...] | None:
    """`argv` with its subcommand written out and the options before it left out, for a tool that
    takes any unique prefix of one (`abbreviated-subcommands`: `npm --registry R pub x` is `npm
    publish x`), or None (no operand, not a prefix of exactly one, or a full name already)."""
    found = load_knowledge().table(argv[0]) if len(argv) > 1 else None
    if found is None or not found[1].get("abbreviated-subcommands"):
        return None
    table = found[1]
    at = parse(argv[1:], spec_of(table)).first_operand
    names = table.get("subcommands", frozenset())
    word = argv[1 + at] if at >= 0 else ""
    if not word or word in names:
        return None
    fits = [name for name in names if name.startswith(word)]
    return (argv[0], fits[0], *argv[2 + at :]) if len(fits) == 1 else None


def startup_files(argv: list[str]) -> frozenset[str]:
    """The files `argv`'s tool reads at every start from its directory or one above it, which can
    make it run code (`startup-files`: mvn's `.mvn/jvm.config`); none for a tool without a table."""
    found = load_knowledge().table(argv[0]) if argv else None
    return frozenset() if found is None else found[1].get("startup-files", frozenset())


def from_a_pipe(value: str) -> bool:
    """A program file that is really standard input, a pipe or a process substitution."""
    if value.startswith(("<(", ">(", "=(")) or value in STDIN_FILES:
        return True
    if "/" not in value:
        return False
    path = posixpath.normpath(value)
    if path.startswith("/"):
        path = _PROC_ROOT.sub("", "/" + path.lstrip("/"))  # `//dev/stdin`: normpath keeps the `//`
    return path in STDIN_FILES or path.endswith(("/dev/stdin", "/dev/tty")) or bool(_FD_PATH.search(path))


def git_code_key(key: str) -> bool:
    """Whether git runs what the config key `key` names (`alias.x`, `core.pager`): tools/vcs.toml."""
    from gatekeep.name.checks import code_key

    found = load_knowledge().table("git")
    return found is not None and code_key(key, found[1].get("code-keys", ()))
