"""Protected paths: files a line may not read (or write) without a question, whatever does it.

The policy's `protect:` section lists them (policy.py); the built-in policy protects
credential files from reading: private SSH keys, `.env` files, cloud and CLI
credentials, `.netrc`, token files, gpg private keys, kube config. A command
*reads* a path when a word names it (an operand, an option's value, `if=F`, the
`~/.aws` of `-v ~/.aws:/root/.aws`), when it redirects it in (`< .env`), or when
a `for` list or an assignment on the line names it. A word is resolved as the
shell and the kernel would: `~` and `$HOME`, exported variables, brace lists,
globs against the files that exist, `..`, and links. A directory holding a
protected file counts as reading it (`grep -r KEY ~`, `tar c ~/.aws`).

Commands that read no file's content (`ls`, `stat`, `test`, `cd`, `echo`: tools/*.toml
says `reads-no-content`) may name a protected path freely, as long as what they
print goes to the terminal: piped on, or inside a `$( )`, the names they print
may feed a reader (`ls ~/.ssh/id_* | xargs cat`). A tool's credential options
(`ssh -i KEY`, `docker run --env-file .env`) use a secret without showing it.

Not seen: a file name chosen at run time by a program (`find -exec cat {}`, a
name read by `read`, a variable set on an earlier line, which is taken to name a
file in the directory), and code that opens files itself (`python -c
'open(".env")'`, which asks anyway). gatekeep gates lines; it is not a sandbox.

Patterns: `~/…` and `/…` name a path and everything below it; a pattern without a
`/` (`.env`, `*.pem`) names a file's own name anywhere; `dir/name` names the last
parts of a path anywhere (`config/master.key`; `secrets/**` is all below any
`secrets` directory). `*`, `?` and `[…]` match within one part, `**` any number
of parts. An entry's `except` patterns, read the same way, take paths back out.
"""

from __future__ import annotations

import os
import posixpath

from gatekeep.core.records import record
from gatekeep.judge.writes import real_path

ACTIONS = ("read", "write")
MAX_GLOB_ENTRIES = 4096  # directory entries a glob may scan; past that, what it found so far counts


class Entry(record("Entry", "action verdict path excepts layer")):
    """One protected path: `action` (read | write) of `path` (a pattern) is `verdict` (ask | deny),
    unless the path matches one of `excepts`; layer names the policy file that said so."""

    __slots__ = ()

    def describe(self) -> str:
        return f"`{self.path}` in the {self.layer} policy's protect.{self.action}.{self.verdict}"


def matches(pattern: str, path: str, home: str) -> bool:
    """Whether the absolute, normalized `path` is one the pattern names (module docstring)."""
    if pattern.startswith("~/") or pattern == "~":
        pattern = home + pattern[1:]
    parts = path.strip("/").split("/")
    wanted = pattern.strip("/").split("/")
    if pattern.startswith("/"):  # the path itself, or anything below it
        return _parts_match([*wanted, "**"], parts)
    if len(wanted) == 1:
        return glob_match(wanted[0], parts[-1])
    return any(_parts_match(wanted, parts[i:]) for i in range(len(parts)))


def _parts_match(wanted: list[str], parts: list[str]) -> bool:
    """Whether the pattern's parts match all of the path's: `**` stands for any number of parts.

    A walk over one table of how many path parts each start of the pattern can match, not
    a search of every split of the path for each `**`: a project's `protect:` is hostile
    input, and `**/**/…/x` (a dozen of them) against a deep path took minutes that way."""
    reach = [True] + [False] * len(parts)  # reach[j]: the pattern so far matches parts[:j]
    for part in wanted:
        if part == "**":
            for j in range(1, len(reach)):
                reach[j] = reach[j] or reach[j - 1]
        else:
            reach = [False] + [reach[j] and glob_match(part, parts[j]) for j in range(len(parts))]
            if not any(reach):
                return False
    return reach[-1]


