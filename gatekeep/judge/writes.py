"""Where a command writes, and whether the built-in policy lets it.

A command writes through its redirections and, for the tools in _WRITERS,
through its arguments: `tee FILE`, `sed -i`, sed's `w FILE`, `sort -o`,
`dd of=`, the destination of `cp`/`mv`/`install`, `find -fprint`,
`git --output`, `curl -o`, `wget -O`, `truncate`. Both are judged alike.

A write (`>`, `>>`, `&>`, `>|`, `<>`) is **denied** when it lands on a file
that runs code or holds secrets or the gate itself: shell start-up files,
`~/.ssh`, `~/.config`, `/etc`, anything inside a repository's `.git` (its
config and hooks run code), gatekeep's own policy, audit log, locks, trust
store and hook files, and any project policy (`.gatekeep.yaml`). It **asks**
when it lands outside the current directory tree, or when its target is
computed at run time and so cannot be known. `/dev/null`, `/dev/stdout`, `/dev/stderr` and `/dev/tty` are
always fine.
"""

from __future__ import annotations

import os
import posixpath

from gatekeep.core.lazyre import lazy
from gatekeep.core.records import record
from gatekeep.judge.project import FILE_NAME as PROJECT_POLICY
from gatekeep.name.expand import ANY, KNOWN, expand, tilde

HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
RC_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".inputrc",
    ".envrc",
    ".bash_aliases",
    ".zsh_aliases",
)
# Files under home whose content makes programs run commands: a write asks.
CODE_CONFIG = (".gitconfig", ".npmrc", ".yarnrc", ".curlrc", ".wgetrc", ".netrc")
# Coding agents' settings, in a project or a home directory: each can switch the agent's hooks
# (gatekeep's among them) off, or add hooks that run code outside any gate (issue 37). A name
# ending in "/" is a directory: all below it; the agents' own directories are named too, as a
# `mv` onto one replaces the settings in it. The sandbox holds the same directories read-only.
AGENT_SETTINGS = (
    ".claude", ".gemini", ".codex", ".cursor", ".copilot", ".opencode", ".github",
    ".claude/settings.json", ".claude/settings.local.json", ".gemini/settings.json", ".codex/config.toml",
    ".codex/hooks.json", ".cursor/hooks.json", ".copilot/config.json", ".copilot/hooks/", ".github/hooks/", ".github/copilot/",
    ".opencode/plugin/", ".opencode/plugins/", "opencode.json", "opencode.jsonc",
)  # fmt: skip
# Raw disks: writing one destroys its file systems.
_DISK = lazy(r"/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d|loop\d)")
_OTHER_HOME = lazy(r"~([A-Za-z_][A-Za-z0-9_.-]*)(?=/|$)")


class WriteContext(
    record("WriteContext", "cwd home protected path_dirs workspace boundary", defaults=((), (), None, None))
):
    """Where a line runs and which paths no line may write: `protected` holds gatekeep's own
    directories and files, `path_dirs` the directories of $PATH (a new file there shadows a
    command); `workspace` is the working tree the posture lets commands change (posture.py), or
    None; `boundary` the directories a write may land in without a question (None: the line's own)."""

    __slots__ = ()

    @classmethod
    def here(
        cls, cwd: str | None, protected: tuple[str, ...] = (), workspace: str | None = None, boundary=None
    ) -> WriteContext:
        home = os.path.expanduser("~")
        path_dirs = [d for d in os.environ.get("PATH", "").split(":") if d.startswith("/")]
        path_dirs += [f"{home}/.local/bin", f"{home}/bin"]  # on PATH by default once they exist (~/.profile)
        return cls(cwd or os.getcwd(), home, protected, tuple(path_dirs), workspace, boundary)


_STRICTNESS = {None: 0, "ask": 1, "deny": 2}


