"""The code a command runs besides itself: scripts it hands to a shell, and inline code.

`bash -c 'SCRIPT'`, `eval 'A' 'B'`, `script -c CMD`, `watch 'CMD'`, `flock FILE -c CMD`
and `find ... -exec CMD ;` run commands that gatekeep reads as a script of
their own (gate.py parses it). Interpreters given code on the command line
(`python -c`, `node -e`...) or reading their program from a pipe
(`curl ... | sh`) run code gatekeep cannot read: only a rule naming that form
may allow them (decide.py).
"""

from __future__ import annotations

from gatekeep.lazyre import lazy
from gatekeep.shellwords import Word, expansion_end
from gatekeep.wrappers import basename

SHELLS = frozenset("sh bash zsh dash ksh mksh ash".split())
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
    if tool == "tmux":
        return _tmux_command(words)
    if tool in EVALUATES_SUBSCRIPTS:
        found = _quoted_substitutions(tool, words)
        if found is not None:
            return found
    if tool == "git":  # `git -c alias.x='!CMD'`, `git -c core.pager=CMD`: read CMD, so deny rules see it
        for i, word in enumerate(words[1:-1], start=1):
            key, _, value = words[i + 1].value.partition("=")
            if word.value == "-c" and _GIT_CODE_KEYS.fullmatch(key) and value:
                return _script_text(tool, [Word(value.removeprefix("!"), words[i + 1].dynamic)])
        return None, ()
    if tool == "eval":
        script = list(words[1:])
    elif tool in SHELLS or tool == "fish":  # a fish script is read with bash's grammar: unreadable asks
        start, has_c = _shell_options(words)
        if not has_c:
            return None, ()  # `bash script.sh` runs a file gatekeep cannot see; no script to read here
        script = list(words[start : start + 1])
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

    `-o NAME`, `+o NAME`, `-O NAME`, `+O NAME` and a cluster ending in o/O
    (`-eo pipefail`) take the next word; `--rcfile FILE` and `--init-file FILE` too.
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
            i += 2 if value[-1] in "oO" else 1
        else:
            break
    return i, has_c


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


def wrapped_script(wrapper: str, words) -> tuple[str | None, tuple[str, ...]]:
    """The script of `watch 'CMD'`, `flock FILE -c CMD` or `parallel 'CMD {}' ::: ARGS`, which run it with a shell."""
    if wrapper == "parallel":
        words = words[: next((i for i, w in enumerate(words) if w.value in (":::", "::::", ":::+")), len(words))]
    if wrapper == "flock":
        if words and words[0].value in ("-c", "--command"):
            return _script_text(wrapper, list(words[1:2]))
        import shlex  # here: shlex imports re, which typical lines never need

        return _script_text(wrapper, [Word(shlex.join(w.value for w in words), any(w.dynamic for w in words))])
    return _script_text(wrapper, list(words))


FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find_commands(words) -> tuple[str | None, tuple[str, ...]]:
    """The commands of `find ... -exec CMD {} ;` (and -execdir, -ok, -okdir), as one script;
    `-delete` counts as `rm -r -f` on find's start paths."""
    values = [w.value for w in words]
    commands: list[list[str]] = []
    i = 1
    while i < len(values):
        if values[i] in FIND_ACTIONS:
            end = next((j for j in range(i + 1, len(values)) if values[j] in (";", "+")), len(values))
            if end > i + 1:
                commands.append(values[i + 1 : end])
            i = end
        i += 1
    starts = [v for v in values[1:] if not v.startswith(("-", "(", "!"))][:1] or ["."]
    if "-mindepth" not in values:
        # find's first result is its start path itself: `find / -exec rm -rf {} +` also runs `rm -rf /`
        commands += [[starts[0] if v == "{}" else v for v in c] for c in commands if "{}" in c]
    if "-delete" in values:
        commands.append(["rm", "-r", "-f", *starts])
    if not commands:
        return None, ()
    dynamic = any(w.dynamic for w in words)
    import shlex  # here: shlex imports re, which typical lines never need

    return "; ".join(shlex.join(c) for c in commands), (
        ("find runs a command computed at run time",) if dynamic else ()
    )


