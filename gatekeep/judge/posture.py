"""Postures: what a command no rule decides may do without a question (`posture:` in the policy).

A command that no rule allows, and that is not in the built-in read-only set, meets the policy's
`default`. Before it does, and only when that default is `ask`, the posture looks at what the
command's data says it does (tools/*.toml: `effect`, its writes and removals) and where:

- `strict`: nothing more; what only reads is allowed, the rest asks (gatekeep before postures).
- `workspace`: also what stays inside the working tree and can be undone: file changes there
  (not `.git`, not protected paths, nothing lost: loss and secrets were judged before), the git
  operations git can undo (`effect = "recoverable"`), the shell's own state (`export`, `cd`, job
  control of the line's own jobs, `source` of a file in the tree) and requests to this machine.
  Running code (scripts, test runners, builds, `python -c`) still asks.
- `guard`: everything but what loses work, reads secrets, writes a protected path, writes
  outside the working tree and the temporary directories, feeds a program from a pipe
  (`curl … | sh`), changes the system (`effect = "system"`, or run through `sudo` and its
  kind), and the built-in denies: those ask or are denied as in every posture.

The working tree is the git work tree the line runs in, else the directory of the trusted
project policy (`.gatekeep.yaml`) above it. Outside both there is none: writes ask, as in
`strict` (guard still lets the temporary directories be written). A working tree that is the
home directory or `/` (a dotfiles repository) is none either: the whole home is nobody's
project. Every place is compared after links are resolved, so a link out of the tree is outside.
"""

from __future__ import annotations

import os

from gatekeep.core.lazyre import lazy

POSTURE_NAMES = {
    "strict": "allows what only reads",
    "workspace": "allows what only reads, and changes inside the working tree that can be undone",
    "guard": "allows all but what loses work, reads secrets, or writes outside the working tree",
}
# `sudo` and its kind run a command as someone else: under guard it asks (it changes the system)
AS_ANOTHER_USER = frozenset({"sudo", "doas", "su", "pkexec", "run0", "sg", "setpriv", "chroot", "nsenter"})
# the system's own program directories (root's to write): under guard, `/usr/bin/python3` is the
# tool `python3` found on PATH would be; a path anywhere else can be any program
SYSTEM_PROGRAMS = frozenset({"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/local/sbin"})
_LOCAL_HOST = lazy(r"(?i)(localhost|[a-z0-9.-]+\.localhost|127(\.\d{1,3}){3}|0\.0\.0\.0|\[::1\]|::1)")


def workspace_of(cwd: str, policy, paths) -> str | None:
    """The working tree `cwd` lies in (the module docstring), as a real path, or None."""
    from gatekeep.judge.writes import work_tree

    real = os.path.realpath(cwd)
    tree = work_tree(real)
    found = tree if os.path.lexists(os.path.join(tree, ".git")) else None
    if found is None and policy.trust_locked_by is None:  # (a managed lock: no project is trusted)
        from gatekeep.judge.project import is_trusted

        trusted = [
            os.path.dirname(os.path.realpath(str(layer.path)))
            for layer in policy.layers
            if layer.name == "project" and layer.error is None and is_trusted(paths, str(layer.path), layer.text)
        ]
        found = max((t for t in trusted if real == t or real.startswith(t.rstrip("/") + "/")), key=len, default=None)
    if found in (None, "/", os.path.realpath(os.path.expanduser("~"))):
        return None
    return found


def boundary(cwd: str, policy, paths) -> tuple[str | None, tuple[str, ...] | None]:
    """(the working tree, the places a write may land in without being asked as outside them)
    for the policy's posture: None under strict (the line's directory, as before postures); the
    tree, or with none the line's directory (where a rule may allow a write, as before; the
    posture itself allows nothing there). Under guard the temporary directories count too, but
    one the home lies below does not."""
    if policy.posture == "strict":
        return None, None
    from gatekeep.judge.writes import temporary_directories

    try:
        workspace = workspace_of(cwd, policy, paths)
        here = os.path.realpath(cwd)
    except OSError:  # a directory removed while the shell stays in it: no tree, and its own name
        workspace, here = None, cwd
    places = (workspace or here,)  # (no tree: the line's directory, for rules, as before)
    if policy.posture == "guard":
        home = os.path.realpath(os.path.expanduser("~")) + "/"
        temporary = [os.path.realpath(t) for t in temporary_directories()]
        places += tuple(t for t in temporary if not home.startswith(t.rstrip("/") + "/"))
    return workspace, places


