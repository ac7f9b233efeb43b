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

import os
import posixpath

from gatekeep.core.lazyre import lazy
from gatekeep.core.records import record
from gatekeep.name.knowledge import load_table
from gatekeep.name.knowledge import scripts_in, unabbreviated
from gatekeep.name.scripts import (
    SHELLS,
    TRANSPARENT,
    exact_form,
    quiet_parallel,
    script_of,
    stdin_script,
    wrapped_script,
)
from gatekeep.name.wildmatch import UNKNOWN, unknown_parts
from gatekeep.name.wrappers import ASSIGNMENT, basename, is_bare, named_through, unwrap, unwrap_all, wrapper_of
from gatekeep.read.parse import SimpleCommand
from gatekeep.read.shellwords import Word

# why a variable set for a command keeps any rule from allowing it (not_allowable); in the sandbox,
# where whatever it makes run is contained too, it does not count (judge/decide.py)
CHANGES_WHAT_RUNS = "= changes what the command runs"
# Tools for which `tool *` would allow anything at all: suggest the exact command.
TOO_BROAD = frozenset(
    "python python3 python2 node deno bun tsx ts-node ruby perl php lua Rscript java rm dd mv cp chmod chown curl wget ssh scp "
    "rsync nc ncat socat kill pkill killall shred truncate mkfs crontab at git npm npx pnpm yarn make".split()
)



class Normalized(
    record(
        "Normalized",
        "command name deny_forms allow_form not_allowable suggestion reentry transparent exact_form unknown_forms "
        "directories resolved_forms unchecked",
        defaults=((), None, None, False, None, (), (), (), None),
    )
):
    """One simple command as the policy sees it: its name, and the forms rules are matched against.

    command: the SimpleCommand; deny_forms: word tuples deny and ask rules see;
    allow_form: the one form allow rules see (None: nothing may allow it);
    not_allowable: why no allow rule may match; reentry: a script this command
    runs (`bash -c`, `eval`, `xargs`, `find -exec`), to parse; transparent: it
    only runs that script, so its verdict is that of the script's commands;
    exact_form: inline code or a shell fed by a pipe, why only a rule naming the
    form allows it; unknown_forms: deny forms with their variables, globs...
    marked (see wildmatch.py); directories: where it may run (see place()), empty
    before place() has run; resolved_forms: the deny forms place() added, with relative
    paths resolved where the command may run (for rules only: `rm -rf .` is not `rm -rf /x`);
    unchecked: why the deny rules cannot be tried on every form of the command, which makes
    decide.py deny it, firmly: too many forms (wrappers.FORM_WORDS), too many directories to try
    them in (place()) or too many commands on the line (gate.MAX_COMMANDS_READ); None for any
    real command.
    """

    __slots__ = ()


