"""The code a command runs besides itself: scripts it hands to a shell, and inline code.

`bash -c 'SCRIPT'`, `eval 'A' 'B'`, `script -c CMD`, `watch 'CMD'`, `flock FILE -c CMD`
and `find ... -exec CMD ;` run commands that gatekeep reads as a script of
their own (gate.py parses it). Interpreters given code on the command line
(`python -c`, `node -e`...) or reading their program from a pipe
(`curl ... | sh`) run code gatekeep cannot read: only a rule naming that form
may allow them (decide.py).
"""

from __future__ import annotations

from gatekeep.core.lazyre import lazy
from gatekeep.name.wrappers import basename
from gatekeep.read.shellwords import Word, expansion_end

SHELLS = frozenset("sh bash zsh dash ksh mksh ash".split())
# Shells that may not be bash (sh is dash on Debian and Ubuntu), and the bash syntax they read
# as something else: `&>` is `&` then `>`, `$'…'` and `$"…"` are `$` and a string, `<<<` a heredoc.
# A script of theirs holding one is read for deny rules, but never allowed.
POSIX_SHELLS = frozenset("sh dash ash ksh mksh yash posh".split())
BASH_ONLY = ("&>", "|&", "$'", '$"', "<<<", "<(", ">(")
TRANSPARENT = SHELLS | {"eval", "xargs"}


def script_of(words) -> tuple[str | None, tuple[str, ...]]:
    """The script a shell is told to run: `bash -c 'SCRIPT'`, `sh -ec 'SCRIPT'`, `eval 'A' 'B'`."""
    if not words:
        return None, ()
    tool = basename(words[0].value)
    if tool == "find":
        return _find_commands(words)
    if tool in ("source", ".") and any(w.dynamic for w in words[1:]):
        return None, (f"{tool} runs code produced at run time",)
    if tool in ("su", "runuser", "script"):  # `su -c 'CMD' user` runs CMD through a shell
        return _command_option(tool, words)
    if tool == "sg":  # `sg GROUP -c CMD` and `sg GROUP CMD` run CMD through a shell
        rest = [w for w in words[1:] if w.value != "-"][1:]
        return _script_text(tool, rest[1:2] if rest[:1] and rest[0].value == "-c" else rest) if rest else (None, ())
    if tool == "tmux":
        return _tmux_command(words)
    if tool in EVALUATES_SUBSCRIPTS:
        found = _quoted_substitutions(tool, words)
        if found is not None:
            return found
    if tool == "git":  # `git -c alias.x='!CMD'`, `git -c core.pager=CMD`: read CMD, so deny rules see it
        from gatekeep.name.knowledge import git_code_key

        for i, word in enumerate(words[1:-1], start=1):
            key, _, value = words[i + 1].value.partition("=")
            if word.value == "-c" and git_code_key(key) and value:
                return _script_text(tool, [Word(value.removeprefix("!"), words[i + 1].dynamic)])
        return None, ()
    if tool == "eval":
        script = list(words[1:])
    elif tool in SHELLS or tool == "fish":  # a fish script is read with bash's grammar: unreadable asks
        start, has_c = _shell_options(words)
        if not has_c:
            return None, ()  # `bash script.sh` runs a file gatekeep cannot see; no script to read here
        script = list(words[start : start + 1])
        if script and _reads_startup_files(words):
            text, _ = _script_text(tool, script)
            return text, (f"{tool} also runs the start-up file --rcfile names besides its script",)
        if script and tool in POSIX_SHELLS and any(token in script[0].value for token in BASH_ONLY):
            text, _ = _script_text(tool, script)
            return text, (f"{tool} (dash on many systems) reads this script differently from bash",)
    else:
        return None, ()
    if not script:
        return None, ()
    return _script_text(tool, script)


STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})


def stdin_script(words, redirects) -> tuple[str | None, tuple[str, ...]]:
    """The script a shell reads from a here-string or heredoc: `bash <<< 'CMD'`, `sh <<EOF`,
    `source /dev/stdin <<< 'CMD'`. None when the command reads no program from its input."""
    fed = next((r for r in reversed(redirects) if r.stdin_text is not None), None)
    if fed is None or not words:
        return None, ()
    tool = basename(words[0].value)
    values = [w.value for w in words[1:]]
    if tool in SHELLS:
        operands = [v for v in values if not v.startswith(("-", "+"))]
        if any("c" in v[1:] for v in values if v.startswith("-") and not v.startswith("--")) or operands[:1] not in (
            [],
            ["-"],
        ):
            return None, ()  # `bash -c ...` or `bash script.sh`: its input is data, not its program
    elif tool not in ("source", ".") or values[:1] == [] or values[0] not in STDIN_FILES:
        return None, ()
    return _script_text(tool, [Word(fed.stdin_text, fed.dynamic)])


