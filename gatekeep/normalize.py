"""Normalize stage: a simple command -> the forms rules are matched against, and its name.

Deny and ask rules must hold however a command is written, so they see many
forms of it (`deny_forms`): as written; with the path or backslash taken off
the command word (`/bin/rm`, `\\rm`); and through every leading `VAR=value`
and every wrapper (`sudo -u x`, `env -i`, `command`, `nohup`, `timeout 5`...),
unwrapped to a fixed point. When a wrapper has an option gatekeep does not
know, every later word is tried as the start of the command.

Allow rules see one form only (`allow_form`): through a short list of harmless
variables (LANG, TZ, NO_COLOR...) and harmless wrappers (time, nice, nohup,
timeout, stdbuf) and nothing else. Any other assignment (PATH=, LD_PRELOAD=...),
a dynamic command word (`$X`, `$(...)`, a glob) or a parse problem makes the
command impossible to allow: it can then at best be asked.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from gatekeep.arity import load_table
from gatekeep.parse import SimpleCommand
from gatekeep.shellwords import Word
from gatekeep.wildmatch import UNKNOWN, unknown_parts


@dataclass(frozen=True)
class Wrapper:
    value_options: frozenset[str] = frozenset()  # options whose value is the next word
    flags: frozenset[str] = frozenset()  # options known to take no value
    positionals: int = 0  # words between the options and the command (timeout's DURATION)
    harmless: bool = False  # allow rules see through it
    assignments: bool = False  # takes NAME=value words before the command (env)


def _w(value: str = "", flags: str = "", **kw) -> Wrapper:
    return Wrapper(frozenset(value.split()), frozenset(flags.split()), **kw)


WRAPPERS: dict[str, Wrapper] = {
    "sudo": _w(
        "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role "
        "-t --type -T --command-timeout -U --other-user",
        "-A -b -E -H -i -K -k -n -P -S -s -V -v -l -e --preserve-env --login --shell "
        "--non-interactive --stdin --askpass --background --reset-timestamp",
    ),
    "doas": _w("-u -C", "-n -s -L"),
    "env": _w(
        "-u --unset -C --chdir -S --split-string", "-i --ignore-environment -0 --null -v --debug -", assignments=True
    ),
    "command": _w("", "-p"),
    "builtin": _w(),
    "exec": _w("-a", "-c -l"),
    "nohup": _w(harmless=True),
    "nice": _w("-n --adjustment", harmless=True),
    "time": _w("", "-p", harmless=True),
    "timeout": _w(
        "-s --signal -k --kill-after", "--preserve-status --foreground -v --verbose", positionals=1, harmless=True
    ),
    "stdbuf": _w("-i -o -e --input --output --error", harmless=True),
    "setsid": _w("", "-c --ctty -f --fork -w --wait"),
    "ionice": _w("-c --class -n --classdata -p --pid -P --pgid -u --uid", "-t --ignore"),
    "flock": _w(
        "-w --timeout -E --conflict-exit-code",
        "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close --verbose -F --no-fork",
        positionals=1,
    ),
    "watch": _w(
        "-n --interval -q --equexit",
        "-b --beep -e --errexit -g --chgexit -t --no-title -c --color -w --no-wrap -p --precise -d --differences",
    ),
    "parallel": _w("-j --jobs -S --sshlogin --joblog -a --arg-file --delay --timeout --retries -N --max-args"),
    "xargs": _w(
        "-a --arg-file -d --delimiter -E -I -L --max-lines -n --max-args -P --max-procs -s --max-chars "
        "--process-slot-var",
        "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit",
    ),
}

# Shells and wrappers for which a `NAME *` rule would allow anything at all.
BARE = frozenset(WRAPPERS) | {
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "eval",
    "xargs",
    "doas",
    "sudo",
    "ionice",
    "setsid",
    "flock",
    "watch",
    "script",
    "parallel",
    "source",
    ".",
    "su",
    "pkexec",
}

# Tools for which `tool *` would allow anything at all: suggest the exact command.
TOO_BROAD = frozenset(
    "python python3 python2 node deno bun ruby perl php lua Rscript java rm dd mv cp chmod chown curl wget ssh scp "
    "rsync nc ncat socat kill pkill killall shred truncate mkfs crontab at git npm npx pnpm yarn make".split()
)

# Variables that do not change what program runs or what it executes.
HARMLESS_VARIABLES = frozenset(
    "LANG LANGUAGE TZ NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE TERM COLORTERM COLUMNS LINES "
    "NODE_ENV RUST_BACKTRACE RUST_LOG PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE GOOS GOARCH "
    "CGO_ENABLED GO111MODULE GOEXPERIMENT CI DEBUG VERBOSE TIME_STYLE LS_COLORS GREP_COLORS".split()
)
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\+?=", re.DOTALL)


@dataclass(frozen=True)
class Normalized:
    command: SimpleCommand
    name: str
    deny_forms: tuple[tuple[str, ...], ...]
    allow_form: tuple[str, ...] | None
    not_allowable: tuple[str, ...] = field(default_factory=tuple)
    suggestion: str | None = None
    reentry: str | None = None  # a script this command runs (`bash -c`, `eval`, `xargs`, `find -exec`), to parse
    transparent: bool = False  # it only runs that script: its verdict is that of the script's commands
    exact_form: str | None = None  # inline code or a shell fed by a pipe: why only a rule naming the form allows it
    unknown_forms: tuple[str, ...] = ()  # deny forms with their variables, globs... marked (see wildmatch.py)


SHELLS = frozenset("sh bash zsh dash ksh mksh ash".split())
TRANSPARENT = SHELLS | {"eval", "xargs"}


def normalize(command: SimpleCommand) -> Normalized:
    argv = command.argv
    if not argv:  # an assignment-only command: rules see the assignments
        words = tuple(command.assignments)
        return Normalized(command, " ".join(words), (words,), words, command.problems)
    inner, forms, chain = _unwrap_all(argv)
    inner_words = command.words[len(argv) - len(inner) :] if inner else ()
    if chain and chain[-1] in ("watch", "flock") and inner:
        # `watch 'cmd args'` and `flock FILE -c 'cmd'` hand a string to `sh -c`: read it as a script
        reentry, why_not_script = _wrapped_script(chain[-1], inner_words)
        inner = []
    else:
        reentry, why_not_script = _reentry(inner_words)
    # a shell or wrapper with nothing known inside, or an option where a command should be
    bare = not inner or _basename(inner[0]) in BARE or inner[0].startswith("-")
    name = (inner or argv)[0] if bare else load_table().name(inner)
    allow_form, why_not = _allow_form(command)
    if reentry is None and allow_form and allow_form[0] == "xargs" and len(inner) < len(allow_form):
        reentry = shlex.join(inner)  # `xargs CMD`: CMD must be allowed on its own
    not_allowable = command.problems + why_not + why_not_script
    suggestion = None if bare or not_allowable else _suggestion(inner, allow_form)
    # Only a shell, eval or xargs at the front of what allow rules see merely runs its script;
    # `sudo bash -c '...'` does more than its script, so it is decided as itself.
    transparent = reentry is not None and bool(allow_form) and allow_form[0] in TRANSPARENT
    exact = _exact_form(inner, command.position > 0) if inner else None
    unknown = _unknown_forms(command, forms)
    return Normalized(
        command, name, tuple(forms), allow_form, not_allowable, suggestion, reentry, transparent, exact, unknown
    )


def _unknown_forms(command: SimpleCommand, forms: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The deny forms that hold dynamic words, as text with those words' unknown parts marked."""
    if not any(w.dynamic for w in command.words):
        return ()
    argv = command.argv
    marked = [unknown_parts(w.value) if w.dynamic else w.value for w in command.words]
    found = []
    for form in forms:
        k = len(argv) - len(form)
        if k < 0 or tuple(argv[k + 1 :]) != form[1:]:
            continue  # not a plain suffix of the command (env -S): nothing to mark
        words = marked[k:]
        if form[0] != argv[k] and not command.words[k].dynamic:
            words = [form[0], *words[1:]]  # the basename form
        text = " ".join(words)
        if UNKNOWN in text and text not in found:
            found.append(text)
    return tuple(found)


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
}
_AWK_CODE = re.compile(r"system\s*\(|\|\s*getline|\|\s*\"|print[^;]*[>|]")
_VERSIONED = re.compile(r"(python|pypy|ruby|perl|php|lua)[0-9.]*")


