"""Checks: readers for what a tool's table cannot say, named by the data's `checks` (knowledge.py).

Each gets the parsed arguments (options.Parsed), the command as shown, the tool's
root table and the raw arguments, and says why the command runs code, or None.
Imported only when a line names a tool that has one.
"""

from __future__ import annotations

from gatekeep.core.lazyre import lazy
from gatekeep.name.options import Parsed
from gatekeep.read.shellwords import INTEGER_VARIABLES, arithmetic_risk, assignment_risk

FROM_A_PIPE = "\x00 input from a pipe"  # `fed`, when what the command reads cannot be seen


def code_key(key: str, patterns) -> bool:
    """Whether `key` matches one of the fnmatch `patterns`, case aside. The patterns become one
    regular expression, made once: trying each on each key took 0.1 ms a key (`git -c k=v` 18,000 times)."""
    patterns = tuple(patterns)
    if not patterns:
        return False
    found = _CODE_KEY_PATTERNS.get(patterns)
    if found is None:
        import fnmatch  # only when a config option is given: fnmatch imports re
        import re

        found = _CODE_KEY_PATTERNS[patterns] = re.compile("|".join(fnmatch.translate(p.lower()) for p in patterns))
    return found.match(key.lower()) is not None


_CODE_KEY_PATTERNS: dict = {}

# ---------------------------------------------------------------------------

def program_texts(parsed: Parsed, inline: tuple[str, ...], files: tuple[str, ...]) -> list[str]:
    """The program texts given inline (`sed -e S`, `awk -e P`), else the first operand unless a
    program file is given."""
    given = parsed.values(*inline)
    return given if given or parsed.has(*files) else parsed.operands[:1]