def allows(normalized, policy, writes, targets=(), through=lambda target: [], contained: bool = False) -> str | None:
    """Why the posture allows `normalized`, a command that reached the default with nothing
    against it (decide.py judged rules, protected writes, loss, secrets and code places first,
    and `targets`, the (path, dynamic) pairs it writes, against the boundary; `through` gives the
    places a path reaches through the links the line makes); None when it
    asks as before.

    `contained`: guard judges it for the sandbox (judge/gate.py), where any program runs as the
    project's code does, held to the working tree: a program the data does not know, or one
    named by a path outside the tree (`/testbed/tests/runtests.py`), counts as known there. An
    option the data does not know of a tool it knows still asks: what it does is unknown."""
    if policy.posture == "strict" or policy.default != "ask":
        return None
    form = normalized.allow_form
    if not form:
        return None
    if not normalized.command.argv:  # `SERVER_PID=$!`, `NODE_ENV=test`: the shell's own variables
        return _assignments(normalized)
    if "/" in form[0] and not (policy.posture == "guard" and os.path.dirname(form[0]) in SYSTEM_PROGRAMS):
        return _guard_program(normalized, policy, writes, targets, contained)  # `./cp`: a path can be any program
    if "/" in form[0]:  # `/usr/bin/python3 x.py`: under guard, judged as the tool of that name
        form = (os.path.basename(form[0]), *form[1:])
        normalized = normalized._replace(allow_form=form)
    from gatekeep.name.knowledge import form_of, load_knowledge, load_table

    inner = load_table().runner_inner(list(form))  # `npx tsc --noEmit`: the runner's own words only;
    facts = form_of(list(form[: len(form) - len(inner)] if inner else form))  # what it runs is code
    if inner:
        facts = facts._replace(effect=None, read_only=False)
    if facts.unknown:
        return None  # an option the data does not know: what it does is unknown
    table = load_knowledge().table(form[0])
    running = set(table[1].get("program-options", ())) | set(table[1].get("code-options", ())) if table else set()
    if running & set(facts.options) and inline_code(normalized, policy, writes) is None:
        return None  # `sed -f x.sed`, `awk -f`: a program nobody has seen runs (it may write, or run, anything)
    touched = [(w, True) for w in (*facts.changed, *facts.removes)]
    # a link the line makes (`ln -s ~ a/h && rm -rf a/h/`): what it changes or removes is where it points
    touched += [(linked, True) for word, _ in touched for linked in through(word)]
    if not _stays_inside(touched, normalized, writes) or _names_secret([*targets, *touched], normalized, policy, writes):
        return None
    if policy.posture == "guard":
        return _guard(normalized, facts, writes, [*targets, *touched], contained)
    return _workspace(normalized, facts, writes)