def _options_of(word: str) -> set[str]:
    """`--eval=1` is --eval, `-e1` holds -e, and `-pie` holds -p, -i and -e (a short cluster)."""
    if word.startswith("--"):
        return {word.split("=", 1)[0]}
    if word.startswith("-") and len(word) > 1:
        return {f"-{c}" for c in word[1:]}
    return {word}


def _exact_form(inner: list[str], piped: bool) -> str | None:
    """Why a broad rule like `python3 *` must not allow this command, or None.

    Inline code (`python -c`, `node -e`, `perl -e`, `awk` calling system() or
    pipes) and a shell or interpreter reading its program from a pipe
    (`curl … | sh`) are allowed only by a rule that names that form.
    """
    tool = _basename(inner[0])
    family = m.group(1) if (m := _VERSIONED.fullmatch(tool)) else tool
    options = [w for w in inner[1:] if w.startswith("-")]
    flags = INLINE_CODE.get(family, ())
    if any(_options_of(w) & set(flags) for w in inner[1:]):
        return f"{tool} runs code given on the command line"
    if tool in ("awk", "gawk", "mawk", "nawk") and any(_AWK_CODE.search(w) for w in inner[1:]):
        return f"{tool} runs commands from its program"
    reads_stdin = len(options) == len(inner) - 1 or inner[1:] == ["-"] or "-s" in options
    if piped and (family in INLINE_CODE or tool in SHELLS) and reads_stdin:
        return f"{tool} runs a program read from a pipe"
    return None