def normalize(command: SimpleCommand) -> Normalized:
    argv = command.argv
    if not argv:  # an assignment-only command: rules see the assignments, together and one by one
        words = tuple(command.assignments)
        forms = [words] + [(a,) for a in words] if len(words) > 1 else [words]
        return Normalized(command, " ".join(words), tuple(forms), words, command.problems)
    inner, forms, chain, unchecked = unwrap_all(argv)
    forms = forms + _element_forms(_variable_forms(inner))
    seen = set(forms)
    # a word with no expansion in it (quoted: `sed -i '/x/ { a, b }' f`) is no brace list
    braced = {w.value for w in command.words if w.dynamic and "{" in w.value}
    literal = frozenset(w.value for w in command.words if not w.dynamic and "{" in w.value) - braced
    forms += [f for f in _variant_forms(forms, literal) if f not in seen]
    if not inner or argv[len(argv) - len(inner) :] == inner:
        inner_words = command.words[len(argv) - len(inner) :] if inner else ()
    else:  # `env -S 'sh -c CMD'`: the inner words come from splitting one word
        dynamic = any(w.dynamic for w in command.words)
        inner_words = tuple(Word(value, dynamic) for value in inner)
    if chain and chain[-1] in ("watch", "flock", "parallel") and inner:
        # `watch 'cmd args'`, `flock FILE -c 'cmd'` and `parallel 'cmd {}'` hand a string to a shell: read it
        reentry, why_not_script = wrapped_script(chain[-1], inner_words, _own_options(argv, inner, chain[-1]))
        inner = []
    else:
        reentry, why_not_script = script_of(inner_words)
    from_stdin = False
    if reentry is None:
        fed_script, why_fed = stdin_script(inner_words, command.redirects)
        if fed_script is not None:  # else keep what script_of said (`source <(…)` runs code made at run time)
            reentry, why_not_script, from_stdin = fed_script, why_fed, True
    if reentry is None and inner:  # `rsync -e 'rm -rf ~'`, `git bisect run CMD`: deny rules see CMD too
        carried = scripts_in(inner)
        if carried:
            reentry = "; ".join(carried)
            why_not_script = ("it runs a command computed at run time",) if any(c in reentry for c in "$`") else ()
    # named through named-through wrappers only: `watch df` is `watch`, `sudo apt install` `apt install`
    stop = next((w for w in chain if not named_through(w)), None)
    named = next((list(f) for f in forms if basename(f[0]) == stop), inner) if stop else inner
    # a shell or wrapper with nothing known inside, or an option where a command should be
    bare = not named or is_bare(named[0]) or named[0].startswith("-")
    name = (named or argv)[0] if bare else load_table().name(named)
    # (not unwrapped to the end: too many forms, and as many harmless wrappers to read for allow rules)
    allow_form, why_not = _allow_form(command) if unchecked is None else (None, (unchecked,))
    wrapped = argv[: len(argv) - len(inner)] if inner else argv
    unsafe = [a for a in wrapped if (m := ASSIGNMENT.match(a)) and not _harmless(m.group(1))]
    if unsafe:  # `sudo LD_PRELOAD=x cmd`, `env PATH=/tmp cmd`: set for the command inside
        why_not += (f"{ASSIGNMENT.match(unsafe[0]).group(1)}{CHANGES_WHAT_RUNS}",)
    if allow_form and allow_form[0] == "xargs" and len(inner) < len(allow_form):
        # `xargs CMD`: CMD must be allowed on its own, with arguments nobody can see yet
        reentry = _xargs_script(list(allow_form[1 : len(allow_form) - len(inner)]), inner)
    not_allowable = command.problems + why_not + why_not_script
    # never for a bare shell or wrapper, but for sourcing one file (`source .venv/bin/activate`): the
    # exact line, since `source *` would run any file
    sourced = bare and allow_form is not None and len(allow_form) == 2 and allow_form[0] in ("source", ".")
    suggestion = None
    if not not_allowable:
        suggestion = _exact(allow_form) if sourced else None if bare else _suggestion(inner, allow_form)
    # Only a shell, eval or xargs at the front of what allow rules see merely runs its script;
    # `sudo bash -c '...'` does more than its script, so it is decided as itself.
    transparent = (
        reentry is not None
        and bool(allow_form)
        and (allow_form[0] in TRANSPARENT or (allow_form[0] == "parallel" and quiet_parallel(allow_form)))
    )
    # a program fed by a pipe, a here-string or a heredoc; a shell's is read as its script instead
    fed = command.position > 0 or any(r.stdin_text is not None for r in command.redirects)
    # `sudo -s` has no command inside: the wrapper itself is the form
    exact = exact_form(inner or argv, fed) if not from_stdin else None
    if exact is None and chain:  # a wrapper's own options can run code too (`strace -o '|cmd' ls`)
        wrappers = [f for f in forms if f[0] in chain and (not inner or f[0] != inner[0])]
        exact = next((why for f in wrappers if (why := exact_form(list(f), False))), None)
    unknown = _unknown_forms(command, forms)
    return Normalized(
        command, name, tuple(forms), allow_form, not_allowable, suggestion, reentry, transparent, exact, unknown,
        (), (), unchecked,
    )  # fmt: skip