def real_path(path: str, memo: dict | None) -> str:
    """os.path.realpath(path), its directory's real path kept in `memo`: a path that is not itself a
    link is its real directory and its name, one lstat instead of one per part (a command naming
    18,000 files in one directory took 0.6 s of realpath)."""
    head, _, name = path.rpartition("/")
    if memo is None or not head or not path.startswith("/") or posixpath.normpath(path) != path:
        return os.path.realpath(path)  # (only a clean absolute path is its directory and its name)
    if os.path.islink(path):
        return os.path.realpath(path)
    real = memo.get(head)
    if real is None:
        real = memo[head] = os.path.realpath(head)
    return real.rstrip("/") + "/" + name


def judge(
    target: str, dynamic: bool, ctx: WriteContext, directory: str | None = "", memo: dict | None = None
) -> tuple[str, str] | None:
    """("deny" | "ask", why) for a write to `target` by a command running in `directory`
    (None: a directory known only at run time; "": the line's own), or None when it is fine.

    Resolved as the kernel resolves it: every word of a brace list (`> {~/.bashrc,}`), the home
    directory however it is spelled, and every existing symlink on the way (a link made before
    the line); the strictest verdict over all of them counts.

    `memo`, a dict kept for one line, keeps what was found for it (each verdict, and the
    protected places resolved through their links, ~30 realpath calls): a line writing
    thousands of files (`> f1 > f2 …`) took 1 ms a file.
    """
    if target in HARMLESS:
        return None
    if target.startswith("/") or target == "~" or target.startswith("~/"):
        directory = ""  # the same path whichever directory the command runs in: judged once
    if memo is None:
        return _judge(target, dynamic, ctx, directory, {})
    key = ("judge", target, dynamic, directory)
    if key not in memo:
        memo[key] = _judge(target, dynamic, ctx, directory, memo)
    return memo[key]


def _judge(target: str, dynamic: bool, ctx: WriteContext, directory: str | None, memo: dict):
    candidates = [target]
    if dynamic and "{" in target:
        from gatekeep.read.shellwords import expand_braces

        candidates = expand_braces(target)
        if candidates is None:
            return "ask", f"writes to {target}, a brace list of too many paths to check"
    worst = None
    for candidate in candidates:
        if candidate:  # bash drops the empty words of a brace list
            verdict = _judge_one(candidate, dynamic, ctx, ctx.cwd if directory == "" else directory, memo)
            if _STRICTNESS[verdict and verdict[0]] > _STRICTNESS[worst and worst[0]]:
                worst = verdict
    return worst


def _judge_one(
    target: str, dynamic: bool, ctx: WriteContext, directory: str | None, memo: dict
) -> tuple[str, str] | None:
    if target in HARMLESS:
        return None
    homes = [ctx.home]
    other = _OTHER_HOME.match(target)
    if other:  # ~root/.bashrc: that user's start-up files are protected too
        home = tilde(other.group(1), ctx.home, directory)
        if home not in (ANY, ctx.home):
            homes.append(home)
    literal = expand(target, ctx.home, directory) if dynamic or target.startswith("~") else target
    if ANY in literal or KNOWN in literal:
        return "ask", f"writes to {target}, a path computed at run time"
    if dynamic and any(c in literal for c in "*?["):
        matches = _glob_matches(literal, directory, ctx)
        if matches is None:
            return "ask", f"writes to {target}, a path computed at run time"
        worst = None
        for match in matches:
            verdict = _judge_one(match, False, ctx, directory, memo)
            if _STRICTNESS[verdict and verdict[0]] > _STRICTNESS[worst and worst[0]]:
                worst = verdict
        return worst
    if directory is None and not literal.startswith("/"):
        return "ask", f"writes to {target} in a directory known only at run time (after a cd)"
    path = "/" + os.path.normpath(os.path.join(directory or ctx.cwd, literal)).lstrip("/")  # `//etc` is /etc
    resolved = _resolved(path, memo)  # a path met twice (`f` in a/, and a/f) is resolved and judged once
    if resolved is None:
        return "ask", f"writes to {target}, a path that cannot be resolved"
    if resolved is _LINK:  # what realpath could not get through is still a link
        return "ask", f"writes to {target}, through links that do not resolve (a loop?)"
    # "outside the current directory" means the line's own: `cd ~/other && echo x > f` asks
    # as `echo x > ~/other/f` does
    verdict = _judged_path(path, ctx, homes, memo)
    if resolved != path:
        through = _judged_path(resolved, ctx, homes, memo)
        if through is not None and _STRICTNESS[through[0]] > _STRICTNESS[verdict and verdict[0]]:
            return through[0], f"writes to {target}, a link to {resolved}: {through[1]}"
    return verdict


