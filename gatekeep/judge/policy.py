"""The layered YAML policy: built-in, then system, then managed, then user, then project.

    default: ask        # verdict for a command no rule decides: allow | ask | deny
    posture: workspace  # what such a command may do unasked: strict | workspace | guard (posture.py)
    timeout: 300        # seconds a prompt waits before it denies
    rules:
      allow: ["git status *", "npm run build *"]
      ask:   ["git push *"]
      deny:  ["rm -rf *", "curl * | sh"]
    audit:
      syslog: true      # also send each audit record to the system log (or a socket's path)
    mode: enforce       # audit: block and prompt nothing, only record what would have happened
    approve: tty        # who may answer a prompt: tty | remote (`gatekeep approve`) | both
    confirm: key        # word: approving at the prompt takes typing a word of the command
    loss:               # a class of loss questions turned off (they ask by default, see below)
      containers: allow
    protect:            # paths no command may read or write without a question (or at all)
      read:
        ask: ["~/work/secrets", {path: "*.key", except: ["test-*.key"]}]
      write:
        deny: ["~/.gnupg"]

Rules from every layer count, and deny beats ask beats allow, so nothing in
the user's file can allow what the built-in or system file denies. `default`
and `timeout` come from the most specific layer that sets them, except that a
user default may not be looser than the system policy's default.

The project layer is the nearest `.gatekeep.yaml` at or above the line's
directory (project.py). It can only tighten what the other layers say: its
deny and ask rules always apply, its allow rules only once the user trusts
the file, and its `default` and `timeout` count only when they are stricter
(a stricter default, a shorter timeout) than the other layers'. It cannot
set `audit`.

`mode`, `approve`, `confirm` and `posture`, like `default`, come from the most specific
layer that sets them, but the system policy's choice is a floor: a user cannot turn an
enforcing system policy into `mode: audit`, nor a `remote` one into `tty`, nor `strict`
into `guard`. A project may only make them stricter (`mode: enforce`, `approve: remote`,
`posture: strict`).

A command that would lose work no command brings back (`git reset --hard`,
`docker volume rm`, `rm -r` outside the working tree: the data in tools/*.toml
says which) asks even when an allow rule covers its tool. `loss: {CLASS: allow}`
turns one class of those questions off (git, files, containers, cluster,
infra, databases); a system policy's `CLASS: ask` is a floor, and a project can
only turn a class back on.

`protect:` entries of every layer count, the built-in one's first (it asks before
any command reads a credential file: private SSH keys, `.env`, cloud credentials,
token files; see default_policy.yaml and protect.py for how paths are matched).
A protected read or write asks (or is denied) whatever rule allows the command;
only an allow rule naming the exact command, with no `*`, lets a read through.

The managed layers are an organization's drop-in files, `/etc/gatekeep/policy.d/*.yaml` in
name order (managed.py: read only while root alone can change them). They are system layers:
each of their settings above is a floor in the same way, their rules count like any other's,
and a user setting that a floor refuses is said (Policy.refused: `rules`, `doctor`, and the
reason of a line the refused default would have decided). Only they may set `lock:`

    lock:
      allow: ["git push *", "npm publish *"]  # only a system or managed allow rule allows these
      trust_projects: false                   # no project file is trusted: its allow rules never count

A command a locked pattern matches (any form of it, through wrappers) is allowed only by an
allow rule of the system or managed policy: user and project allow rules, "always" answers
(user rules), the posture and the built-in read-only set do not count for it, and it asks
(or the default denies it). Its deny and ask rules hold as everywhere.

`audit: {syslog: ...}` is on when any other layer turns it on, and the most
general layer that does names the socket: a user cannot turn off, nor divert,
what the system policy sends to the system log.

`audit: {max_size: 16M, keep: 10}` rotates the audit log once it holds max_size
(a number of bytes, or with K, M or G) and keeps that many rotated files; the
oldest goes when a newer one would be one too many. The user's choice counts
over the system's, except that a user cannot keep fewer files than the system
policy says (its keep is a floor).
"""

from __future__ import annotations

import os

from gatekeep.core import resources
from gatekeep.core.cache import cached
from gatekeep.core.errors import PolicyError
from gatekeep.core.hashing import sha256
from gatekeep.core.paths import Paths
from gatekeep.core.records import record
from gatekeep.judge.containment import combine as sandbox_settings
from gatekeep.judge.containment import parse as parse_sandbox
from gatekeep.judge.managed import FLOORS, managed_files
from gatekeep.judge.match import VERDICTS, Rule, RuleIndex, index_positions, pack
from gatekeep.judge.project import find_project_files, is_trusted
from gatekeep.judge.reviewing import combine as review_settings
from gatekeep.judge.reviewing import parse as parse_review

STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
KEYS = (
    "default", "posture", "timeout", "rules", "audit", "mode", "approve", "confirm", "loss", "protect", "sandbox", "review",
    "lock",
)  # fmt: skip
LOCK_KEYS = ("allow", "trust_projects")
MODES = ("audit", "enforce")  # loosest first
POSTURES = ("guard", "workspace", "strict")  # what a command no rule decides may do unasked, loosest first
APPROVERS = ("tty", "both", "remote")  # who may answer a prompt, most forgeable first
CONFIRMS = ("key", "word")  # what approves at the prompt: one keypress, or a typed word
SYSLOG_SOCKET = "/dev/log"  # syslogd's, or journald's where systemd runs
DEFAULT_MAX_BYTES, DEFAULT_KEEP = 16 << 20, 10  # the audit log's rotation (~30,000 decisions a file)
MIN_MAX_BYTES, MAX_KEEP = 4096, 1000
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
MAX_TIMEOUT = 3600
DEFAULT_TIMEOUT = 300


class Layer(
    record(
        "Layer",
        "name path text default timeout rules ignored error syslog mode approve confirm loss protect rotation posture"
        " sandbox review lock",
        defaults=(
            None, None, (), (), None, None, None, None, None, (), (), (None, None), None, (None, None, ()),
            (None, None, (), ()), ((), None),
        ),  # fmt: skip
    )
):
    """One policy file: its text and what it sets.

    name: "built-in", "system", "managed", "user" or "project"; path: a str; text: the
    file's content, "" when it does not exist; rules: (verdict, pattern, exceptions)
    in file order; ignored: the allow patterns of an untrusted project file;
    error: why a project file does not load (it then asks for every line);
    syslog: what `audit: {syslog: ...}` says (None, a bool or a socket's path);
    mode, approve, confirm: what the file sets, or None; loss: (class, "ask" | "allow") pairs;
    protect: (action, verdict, path, excepts) for each protected path;
    rotation: (max_bytes, keep) from `audit: {max_size: ..., keep: ...}`, None where not set;
    posture: what the file sets, or None; sandbox: (contain, network, writable) of `sandbox:`
    (containment.py), None and () for what it does not set; review: (command, timeout, allow,
    deny) of `review:` (reviewing.py), likewise; lock: (allow patterns, trust_projects) of a
    managed file's `lock:`, () and None where not set.
    """

    __slots__ = ()


class Policy(
    record(
        "Policy",
        "layers default default_layer timeout index sha256 syslog mode approve confirm quiet_losses protected rotation"
        " posture posture_layer sandbox review locked refused",
        defaults=(frozenset(), (), (DEFAULT_MAX_BYTES, DEFAULT_KEEP), "strict", None, None, None, (), ()),
    )
):
    """The layers combined: the effective default and timeout, and every rule, indexed.

    sha256 identifies the policy a decision was made under (recorded in the audit log);
    syslog is the socket audit records also go to, or None; mode is "enforce" or "audit";
    approve is "tty", "both" or "remote"; confirm is "key" or "word"; quiet_losses are the
    classes of loss whose questions `loss:` turned off; protected holds the protect.Entry of
    every layer, the built-in policy's first; rotation is (max_bytes, keep) for the audit log;
    posture is "strict", "workspace" or "guard" (posture.py), set by posture_layer (None: by none);
    sandbox is the combined `sandbox:` settings (containment.Sandbox); review the combined
    `review:` settings (reviewing.Review); locked holds a Rule for each pattern of the managed
    layers' `lock: {allow: ...}`; refused says, a sentence each, which user settings a system or
    managed floor set aside (module docstring).
    """

    __slots__ = ()

    @property
    def rules(self) -> list[Rule]:
        return self.index.rules

    @property
    def trust_locked_by(self) -> Layer | None:
        """The managed layer that says no project may be trusted (`lock: {trust_projects: false}`)."""
        return next((layer for layer in self.layers if layer.name == "managed" and layer.lock[1] is False), None)


def digest(layers) -> str:
    sha = sha256()
    for layer in layers:
        # surrogateescape: a path that is not valid UTF-8 is hashed as its bytes
        sha.update(f"{layer.name}\0{layer.path}\0{layer.text}\0".encode("utf-8", "surrogateescape"))
        if layer.ignored:  # the same file, untrusted, is another policy
            sha.update(b"untrusted\0")
    return sha.hexdigest()


# The built-in policy's path as its cached layer holds it: a policy cached by one installation
# of gatekeep serves another with the same built-in text (a checkout and a pipx install);
# load_policy puts the real path back. Its digest, the audit's policy_sha256, is the same in both.
BUILT_IN_PLACEHOLDER = "<built-in policy>"