def inline_code(normalized, policy, writes) -> str | None:
    """Why `posture: guard` lets the inline code of `normalized` run (`python3 -c CODE`, `node
    -e`, `python3 <<'EOF'`), or None. Guard lets the project's scripts run, and a script the
    line writes (decide._runs_what_it_writes); code written on the line is no different, and
    more can be seen of it. It still asks when the code comes from a pipe or is computed when
    it runs (a substitution, a variable, an unquoted heredoc that expands), or the interpreter
    is given more to run (`-m timeit`, `-i`), or the code names (in any of its string literals,
    read as its language reads them) a protected or secret path, a place whose content runs
    (`~/.bashrc`, `.git/hooks`), or a path outside the working tree and the temporary
    directories, or calls that delete files or find the home directory (`loss-calls`,
    `home-calls` in the data): those it cannot follow, so it asks as for any such command. A
    directory the code names is not judged as read whole (`sys.path.insert(0, '.')`): what a
    script reads there is unknown, as for a script file."""
    if policy.posture != "guard" or policy.default != "ask" or normalized.command.position > 0:
        return None
    from gatekeep.name.inline import literals, names_one_of
    from gatekeep.name.knowledge import runs_code, visible_code

    fed = next((r for r in reversed(normalized.command.redirects) if r.stdin_text is not None), None)
    if any(w.dynamic for w in normalized.command.words) or fed is not None and fed.dynamic:
        return None  # code computed when it runs (`python3 -c "$(curl …)"`, an unquoted heredoc's `$X`)
    form = list(normalized.allow_form or ())
    stdin = fed.stdin_text if fed is not None else None
    found = visible_code(form, stdin)
    if found is None or normalized.exact_form != runs_code(form, stdin is not None):
        return None  # (what asks is something else: a wrapper's option, a module that runs code)
    code, language, table = found
    if names_one_of(code, language, {*table.get("loss-calls", ()), *table.get("home-calls", ())}):
        return None
    strings = literals(code, language)
    if strings is None or not _inline_paths_fine(strings, normalized, policy, writes):
        return None
    return "as `posture: guard` allows: code on the line, as a script of the project would run"


def _inline_paths_fine(strings, normalized, policy, writes) -> bool:
    from gatekeep.judge.protect import judge_path
    from gatekeep.judge.writes import code_place, judge

    for text in dict.fromkeys(s.strip() for s in strings):
        if not text or "\n" in text or len(text) > 4096:
            continue
        home = text.startswith("~")
        for d in normalized.directories or ("",):
            if d is None:
                return False  # (a cd known only at run time: where its paths are is unknown)
            where = d or writes.cwd
            if code_place(text, home, writes, d) or judge(text, home, writes, d) is not None:
                return False
            if judge_path(policy.protected, "write", text, home, writes.home, where) is not None:
                return False
            if not os.path.isdir(os.path.join(where, os.path.expanduser(text) if home else text)):
                if judge_path(policy.protected, "read", text, home, writes.home, where) is not None:
                    return False
    return True


def _assignments(normalized) -> str | None:
    """A line of assignments alone sets the shell's own variables: allowed unless one changes
    what later commands run (variables.py; `PATH=…` and its kind also meet the built-in ask rules)."""
    from gatekeep.name.variables import changes_what_runs
    from gatekeep.name.wrappers import ASSIGNMENT

    for word in normalized.command.assignments:
        m = ASSIGNMENT.match(word)
        if m is None or changes_what_runs(m.group(1)):
            return None
    return "as the posture allows: it sets the shell's own variables"


def _guard_program(normalized, policy, writes, targets, contained: bool = False) -> str | None:
    """A command word that is a path: under guard, a program file inside the working tree runs as
    project code does (`./run.sh`), and any program does in the sandbox; anything else asks, in
    every posture."""
    if policy.posture != "guard" or not (contained or _known_program(normalized.allow_form, writes)):
        return None
    if not _stays_inside([], normalized, writes) or _names_secret(list(targets), normalized, policy, writes):
        return None
    return "as `posture: guard` allows: a program of the working tree"


def _stays_inside(words, normalized, writes) -> bool:
    """Whether each file the command changes or removes (beyond its writes, judged before) is
    inside the boundary, and no protected place (writes.judge)."""
    from gatekeep.judge.writes import judge

    directories = normalized.directories or ("",)
    return not any(judge(word, dynamic, writes, d) is not None for word, dynamic in words for d in directories)


def _names_secret(words, normalized, policy, writes) -> bool:
    """Whether a file the command writes, changes or removes is one `protect:` guards from
    reading (`.env`, a key): overwriting a secret is asked in every posture."""
    from gatekeep.judge.protect import judge_path

    directories = [d for d in normalized.directories or ("",) if d is not None]
    return any(
        judge_path(policy.protected, action, word, dynamic, writes.home, d or writes.cwd) is not None
        for word, dynamic in words
        for d in directories
        for action in ("read", "write")
    )