# Interpreters and the options that make them run code given on the command line.
INLINE_CODE = {
    "python": ("-c",),
    "pypy": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "Rscript": ("-e",),
    "osascript": ("-e",),
    "deno": ("eval",),
    "bun": ("-e", "--eval"),
    "ipython": ("-c",),
}
_AWK_CODE = lazy(r"system\s*\(|\|&?\s*getline|\|&|\|\s*\"|print[^;]*[>|]")
_VERSIONED_FAMILIES = ("python", "pypy", "ruby", "perl", "php", "lua")
_VERSIONED = lazy(rf"({'|'.join(_VERSIONED_FAMILIES)})[0-9.]*")


def _options_of(word: str) -> set[str]:
    """`--eval=1` is --eval, `-e1` holds -e, and `-pie` holds -p, -i and -e (a short cluster)."""
    if word.startswith("--"):
        return {word.split("=", 1)[0]}
    if word.startswith("-") and len(word) > 1:
        return {f"-{c}" for c in word[1:]}
    return {word}


def exact_form(inner: list[str], fed: bool) -> str | None:
    """Why a broad rule like `python3 *` must not allow this command, or None.

    Inline code (`python -c`, `node -e`, `perl -e`, `awk` calling system() or
    pipes) and a shell or interpreter reading its program from a pipe
    (`curl … | sh`, `python3 <<< CODE`; `fed` says it has such an input) are
    allowed only by a rule that names that form.
    """
    tool = basename(inner[0])
    versioned = tool.startswith(_VERSIONED_FAMILIES) and (m := _VERSIONED.fullmatch(tool))  # no regex for `git`
    family = m.group(1) if versioned else tool
    options = [w for w in inner[1:] if w.startswith("-")]
    flags = INLINE_CODE.get(family, ())
    if any(_options_of(w) & set(flags) for w in inner[1:]):
        return f"{tool} runs code given on the command line"
    if tool in ("awk", "gawk", "mawk", "nawk") and any(_AWK_CODE.search(w) for w in inner[1:]):
        return f"{tool} runs commands from its program"
    runs = _RUNS_A_COMMAND.get(tool)
    why = (runs(inner[1:], tool) if runs is _shell_without_hook else runs(inner[1:])) if runs else None
    if why:
        return f"{tool} {why}"
    operands = [w for w in inner[1:] if not w.startswith("-")]
    if (family in INLINE_CODE or tool in SHELLS) and operands[:1] and operands[0].startswith(("<(", "/dev/fd/")):
        return f"{tool} runs a program produced by another command (a process substitution)"
    reads_stdin = len(options) == len(inner) - 1 or inner[1:] == ["-"] or "-s" in options
    if fed and (family in INLINE_CODE or tool in SHELLS) and reads_stdin:
        return f"{tool} runs a program read from its input (a pipe, here-string or heredoc)"
    return None


# Options and arguments through which a tool that is otherwise harmless runs a
# command or code it is given (each reader gets the words after the tool and
# says how, or None). Like inline code, only a rule naming the form allows them.
# git config keys whose value git runs (or which change what git runs).
_GIT_CODE_KEYS = lazy(
    r"(?i)(alias\..*|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)|pager\..*|diff\..*\.(command|textconv)"
    r"|diff\.external|filter\..*|credential\..*|gpg\..*program|sequence\.editor|.*\.(uploadpack|receivepack)"
    r"|uploadpack\..*|include\..*|includeif\..*|merge\..*\.driver|remote\..*\.(vcs|proxy)|protocol\..*)"
)