def _reentry(words) -> tuple[str | None, tuple[str, ...]]:
    """The script a shell is told to run: `bash -c 'SCRIPT'`, `sh -ec 'SCRIPT'`, `eval 'A' 'B'`."""
    if not words:
        return None, ()
    tool = _basename(words[0].value)
    if tool == "find":
        return _find_commands(words)
    if tool in ("source", ".") and any(w.dynamic for w in words[1:]):
        return None, (f"{tool} runs code produced at run time",)
    if tool == "script":
        values = [w.value for w in words]
        for i, value in enumerate(values[:-1]):
            if value in ("-c", "--command"):
                return _script_text(tool, [words[i + 1]])
        return None, ()
    if tool == "eval":
        script = list(words[1:])
    elif tool in SHELLS:
        options = 1
        while options < len(words) and words[options].value.startswith("-") and words[options].value != "--":
            options += 1
        if not any("c" in w.value[1:] for w in words[1:options] if not w.value.startswith("--")):
            return None, ()  # `bash script.sh` runs a file gatekeep cannot see; no script to read here
        script = list(words[options : options + 1])
    else:
        return None, ()
    if not script:
        return None, ()
    return _script_text(tool, script)


def _script_text(tool: str, script) -> tuple[str, tuple[str, ...]]:
    text = " ".join(w.value for w in script)
    if any(w.dynamic for w in script):
        # still read for deny rules, as written; but it can never be allowed
        return text, (f"{tool} runs a script computed at run time",)
    return text, ()


def _wrapped_script(wrapper: str, words) -> tuple[str | None, tuple[str, ...]]:
    if wrapper == "flock":
        if words and words[0].value in ("-c", "--command"):
            return _script_text(wrapper, list(words[1:2]))
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
    if "-delete" in values:
        starts = [v for v in values[1:] if not v.startswith(("-", "(", "!"))][:1] or ["."]
        commands.append(["rm", "-r", "-f", *starts])
    if not commands:
        return None, ()
    dynamic = any(w.dynamic for w in words)
    return "; ".join(shlex.join(c) for c in commands), (
        ("find runs a command computed at run time",) if dynamic else ()
    )