def protects(entry: Entry, path: str, home: str) -> bool:
    return matches(entry.path, path, home) and not any(matches(e, path, home) for e in entry.excepts)


def anchor(pattern: str, home: str) -> str | None:
    """The literal directory or file an anchored pattern starts with (`~/.aws/credentials`: that
    file; `/etc/ssh/ssh_host_*_key`: /etc/ssh); None for a pattern that may match anywhere."""
    if pattern.startswith("~/"):
        pattern = home + pattern[1:]
    if not pattern.startswith("/"):
        return None
    fixed = []
    for part in pattern.strip("/").split("/"):
        if any(c in part for c in "*?["):
            break
        fixed.append(part)
    return "/" + "/".join(fixed)


def holds(anchored: str, directory: str) -> bool:
    """Whether `directory` holds the anchored entry's path (see anchor()), which exists: only an
    anchored entry (`~/.aws/...`) can be seen this way; `.env` may lie in any directory, and no
    directory is walked for it."""
    inside = directory.rstrip("/") + "/"
    return (anchored + "/").startswith(inside) and anchored != directory.rstrip("/") and os.path.lexists(anchored)


def glob_match(pattern: str, name: str) -> bool:
    """fnmatch for one path part, `*`, `?` and `[…]` (`[!…]` too), without the `re` module (whose
    import costs most of a check's start-up: lazyre.py)."""
    p = n = 0
    star_p, star_n = -1, 0
    while n < len(name):
        if p < len(pattern):
            c = pattern[p]
            if c == "*":
                star_p, star_n = p, n
                p += 1
                continue
            if c == "[":
                end, ok = _bracket(pattern, p, name[n])
                if end > 0:
                    if ok:
                        p, n = end, n + 1
                        continue
                elif name[n] == "[":  # no closing `]`: a literal [
                    p, n = p + 1, n + 1
                    continue
            elif c == "?" or c == name[n]:
                p, n = p + 1, n + 1
                continue
        if star_p < 0:
            return False
        p, star_n = star_p + 1, star_n + 1
        n = star_n
    return pattern[p:].strip("*") == ""


_CLASSES = {
    "alpha": str.isalpha,
    "digit": str.isdigit,
    "alnum": str.isalnum,
    "upper": str.isupper,
    "lower": str.islower,
    "space": str.isspace,
    "blank": lambda c: c in " \t",
    "punct": lambda c: c.isprintable() and not c.isalnum() and not c.isspace(),
    "print": str.isprintable,
    "graph": lambda c: c.isprintable() and not c.isspace(),
    "cntrl": lambda c: not c.isprintable(),
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "word": lambda c: c.isalnum() or c == "_",
}