def load_policy(paths: Paths, user_policy: str | os.PathLike | None = None, cwd: str | None = None) -> Policy:
    """All layers; `user_policy` (from --policy) must exist, the default ones may not.

    With `cwd`, every project policy at or above that directory joins, outermost first.
    The compiled policy is cached (cache.py) against the exact text of every
    file and the project's trust, so YAML is only read when one changed. Each set
    of files (system, user and project policies, by path) has its own cache, so
    moving between projects, or two user policies used in turn (`--policy`,
    GATEKEEP_POLICY, claude-hook's own), does not rebuild.
    """
    user = os.fspath(user_policy or paths.user_policy)
    managed = _managed_sources(paths.managed_dir)
    sources = [
        ("built-in", BUILT_IN_PLACEHOLDER, read_text(resources.DEFAULT_POLICY, required=True), True),
        ("system", paths.system_policy, read_text(paths.system_policy), True),
        *managed,
        ("user", user, read_text(user, required=user_policy is not None), True),
    ]
    trusting = not managed or _projects_trusted(paths, managed)
    project_files = [] if cwd is None else find_project_files(cwd)
    for project_file in project_files:
        text = read_project_text(project_file)
        trusted = trusting and isinstance(text, str) and is_trusted(paths, project_file, text)
        sources.append(("project", project_file, text, trusted))
    slot = _slot(paths.system_policy, *(path for _, path, _, _ in managed), user, *project_files)
    cache_name = f"policy-12-{slot}"
    built_in = resources.DEFAULT_POLICY  # the path its messages name: this installation's file
    key = (cache_name, built_in, *_sources_key(sources))
    policy = _loaded.get(key)
    if policy is None:
        layers, by_word, wild, known_digest = _load_cached(paths, cache_name, sources)
        layers = [layer._replace(path=built_in) if layer.name == "built-in" else layer for layer in layers]
        policy = combine(layers, by_word, wild, known_digest)
        _loaded.clear()
        _loaded[key] = policy
    return policy


def _managed_sources(directory: str) -> list[tuple]:
    """The managed layers' sources (managed.py): one a file; or, when they are not safe to use,
    one that holds the reason, which _parse_source makes a layer that asks for every line."""
    files = managed_files(directory)
    if isinstance(files, PolicyError):
        return [("managed", files.path, files, True)]
    return [("managed", path, read_text(path), True) for path in files]


def _projects_trusted(paths: Paths, managed: list[tuple]) -> bool:
    """Whether a project file may be trusted at all: not when a managed file says
    `lock: {trust_projects: false}` (read ahead of the rest, to build the project sources)."""
    layers = _load_cached(paths, f"managed-1-{_slot(*(path for _, path, _, _ in managed))}", managed)[0]
    return all(layer.lock[1] is not False for layer in layers)


# The policy this process loaded last, by everything it was read from (every file's path and
# exact text, the project's trust: the cache's own key; and the built-in file's path): a process
# that judges many lines with one policy (a warm checker's worker, whose spare loaded it ahead;
# `scan`) reads the files each time but neither unpacks the cache nor compiles a rule twice. A
# Policy is never changed once made, but for the rules it compiles on first use.
_loaded: dict = {}


def load_project_policy(paths: Paths, project_files: list[str]) -> Policy:
    """The project layers of `project_files` alone, for the commands of a line that may run in
    another directory than the line's (after a `cd`): their deny and ask rules apply there too."""
    sources = []
    for project_file in project_files:
        text = read_project_text(project_file)
        sources.append(("project", project_file, text, isinstance(text, str) and is_trusted(paths, project_file, text)))
    return combine(*_load_cached(paths, f"projects-10-{_slot(*project_files)}", sources))


def _slot(*paths: str) -> str:
    """The cache file's name for a set of policy files: one file per set, so sets used in turn
    do not evict each other."""
    sha = sha256()
    sha.update("\0".join(paths).encode("utf-8", "surrogateescape"))
    return sha.hexdigest()[:16]


def _load_cached(paths: Paths, cache_name: str, sources) -> tuple:
    """The layers of `sources` compiled, and their index and digest, from the cache when it has them."""
    # the record's fields are part of the key: a new setting in Layer must not meet an old cache
    key = (Layer._fields, *_sources_key(sources))
    layers, by_word, wild, known_digest = cached(paths.cache_dir, cache_name, key, lambda: _compile(sources))
    return [Layer(*fields) for fields in layers], by_word, wild, known_digest


def _sources_key(sources) -> tuple:
    """What a compiled policy is made of: each layer's name, path, exact text and trust."""
    return tuple((name, str(path), _text_key(text), trusted) for name, path, text, trusted in sources)


def _text_key(text: str | PolicyError):
    return text if isinstance(text, str) else ("unreadable", str(text))  # never equal to a file's text


def _compile(sources) -> tuple:
    layers = [_untrusted(_parse_source(name, path, text), trusted) for name, path, text, trusted in sources]
    by_word, wild = (pack(index) for index in index_positions(layers))
    fields = [(layer.name, str(layer.path), *layer[2:]) for layer in layers]
    return fields, by_word, wild, digest(layers)


PROJECT_READ_SECONDS = 2.0  # of CPU to read a project file: see _parse_project