# tmux commands whose last argument is a shell command, and their options that take a value
_TMUX_RUNS = frozenset(
    {
        "new",
        "new-session",
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "respawn-pane",
        "respawnp",
        "respawn-window",
        "respawnw",
        "run-shell",
        "run",
        "display-popup",
        "popup",
    }
)
_TMUX_VALUES = frozenset("-c -e -F -n -s -t -x -y -f -l -T -S".split())


def _tmux_command(words) -> tuple[str | None, tuple[str, ...]]:
    """`tmux new -d 'CMD'`, `tmux split-window CMD...`: tmux runs CMD with a shell."""
    values = [w.value for w in words]
    at = next((i for i, v in enumerate(values[1:], start=1) if v in _TMUX_RUNS), None)
    if at is None:
        return None, ()
    i = at + 1
    while i < len(words) and values[i].startswith("-"):
        i += 2 if values[i] in _TMUX_VALUES else 1
    if i >= len(words):
        return None, ()
    return _script_text("tmux", list(words[i:]))


def _shell_options(words) -> tuple[int, bool]:
    """Where a shell's options end (`--` skipped), and whether -c is among them.

    `-o NAME`, `+o NAME`, `-O NAME`, `+O NAME` take the next word, and a cluster takes
    one for each o or O in it (`-eo pipefail`, `-oc pipefail SCRIPT`); `--rcfile FILE`
    and `--init-file FILE` take theirs too.
    """
    i, has_c = 1, False
    while i < len(words):
        value = words[i].value
        if value == "--":
            return i + 1, has_c
        if value in ("--rcfile", "--init-file"):
            i += 2
        elif value.startswith("--"):
            i += 1
        elif value[:1] in ("-", "+") and len(value) > 1:
            has_c = has_c or (value[0] == "-" and "c" in value[1:])
            i += 1 + value.count("o") + value.count("O")
        else:
            break
    return i, has_c


# Shell options that name a start-up file to run besides the script: `bash --rcfile FILE -ic`.
# The script is still read, but it is not all that runs. (`-i` and `-l` read the user's own
# start-up files, which a line cannot write without being denied.)
_STARTUP_OPTIONS = frozenset({"--rcfile", "--init-file"})


def _reads_startup_files(words) -> bool:
    return any(word.value in _STARTUP_OPTIONS or word.value.startswith(("--rcfile=", "--init-file=")) for word in words[1:])


# Builtins that evaluate an array subscript or arithmetic given as a string, and so run
# a `$( )` even when it was quoted: `printf -v 'a[$(cmd)]' x`, `test -v 'a[$(cmd)]'`, `let`.
EVALUATES_SUBSCRIPTS = frozenset(
    "printf test [ [[ let declare typeset local readonly export unset read mapfile readarray".split()
)


def _quoted_substitutions(tool: str, words) -> tuple[str, tuple[str, ...]] | None:
    scripts = []
    for word in words[1:]:
        value = word.value
        if "[" not in value and tool != "let":
            continue
        i = 0
        while i < len(value):
            if value.startswith("$(", i) or value[i] == "`":
                end = expansion_end(value, i)
                scripts.append(value[i + (1 if value[i] == "`" else 2) : end - 1])
                i = end
            else:
                i += 1
    if not scripts:
        return None
    text, _ = _script_text(tool, [Word("; ".join(scripts))])
    return text, (f"{tool} evaluates a subscript that runs a command",)


def _command_option(tool: str, words) -> tuple[str | None, tuple[str, ...]]:
    """The script given as `-c CMD`, `-qc CMD` (a cluster ending in c), `--command CMD` or `--command=CMD`."""
    for i, word in enumerate(words[1:], start=1):
        value = word.value
        if value.startswith("--command="):
            return _script_text(tool, [Word(value.split("=", 1)[1], word.dynamic)])
        takes_next = value == "--command" or (value[:1] == "-" and value[1:2] != "-" and value.endswith("c"))
        if takes_next and i + 1 < len(words):
            return _script_text(tool, [words[i + 1]])
    return None, ()


def _script_text(tool: str, script) -> tuple[str, tuple[str, ...]]:
    text = " ".join(w.value for w in script)
    if any(w.dynamic for w in script):
        # still read for deny rules, as written; but it can never be allowed
        return text, (f"{tool} runs a script computed at run time",)
    return text, ()