_LINK = object()  # (_resolved) a path realpath could not get through


def _resolved(path: str, memo: dict):
    """os.path.realpath(path); None when it fails, _LINK when what it found is still a link.
    Kept in `memo`, with the real paths of the directories on the way (real_path)."""
    key = ("resolved", path)
    if key not in memo:
        try:
            found = real_path(path, memo.setdefault("realpath", {}))
        except (OSError, ValueError):
            found = None
        memo[key] = _LINK if found is not None and os.path.islink(found) else found
    return memo[key]


def _judged_path(path: str, ctx: WriteContext, homes: list[str], memo: dict):
    key = ("path", path, *homes)
    if key not in memo:
        memo[key] = _judge_path(path, ctx, homes, memo)
    return memo[key]


def _judge_path(path: str, ctx: WriteContext, homes: list[str], memo: dict):
    """The verdict for writing to the absolute, normalized `path`. Protected places are compared
    as written and resolved (a ~/.bashrc that links into a dotfiles repository protects that file).

    On strings: `path` is clean, as pathlib would spell it, and comparing PurePosixPath objects
    cost ~1 ms a write (a line of thousands of writes took seconds)."""
    key = ("places", tuple(homes))
    if key not in memo:
        sensitive = [f"{home}/{name}" for home in homes for name in (*RC_FILES, ".ssh", ".config")]
        memo[key] = (
            _places([*sensitive, "/etc", *ctx.protected]),
            _places([f"{home}/{name}" for home in homes for name in CODE_CONFIG])[0],
            _places([os.path.normpath(d) for d in (ctx.cwd,) if ctx.boundary is None] + list(ctx.boundary or ())),
        )
    protected, code_config, here = memo[key]
    parent, _, name = path.rpartition("/")
    parent = parent or "/"
    if _DISK.match(path):
        return "deny", f"writes onto the disk {path}, destroying its file systems (built-in policy)"
    if name == PROJECT_POLICY:
        return "deny", f"writes to {path}, a project policy, which is protected by the built-in policy"
    if _agent_settings(path):
        return "deny", (
            f"writes to {path}, a coding agent's settings, which can turn its hooks (gatekeep) off:"
            " protected by the built-in policy"
        )
    if _within(path, protected):
        if name in RC_FILES and parent in homes:  # `make user-install`'s PATH advice, typed in a gated shell
            shell = "zsh" if name.startswith(".z") else "bash"
            return "deny", (
                f"writes to {path}, a start-up file, which is protected by the built-in policy"
                f" (to put a directory on PATH: gatekeep install --shell {shell} --path DIR)"
            )
        return "deny", f"writes to {path}, which is protected by the built-in policy"
    if ".git" in path.split("/")[:-1]:
        return "deny", f"writes into {parent}, inside a repository's .git (config and hooks run code)"
    if name == ".git":  # `gitdir: DIR`: DIR's config (fsmonitor, hooks) then runs for git here
        return "ask", f"writes {path}, a .git file that makes another directory the repository"
    if path in code_config:
        return "ask", f"writes to {path}, whose settings make programs run commands"
    if parent in ctx.path_dirs:
        return "ask", f"writes {name} into {parent}, a directory on PATH: it could shadow a command"
    if not _within(path, here):
        where = "the current directory" if ctx.boundary is None else f"the working tree ({ctx.workspace or 'none here'})"
        return "ask", f"writes to {path}, outside {where}"
    return None