def _suggestion(inner: list[str], allow_form: tuple[str, ...] | None) -> str | None:
    """The allow rule an "always" answer adds: it must match this very command.

    It is the allow form up to the last word of the name, then ` *`
    (`git -C sub commit -m x` -> `git -C sub commit *`, `sudo apt-get install -y jq`
    -> `sudo apt-get install *`). Where `tool *` would allow anything the tool
    can do (an interpreter, rm, curl...), it is the exact command instead.
    """
    if not allow_form or len(inner) > len(allow_form) or tuple(inner) != allow_form[len(allow_form) - len(inner) :]:
        return None  # env -S and the like: the command is not a plain suffix of what allow rules see
    prefix = list(allow_form[: len(allow_form) - len(inner)])
    end = load_table().name_end(inner)
    if end == 1 and _basename(inner[0]) in TOO_BROAD and len(inner) > 1:
        return " ".join(_literal(w) for w in allow_form)
    return " ".join(_literal(w) for w in prefix + inner[:end]) + " *"


def _literal(word: str) -> str:
    return word.replace("*", "\\*")


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1] or word


def _unwrap_all(argv: list[str]) -> tuple[list[str], list[tuple[str, ...]], list[str]]:
    """Every form of `argv` for deny and ask rules, the innermost command (for its name),
    and the wrappers passed through on the way (`["sudo", "watch"]`)."""
    forms: list[tuple[str, ...]] = []
    chain: list[str] = []

    def add(words: list[str]) -> None:
        for form in (tuple(words), (_basename(words[0]), *words[1:])):
            if form not in forms:
                forms.append(form)

    current = argv
    innermost = argv
    while current:
        add(current)
        innermost = current
        wrapper = WRAPPERS.get(_basename(current[0]))
        if wrapper is None:
            break
        chain.append(_basename(current[0]))
        inner, sure = _unwrap(wrapper, current)
        if not sure:
            for start in range(1, len(current)):
                if not current[start].startswith("-"):
                    add(current[start:])
        current = inner
    return innermost, forms, chain


def _unwrap(wrapper: Wrapper, argv: list[str]) -> tuple[list[str], bool]:
    """The command inside one wrapper, and whether every option was one gatekeep knows."""
    words = list(argv[1:])
    sure = True
    while words:
        word = words[0]
        if word == "--":
            words.pop(0)
            break
        if wrapper.assignments and _ASSIGNMENT.match(word):
            words.pop(0)
        elif word.startswith("-") and len(word) > 1:
            words.pop(0)
            option = word.split("=", 1)[0]
            if option in ("-S", "--split-string") and wrapper.assignments:
                # env -S 'cmd args': the string is split into the command's words
                value = word.split("=", 1)[1] if "=" in word else (words.pop(0) if words else "")
                words[:0] = value.split()
            elif option in wrapper.value_options and "=" not in word:
                if words:
                    words.pop(0)
            elif option not in wrapper.flags and option not in wrapper.value_options:
                sure = _is_short_value_form(word, wrapper) and sure
        else:
            break
    skip = min(wrapper.positionals, len(words))
    return words[skip:], sure


def _is_short_value_form(word: str, wrapper: Wrapper) -> bool:
    """`-uroot`, `-n5`, `-5` (nice): a known short option with its value attached."""
    if word[:2] in wrapper.value_options:
        return True
    return word[1:].isdigit() and "-n" in wrapper.value_options


def _allow_form(command: SimpleCommand) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    for assignment in command.assignments:
        m = _ASSIGNMENT.match(assignment)
        variable = m.group(1) if m else assignment
        if variable not in HARMLESS_VARIABLES and not variable.startswith("LC_"):
            return None, (f"{variable}= changes what the command runs",)
    words = list(command.words)
    while words and not words[0].dynamic and words[0].value in WRAPPERS:
        wrapper = WRAPPERS[words[0].value]
        if not wrapper.harmless:
            break
        inner, sure = _unwrap(wrapper, [w.value for w in words])
        if not sure:
            return None, (f"{words[0].value} has an option gatekeep does not know",)
        words = words[len(words) - len(inner) :]
    if not words:
        return None, ("nothing runs inside the wrapper",)
    if words[0].dynamic:
        return None, ("the command word is computed at run time",)
    return tuple(w.value for w in words), ()