POLICY_READ_SECONDS = 5.0  # of CPU to read the system or user policy (~40,000 rules read in 0.03 s)
MAX_POLICY_BYTES = 4 * 1024 * 1024  # a user or system policy larger than this is not read


def _parse_source(name: str, path, text: str | PolicyError) -> Layer:
    """A broken built-in, system or user file blocks every line until it is fixed. A broken
    project file, which came with a repository, makes every line ask instead: still never
    allowed unseen, but the user can approve the `cd ..` or the edit that gets them out.
    A system or user file is read within bounds too, though it is the user's own: larger
    than MAX_POLICY_BYTES (read_text), or more than POLICY_READ_SECONDS of CPU to read, it
    is broken, so that a runaway file (50 MB, 500,000 rules) blocks lines with a message
    instead of stalling every one for seconds."""
    if name == "project":
        return _parse_project(path, text)
    if isinstance(text, PolicyError):  # a managed policy others could change (managed.py)
        error = f"the managed policy is ignored ({text})"
        return Layer(name, str(text.path), "", rules=(("ask", "*", ()),), error=error)
    from gatekeep.core.budget import Limit, OutOfTime

    limit = None
    try:
        with Limit(POLICY_READ_SECONDS) as limit:
            return parse_layer(name, path, text)
    except OutOfTime as e:
        if e.limit is not limit:
            raise
        why = f"took more than {POLICY_READ_SECONDS:g} s to read: remove the rules you do not use"
        raise PolicyError(path, why) from None


def _parse_project(path: str, text: str | PolicyError) -> Layer:
    """A project file is hostile input, read within bounds: its size and bracket depth
    (read_project_text), the parser's recursion, and PROJECT_READ_SECONDS of CPU time. A
    64 KiB file of the slowest shape found (flow mappings) takes ~1.5 s on a busy 2-core
    machine, a real project file a few milliseconds; a file that takes longer is broken, and
    so is one the parser fails on in any way. Either way every line there asks, which is
    cached like any result (the key is the file's text: an edit reads it again)."""
    from gatekeep.core.budget import Limit, OutOfTime

    limit = None
    try:
        if isinstance(text, PolicyError):
            raise text
        with Limit(PROJECT_READ_SECONDS) as limit:
            return parse_layer("project", path, text)
    except PolicyError as e:
        error = str(e)
    except OutOfTime as e:
        if e.limit is not limit:
            raise  # the line's own time ran out (gate.evaluate)
        why = f"took more than {PROJECT_READ_SECONDS:g} s to read, so gatekeep does not use it"
        error = str(PolicyError(path, why))
    except (RecursionError, MemoryError):
        error = str(PolicyError(path, "nested too deeply to read"))
    except Exception as e:  # a file made to break the parser: whatever it raises, the file is broken
        error = str(PolicyError(path, f"the parser failed on it ({type(e).__name__})"))
    # shown(path): the rule that asks names the file in every message, readably
    text = "" if isinstance(text, PolicyError) else text
    return Layer("project", shown(path), text, rules=(("ask", "*", ()),), error=error)


def _untrusted(layer: Layer, trusted: bool) -> Layer:
    """An untrusted layer keeps its deny and ask rules (and its reviewer's deny descriptions);
    its allow rules (and allow descriptions) are set aside."""
    if trusted:
        return layer
    kept = tuple(rule for rule in layer.rules if rule[0] != "allow")
    ignored = tuple(pattern for verdict, pattern, _ in layer.rules if verdict == "allow")
    command, timeout, _, deny = layer.review
    return layer._replace(rules=kept, ignored=ignored, review=(command, timeout, (), deny))


def combine(layers: list[Layer], by_word=None, wild=None, known_digest: str | None = None) -> Policy:
    """One policy from its layers; the rest, when given, was computed from them before (the cache)."""
    default, default_layer = "ask", layers[0]
    timeout = DEFAULT_TIMEOUT
    floor = None  # the last system or managed layer's default: no later layer may be looser
    syslog = None
    refused: list[str] = []
    mode, approve = _floored(layers, "mode", MODES, refused), _floored(layers, "approve", APPROVERS, refused)
    confirm = _floored(layers, "confirm", CONFIRMS, refused)
    posture = _floored(layers, "posture", POSTURES, refused)
    posture_layer = next((layer for layer in reversed(layers) if layer.posture == posture), None)
    for layer in layers:
        if layer.name == "project":  # only ever stricter (module docstring)
            if layer.default is not None and STRICTNESS[layer.default] > STRICTNESS[default]:
                default, default_layer = layer.default, layer
            if layer.timeout is not None:
                timeout = min(timeout, layer.timeout)
            continue
        if layer.syslog and syslog is None:
            syslog = SYSLOG_SOCKET if layer.syslog is True else layer.syslog
        if layer.default is not None:
            if floor is not None and STRICTNESS[layer.default] < STRICTNESS[floor.default]:
                refused.append(_refusal(layer, "default", layer.default, floor))
            else:
                default, default_layer = layer.default, layer
                if layer.name in FLOORS:
                    floor = layer
        if layer.timeout is not None:
            timeout = layer.timeout
    index = RuleIndex(tuple(layers), by_word, wild)
    digest_ = known_digest or digest(layers)
    quiet = _quiet_losses(layers, refused)
    from gatekeep.judge.protect import Entry

    protected = tuple(Entry(*fields, layer.name) for layer in layers for fields in layer.protect)
    return Policy(
        tuple(layers),
        default,
        default_layer,
        timeout,
        index,
        digest_,
        syslog,
        mode,
        approve,
        confirm,
        quiet,
        protected,
        _combined_rotation(layers),
        posture,
        posture_layer,
        sandbox_settings(layers),
        review_settings(layers),
        _locked(layers),
        tuple(refused),
    )