def unread(command: SimpleCommand, why: str) -> Normalized:
    """A command not normalized at all (a line of too many commands, gate.MAX_COMMANDS_READ):
    no forms, and unchecked, which denies it."""
    argv = command.argv
    name = argv[0] if argv else " ".join(command.assignments)
    return Normalized(command, name, (), None, (why,), None, None, False, None, (), (), (), why)


def _own_options(argv: list[str], inner: list[str], wrapper: str) -> list[str]:
    """The words between the last `wrapper` word and the command it runs: its own options."""
    outer = argv[: len(argv) - len(inner)]
    at = max((i for i, w in enumerate(outer) if basename(w) == wrapper), default=len(outer))
    return outer[at + 1 :]


DECLARATIONS = frozenset({"export", "declare", "typeset", "readonly", "local", "integer", "float"})
# read's options that take a value; `-a NAME` names an array it assigns
_READ_VALUE_OPTIONS = frozenset({"-d", "-i", "-n", "-N", "-p", "-t", "-u"})


def _xargs_script(options: list[str], inner: list[str]) -> str:
    """The command xargs runs, with its input as the unknown `$XARGS_INPUT`: appended, or in
    place of the -I/-i/--replace string (`xargs -I{} sh -c '{}'` runs its input as a script)."""
    from gatekeep.name.knowledge import load_knowledge, spec_of
    from gatekeep.name.options import parse

    # read as xargs reads them: `-rIX`, `--repl=X` and `-i` (which means `{}`) all set it
    parsed = parse(options, spec_of(load_knowledge().table("xargs")[1]))
    replace = None
    for option, value in parsed.options:
        if option == "-I" and value:
            replace = value
        elif option in ("-i", "--replace"):
            replace = value or "{}"
    if not replace:
        import shlex  # here: shlex imports re, which typical lines never need

        return shlex.join(inner) + ' "$XARGS_INPUT"'
    quoted = ["'" + word.replace("'", "'\\''") + "'" for word in inner]
    return " ".join(q.replace(replace, "'\"$XARGS_INPUT\"'") for q in quoted)


def _variable_forms(argv: list[str]) -> list[tuple[str, ...]]:
    """`export PATH=x`, `declare -x PATH=x`, `read PATH`, `printf -v PATH` set a variable as
    `PATH=x` does; deny and ask rules see them in that form (`PATH=x`, `PATH=`). So do zsh's
    `print -v NAME`, `vared NAME` and `getopts SPEC NAME`, and a declaration of a bare name
    (`typeset -A functions` turns zsh's table of functions into an empty array)."""
    if not argv:
        return []
    tool = basename(argv[0])
    if tool in DECLARATIONS:
        options = [a for a in argv[1:] if a.startswith(("-", "+"))]
        operands = [a for a in argv[1:] if not a.startswith(("-", "+"))]
        # `export NAME` and `declare -p NAME` leave the value as it is; other bare declarations
        # retype or blank it
        keeps = tool == "export" or any("p" in o for o in options if not o.startswith("--"))
        found = [(a,) if ASSIGNMENT.match(a) else (f"{a}=",) for a in operands if ASSIGNMENT.match(a) or not keeps]
        return list(dict.fromkeys(found))  # `export A=1 A=1 …`: each once
    names: list[str] = []
    if tool == "read":
        i = 1
        while i < len(argv):
            word = argv[i]
            if word == "--":
                names += argv[i + 1 :]
                break
            if word.startswith("-") and len(word) > 1:
                if word[-1] == "a" and i + 1 < len(argv):
                    names.append(argv[i + 1])
                i += 2 if word in _READ_VALUE_OPTIONS or word[-1] == "a" else 1
                continue
            names.append(word)
            i += 1
    elif tool in ("mapfile", "readarray") and len(argv) > 1 and not argv[-1].startswith("-"):
        names.append(argv[-1])
    elif tool in ("printf", "print") and len(argv) > 2 and argv[1] == "-v":
        names.append(argv[2])
    elif tool == "vared" and len(argv) > 1:
        names.append(argv[-1])
    elif tool == "getopts" and len(argv) > 2:
        names.append(argv[2])
    return [(f"{name}=",) for name in dict.fromkeys(names)]  # `read x x x …`: each name once