def wrapped_script(wrapper: str, words, options=()) -> tuple[str | None, tuple[str, ...]]:
    """The script of `watch 'CMD'`, `flock FILE -c CMD` or `parallel 'CMD {}' ::: ARGS`, which
    run it with a shell; `options` are the wrapper's own (before CMD)."""
    if wrapper == "parallel":
        return _parallel_script(words, list(options))
    if wrapper == "flock":
        if words and words[0].value in ("-c", "--command"):
            return _script_text(wrapper, list(words[1:2]))
        import shlex  # here: shlex imports re, which typical lines never need

        return _script_text(wrapper, [Word(shlex.join(w.value for w in words), any(w.dynamic for w in words))])
    return _script_text(wrapper, list(words))


# what makes an argument more than a glob or a ~ path: its value is computed when it runs
_COMPUTED = frozenset("$`{}()<>|")
PARALLEL_INPUT = '"$PARALLEL_INPUT"'  # an argument nobody can see yet: from standard input or a file
_PARALLEL_SOURCES = frozenset({":::", ":::+", "::::", "::::+"})
# GNU parallel's replacement strings ({}, {.}, {/}, {//}, {/.}, {#}, {%}, {3}, {3/.}, --plus's
# {+/}…), and {= perl =}, which runs Perl code on each argument
_REPLACEMENT = lazy(r"\{=.*?=\}|\{(?P<n>-?[0-9]+)?[^{}\s]*\}", flags=16)  # re.DOTALL
MAX_PARALLEL_JOBS = 32
_PARALLEL_GROUPING = frozenset("-N -n --max-args -X -m --xargs -L --max-lines -l -s --max-chars --colsep -C".split())
_UNSEEN = (PARALLEL_INPUT, True)  # (an argument's value, whether it stands as the shell gave it)
# options that name a string standing for the argument in CMD (-I is xargs's), and --rpl, which
# defines one computed by Perl code
_PARALLEL_REPLACE = frozenset(
    "-I --replace --er --extensionreplace --bnr --basenamereplace --dnr --dirnamereplace --bner "
    "--basenameextensionreplace --seqreplace --slotreplace".split()
)
# parallel's options that change no file, run nothing elsewhere and read no input of their own: with
# only these, parallel merely runs its commands, which are decided one by one (as xargs's are)
QUIET_PARALLEL = frozenset(
    "-j --jobs -P --max-procs -k --keep-order -N --max-args -n -X -m -q --quote --tag --line-buffer --lb "
    "--group -u --ungroup --bar --eta --progress --will-cite -0 --null -v --verbose -t --dry-run --dryrun "
    "--no-notice -I --replace --halt --halt-on-error --delay --timeout --retries --colsep -C -d --delimiter "
    "--plus --trim -r --no-run-if-empty --keep-going --ctag --colour --color".split()
)


def quiet_parallel(argv) -> bool:
    """Whether `parallel OPTIONS CMD …` sets only options of QUIET_PARALLEL."""
    from gatekeep.name.wrappers import wrapper_of

    known = wrapper_of("parallel").value_options
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] not in _PARALLEL_SOURCES:
        option = argv[i].split("=", 1)[0]
        if option not in QUIET_PARALLEL and not (option[:2] in QUIET_PARALLEL and option[:2] in known):
            return False
        i += 2 if option in known and option == argv[i] else 1  # a value of its own follows
    return True