def _guard(normalized, facts, writes, touched, contained: bool = False) -> str | None:
    run_as = any(f and f[0].rsplit("/", 1)[-1] in AS_ANOTHER_USER for f in normalized.deny_forms)
    if facts.effect == "system" or run_as or not (contained or _known_program(normalized.allow_form, writes)):
        return None
    if writes.workspace is None and touched:
        return None  # no working tree: every change asks (the line's directory is no project)
    return "as `posture: guard` allows: it loses nothing, reads no secret and writes only inside the working tree"


def _known_program(form, writes) -> bool:
    """Whether guard may judge `form` by its data: a tool the data knows (by a subcommand it knows,
    for one whose unknown subcommands may be aliases that run a shell command: `git co`,
    `shell-aliases`), or a program file inside the working tree (`./run.sh`). Of a program it
    knows nothing about gatekeep cannot say that it loses nothing: that asks."""
    from gatekeep.name.knowledge import load_knowledge, spec_of
    from gatekeep.name.options import parse

    word = form[0]
    if "/" in word:
        return writes.workspace is not None and _in_tree(os.path.join(writes.cwd, word), writes)
    found = load_knowledge().table(word)
    if found is None:
        return False
    table = found[1]
    if not table.get("shell-aliases"):
        return True  # (`pnpm build`, `cargo foo`: a script of the project, a program on PATH)
    names = set(table.get("sub", ())) | set(table.get("subcommands", ()))
    first = parse(list(form[1:]), spec_of(table)).first_operand
    return first < 0 or form[1 + first] in names


def _workspace(normalized, facts, writes) -> str | None:
    if writes.workspace is None or not _inside(normalized.directories, writes):
        return None
    where = f"inside the working tree ({writes.workspace})"
    if facts.read_only:  # only reads, but writes through its redirections: each was judged inside
        return f"as `posture: workspace` allows: it writes only {where}"
    if facts.effect == "changes":
        return f"as `posture: workspace` allows: it changes files only {where}"
    if facts.effect == "recoverable":
        return "as `posture: workspace` allows: a change its tool can undo"
    if facts.effect == "shell-state":
        return _shell_state(normalized, facts, writes)
    if facts.effect == "fetches" and facts.operands and all(local_url(w) for w in facts.operands):
        from gatekeep.name.knowledge import load_knowledge

        connects = load_knowledge().table(normalized.allow_form[0])[1].get("connect-options", ())
        if not set(facts.options) & set(connects):
            return "as `posture: workspace` allows: a request to this machine only"
    return None


def _shell_state(normalized, facts, writes) -> str | None:
    name = normalized.allow_form[0]
    if name == "kill" and not all(w.startswith("%") for w in facts.operands):
        return None  # only the shell's own jobs (`kill %1`), never a process id
    if name in ("source", ".") and not _sourced_inside(facts.operands[:1], normalized, writes):
        return None
    return "as `posture: workspace` allows: it changes only the shell's own state"


def _sourced_inside(operands, normalized, writes) -> bool:
    """`source FILE`: FILE is a plain path inside the working tree (a virtualenv's activate)."""
    if len(operands) != 1 or any(c in operands[0] for c in "$`*?[~"):
        return False
    directories = [d for d in normalized.directories or ("",)]
    return all(_in_tree(os.path.join(d or writes.cwd, operands[0]), writes) for d in directories if d is not None)


def _inside(directories, writes) -> bool:
    """Whether every directory the command may run in is inside the working tree."""
    return all(d is not None and _in_tree(d or writes.cwd, writes) for d in directories or ("",))


def _in_tree(path: str, writes) -> bool:
    real = os.path.realpath(path)
    tree = writes.workspace
    return real == tree or real.startswith(tree.rstrip("/") + "/")


def local_url(word: str) -> bool:
    """Whether `word`, a URL or a host (curl's and wget's operands), names this machine."""
    rest = word.split("://", 1)[1] if "://" in word else word
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    if host.startswith("["):
        host = host.split("]", 1)[0] + "]"
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return bool(_LOCAL_HOST.fullmatch(host))