def _git(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg == "-c" and i + 1 < len(args) and _GIT_CODE_KEYS.fullmatch(args[i + 1].split("=", 1)[0]):
            return f"runs what -c {args[i + 1].split('=', 1)[0]} names"
        name = arg.split("=", 1)[0]
        if name in ("--upload-pack", "--receive-pack", "--exec") or (arg == "-u" and "clone" in args[:i]):
            return f"runs the program {name} names"
    words = [a for a in args if not a.startswith("-")]
    if words[:1] == ["config"] and len(words) >= 3 and _GIT_CODE_KEYS.fullmatch(words[1]):
        return f"config sets {words[1]}, which runs a command"
    return None


def _option_runs(*names: str, what: str = "runs the command"):
    """A reader for a tool whose options `names` run a command (`--name=VALUE` and `-XVALUE` too)."""

    def reader(args: list[str]) -> str | None:
        for arg in args:
            if arg == "--":
                break
            for name in names:
                if (
                    arg == name
                    or arg.startswith(name + "=")
                    or (len(name) == 2 and arg.startswith(name) and name[1] != "-")
                ):
                    return f"{what} {name} names"
        return None

    return reader


_SSH_COMMAND_OPTION = lazy(r"(?i)\s*(proxycommand|localcommand|permitlocalcommand|knownhostscommand)")


def _ssh(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        value = args[i + 1] if arg == "-o" and i + 1 < len(args) else arg[2:] if arg.startswith("-o") else ""
        if _SSH_COMMAND_OPTION.match(value):
            return "runs a local command given with -o"
    return None


def _vim(args: list[str]) -> str | None:
    commands = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--cmd")]
    commands += [a[1:] for a in args if a.startswith("+")]
    if any("!" in c or "system(" in c for c in commands):
        return "runs a shell command given with -c or +"
    return None


def _sed(args: list[str]) -> str | None:
    if any(_SED_EXECUTE.search(a) for a in args if not a.startswith("-") or a.startswith("-e")):
        return "runs a shell command from its script (e)"
    return None


# sed's `e` command, or the `e` flag of an `s` command
_SED_EXECUTE = lazy(r"(?:^|[;}\n]|\d|\$)\s*e(?:\s|$)|(?:^|[;\s])s(.).*?\1.*?\1[gpiIm0-9w]*e")


def _shell_without_hook(args: list[str], tool: str = "bash") -> str | None:
    """An interactive shell that skips its start-up files, where gatekeep's hook lives."""
    start, has_c = _shell_options([Word(a) for a in ["sh", *args]])
    if has_c or start <= len(args) and args[start - 1 :][:1] not in ([], ["-"]):
        return None  # runs a script or a file, not an interactive shell
    if tool not in ("bash", "zsh"):
        return "starts an interactive shell gatekeep has no hook for"
    skips = {"--norc", "--noprofile", "--posix", "-f", "--no-rcs", "--no-globalrcs", "--rcfile", "--init-file", "-r"}
    if any(a in skips or (a.startswith("-") and not a.startswith("--") and "f" in a[1:]) for a in args):
        return "starts an interactive shell without its start-up files, so without gatekeep's hook"
    return None


def _su(args: list[str]) -> str | None:
    if any(a in ("-c", "--command") or a.startswith("--command=") for a in args):
        return None
    return "starts a shell as another user, whose start-up files may not load gatekeep's hook"


def _root_shell(args: list[str]) -> str | None:
    """`sudo -s`, `sudo -i`, `doas -s`: a shell as root, whose start-up files do not load gatekeep's hook."""
    if any(
        a in ("--shell", "--login") or (a.startswith("-") and not a.startswith("--") and set(a[1:]) & {"s", "i"})
        for a in args
    ):
        return "starts a shell as root or another user, without gatekeep's hook"
    return None


_RUNS_A_COMMAND = {
    "git": _git,
    "sudo": _root_shell,
    "doas": _root_shell,
    **dict.fromkeys(SHELLS | {"fish", "csh", "tcsh"}, _shell_without_hook),
    "su": _su,
    "ssh": _ssh,
    "man": _option_runs("-P", "--pager", "-H", "--html"),
    "rg": _option_runs("--pre"),
    "tar": _option_runs(
        "--to-command",
        "--checkpoint-action",
        "--use-compress-program",
        "-I",
        "--info-script",
        "-F",
        "--new-volume-script",
        "--rsh-command",
    ),
    "make": _option_runs("--eval", "-E", what="runs the make code"),
    "npx": _option_runs("-c", "--call"),
    "vim": _vim,
    "vi": _vim,
    "nvim": _vim,
    "view": _vim,
    "sed": _sed,
    "gsed": _sed,
}