def _element_forms(forms: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """An array element set by a builtin is also its array: `printf -v 'PS0[0]'` sets PS0, which
    bash reads as its element 0, so rules about `PS0=` see it too."""
    found = list(forms)
    seen = set(found)
    for (word,) in forms:
        name, bracket, rest = word.partition("[")
        if bracket and "]=" in rest:
            base = (f"{name}={rest.split(']=', 1)[1]}",)
            if base not in seen:
                seen.add(base)
                found.append(base)
    return found


_GIT_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"}
)


def _variant_forms(forms: list[tuple[str, ...]], literal: frozenset[str] = frozenset()) -> list[tuple[str, ...]]:
    """The same commands spelled the way deny rules are written: words split by `$IFS`,
    without a leading option (what `time -p` leaves), chmod's `0777` as `777`, paths with `//`, `/./` and
    trailing slashes cleaned (`/*/` is `/*`) and the home directory as `~`; git's
    subcommand right after `git` (`git -C . push` is `git push`), and a push of a
    `+refspec` as `git push --force`; and any tool's name words together, without the options
    between them (`npm --registry URL publish x` is `npm publish x`, `terraform -chdir=. apply`
    is `terraform apply`), as the name reads them (arity.py). `literal`: words the line holds
    only as text with no expansion (quoted), whose braces bash leaves as they are."""
    home = os.path.expanduser("~")
    found = []
    for form in forms:
        if any("$IFS" in w or "${IFS}" in w for w in form):  # `rm${IFS}-rf${IFS}x`: IFS splits it into words
            form = tuple(" ".join(form).replace("${IFS}", " ").replace("$IFS", " ").split())
            if not form:
                continue  # `$IFS` alone expands to no word at all
            found.append(form)
        if len(form) > 1 and form[0].startswith("-"):  # `time -p rm x` read by the fallback: drop the option
            found.append(form[1:])
        braces = _brace_expansion(form, literal)
        if braces != form:  # `{rm,-rf,build}` is the three words rm -rf build
            form = braces
            found.append(form)
        if len(form) > 2 and form[1][:1] == "-":  # options before the name's next word
            named = _name_words_together(form)
            if named is not None:
                found.append(named)
                form = named
        full = unabbreviated(list(form)) if len(form) > 1 else None
        if full is not None:  # `npm pub` is `npm publish`
            form = full
            found.append(form)
        words = (form[0], *(_rule_path(w, home) for w in form[1:]))
        if basename(words[0]) == "chmod":  # the mode 0777 is 777
            words = tuple(w.lstrip("0") if w.isdigit() and len(w) == 4 and w[0] == "0" else w for w in words)
        if basename(words[0]) == "git":
            i = 1
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in _GIT_VALUE_OPTIONS else 1
            words = (words[0], *words[i:])
            if words[1:2] == ("push",) and any(w.startswith("+") for w in words[2:]):
                found.append((words[0], "push", "--force", *words[2:]))
        if basename(words[0]) in SHELLS and ("-s" in words or all(w.startswith("-") for w in words[1:])):
            found.append((words[0],))  # `sh -s -- --yes` runs what it reads, as `sh` does: `curl … | sh` sees it
        if words != form:
            found.append(words)
    return found


def _name_words_together(form: tuple[str, ...]) -> tuple[str, ...] | None:
    """`form` with the options between its name words left out, or None when none stand there."""
    at, _ = load_table().walk(list(form))
    if len(at) < 2 or at[-1] == len(at) - 1:
        return None
    return (form[0], *(form[i] for i in at[1:]), *form[at[-1] + 1 :])