def _refusal(layer: Layer, key: str, value: str, floor: Layer) -> str:
    return (
        f"`{key}: {value}` in the {layer.name} policy ({layer.path}) does not count: the {floor.name} policy"
        f" ({floor.path}) sets `{key}: {getattr(floor, key)}`, which no later policy may loosen"
    )


def _locked(layers) -> tuple[Rule, ...]:
    from gatekeep.judge.match import compile_rule

    return tuple(
        compile_rule(pattern, "lock", layer.name, str(layer.path)) for layer in layers for pattern in layer.lock[0]
    )


def _combined_rotation(layers) -> tuple[int, int]:
    """The most specific system or user layer's max_size and keep; the system's keep is a floor.
    (A project cannot set `audit`.)"""
    max_bytes, keep, floor = DEFAULT_MAX_BYTES, DEFAULT_KEEP, 1
    for layer in layers:
        if layer.name == "project":
            continue
        size, kept = layer.rotation
        max_bytes = size if size is not None else max_bytes
        if kept is not None:
            keep = max(kept, floor)
            if layer.name in FLOORS:
                floor = keep
    return max_bytes, keep


def _quiet_losses(layers, refused: list[str]) -> frozenset[str]:
    """The loss classes turned off: by the system or user layer, unless the system or managed layer
    asks for that class (a floor: a later `allow` is refused, and said in `refused`) or a project
    asks for it again (a project can only make it stricter)."""
    quiet: set[str] = set()
    floor: dict[str, Layer] = {}
    for layer in layers:
        for name, value in layer.loss:
            if value == "ask":
                quiet.discard(name)
                if layer.name in FLOORS:
                    floor[name] = layer
            elif layer.name != "project" and name not in floor:
                quiet.add(name)
            elif layer.name != "project":
                held = floor[name]
                refused.append(
                    f"`loss: {{{name}: allow}}` in the {layer.name} policy ({layer.path}) does not count: the {held.name}"
                    f" policy ({held.path}) sets `loss: {{{name}: ask}}`, which no later policy may loosen"
                )
    return frozenset(quiet)


def _floored(layers, key: str, order: tuple[str, ...], refused: list[str]) -> str:
    """The most specific layer's value for `key`, but never looser than a system or managed
    layer's (a looser one is said in `refused`), and a project's only when it is stricter; order
    lists the values loosest first."""
    value = {"mode": "enforce", "approve": "tty", "confirm": "key", "posture": "strict"}[key]  # the defaults
    floor, floor_layer = 0, None
    for layer in layers:
        chosen = getattr(layer, key)
        if chosen is None:
            continue
        rank = order.index(chosen)
        if layer.name == "project":
            if rank > order.index(value):
                value = chosen
        elif rank >= floor:
            value = chosen
            if layer.name in FLOORS:
                floor, floor_layer = rank, layer
        else:
            refused.append(_refusal(layer, key, chosen, floor_layer))
    return value


MAX_PROJECT_BYTES = 64 * 1024
MAX_PROJECT_DEPTH = 32  # of [ and { (the YAML parser takes seconds on thousands of nested brackets)