def _bracket(pattern: str, start: int, char: str) -> tuple[int, bool]:
    """(index after the class, whether `char` is in it), or (0, False) when `[` opens no class."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    i += negate
    first, found = i, False
    while i < len(pattern) and (pattern[i] != "]" or i == first):
        if pattern.startswith("[:", i) and ":]" in pattern[i + 2 :]:  # `[[:alpha:]]`
            end = pattern.index(":]", i + 2)
            test = _CLASSES.get(pattern[i + 2 : end])
            found = found or test is None or test(char)  # a class nobody knows may hold anything
            i = end + 2
        elif i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            found = found or pattern[i] <= char <= pattern[i + 2]
            i += 3
        else:
            found = found or pattern[i] == char
            i += 1
    if i >= len(pattern):
        return 0, False
    return i + 1, found != negate


# --- which paths a word names ---

from gatekeep.name.expand import ANY as _ANY
from gatekeep.name.expand import KNOWN as _KNOWN
from gatekeep.name.expand import expand

ANYWHERE = _ANY + "/"  # starts a path known only by its end: ANYWHERE + ".ssh/id_rsa"


def places(
    word: str,
    dynamic: bool,
    home: str,
    directory: str | None,
    known: frozenset[str] = frozenset(),
    wanted=None,
    existing: bool = False,
    memo: dict | None = None,
) -> list[str]:
    """The absolute paths `word` may name when run in `directory`: as written and through links;
    its braces, tilde and parameter expansions evaluated as the shell would where they are known
    here (expand.py), an unknown part matching any name in its place, dotfiles too, when it stands
    inside the path (a variable in `known`, a loop's over words judged already, matches nothing).
    A path whose start is known only at run time (`~-/.env`, `$(pwd)/../.ssh/id_rsa`, a relative
    path after a cd to somewhere computed, `directory` None) is ANYWHERE and what it ends in.
    With `wanted` (an _Index), a glob keeps only the names the entries could protect; `existing`:
    only a glob's matches that exist (a glob matching nothing is no path). `memo` keeps the real
    paths of the directories found, for one command (see writes.real_path)."""
    if "\x00" in word:
        return []  # no path holds a NUL: the kernel takes it for the name's end
    words = [word]
    if dynamic and "{" in word:
        from gatekeep.read.shellwords import expand_braces

        words = expand_braces(word) or [word]
    if dynamic or word.startswith("~"):
        words = [expand(w, home, directory, known) for w in words]
    found: list[str] = []
    for w in words:
        path = _joined(directory, w)
        if path.startswith(ANYWHERE):
            found.append(path)
        elif dynamic and (_ANY in path or any(c in path for c in "*?[")):
            found += _glob(path, wanted)
        elif not existing or "/" in w or os.path.lexists(path) or _plain(w):
            found.append(path)
    resolved = []
    for path in found:
        resolved.append(path)
        if path.startswith(ANYWHERE):
            continue
        try:
            real = real_path(path, memo)
        except (OSError, ValueError):
            continue
        if real != path:
            resolved.append(real)
    return resolved


def _plain(word: str) -> bool:
    """A name with nothing of an option or a value about it (`.env`, `id_rsa`): read by name,
    whether or not it exists yet (a line may make it before it reads it)."""
    return bool(word) and word[0] not in "-+:@%" and "=" not in word


def _joined(directory: str | None, word: str) -> str:
    """`word` (expanded) resolved in `directory`, normalized; ANYWHERE and its known end when its
    start is known only at run time: an unknown part stands before its last part (`$X/.env`,
    `/home/$U/.ssh/id_rsa`: it may hold several directories, `..` too), or it is relative to a
    directory known only at run time (None)."""
    anywhere = False
    if not word.startswith("/"):
        if directory is None:
            anywhere = True
        else:
            word = directory.rstrip("/") + "/" + word
    parts = word.split("/")
    cut = max((i for i, part in enumerate(parts[:-1]) if _ANY in part), default=-1)
    if cut >= 0:
        anywhere, parts = True, parts[cut + 1 :]
    stack: list[str] = []
    for part in parts:
        if part == "..":
            if stack:
                stack.pop()
        elif part not in ("", "."):
            stack.append(part)
    return ANYWHERE + "/".join(stack) if anywhere else "/" + "/".join(stack)


def _glob(path: str, wanted=None) -> list[str]:
    """The existing paths a glob names (unknown parts match any name, dotfiles too); scans at most
    MAX_GLOB_ENTRIES directory entries. `cat $f` in a large directory scans it: `wanted` skips, with
    a few string tests, the names no entry could protect."""
    parts = path.strip("/").split("/")
    current, budget = ["/"], [MAX_GLOB_ENTRIES]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if not any(c in part for c in "*?[" + _ANY):
            current = [posixpath.join(c, part) for c in current if last or os.path.isdir(posixpath.join(c, part))]
            continue
        pattern = part.replace(_ANY, "*")
        hidden = part.startswith((".", _ANY))
        following = []
        for directory in current:
            useful = wanted.keeper(directory) if wanted is not None and last else None
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        budget[0] -= 1
                        if budget[0] < 0:
                            break
                        if useful is not None and not useful(entry.name):
                            continue
                        if (hidden or not entry.name.startswith(".")) and glob_match(pattern, entry.name):
                            following.append(posixpath.join(directory, entry.name))
            except (OSError, ValueError):
                continue
        current = following
    return [c for c in current if os.path.lexists(c)]


class _Index:
    """A set of entries, read once per policy: each entry's anchor (see anchor()), and a cheap test
    of the names a name pattern could match (by their literal start and end)."""

    def __init__(self, entries: tuple[Entry, ...], home: str) -> None:
        self.anchors = tuple((entry, anchor(entry.path, home)) for entry in entries)
        starts, ends, pairs, any_name = [], [], [], False
        for entry, anchored in self.anchors:
            if anchored is not None:
                continue
            name = entry.path.rsplit("/", 1)[-1]
            head = name.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
            tail = name.rsplit("*", 1)[-1] if "*" in name else name
            tail = "" if any(c in tail for c in "?[") else tail
            if "**" in entry.path or not (head or tail):
                any_name = True  # a pattern that can match any name
            elif head and tail:
                pairs.append((head, tail))
            else:
                (starts if head else ends).append(head or tail)
        anchors = [a for _, a in self.anchors if a is not None]
        # the anchored paths, and every directory above one ("" for /): near() in a few lookups
        self.root = "/" in anchors or any(entry.path == "~" for entry in entries)
        self.exact = frozenset(anchors)
        self.unders = tuple(a + "/" for a in anchors)
        self.above = frozenset(a[:i] for a in anchors for i in range(len(a)) if a[i] == "/")
        starts, ends = tuple(starts), tuple(ends)
        self.useful = lambda name: (
            any_name
            or bool(starts)
            and name.startswith(starts)
            or bool(ends)
            and name.endswith(ends)
            or any(name.startswith(h) and name.endswith(t) for h, t in pairs)
        )

    def near(self, path: str) -> bool:
        """Whether an anchored entry could protect `path` or lie below it: `path` is at or below an
        anchored path, or a directory above one (a "~" entry counts as anchored at /)."""
        return self.root or path in self.exact or path.startswith(self.unders) or path.rstrip("/") in self.above

    def keeper(self, directory: str):
        """A test of the names in `directory` worth judging: any, at or below an anchored entry's
        path; else those a name pattern could match, and those on the way to an anchored entry."""
        inside = directory.rstrip("/") + "/"
        anchors = [a for _, a in self.anchors if a is not None]
        if any(inside.startswith(a.rstrip("/") + "/") for a in anchors):
            return None
        ahead = {a[len(inside) :].split("/", 1)[0] for a in anchors if a.startswith(inside)}
        return lambda name: name in ahead or self.useful(name)


_INDEXES: dict = {}


def _index(entries: tuple[Entry, ...], home: str) -> _Index:
    key = (entries, home)
    if key not in _INDEXES:
        _INDEXES[key] = _Index(entries, home)
    return _INDEXES[key]


_WANTED: dict = {}


def _wanted(entries: tuple[Entry, ...], action: str, home: str) -> tuple[tuple[Entry, ...], _Index | None]:
    """The entries for `action`, and their index: found once per policy, not per word (a command
    of 15,000 words spent 0.5 s hashing its policy's entries). Kept by the entries' identity,
    which the kept entries hold."""
    key = (id(entries), action, home)
    found = _WANTED.get(key)
    if found is None or found[0] is not entries:
        wanted = tuple(e for e in entries if e.action == action)
        found = _WANTED[key] = (entries, wanted, _index(wanted, home) if wanted else None)
    return found[1], found[2]


class Hit(record("Hit", "entry path held")):
    """A protected path a word names: the entry that protects it, the path, and whether the path
    is a directory holding it (held) rather than the protected path itself."""

    __slots__ = ()


def _stricter(hit: Hit | None, found: Hit | None) -> bool:
    """Whether `hit` replaces `found`: the first hit, or the first deny after an ask."""
    return hit is not None and (found is None or hit.entry.verdict == "deny" and found.entry.verdict != "deny")


def pieces(word: str) -> list[str]:
    """The parts of a word that may name a path: the word, what follows an `=` (`if=F`,
    `--file=F`), the path before a `:` (`-v ~/.aws:/root/.aws`) and the relative one after it
    (git's `HEAD:.env` and `:.env`, the file as a commit or the index holds it), the file an
    `@FILE` names (curl and others read it and send it), a value attached to a short option
    (`-f.env`), and the path of a `file://` URL; never another URL."""
    if "://" in word:
        return [word[7:]] if word.startswith("file://") else []  # `curl file:///…/.env`
    found = [word.split("=", 1)[1]] if "=" in word else []  # first: it names the file a message shows
    if not word.startswith("-"):
        found.append(word)
    elif not word.startswith("--") and len(word) > 2 and "=" not in word:
        # a value attached to a short option, maybe after a cluster of flags (`-f.env`, `-sft$HOME`):
        # what follows the option's letter, or starts a path
        found += [word[i:] for i in range(2, min(len(word), 6))]
        found += [word[i:] for i in range(2, len(word)) if word[i] in "~$/."]
    if ":" in word:
        found += [s for w in list(found) if (s := w.split(":", 1)[0]).startswith(("/", "~", "."))]
        # git's REV:PATH and :PATH (`git show HEAD:.env`), a container's or host's PATH: what it names
        found += [s for w in list(found) if ":" in w and (s := w.split(":", 1)[1]) and s[:1] not in ":/"]
    found += [p[1:] for p in found if p.startswith("@")]  # curl's `-d @FILE`, `-F f=@FILE`: that file is sent
    return list(dict.fromkeys(p for p in found if p))


def judge_path(
    entries: tuple[Entry, ...],
    action: str,
    word: str,
    dynamic: bool,
    home: str,
    directory: str,
    known: frozenset[str] = frozenset(),
    memo: dict | None = None,
) -> Hit | None:
    """The strictest entry (deny before ask) protecting from `action` a path `word` names; for
    reading, a directory that holds a protected path counts. `memo`: see places()."""
    wanted, index = _wanted(entries, action, home)
    if not wanted:
        return None
    found = None
    wanted_names = index if dynamic else None
    for path in places(word, dynamic, home, directory, known, wanted_names, action == "read", memo):
        if path.startswith(ANYWHERE):
            tail = [part for part in path[len(ANYWHERE) :].split("/") if part]
            for entry, _ in index.anchors if tail else ():
                hit = Hit(entry, "…/" + "/".join(tail), False) if may_end(entry, tail, home) else None
                if _stricter(hit, found):
                    found = hit
            continue
        directory_read = None  # stat the path only when an anchored entry could lie below it
        name = path.rsplit("/", 1)[-1]
        named = index.useful(name)  # some name pattern could match it
        if not named and not index.near(path):
            continue  # no entry can protect it, nor lie below it: most paths, at a few lookups
        for entry, anchored in index.anchors:
            hit = None
            if _may_match(entry.path, anchored, path, name, named) and protects(entry, path, home):
                hit = Hit(entry, path, False)
            elif action == "read" and anchored is not None and holds(anchored, path):
                directory_read = os.path.isdir(path) if directory_read is None else directory_read
                hit = Hit(entry, path, True) if directory_read else None
            if _stricter(hit, found):
                found = hit
    return found


def may_end(entry: Entry, tail: list[str], home: str) -> bool:
    """Whether some path ending in the parts `tail` is one the entry protects: an anchored pattern
    whose end (or a part of it, then anything below) the tail can be, a name pattern matching its
    last part, a `dir/name` pattern matching its end; unless a name pattern among the entry's
    excepts takes that last part back (an anchored except cannot be known to hold)."""
    if any("/" not in e.strip("/") and not e.startswith(("~", "/")) and glob_match(e, tail[-1]) for e in entry.excepts):
        return False
    pattern = entry.path
    if pattern.startswith("~/") or pattern == "~":
        pattern = home + pattern[1:]
    wanted = [part for part in pattern.strip("/").split("/") if part]
    if pattern.startswith("/"):
        # (the unknown start may not swallow the whole anchor: then any path at all would be it)
        return any(_parts_match([*wanted[k:], "**"], tail) for k in range(len(wanted)))
    if len(wanted) == 1:
        return glob_match(wanted[0], tail[-1])
    return any(_parts_match(wanted[k:], tail) for k in range(len(wanted))) or any(
        _parts_match(wanted, tail[i:]) for i in range(len(tail))
    )


def _may_match(pattern: str, anchored: str | None, path: str, name: str, named: bool) -> bool:
    """False when matches(pattern, path) cannot hold, by a string test: a path outside an anchored
    pattern's literal directory, or whose name a one-name pattern does not match (`named`: the
    _Index's test of names any name pattern could match). matches() splits the path for each of
    the policy's ~50 entries: a line naming 2,000 existing files took 1 s."""
    if anchored is not None:
        return anchored == "/" or path == anchored or path.startswith(anchored + "/")
    bare = pattern.strip("/")
    return pattern == "~" or "/" in bare or (named and glob_match(bare, name))


def judge_reads(
    normalized, entries: tuple[Entry, ...], home: str, cwd: str, feeds_on, known: frozenset[str] = frozenset()
) -> tuple[Hit, str] | None:
    """(hit, the word's part that names it) for the strictest protected path the command reads
    (module docstring), or None. feeds_on(): what the command prints goes on to another command
    (a pipe, a `$( )`), so naming a protected file counts too."""
    from gatekeep.judge.writes import argument_writes
    from gatekeep.name.knowledge import (
        credential_values,
        paths_named,
        pathspecs,
        pattern_operand,
        program_strings,
        reads_no_content,
        text_values,
        trees_read,
    )

    command = normalized.command
    dynamic = {w.value for w in command.words if w.dynamic}
    # an assignment's value names a file for later commands, unless it is one expansion and no path
    # (`SERVER_PID=$!`, `N=$(nproc)`): what such a value holds is read where it is used
    words: list[tuple[str, bool]] = [
        (value, True) for a in command.assignments if "=" in a and not _bare((value := a.split("=", 1)[1]))
    ]
    globbed: list[str] = []
    words += [(r.target, r.dynamic) for r in command.redirects if r.op in ("<", "<>") and r.target]
    for form in normalized.deny_forms:
        if not form or form in normalized.resolved_forms:
            continue
        if reads_no_content(list(form)) and normalized.reentry is None and not feeds_on():
            continue  # `find -exec` hands the names it finds to a command: not exempt
        if not paths_named(list(form)):
            continue  # `kill -9 $PID`: a PID is no path
        skipped = set(credential_values(list(form))) | set(text_values(list(form)))
        if form[0].rsplit("/", 1)[-1] not in IN_PLACE_EDITORS:  # `cp .env.example .env` does not read .env
            skipped.update(argument_writes(form))
        argument_words = [w for w in form[1:] if w not in skipped]
        pattern = pattern_operand(list(form))  # grep's pattern, sed's script: text, not a file
        if pattern is not None and pattern in argument_words:
            argument_words.remove(pattern)
        words += [(w, w in dynamic) for w in argument_words]
        words += [(w, False) for w in program_strings(list(form))]
        if pathspecs(list(form)):
            globbed += [w for w in form[1:] if w not in skipped and (any(c in w for c in "*?[") or w.startswith(":"))]
    found = None
    for spec in globbed:  # git matches these itself, against every path it knows, .env too
        hit = pathspec_hit(entries, spec, home)
        if _stricter(hit, found and found[0]):
            found = (hit, spec)
    trees = [t for form in normalized.deny_forms if form and form not in normalized.resolved_forms for t in trees_read(list(form))]
    memo: dict = {}  # the directories' real paths, for this command
    # a directory known only at run time (None): a relative word may be anywhere, by its end
    for directory in dict.fromkeys(cwd if d == "" else d for d in normalized.directories or ("",)):
        for word, is_dynamic in dict.fromkeys(words):
            for piece in pieces(word):
                hit = judge_path(entries, "read", piece, is_dynamic, home, directory, known, memo)
                if _stricter(hit, found and found[0]):
                    found = (hit, piece)
        for tree in trees if found is None or found[0].entry.verdict != "deny" else ():
            hit = tree_holds(entries, tree.path, home, directory, tree.hidden, tree.names)
            if _stricter(hit, found and found[0]):
                found = (hit, tree.path)
    return found


def pathspec_hit(entries: tuple[Entry, ...], spec: str, home: str) -> Hit | None:
    """A protected name a git pathspec may match (`'?env'`, `'*.[e]nv'`, `':(icase).ENV'`): its
    magic taken off, its last part matched against a name each name pattern stands for."""
    wanted, index = _wanted(entries, "read", home)
    if not wanted:
        return None
    icase = False
    if spec.startswith(":("):  # long magic: `:(icase,glob)PATH`
        magic, _, spec = spec[2:].partition(")")
        icase = "icase" in magic.split(",")
    elif spec.startswith(":"):  # short magic: `:!x`, `:/x`, `:^x`
        spec = spec[1:].lstrip("!^/")
    name = spec.rstrip("/").rsplit("/", 1)[-1] or "*"
    name = name.lower() if icase else name
    found = None
    for entry, anchored in index.anchors:
        bare = entry.path.strip("/").rsplit("/", 1)[-1]
        sample = "".join("x" if c in "*?" else c for c in bare.split("[", 1)[0])
        sample = sample.lower() if icase else sample
        hit = Hit(entry, spec, False) if sample and glob_match(name, sample) else None
        if _stricter(hit, found):
            found = hit
    return found


MAX_TREE_ENTRIES = 20_000  # entries a tree read is looked through; past that it may hold anything


def tree_holds(
    entries: tuple[Entry, ...], tree: str, home: str, directory: str | None, hidden: bool = True, names=()
) -> Hit | None:
    """A protected path below the directory `tree` that a command reads whole (`grep -r`, `rg`,
    `diff -r`): by its name (`.env` anywhere below), looked for now, at most MAX_TREE_ENTRIES
    entries; a tree larger than that, or one known only at run time, may hold one. `hidden`:
    the command reads hidden files and directories too; `names`: it reads only files whose
    name one of these globs matches (`find -name '*.py' -exec cat {} +`)."""
    wanted, index = _wanted(entries, "read", home)
    if not wanted:
        return None
    named = [e for e, anchored in index.anchors if anchored is None]
    if not named:
        return None  # anchored entries are seen as held by judge_path
    root = None if directory is None and not tree.startswith("/") else _joined(directory, tree)
    if root is None or root.startswith(ANYWHERE) or _ANY in root:
        return Hit(named[0], tree, True)
    budget, todo = MAX_TREE_ENTRIES, [root]
    while todo:
        current = todo.pop()
        try:
            with os.scandir(current) as found:
                for entry in found:
                    budget -= 1
                    if budget < 0:
                        return Hit(named[0], f"{tree} (more than {MAX_TREE_ENTRIES:,} entries)", True)
                    if not hidden and entry.name.startswith("."):
                        continue
                    path = current.rstrip("/") + "/" + entry.name
                    kept = not names or any(glob_match(n, entry.name) for n in names)
                    if kept and index.useful(entry.name):
                        for e in named:
                            if protects(e, path, home):
                                return Hit(e, path, True)
                    if entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                        todo.append(path)
        except (OSError, ValueError):
            continue
    return None


def _bare(value: str) -> bool:
    """A value that is a single expansion, with no path around it (`$!`, `$(nproc)`, `${PORT}`)."""
    return value[:1] == "$" and "/" not in value and "." not in value


IN_PLACE_EDITORS = frozenset({"sed", "gsed", "perl"})  # they read the files they write