_BRACES = lazy(r"(?P<pre>[^{}]*)\{(?P<items>[^{}]*,[^{}]*)\}(?P<post>[^{}]*)")


def _brace_expansion(form: tuple[str, ...], literal: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Words with one `{a,b}` list each, expanded as bash does (`x{a,b}` is `xa xb`), but those in
    `literal` (quoted text)."""
    out: list[str] = []
    for word in form:
        m = _BRACES.fullmatch(word) if "{" in word and word not in literal else None  # most lines have no brace: no regex
        out += [m["pre"] + item + m["post"] for item in m["items"].split(",")] if m else [word]
    return tuple(out)


# the ways a line names the home directory at the start of a word (`~user` is checked apart)
_HOME_WORDS = ("~", "$HOME", "${HOME}")
_USER_WORDS = ("${USER}", "$USER", "${LOGNAME}", "$LOGNAME")


def _rule_path(word: str, home: str) -> str:
    """A path as deny rules are written: `//`, `/./`, `..` and trailing slashes cleaned, and the
    home directory however it is spelled (`~//`, `$HOME/.`, `~/../$USER`, `/home/me`) as `~`."""
    if word[:1] in ("~", "$"):
        word = _home_spelled_out(word, home)
    if not word.startswith("/"):
        return word
    path = "/" + posixpath.normpath(word).lstrip("/")
    if home != "/" and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def _home_spelled_out(word: str, home: str) -> str:
    """`~/x`, `$HOME/x`, `~me/x` (me being this user) with the home directory written out, and
    `$USER` and `$LOGNAME` replaced by this user's name; other words unchanged."""
    user = None  # looked up only for a word that may name it: most words do not (`$x`)
    if "$" in word and any(spelling in word for spelling in _USER_WORDS):
        user = _user(home)
        for spelling in _USER_WORDS:
            word = word.replace(spelling, user)
    for spelling in _HOME_WORDS:
        if word == spelling or word.startswith(spelling + "/"):
            return home + word[len(spelling) :]
    if word.startswith("~"):
        spelling = f"~{_user(home) if user is None else user}"
        if word == spelling or word.startswith(spelling + "/"):
            return home + word[len(spelling) :]
        name = word[1:].split("/", 1)[0]
        if name[:1] not in ("+", "-", "") and not name.isdigit():  # `~root`: root's home, maybe this one
            from gatekeep.name.expand import ANY, tilde

            other = tilde(name, home, None)
            if other != ANY:
                return other + word[1 + len(name) :]
    elif word.startswith("${") or "$" in word[1:]:  # `${HOME%/}`, `$HOME$X`: written out where known
        from gatekeep.name.expand import ANY, KNOWN, expand

        written = expand(word, home, None)
        if ANY not in written and KNOWN not in written:
            return written
    return word


def _user(home: str) -> str:
    return os.environ.get("USER") or os.environ.get("LOGNAME") or posixpath.basename(home)


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


def _suggestion(inner: list[str], allow_form: tuple[str, ...] | None) -> str | None:
    """The allow rule an "always" answer adds: it must match this very command.

    It is the allow form up to the last word of the name, then ` *`
    (`git -C sub commit -m x` -> `git -C sub commit *`, `sudo apt-get install -y jq`
    -> `sudo apt-get install *`). Where `tool *` would allow anything the tool
    can do (an interpreter, rm, curl...), a value stands where a name word goes
    (`bun run src/index.ts`: `bun run *` would run any script), or the name is a runner's
    (`poetry run pytest`, `npx prettier`: `runner` in tools/*.toml), it is the exact command instead.
    """
    if not allow_form or len(inner) > len(allow_form) or tuple(inner) != allow_form[len(allow_form) - len(inner) :]:
        return None  # env -S and the like: the command is not a plain suffix of what allow rules see
    prefix = list(allow_form[: len(allow_form) - len(inner)])
    table = load_table()
    found, short = table.walk(inner)
    end = found[-1] + 1
    # a value where a name word goes (`npm run 'x | sh'`): `npm run *` would allow every script;
    # a runner's (`poetry run pytest`): `poetry run *` would allow every command
    too_broad = short or end == 1 and basename(inner[0]) in TOO_BROAD or table.runs_command(inner, found)
    module = _module_name(inner) if too_broad else None
    if module:  # `python -m pytest -q` -> `python -m pytest *`: the module's own name, not the file's
        return " ".join(_literal(w) for w in [*prefix, *inner[:2], *module.split()]) + " *"
    ran = _run_name(inner) if too_broad else None
    if ran:  # `npx playwright test a.spec.ts` -> `npx playwright test *`: what the runner runs, by its name
        return " ".join(_literal(w) for w in [*prefix, *ran]) + " *"
    words = allow_form if too_broad and len(inner) > 1 else prefix + inner[:end]
    if any("|" in w for w in words):
        return None  # a pattern would read a quoted `|` as a pipeline: `npm run 'x | sh'` is no `npm run x | sh *`
    return " ".join(_literal(w) for w in words) + ("" if words is allow_form else " *")


def _module_name(inner: list[str]) -> str | None:
    """For `python -m MODULE ARGS`, the name MODULE ARGS gets as a command of its own (`pytest`,
    `pip install`), when MODULE is a plain module that runs no code it is given (`code-modules`:
    `python -m code`) and the data knows it as a tool; else None."""
    from gatekeep.name.knowledge import load_knowledge

    if len(inner) < 3 or inner[1] != "-m" or not inner[2].replace(".", "").replace("_", "").isalnum():
        return None
    found = load_knowledge().table(inner[0])
    if found is None or found[0] != "python" or inner[2] in found[1].get("code-modules", ()):
        return None
    if load_knowledge().table(inner[2]) is None or basename(inner[2]) in TOO_BROAD:
        return None
    return load_table().name(inner[2:])


def _run_name(inner: list[str]) -> list[str] | None:
    """For a runner's command (`npx playwright test a.spec.ts`, `uv run pytest -q`), the runner's
    words up to the command it runs and that command's name (`npx playwright test`), when the data
    knows that command as a tool of its own that is no runner, wrapper, shell or interpreter;
    else None (`npx some-script`: the exact command)."""
    from gatekeep.name.knowledge import load_knowledge

    table = load_table()
    ran = table.runner_inner(list(inner))
    if not ran or len(ran) >= len(inner) or "/" in ran[0] or basename(ran[0]) in TOO_BROAD:
        return None
    known = load_knowledge().table(ran[0])
    if known is None or any(known[1].get(k) for k in ("bare", "wrapper", "runner", "program-operand", "stdin-program")):
        return None  # a shell, a wrapper, a runner or an interpreter: `npx bash *` would run anything
    if table.runner_inner(list(ran)) is not None:
        return None
    found, short = table.walk(ran)
    if short or table.runs_command(ran, found):
        return None
    return [*inner[: len(inner) - len(ran)], *ran[: found[-1] + 1]]


def _exact(allow_form: tuple[str, ...] | None) -> str | None:
    """The rule that allows this very command and nothing else, or None (see _suggestion on `|`)."""
    if not allow_form or any("|" in w for w in allow_form):
        return None
    return " ".join(_literal(w) for w in allow_form)


def _literal(word: str) -> str:
    return word.replace("*", "\\*")


def _harmless(variable: str) -> bool:
    """A variable set for the command alone that cannot change what it runs (variables.py)."""
    from gatekeep.name.variables import changes_what_runs

    return not changes_what_runs(variable)


def _allow_form(command: SimpleCommand) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    for assignment in command.assignments:
        m = ASSIGNMENT.match(assignment)
        variable = m.group(1) if m else assignment
        if not _harmless(variable):
            return None, (f"{variable}{CHANGES_WHAT_RUNS}",)
    words = list(command.words)
    # a wrapper by its name alone: `./nice make` runs a file of the project, never nice
    while words and not words[0].dynamic and "/" not in words[0].value and wrapper_of(words[0].value):
        wrapper = wrapper_of(words[0].value)
        if not wrapper.harmless:
            break
        inner, sure = unwrap(wrapper, [w.value for w in words])
        if not sure:
            return None, (f"{words[0].value} has an option gatekeep does not know",)
        words = words[len(words) - len(inner) :]
    if not words:
        return None, ("nothing runs inside the wrapper",)
    if words[0].dynamic:
        return None, ("the command word is computed at run time",)
    return tuple(w.value for w in words), ()


DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd", "chdir"})  # chdir: zsh's other name for cd
UNKNOWN_DIRECTORY = None  # in Normalized.directories: a directory known only at run time


def place(normalized: list[Normalized], cwd: str) -> list[Normalized]:
    """Where each command may run, and its deny forms with relative words resolved there.

    Every command runs in the line's directory `cwd` unless a `cd` (`pushd`, `popd`, or a
    bare directory, which zsh's AUTO_CD and bash's autocd enter) comes before it on the
    line; from then on it may run there *or* where the cd leads. A union, not a
    replacement: a cd in a subshell, after `||` or in a failing list may not apply. A
    cd to `-`, to a computed path or through an exported CDPATH leads somewhere known
    only at run time (UNKNOWN_DIRECTORY). So `cd / && rm -rf *` is also `rm -rf /*`,
    `rm -rf ..` typed in ~/src is also `rm -rf ~`, and `cd ~ && echo x >> .bashrc`
    writes to ~/.bashrc (decide.py judges writes in every directory a command may run in).

    Each cd can double the directories (`cd a; cd b` leads to ., a, b and a/b), and every
    directory multiplies the work on each later command (its forms resolved there, its
    writes and reads judged there). So a command that may run in more than MAX_DIRECTORIES
    directories is not placed, nor is any command once the words of the forms to resolve (and
    the redirections and assignments to judge) in directories besides the line's own pass
    DIRECTORY_WORDS: it is marked unchecked, which denies it firmly (decide.py). That is never
    looser than judging it everywhere; a line that could be allowed comes nowhere near (one cd
    before 5,000 words, the most a line short enough to be parsed holds; a second cd asks).
    """
    home = os.path.expanduser("~")
    current: tuple[str | None, ...] = (cwd,)
    placed = list(normalized)
    budget = DIRECTORY_WORDS
    unchecked = None
    for i in sorted(range(len(normalized)), key=lambda k: normalized[k].command.start):
        n = normalized[i]
        if n.unchecked:  # denied unread: nothing to resolve, and where it leads does not matter
            placed[i] = n._replace(directories=current)
            continue
        if unchecked is None and len(current) > 1:
            budget -= (len(current) - 1) * _weight(n)
            if len(current) > MAX_DIRECTORIES:
                unchecked = (
                    f"after the line's cds it may run in {len(current):,} directories, too many to try"
                    " every deny rule in each"
                )
            elif budget < 0:
                unchecked = (
                    f"after the line's cds it may run in {len(current):,} directories, with too many words"
                    f" (more than {DIRECTORY_WORDS:,} on the line) to try every deny rule on in each"
                )
        if unchecked is not None:
            placed[i] = n._replace(directories=current, unchecked=unchecked)
            continue
        known = set(n.deny_forms)
        extra = [f for d in current if d is not None for f in _resolved_forms(n.deny_forms, d, home)]
        extra = list(dict.fromkeys(f for f in extra if f not in known))
        placed[i] = n._replace(directories=current, deny_forms=n.deny_forms + tuple(extra), resolved_forms=tuple(extra))
        led = _directory_change(n, current, home)
        if led:
            current = tuple(dict.fromkeys(current + led))
    return placed


MAX_DIRECTORIES = 16
DIRECTORY_WORDS = 10_000  # ~30 µs each to judge again: 0.3 s


def _weight(n: Normalized) -> int:
    """What judging a command in one more directory costs: the words of its forms (resolved,
    read), its redirections and assignments (written, read)."""
    return sum(len(f) for f in n.deny_forms) + len(n.command.redirects) + len(n.command.assignments)


def _resolved_forms(forms, directory: str, home: str) -> list[tuple[str, ...]]:
    found = []
    prefix = _plain_prefix(directory, home)
    for form in forms:
        if not form:
            continue
        if prefix is None:
            words = (form[0], *(_rule_path(_in(directory, w), home) for w in form[1:]))
        else:
            words = (form[0], *(_resolved(w, directory, home, prefix) for w in form[1:]))
        if words != form:
            found.append(words)
    return found


def _plain_prefix(directory: str, home: str) -> tuple[str, str] | None:
    """For a clean absolute directory (normalized, one leading `/`), what a plain name resolved in it
    starts with, and the home directory's own `~` spelling test; else None (see _resolved)."""
    if not directory.startswith("/") or directory.startswith("//") or posixpath.normpath(directory) != directory:
        return None
    return ("/" if directory == "/" else directory + "/"), ("" if home == "/" else home)


def _resolved(word: str, directory: str, home: str, prefix: tuple[str, str]) -> str:
    """_rule_path(_in(directory, word), home), without posixpath for a plain name (no `/`, not `.`
    or `..`, nothing _in keeps as it is): joined to a clean directory, it is clean already. A
    long line is mostly such words, and posixpath cost 2 µs each."""
    if not word or "/" in word or word in (".", "..") or word[0] in "-~$`<>" or "=" in word:
        return _rule_path(_in(directory, word), home)
    path = prefix[0] + word
    if prefix[1] and (path == prefix[1] or path.startswith(prefix[1] + "/")):
        return "~" + path[len(prefix[1]) :]
    return path


def _in(directory: str, word: str) -> str:
    """A relative path word resolved against `directory`; options, absolute, home-relative and
    computed words as they are."""
    if word == "~+" or word.startswith("~+/"):  # the directory the command runs in
        return directory + word[2:]
    if not word or word[0] in "-/~$`<>" or "=" in word:
        return word
    return posixpath.join(directory, word)


def _directory_change(n: Normalized, current, home: str) -> tuple[str | None, ...]:
    """The directories a cd-like command may lead to from each of `current`, or () if it is none."""
    form = next((f for f in reversed(n.deny_forms) if f and basename(f[0]) in DIRECTORY_CHANGERS), None)
    words = n.command.argv
    if form is None:
        # AUTO_CD (zsh) and autocd (bash): a directory typed alone is entered
        if len(words) == 1 and not n.command.words[0].dynamic and words[0].startswith(("/", ".", "~")):
            form = ("cd", words[0])
        else:
            return ()
    operands = [w for w in form[1:] if not w.startswith("-") or w == "-"]
    if basename(form[0]) == "popd" or len(operands) > 1 or any(w.dynamic for w in n.command.words):
        return (UNKNOWN_DIRECTORY,)
    target = _home_spelled_out(operands[0], home) if operands else home
    if target == "-" or target.startswith(("+", "~")):  # OLDPWD, the directory stack, ~user
        return (UNKNOWN_DIRECTORY,)
    if target.startswith("/"):
        return (posixpath.normpath(target),)
    led = [posixpath.normpath(posixpath.join(d, target)) if d is not None else None for d in current]
    if os.environ.get("CDPATH") and not target.startswith(("./", "../")) and target not in (".", ".."):
        led.append(UNKNOWN_DIRECTORY)  # cd finds a relative name through CDPATH first
    return tuple(led)