def _sed_script(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    from gatekeep.name import sedscript

    for script in program_texts(parsed, ("-e", "--expression"), ("-f", "--file")):
        read = sedscript.read(script)
        if read.unreadable:
            return f"{shown} has a script gatekeep cannot read as sed, which could run a command (e)"
        if read.runs:
            return f"{shown} runs a shell command from its script (e)"
    return None


def _awk_program(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    for program in program_texts(parsed, ("-e", "--source"), ("-f", "--file", "-E", "--exec")):
        why = _awk_effect(program)
        if why:
            return f"{shown} {why}"
    return None


def _awk_w_exec(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """mawk's `-W exec FILE` (any abbreviation of `exec`, attached or not): the program is the
    file, named where no `-f` shows it; a rule must name the form."""
    for value in parsed.values("-W"):
        word = value.split("=", 1)[0].strip().lower()
        if word and "exec".startswith(word) and word[0] == "e":
            return f"{shown} -W exec runs the program in the file it names"
    return None


def _awk_effect(program: str) -> str | None:
    """What an awk program does besides reading: runs a command (`system()`, a pipe, `@load`), or
    writes a file (`print > FILE`). Read with strings and regular expressions taken out."""
    code = _awk_code_only(program)
    if "system" in code.replace(" ", "").split("(")[0] or _AWK_RUNS.search(code):
        return "runs commands from its program"
    depth = 0
    statement_prints = False
    for i, c in enumerate(code):
        if c in "(":
            depth += 1
        elif c == ")":
            depth = max(depth - 1, 0)
        elif c in ";{}\n":
            statement_prints = False
        elif c == "p" and code.startswith(("print", "printf"), i) and (i == 0 or not code[i - 1].isalnum()):
            statement_prints = True
        elif c == ">" and depth == 0 and statement_prints:
            return "writes a file from its program (print >)"
    return None


_AWK_RUNS = lazy(r"\bsystem\s*\(|(?<!\|)\|(?!\|)|@load\b|@include\b")


def _awk_code_only(program: str) -> str:
    """The program with its string and regular-expression literals emptied."""
    out: list[str] = []
    i, n = 0, len(program)
    previous = ""  # the last character that is not a blank: a `/` after an operand divides
    while i < n:
        c = program[i]
        if c == '"' or (c == "/" and (not previous or previous in "(,=~!&|{};:?+-*%<>\n")):
            j = i + 1  # a string, or a regular expression where an operand may start: to its end
            while j < n and program[j] != c:
                j += 2 if program[j] == "\\" else 1
            out.append(c + c)
            i, previous = j + 1, c
            continue
        if c == "#":  # a comment, to the end of the line
            end = program.find("\n", i)
            i = n if end < 0 else end
            continue
        out.append(c)
        if not c.isspace():
            previous = c
        i += 1
    return "".join(out)


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
        if m and (m["op"] == "!=" or m["name"] in _MAKE_RUNNERS or set(m["value"]) & _SHELL_SYNTAX):
            return f"{shown} sets the variable {m['name']}, which runs a command"
    return None


# a value that a recipe's shell would read as more than words (`make CC='x; rm -rf ~'`)
_SHELL_SYNTAX = frozenset("$`;&|<>\n()")


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
    if code_key(operands[0], root.get("code-keys", ())):
        return f"{shown} sets {operands[0]}, which runs a command"
    if code_key(operands[0], root.get("loss-keys", ())):  # what later commands throw away, not code: it still asks
        return f"{shown} sets {operands[0]}, which makes later commands throw away work they would keep"
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
        risk = assignment_risk(word) if equals and value.startswith("(") else None  # `declare a=([x]=1)`
        if risk:
            return f"{shown} {risk.removeprefix('it ')}"
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


_ARITHMETIC_COMPARISONS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def _cond_operands(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`[[ … ]]`: test's (-t, -v), and the operands of -eq, -ne, -lt, -le, -gt and -ge, which
    bash evaluates as arithmetic there (test parses them as plain numbers), quoted or not:
    `[[ 1 -eq 'a[$(cmd)]' ]]` runs cmd."""
    for i, word in enumerate(args):
        if word in _ARITHMETIC_COMPARISONS:
            for operand in (args[i - 1] if i else "", args[i + 1] if i + 1 < len(args) else ""):
                if _arithmetic(operand):
                    return f"{shown} compares {operand or 'nothing'} as arithmetic, which evaluates any variable it names"
    return _test_operands(parsed, shown, root, args)


def _arithmetic_expression(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    """`(( EXPR ))`: EXPR is evaluated; inert only as shellwords.arithmetic_risk says."""
    if arithmetic_risk(args[0] if args else "") is None:
        return None
    return f"{shown} evaluates every variable it names as arithmetic, and their values in turn (one like 'a[$(cmd)]' runs cmd)"


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


# What a SQL client runs besides SQL: psql's backslash commands, sqlite3's and duckdb's dot
# commands, mysql's client commands. Those listed here only show or set the display; any
# other (`\\!`, `.shell`, `system`, `\\o |cmd`, `.output |cmd`, `pager cmd`, `\\i file`...)
# can run a shell command, or write or read files, and makes the form one that runs code.
_PSQL_SAFE = frozenset("d dt dv di ds df dn du dx dT l x timing conninfo echo q ? h c connect pset a t H encoding".split())
_DOT_SAFE = frozenset(
    "tables schema indexes indices databases headers header mode width nullvalue timer help show dump print quit "
    "exit separator changes echo bail stats eqp fullschema dbinfo version".split()
)
_MYSQL_COMMANDS = frozenset("system pager edit source tee nopager notee".split())
_SQL_RUNS = lazy(r"(?is)\bprogram\b|\bload_extension\b|\bsys_exec\b|\bxp_cmdshell\b")


def _sql_client_commands(parsed: Parsed, shown: str, root: dict, args: list[str]) -> str | None:
    texts = parsed.values(*SQL_TEXT_OPTIONS) + (parsed.operands[1:] if root.get("sql-operands") else [])
    for text in texts:
        for line in text.replace(";", "\n").split("\n"):
            line = line.strip()
            head = line.split(None, 1)[0].lower() if line else ""
            if head.startswith("\\") and head[1:].rstrip("+S") not in _PSQL_SAFE and head[1:2] != "d":
                return f"{shown} runs the client command {head}, which can run a shell command or touch files"
            if head.startswith(".") and head[1:] not in _DOT_SAFE:
                return f"{shown} runs the dot command {head}, which can run a shell command or touch files"
            if head in _MYSQL_COMMANDS:
                return f"{shown} runs the client command {head}, which can run a shell command or touch files"
        if _SQL_RUNS.search(text):
            return f"{shown} runs SQL that starts a program or loads code (PROGRAM, load_extension)"
    return None


CHECKS = {
    "number-operand": _number_operand,
    "name-operands": _name_operands,
    "test-operands": _test_operands,
    "cond-operands": _cond_operands,
    "arithmetic-expression": _arithmetic_expression,
    "printf-arithmetic": _printf_arithmetic,
    "sed-script": _sed_script,
    "awk-program": _awk_program,
    "awk-w-exec": _awk_w_exec,
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
    "sql-client-commands": _sql_client_commands,
}


# ---------------------------------------------------------------------------
# Loss checks: whether a form throws work away, where options alone cannot tell (a table's
# `loss-checks`). Each gets the parsed arguments, the raw ones, the text fed on standard input
# (or FROM_A_PIPE) and the tool's table.
# ---------------------------------------------------------------------------


def _git_checkout_paths(parsed: Parsed, args: list[str], fed: str | None, table: dict) -> bool:
    """`git checkout -- PATHS`, `git checkout .`, `git checkout HEAD src/`: paths are overwritten
    with the index's or a commit's version, and their uncommitted changes are gone. Without `--`
    git takes a word for a path when it names no branch; gatekeep, which does not ask git, takes
    it for one when it is `.`, a glob or an existing file (`git checkout feature/x` switches)."""
    import os

    if "--" in args:
        return bool(args[args.index("--") + 1 :])
    operands = parsed.operands
    if parsed.has("-b", "-B", "--orphan"):  # the new branch is the option's value; one start point
        return len(operands) >= 2
    paths = [w for w in operands if w == "." or any(c in w for c in "*?[") or os.path.lexists(w)]
    return bool(paths) or len(operands) >= 2


def _git_restore_worktree(parsed: Parsed, args: list[str], fed: str | None, table: dict) -> bool:
    """`git restore PATHS` overwrites the working tree; `git restore --staged PATHS` only unstages."""
    return not parsed.has("-S", "--staged") or parsed.has("-W", "--worktree")


def _git_push_refspec(parsed: Parsed, args: list[str], fed: str | None, table: dict) -> bool:
    """`git push origin +main` forces that ref; `git push origin :main` deletes it."""
    return any(w.startswith("+") or w.startswith(":") for w in parsed.operands[1:])


def _git_push_lease(parsed: Parsed, args: list[str], fed: str | None, table: dict) -> bool:
    """`--force-with-lease` without an expected commit (`=REF:SHA`): the lease is whatever the
    remote-tracking branch says, and a fetch in the background makes it pass."""
    return any(o == "--force-with-lease" and (v is None or ":" not in v or v.endswith(":")) for o, v in parsed.options)


def _git_prune_now(parsed: Parsed, args: list[str], fed: str | None, table: dict) -> bool:
    """`git gc --prune=now` (or `all`) drops unreachable commits at once, with no grace period."""
    return any(v in ("now", "all") for v in parsed.values("--prune", "--expire"))


_SQL_STATEMENT = lazy(
    r"(?is)\b(drop\s+(table|database|schema|view|materialized|index|user|role|function|procedure|sequence|trigger"
    r"|extension|type|owned|column|keyspace|collection)|truncate\b|alter\s+table\b.*\bdrop\b)"
)
# every row, unless a WHERE picks some: DELETE FROM, and an UPDATE statement (not `ON CONFLICT DO UPDATE`)
_SQL_DELETE = lazy(r"(?is)\bdelete\s+from\b|^\s*update\s+\S+\s+set\b")
_SQL_WHERE = lazy(r"(?is)\bwhere\b")
# comments: a block (`DROP/**/TABLE`; MySQL runs the text of `/*! … */`) and a line's rest (`--`, `#`)
_SQL_BLOCK = lazy(r"(?s)/\*!?|\*/")
_SQL_COMMENTS = lazy(r"(?s)/\*(?!!).*?\*/|--[^\n]*|#[^\n]*")


def _sql_readings(text: str) -> tuple[str, ...]:
    """The SQL as a client may read it: as written, with its comments' markers as spaces (their text
    kept, as MySQL runs `/*! … */`), and with its comments gone (`DROP -- x⏎TABLE`)."""
    return text, _SQL_BLOCK.sub(" ", text), _SQL_COMMENTS.sub(" ", text)
SQL_TEXT_OPTIONS = ("-c", "--command", "-e", "--execute", "-q", "--query", "-Q", "-cmd")
SQL_FILE_OPTIONS = ("-f", "--file", "-i", "--input", "-init")
MAX_SQL_FILE = 256 * 1024  # a migration read to find a DROP; a larger file is not read, and asks


def sql_texts(parsed: Parsed, fed: str | None, positional: bool) -> list[str] | None:
    """The SQL a client runs: given with -c/-e (and sqlite3's `DB SQL` when `positional`), in the
    files it is given (-f), and fed on its input; None when some of it cannot be seen (a pipe, a
    file too large or unreadable)."""
    texts = parsed.values(*SQL_TEXT_OPTIONS) + (parsed.operands[1:] if positional else [])
    if fed == FROM_A_PIPE:
        return None
    texts += [fed] if fed else []
    for path in parsed.values(*SQL_FILE_OPTIONS):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(MAX_SQL_FILE + 1)
        except OSError:
            return None
        if len(text) > MAX_SQL_FILE:
            return None
        texts.append(text)
    return texts


def _sql_destroys(parsed: Parsed, args: list[str], fed: str | None, table: dict) -> bool:
    """SQL that drops or empties a table: DROP, TRUNCATE, ALTER TABLE … DROP, or DELETE or UPDATE
    without WHERE, however it reaches the client (sql_texts) and however its comments fall
    (_sql_readings); SQL it cannot see counts as such."""
    texts = sql_texts(parsed, fed, table.get("sql-operands", False))
    if texts is None:
        return True
    for statement in (s for text in texts for reading in _sql_readings(text) for s in reading.split(";")):
        if _SQL_STATEMENT.search(statement):
            return True
        if _SQL_DELETE.search(statement) and not _SQL_WHERE.search(statement):
            return True
    return False


def _redis_flush(parsed: Parsed, args: list[str], fed: str | None, table: dict) -> bool:
    if fed == FROM_A_PIPE:
        return True
    words = [w.lower() for w in parsed.operands] + (fed.lower().split() if fed else [])
    return "flushall" in words or "flushdb" in words


LOSS_CHECKS = {
    "git-checkout-paths": _git_checkout_paths,
    "git-restore-worktree": _git_restore_worktree,
    "git-push-refspec": _git_push_refspec,
    "git-push-lease": _git_push_lease,
    "git-prune-now": _git_prune_now,
    "sql-destroys": _sql_destroys,
    "redis-flush": _redis_flush,
}