def _agent_settings(path: str) -> bool:
    """Whether the absolute `path` is one of AGENT_SETTINGS, or lies below one of its directories."""
    for name in AGENT_SETTINGS:
        if name.endswith("/"):
            if f"/{name}" in path + "/":
                return True
        elif path.endswith(f"/{name}"):
            return True
    return False


def _places(paths: list[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The paths as written and resolved, as pathlib spells them, and what a path below one
    starts with."""
    from pathlib import PurePosixPath  # only for a line that writes: pathlib costs ~0.25x start-up

    found = [str(q) for q in dict.fromkeys(PurePosixPath(q) for p in paths for q in (p, os.path.realpath(p)))]
    return frozenset(found), tuple(q if q.endswith("/") else q + "/" for q in found)


def _within(path: str, places: tuple[frozenset[str], tuple[str, ...]]) -> bool:
    """`p == place or place in p.parents` for one of the places, p being PurePosixPath(path)."""
    exact, below = places
    return path in exact or path.startswith(below)


# What a command may not even name, unless the data says it only reads that word: files whose
# content runs code or holds the gate (decide.py asks).
GIT_CODE = ("config", "hooks")  # .git/config (fsmonitor, aliases) and .git/hooks run code


def code_place(word: str, dynamic: bool, ctx: WriteContext, directory: str | None = "") -> str | None:
    """What `word` names, if it may be a shell start-up file, a file in ~/.ssh, a repository's
    .git/config or .git/hooks, a file whose settings run commands (~/.gitconfig, ~/.npmrc),
    a project policy or one of gatekeep's own files; else None. A path whose start is known
    only at run time (`~-/.bashrc`, `$X/.git/config`) counts by its end."""
    if word in HARMLESS or not word or word[0] == "-" or "://" in word:
        return None  # (protect.pieces gives a short option's attached value, a file:// URL's path)
    literal = expand(word, ctx.home, ctx.cwd if directory == "" else directory) if dynamic or word[:1] == "~" else word
    parts = [p for p in literal.split("/") if p not in ("", ".")]
    if not parts or KNOWN in literal:
        return None
    name = parts[-1]
    if ANY in literal:  # judged by its end: what follows the last unknown part
        tail = literal.rsplit(ANY, 1)[1].strip("/").split("/")
        if tail[-1] in RC_FILES or tail[-1] in CODE_CONFIG or ".ssh" in tail[:-1] or _git_code(tail):
            return f"{word} (a path computed at run time, ending in {'/'.join(tail)})"
        return None
    if directory is None and not literal.startswith("/"):  # after a cd known only at run time: by its end
        if name in RC_FILES or name in CODE_CONFIG or ".ssh" in parts[:-1] or _git_code(parts):
            return f"{word} (in a directory known only at run time)"
        return None
    # (an absolute path after a cd known only at run time: where it starts does not matter)
    path = "/" + os.path.normpath(os.path.join(directory or ctx.cwd, literal)).lstrip("/")
    for candidate in dict.fromkeys((path, os.path.realpath(path))):
        found = _code_place(candidate, ctx)
        if found:
            return found if candidate == path else f"{word}, a link to {found}"
    return None


def _git_code(parts: list[str]) -> bool:
    return any(p == ".git" and parts[i + 1 : i + 2] and parts[i + 1] in GIT_CODE for i, p in enumerate(parts))


def _code_place(path: str, ctx: WriteContext) -> str | None:
    parent, _, name = path.rpartition("/")
    parts = path.split("/")
    homes = (ctx.home, os.path.realpath(ctx.home))
    if parent in homes and (name in RC_FILES or name in CODE_CONFIG):
        return f"{path}, a file whose content runs commands"
    if any(path == f"{h}/.ssh" or path.startswith(f"{h}/.ssh/") for h in homes):
        return f"{path}, in ~/.ssh"
    if _git_code(parts) or name == ".git":  # a .git file (`gitdir: DIR`) makes DIR the repository
        return f"{path}, a repository's code (.git/config and .git/hooks run commands)"
    if name == PROJECT_POLICY:
        return f"{path}, a project policy"
    if any(path == p or path.startswith(p.rstrip("/") + "/") for p in ctx.protected):
        return f"{path}, one of gatekeep's own files"
    return None


TEMPORARY = ("/tmp", "/var/tmp")  # and $TMPDIR: what lies below them is disposable by name


MAX_GLOB_MATCHES = 1000


def _glob_matches(literal: str, directory: str | None, ctx: WriteContext) -> list[str] | None:
    """The paths a glob in the last part of a path names (`src/*.py`): the files it matches now,
    as the shell matches them (no dotfiles), or the pattern itself when none does (the shell then
    passes it on as written). None, to be asked about, when the pattern may name a dotfile
    (`.*`: `.git`, `.env`), a wildcard stands in a directory's name (`*/x`), the directory is
    known only at run time, or it matches more than MAX_GLOB_MATCHES files. A file made later on
    the line is in the same directory; a link made there is judged as the line's links are."""
    parent, _, name = literal.rstrip("/").rpartition("/")
    if name.startswith(".") or any(c in parent for c in "*?[") or directory is None and not literal.startswith("/"):
        return None
    import glob

    base = directory or ctx.cwd
    found = glob.glob(literal, root_dir=base) if not literal.startswith("/") else glob.glob(literal)
    if len(found) > MAX_GLOB_MATCHES:
        return None
    return sorted(found) or [literal]


def judge_removal(
    target: str, ctx: WriteContext, directory: str | None = "", memo: dict | None = None
) -> str | None:
    """Why removing the tree `target` (`rm -r`) would lose work no command brings back, or None:
    it is a repository's .git, or lies outside the working tree (the git work tree holding the
    line's directory, else that directory, unless that is the home directory or /, which are
    nobody's working tree) and below no temporary directory. A path computed at
    run time, or relative to a directory known only at run time, may be anything.

    `memo`, a dict kept for one line, keeps the working tree, the real home directory and the
    real directories on the way: each removal looked them up anew (~80 µs)."""
    memo = {} if memo is None else memo
    computed = target[:1] == "~" or "$" in target or "`" in target
    literal = expand(target, ctx.home, ctx.cwd if directory == "" else directory) if computed else target
    if ANY in literal or KNOWN in literal:
        return f"removes {target}, a path computed at run time, which may hold work"
    if directory is None and not literal.startswith("/"):
        return f"removes {target} in a directory known only at run time (after a cd)"
    if literal.rstrip("/").rsplit("/", 1)[-1] in (".", ".."):
        return None  # rm refuses to remove `.` or `..`
    base = ctx.cwd if not directory else directory  # (None: the literal is absolute, as checked above)
    path = "/" + os.path.normpath(os.path.join(base, literal)).lstrip("/")
    candidates = [path]
    first_glob = min((path.find(c) for c in "*?[" if c in path), default=-1)
    if first_glob >= 0:
        import glob  # only for a recursive rm of a glob; like the shell's, `*` skips dotfiles

        candidates = glob.glob(path) or [path[:first_glob].rsplit("/", 1)[0] or "/"]
    key = ("removal", ctx.cwd, ctx.home)
    if key not in memo:
        memo[key] = work_tree(ctx.cwd), os.path.realpath(ctx.home), temporary_directories()
    tree, home, temporary = memo[key]
    loose = tree in ("/", home)  # no repository: the whole home is no working tree
    for candidate in candidates:
        resolved = real_path(candidate, memo.setdefault("realpath", {}))
        if ".git" in resolved.split("/") or ".git" in candidate.split("/"):
            return f"removes {candidate}, a repository's history (.git)"
        if any(resolved.startswith(t + "/") for t in temporary) and not (resolved + "/").startswith(home + "/"):
            continue
        if resolved == tree:
            return f"removes {candidate}, the whole working tree"
        if not resolved.startswith(tree.rstrip("/") + "/"):
            return f"removes {candidate}, outside the working tree ({tree})"
        if loose:
            return f"removes {candidate}, in {tree} and in no git working tree"
    return None


def temporary_directories() -> list[str]:
    """/tmp, /var/tmp and $TMPDIR: what lies below them is disposable by name."""
    return [t for t in (*TEMPORARY, os.environ.get("TMPDIR", "").rstrip("/")) if t.startswith("/")]


def work_tree(cwd: str) -> str:
    """The top of the git work tree holding `cwd` (the nearest directory with a .git), else cwd."""
    directory = os.path.realpath(cwd)
    probe = directory
    while True:
        if os.path.lexists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return directory
        probe = parent


# Commands that write files named in their arguments, not by a redirection.
# Each reader gets the words after the tool and returns the paths written.


def argument_writes(form: tuple[str, ...]) -> list[str]:
    """The files `form` (a command's words, quotes removed) writes through its arguments: what
    tools/*.toml says (write options, written operands: `tee F`, `cp A B`, `sort -o F`, `curl -o
    F`, `git log --output F`), and what a few tools' own syntax says (_WRITERS: sed's `w FILE`,
    dd's `of=`, tar's extraction)."""
    if not form:
        return []
    from gatekeep.name.knowledge import files_written

    reader = _WRITERS.get(form[0].rsplit("/", 1)[-1])
    written = reader(list(form[1:])) if reader else []
    return written + [w for w in files_written(list(form)) if w not in written]


def _long(option: str, full: str) -> bool:
    """`option` (before any `=`) spells the long option `full`, or a GNU abbreviation of it
    (`--o` for `--output`: any prefix counts, the safe reading of an ambiguous one)."""
    name = option.split("=", 1)[0]
    return len(name) >= 3 and full.startswith(name)


def _option_values(args: list[str], short: str | None, long: str | None) -> list[str]:
    """Every value of `-X VALUE`, `-XVALUE`, `--long=VALUE`, `--long VALUE` (and abbreviations) in args."""
    values, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        if long and arg.startswith("--") and _long(arg, long):
            if "=" in arg:
                values.append(arg.split("=", 1)[1])
            elif i + 1 < len(args):
                i += 1
                values.append(args[i])
        elif short and arg.startswith("-") and not arg.startswith("--") and short in arg[1:]:
            rest = arg[arg.index(short, 1) + 1 :]
            if rest:
                values.append(rest)
            elif i + 1 < len(args):
                i += 1
                values.append(args[i])
        i += 1
    return values


def _sed(args: list[str]) -> list[str]:
    """Files sed writes: its operands with -i, and every `w FILE` of its scripts (sedscript.py)."""
    from gatekeep.name import sedscript
    from gatekeep.name.knowledge import load_knowledge, spec_of
    from gatekeep.name.options import parse

    parsed = parse(args, spec_of(load_knowledge().table("sed")[1]))
    scripts = parsed.values("-e", "--expression")
    files = parsed.operands
    if not scripts and not parsed.has("-f", "--file"):
        scripts, files = files[:1], files[1:]
    written = [path for script in scripts for path in sedscript.read(script).writes]
    return (files if parsed.has("-i", "--in-place") else []) + written


def _dd(args: list[str]) -> list[str]:
    return [a[3:] for a in args if a.startswith("of=")]


def _tar(args: list[str]) -> list[str]:
    """tar extracting (`-x`, `--extract`, `xf`) writes the archive's files into -C DIR, or here."""
    first = args[0] if args else ""
    old_style = first[:1].isalpha() and "x" in first
    extracting = old_style or any(
        a in ("--extract", "--get") or (a.startswith("-") and not a.startswith("--") and "x" in a) for a in args
    )
    if not extracting:
        return []
    return _option_values(args, "C", "--directory") or ["."]


_WRITERS = {
    "sed": _sed,
    "gsed": _sed,
    "dd": _dd,
    "tar": _tar,
    "gtar": _tar,
}