def read_project_text(path: str) -> str | PolicyError:
    """A project file's text, or the PolicyError that makes it a broken layer (every line asks):
    it came with a repository, so it is read as hostile input. Broken: a path that is not
    valid UTF-8 (a directory name in a clone can be any bytes; such a name cannot be shown
    as it is in a message, `rules list` or the audit log, so the file is not read and the way
    out is to rename the directory), anything but a regular file (opened without waiting: a
    FIFO put in its place never blocks), more than MAX_PROJECT_BYTES (read no further), text
    that is not UTF-8, or brackets nested deeper than MAX_PROJECT_DEPTH."""
    try:
        path.encode()
    except UnicodeEncodeError:
        return PolicyError(shown(path), "its path is not UTF-8, so gatekeep does not read it; rename the directory")
    try:
        data = read_regular(path, MAX_PROJECT_BYTES + 1)
    except OSError as e:
        return PolicyError(path, f"cannot read it ({e.strerror})")
    if data is None:
        return PolicyError(path, "not a regular file, so gatekeep does not read it")
    if len(data) > MAX_PROJECT_BYTES:
        return PolicyError(path, f"larger than {MAX_PROJECT_BYTES // 1024} KiB, so gatekeep does not read it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return PolicyError(path, f"not UTF-8 text (byte {e.start}), so gatekeep does not read it")
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as read_text's text mode reads it (trust.py)
    if text.count("[") + text.count("{") > MAX_PROJECT_DEPTH and _flow_depth(text) > MAX_PROJECT_DEPTH:
        return PolicyError(path, f"nested more than {MAX_PROJECT_DEPTH} deep, so gatekeep does not read it")
    return text


def read_regular(path: str, limit: int) -> bytes | None:
    """Up to `limit` bytes of the file at `path`; None when it is not a regular file (OSError when
    it cannot be opened). Opened without waiting: a FIFO or a device put where a file is expected
    would otherwise block the check until something writes to it."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    with os.fdopen(fd, "rb") as f:
        return f.read(limit) if stat.S_ISREG(os.fstat(fd).st_mode) else None


def shown(path: str) -> str:
    """A path as a message can show it: bytes that are not UTF-8 (lone surrogates in Python's
    str) written as `\\xff`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _flow_depth(text: str) -> int:
    """How deep `[` and `{` nest in the text, quotes ignored (so it can only overcount)."""
    depth = deepest = 0
    for c in text:
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
    return deepest


def read_text(path: str, required: bool = False) -> str:
    """The file's text; "" for a missing file that is not required; a PolicyError for one larger
    than MAX_POLICY_BYTES (read no further)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(MAX_POLICY_BYTES + 1)
        if len(text.encode("utf-8", "surrogatepass")) > MAX_POLICY_BYTES:
            size = f"{MAX_POLICY_BYTES // (1024 * 1024)} MiB"
            raise PolicyError(path, f"larger than {size}, so gatekeep does not read it: remove the rules you do not use")
        return text
    except (FileNotFoundError, NotADirectoryError):  # ENOTDIR: a directory above it is a file
        if required:
            raise PolicyError(path, "the file does not exist") from None
        return ""
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyError(path, f"cannot read it ({e})") from None


def read_layer(name: str, path: str, required: bool = False) -> Layer:
    return parse_layer(name, path, read_text(path, required))


def parse_layer(name: str, path: str, text: str) -> Layer:
    """The layer `text` makes, or the PolicyError that says where it is wrong.

    yamlio.load_plain reads the text first: fast, but it only reads what it can prove the
    round-trip loader reads the same (yamlio's docstring). When it is not sure, or its data
    do not make a valid layer, the round-trip loader reads the text again, so that every
    error, with its line number, is the round-trip loader's."""
    from gatekeep.judge.yamlio import NotSure, load_plain

    try:
        data = load_plain(text)
    except NotSure:
        pass
    else:
        try:
            return _layer(name, path, text, data)
        except PolicyError:
            pass
    from gatekeep.judge.yamlio import load_roundtrip

    return _layer(name, path, text, load_roundtrip(path, text))


def _layer(name: str, path: str, text: str, data) -> Layer:
    if data is None:
        return Layer(name, path, text)
    if not isinstance(data, dict):
        raise PolicyError(path, "the policy must be a mapping (default, timeout, rules)", line=1)
    for key in data:
        if key not in KEYS:
            raise PolicyError(path, f"unknown key; expected one of {', '.join(KEYS)}", _line(data, key), str(key))
    default = data.get("default")
    if default is not None and default not in VERDICTS:
        raise PolicyError(path, "must be allow, ask or deny", _line(data, "default"), "default")
    timeout = data.get("timeout")
    if timeout is not None and (type(timeout) is not int or not 1 <= timeout <= MAX_TIMEOUT):
        raise PolicyError(
            path, f"must be a whole number of seconds, 1 to {MAX_TIMEOUT}", _line(data, "timeout"), "timeout"
        )
    # plain str and int: ruamel's scalar subclasses cannot be cached (cache.py)
    default = None if default is None else str(default)
    timeout = None if timeout is None else int(timeout)
    rules = tuple(_rules(path, data))
    mode, approve = _choice(path, data, "mode", MODES), _choice(path, data, "approve", APPROVERS)
    confirm = _choice(path, data, "confirm", CONFIRMS)
    settings = {"syslog": _syslog(path, data), "mode": mode, "approve": approve, "confirm": confirm}
    settings["posture"] = _choice(path, data, "posture", POSTURES)
    settings["rotation"] = _rotation(path, data)
    settings["loss"] = _loss(path, data)
    settings["protect"] = _protect(path, data)
    settings["sandbox"] = parse_sandbox(path, data, _line)
    settings["review"] = parse_review(name, path, data, _line)
    settings["lock"] = _lock(name, path, data)
    return Layer(name, path, text, default, timeout, rules, **settings)


def _lock(name: str, path: str, data: dict) -> tuple[tuple[str, ...], bool | None]:
    """(allow patterns, trust_projects) of `lock: {allow: [PATTERN...], trust_projects: BOOL}`."""
    lock = data.get("lock")
    if lock is None:
        return (), None
    if name != "managed":
        why = "only a managed policy file (/etc/gatekeep/policy.d) can lock what other policies may do"
        raise PolicyError(path, why, _line(data, "lock"), "lock")
    if not isinstance(lock, dict):
        raise PolicyError(path, "must be a mapping, e.g. {allow: [\"git push *\"]}", _line(data, "lock"), "lock")
    for key in lock:
        if key not in LOCK_KEYS:
            raise PolicyError(path, f"unknown key; expected {' or '.join(LOCK_KEYS)}", _line(lock, key), f"lock.{key}")
    patterns = lock.get("allow") or []
    if not isinstance(patterns, list):
        raise PolicyError(path, "must be a list of patterns", _line(lock, "allow"), "lock.allow")
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern.strip() or "\0" in pattern or " | " in pattern:
            raise PolicyError(path, "each pattern must be one command's pattern, a non-empty string", _line(lock, "allow"), f"lock.allow[{i}]")
    trust = lock.get("trust_projects")
    if trust is not None and type(trust) is not bool:
        raise PolicyError(path, "must be true or false", _line(lock, "trust_projects"), "lock.trust_projects")
    return tuple(str(p) for p in patterns), trust


def _choice(path: str, data: dict, key: str, choices: tuple[str, ...]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if value not in choices:
        raise PolicyError(path, f"must be {', '.join(choices[:-1])} or {choices[-1]}", _line(data, key), key)
    return str(value)


def _loss(path: str, data: dict) -> tuple[tuple[str, str], ...]:
    from gatekeep.name.knowledge import LOSS_CLASSES

    loss = data.get("loss")
    if loss is None:
        return ()
    if not isinstance(loss, dict):
        raise PolicyError(path, "must be a mapping of loss classes to ask or allow, e.g. {containers: allow}", _line(data, "loss"), "loss")
    for name, value in loss.items():
        if name not in LOSS_CLASSES:
            raise PolicyError(path, f"unknown class; expected one of {', '.join(LOSS_CLASSES)}", _line(loss, name), f"loss.{name}")
        if value not in ("ask", "allow"):
            raise PolicyError(path, "must be ask or allow", _line(loss, name), f"loss.{name}")
    return tuple((str(name), str(value)) for name, value in loss.items())


def _protect(path: str, data: dict) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    """`protect: {read|write: {ask|deny: [PATH | {path: PATH, except: [PATH...]}]}}`."""
    from gatekeep.judge.protect import ACTIONS

    section = data.get("protect")
    if section is None:
        return ()
    example = "e.g. {read: {ask: [~/.aws/credentials]}}"
    if not isinstance(section, dict):
        raise PolicyError(path, f"must be a mapping of read and write to ask and deny lists, {example}", _line(data, "protect"), "protect")
    found = []
    for action, verdicts in section.items():
        where = f"protect.{action}"
        if action not in ACTIONS:
            raise PolicyError(path, "unknown key; expected read or write", _line(section, action), where)
        if not isinstance(verdicts, dict):
            raise PolicyError(path, f"must be a mapping of ask and deny to lists, {example}", _line(section, action), where)
        for verdict, entries in verdicts.items():
            if verdict not in ("ask", "deny"):
                raise PolicyError(path, "unknown key; expected ask or deny", _line(verdicts, verdict), f"{where}.{verdict}")
            if not isinstance(entries, list):
                raise PolicyError(path, "must be a list of paths", _line(verdicts, verdict), f"{where}.{verdict}")
            for i, entry in enumerate(entries):
                at = f"{where}.{verdict}[{i}]"
                line = entries.lc.item(i)[0] + 1 if hasattr(entries, "lc") else None
                pattern, excepts = _protect_entry(path, entry, line, at)
                found.append((str(action), str(verdict), pattern, excepts))
    return tuple(found)


def _protect_entry(path: str, entry, line: int | None, at: str) -> tuple[str, tuple[str, ...]]:
    if isinstance(entry, str):
        entry = {"path": entry}
    if not isinstance(entry, dict) or set(entry) - {"path", "except"}:
        raise PolicyError(path, "each entry is a path, or {path: PATH, except: [PATH, ...]}", line, at)
    pattern, excepts = entry.get("path"), entry.get("except") or []
    if not isinstance(excepts, list):
        raise PolicyError(path, "except must be a list of paths", line, at)
    for value in (pattern, *excepts):
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            raise PolicyError(path, "each path must be a non-empty string", line, at)
        if value.startswith("~") and not (value == "~" or value.startswith("~/")):
            raise PolicyError(path, "a path may start with ~/ but not ~user/", line, at)
    return str(pattern).rstrip("/") or "/", tuple(str(e) for e in excepts)


AUDIT_KEYS = ("syslog", "max_size", "keep")


def _syslog(path: str, data: dict) -> bool | str | None:
    audit = data.get("audit")
    if audit is None:
        return None
    if not isinstance(audit, dict):
        raise PolicyError(path, "must be a mapping, e.g. {syslog: true}", _line(data, "audit"), "audit")
    for key in audit:
        if key not in AUDIT_KEYS:
            raise PolicyError(path, f"unknown key; expected {', '.join(AUDIT_KEYS)}", _line(audit, key), f"audit.{key}")
    value = audit.get("syslog")
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str) and value.startswith("/"):
        return str(value)
    raise PolicyError(path, "must be true, false or a socket's absolute path", _line(audit, "syslog"), "audit.syslog")


def _rotation(path: str, data: dict) -> tuple[int | None, int | None]:
    """(max_bytes, keep) of `audit:` (_syslog has checked its keys), None for what is not set."""
    audit = data.get("audit")
    if not isinstance(audit, dict):
        return None, None
    size, keep = audit.get("max_size"), audit.get("keep")
    max_bytes = None
    if size is not None:
        plain = isinstance(size, (int, str)) and not isinstance(size, bool)
        text = str(size).strip().upper().removesuffix("IB").removesuffix("B") if plain else ""
        number, unit = (text[:-1], text[-1]) if text and text[-1] in SIZE_UNITS else (text, "")
        if not number.isdigit() or int(number) * SIZE_UNITS[unit] < MIN_MAX_BYTES:
            raise PolicyError(
                path, f"must be a size of at least {MIN_MAX_BYTES} bytes, e.g. 16M", _line(audit, "max_size"), "audit.max_size"
            )
        max_bytes = int(number) * SIZE_UNITS[unit]
    if keep is not None:
        if type(keep) is not int or not 1 <= keep <= MAX_KEEP:
            raise PolicyError(path, f"must be a whole number, 1 to {MAX_KEEP}", _line(audit, "keep"), "audit.keep")
        keep = int(keep)
    return max_bytes, keep


def _rules(path: str, data: dict) -> list[tuple[str, str, tuple[str, ...]]]:
    """(verdict, pattern, exceptions) for each entry of `rules:`; an entry is a pattern, or, under
    ask and deny, `{pattern: PATTERN, except: [PATTERN, ...]}` (see match.RuleExceptions)."""
    rules = data.get("rules")
    if rules is None:
        return []
    if not isinstance(rules, dict):
        raise PolicyError(path, "must be a mapping with allow, ask and deny lists", _line(data, "rules"), "rules")
    found = []
    for verdict, patterns in rules.items():
        if verdict not in VERDICTS:
            raise PolicyError(
                path, "unknown key; expected allow, ask or deny", _line(rules, verdict), f"rules.{verdict}"
            )
        if patterns is None:
            continue
        if not isinstance(patterns, list):
            raise PolicyError(path, "must be a list of patterns", _line(rules, verdict), f"rules.{verdict}")
        verdict = str(verdict)
        lines = getattr(patterns, "lc", None)  # the round-trip loader's line numbers
        for i, entry in enumerate(patterns):
            if type(entry) is str and "\0" not in entry and entry.strip():  # what _rule_entry accepts as it is
                found.append((verdict, entry, ()))
                continue
            line = lines.item(i)[0] + 1 if lines is not None else None
            pattern, excepts = _rule_entry(path, verdict, entry, line, f"rules.{verdict}[{i}]")
            found.append((verdict, pattern, excepts))
    return found


def _rule_entry(path: str, verdict: str, entry, line: int | None, at: str) -> tuple[str, tuple[str, ...]]:
    if isinstance(entry, dict) and verdict != "allow":
        if set(entry) - {"pattern", "except"} or "pattern" not in entry:
            raise PolicyError(path, "an entry is a pattern, or {pattern: PATTERN, except: [PATTERN, ...]}", line, at)
        pattern, excepts = entry["pattern"], entry.get("except") or []
        if not isinstance(excepts, list):
            raise PolicyError(path, "except must be a list of patterns", line, at)
    else:
        pattern, excepts = entry, []
    for value in (pattern, *excepts):
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            hint = " (only ask and deny rules take exceptions)" if isinstance(entry, dict) else ""
            raise PolicyError(path, f"each pattern must be a non-empty string{hint}", line, at)
    if excepts and " | " in pattern:
        raise PolicyError(path, "a pipeline pattern cannot take exceptions", line, at)
    if any(" | " in e for e in excepts):
        raise PolicyError(path, "an exception is one command, not a pipeline", line, at)
    return str(pattern), tuple(str(e) for e in excepts)


def _line(mapping, key) -> int | None:
    try:
        return mapping.lc.key(key)[0] + 1
    except (AttributeError, KeyError, TypeError):
        return None