def _parallel_script(words, options: list[str]) -> tuple[str | None, tuple[str, ...]]:
    """`parallel CMD ::: A B ::: C`: the commands it runs, one per combination of arguments, the way
    xargs's are read (normalize.py): each argument put where CMD's replacement strings are, else
    after CMD, quoted as parallel quotes it. Arguments from standard input, `:::: FILE` or
    `-a FILE`, or too many combinations, are the unknown PARALLEL_INPUT."""
    import itertools

    start = next((i for i, w in enumerate(words) if w.value in _PARALLEL_SOURCES), len(words))
    text, why_not = _script_text("parallel", list(words[:start]))
    replace, computed, from_file = _parallel_options(options)
    # several arguments to a job (-N 3, -X, --xargs…) or one split into columns (--colsep): which
    # words a job gets is parallel's arithmetic, so every argument is one nobody can see here
    from_file |= any(o.split("=", 1)[0] in _PARALLEL_GROUPING or o[:2] in ("-N", "-n", "-L", "-C") for o in options)
    if computed:  # `--rpl 'TAG perl'`: TAG stands for what Perl code makes of the argument
        return PARALLEL_INPUT, (*why_not, "parallel runs Perl code on each argument (--rpl)")
    groups: list[list[tuple[str, bool]]] = [[_UNSEEN]] if from_file else []
    for word in words[start:]:
        if word.value in _PARALLEL_SOURCES:
            groups.append([] if word.value.rstrip("+") == ":::" else [_UNSEEN])
        elif groups and groups[-1] != [_UNSEEN]:
            # with no command, each argument is a command line (`parallel ::: 'make a' 'make b'`);
            # else it is quoted, as the shell gave it: a variable or a glob stays one, and `~`
            # was already the home directory
            raw = not text or word.dynamic or word.value.startswith("~")
            groups[-1].append((word.value, raw))
    groups = [g or [_UNSEEN] for g in groups] or [[_UNSEEN]]
    if any("{=" in m.group() for m in _REPLACEMENT.finditer(text)):
        why_not += ("parallel runs Perl code given in {= =} on each argument",)
    jobs = list(itertools.islice(itertools.product(*groups), MAX_PARALLEL_JOBS + 1))
    if len(jobs) > MAX_PARALLEL_JOBS:
        jobs = [tuple(_UNSEEN for _ in groups)]
    scripts = [_parallel_job(text, job, replace) for job in jobs]
    if any(_UNSEEN in job for job in jobs):
        why_not += ("parallel runs it on arguments nobody can see yet",)
    elif any(PARALLEL_INPUT in script for script in scripts):
        why_not += ("parallel runs it on values made at run time ({#}, {= =}, a part of an unseen argument)",)
    return "\n".join(scripts), tuple(dict.fromkeys(why_not))


def _parallel_options(options: list[str]) -> tuple[dict[str, str], bool, bool]:
    """(each string -I and its kin make stand for the argument, with the replacement string it
    means; whether --rpl computes one; whether arguments come from a file: -a)."""
    replace: dict[str, str] = {}
    computed = from_file = False
    i = 0
    while i < len(options):
        option, _, attached = options[i].partition("=")
        value = attached or (options[i + 1] if i + 1 < len(options) else "")
        if option.startswith("-I") and len(option) > 2:
            replace[option[2:]] = "{}"
        elif option in ("-I", "--replace"):
            replace[value] = "{}"
        elif option in _PARALLEL_REPLACE:  # --er, --bnr…: a part of the argument (`{.}`)
            replace[value] = "{.}"
        elif option == "-i":  # the old -i means -I {}
            replace["{}"] = "{}"
        computed |= option == "--rpl"
        from_file |= option in ("-a", "--arg-file") or (option.startswith("-a") and len(option) > 2)
        i += 1
    replace.pop("", None)
    return replace, computed, from_file


def _parallel_job(template: str, job: tuple[tuple[str, bool], ...], replace: dict[str, str]) -> str:
    for string, meaning in replace.items():  # `-I @ 'echo @'`: a string of the user's for the argument
        template = template.replace(string, meaning)
    if not _REPLACEMENT.search(template):
        return " ".join((template, *(_argument_text(a) for a in job))).lstrip(" ")

    def argument(match) -> str:
        n = match.group("n")
        if n is None:
            chosen = job
        else:
            k = int(n)
            chosen = (job[k - 1],) if 0 < k <= len(job) else (job[k],) if -len(job) <= k < 0 else (_UNSEEN,)
        modifier = match.group()[1 + len(n or "") : -1]
        return " ".join(_argument_text(_part(a, modifier)) for a in chosen)

    return _REPLACEMENT.sub(argument, template)


def _part(argument: tuple[str, bool], modifier: str) -> tuple[str, bool]:
    """What `{.}` (no extension), `{/}` (base name), `{//}` (directory) and `{/.}` make of an
    argument; any other modifier ({#}, {%}, --plus's, {= =}), or an argument known only at
    run time, is unknown: `r{.} -rf ~` with `m.x` runs `rm -rf ~`."""
    value, raw = argument
    if not modifier:
        return argument
    if modifier not in (".", "/", "//", "/.") or (raw and not _COMPUTED.isdisjoint(value)):
        return _UNSEEN
    import posixpath

    # a glob (or ~) is cut as written: each name it stands for is cut at the same `/`, and at
    # the same `.` unless the extension holds a glob character (`a.*` may be `a.b.c`)
    if modifier == "//":
        return posixpath.dirname(value) or ".", raw
    if "/" in modifier:
        value = posixpath.basename(value)
    if "." in modifier:
        value, extension = posixpath.splitext(value)
        if raw and any(c in extension for c in "*?["):
            return _UNSEEN
    return value, raw


def _argument_text(argument: tuple[str, bool]) -> str:
    import shlex  # here: shlex imports re, which typical lines never need

    value, raw = argument
    return value if raw else shlex.quote(value)


FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# find's tests and actions that take arguments, and how many
FIND_ARGUMENTS = {
    **dict.fromkeys(
        "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -newer -anewer -cnewer "
        "-perm -type -xtype -user -group -uid -gid -size -atime -ctime -mtime -amin -cmin -mmin -used -links "
        "-inum -samefile -maxdepth -mindepth -fstype -context -printf -fprint -fprint0 -fls -regextype -files0-from "
        "-D -O".split(),
        1,
    ),
    "-fprintf": 2,
}


def _find_commands(words) -> tuple[str | None, tuple[str, ...]]:
    """The commands of `find ... -exec CMD {} ;` (and -execdir, -ok, -okdir), as one script;
    `-delete` counts as `rm -r -f` on find's start paths."""
    values = [w.value for w in words]
    commands: list[list[str]] = []
    primaries: list[str] = []  # the expression's own words: not a test's argument, not an -exec's command
    i = 1
    while i < len(values):
        value = values[i]
        if value in FIND_ACTIONS:
            end = next((j for j in range(i + 1, len(values)) if values[j] in (";", "+")), len(values))
            if end > i + 1:
                commands.append(values[i + 1 : end])
            i = end
        else:
            primaries.append(value)
            # `-name -delete` names a file, it deletes nothing; -newerXY (-newermt…) takes one too
            i += 1 + FIND_ARGUMENTS.get(value, 1 if value.startswith("-newer") else 0)
            continue
        i += 1
    starts = _find_starts(values) or ["."]
    if "-mindepth" not in primaries:
        # find's first results are its start paths: `find / -exec rm -rf {} +` also runs `rm -rf /`
        commands += [[start if v == "{}" else v for v in c] for c in commands if "{}" in c for start in starts]
    if "-delete" in primaries:
        commands.append(["rm", "-r", "-f", *starts])
    removes = "-delete" in primaries or any(c and c[0].rsplit("/", 1)[-1] in ("rm", "shred") for c in commands)
    if removes and not _names_spare_git(values):
        # what find removes below a start path: its .git too, unless a name test spares it
        commands.append(["rm", "-r", "-f", *(start.rstrip("/") + "/.git" for start in starts)])
    if not commands:
        return None, ()
    dynamic = any(w.dynamic for w in words)
    import shlex  # here: shlex imports re, which typical lines never need

    text = "; ".join(shlex.join(c) for c in commands)
    if any("{}" in word and word != "{}" for c in commands for word in c):
        # GNU find puts each file name in place of a `{}` inside a word too: `sh -c 'echo {}'`
        # then runs whatever a file is named (`;rm -rf ~`)
        return text, ("find puts file names inside a word of the command it runs",)
    return text, (("find runs a command computed at run time",) if dynamic else ())


_NAME_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename"})


def _names_spare_git(values: list[str]) -> bool:
    """Whether find's expression only picks names a repository's .git cannot have: a name or path
    test whose pattern does not match `.git` (`-name '*.pyc'`), and no negation or `-o` that could
    pick what that test does not."""
    from fnmatch import fnmatchcase

    if any(v in ("!", "-not", "-o", "-or", ",") for v in values):
        return False
    patterns = [values[i + 1] for i in range(len(values) - 1) if values[i] in _NAME_TESTS]
    return bool(patterns) and all(
        not fnmatchcase(".git", p.rsplit("/", 1)[-1].lower()) and p.rsplit("/", 1)[-1] != "*" for p in patterns
    )


def _find_starts(values: list[str]) -> list[str]:
    """find's start paths: every word after its own options (-H -L -P, -D LIST, -O LEVEL) up to
    the expression, not only the first (`find /tmp/x ~ -delete` deletes both)."""
    i = 1
    while i < len(values) and values[i] in ("-H", "-L", "-P", "-D") or i < len(values) and values[i].startswith("-O"):
        i += 2 if values[i] == "-D" else 1
    end = next((j for j in range(i, len(values)) if values[j].startswith(("-", "(", "!", ","))), len(values))
    return values[i:end]


def exact_form(inner: list[str], fed: bool) -> str | None:
    """Why a broad rule like `python3 *` must not allow this command, or None.

    Code given on the command line (`python -c`, `make --eval`, `git rebase -x`), a
    program read from a pipe or standard input (`curl … | sh`, `make -f -`,
    `python3 /dev/stdin <<< CODE`; `fed` says the command has such an input), and a
    shell started without gatekeep's hook are allowed only by a rule that names
    that form. What runs code is data, in tools/*.toml (knowledge.py).
    """
    from gatekeep.name.knowledge import runs_code

    return runs_code(inner, fed)
