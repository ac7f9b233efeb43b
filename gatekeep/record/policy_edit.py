"""Changing a policy file: under a file lock, re-read, edit in place, write atomically.

The lock (filelock, one lock file per policy file, in the state dir) makes
concurrent writers take turns; the file is re-read *after* the lock is taken,
so no writer's change is lost. The new content goes to a temporary file in the
same directory, is flushed to disk, and replaces the old file in one rename:
a reader sees the old file or the new one, never half of one. Comments and
layout survive because the edit goes through ruamel.yaml's round-trip mode.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from gatekeep.core.atomic import write_atomic
from gatekeep.core.errors import FatalError
from gatekeep.core.paths import Paths
from gatekeep.judge.match import VERDICTS, canonical
from gatekeep.judge.policy import parse_layer
from gatekeep.judge.yamlio import dump_roundtrip, load_roundtrip

LOCK_SECONDS = 30
NEW_POLICY = """\
# gatekeep user policy. Edit by hand or with `gatekeep rules add|remove`.
# Patterns match a command's words; `*` matches anything, and a trailing ` *`
# also matches the bare command (`git push *` matches `git push`).
rules:
  allow: []
  ask: []
  deny: []
"""


@contextlib.contextmanager
def locked(paths: Paths, policy: Path):
    from filelock import FileLock, Timeout

    os.makedirs(paths.lock_dir, exist_ok=True)
    lock = FileLock(paths.lock_for(policy))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"gatekeep: waiting for another gatekeep to finish writing {policy}", file=sys.stderr)
        try:
            lock.acquire(timeout=LOCK_SECONDS)
        except Timeout:
            raise FatalError(f"{policy} is locked by another gatekeep for over {LOCK_SECONDS} s; try again") from None
    try:
        yield
    finally:
        lock.release()


def add_rule(paths: Paths, policy: Path, pattern: str, verdict: str, excepts: tuple[str, ...] = ()) -> str:
    """Add `pattern` under `verdict`, moving it from another list if it is there. Returns what happened.

    With `excepts` (ask and deny only), the entry is `{pattern: ..., except: [...]}`; a rule
    already there takes these exceptions in place of its own ("updated")."""
    if not excepts:
        return add_rules(paths, policy, [(pattern, verdict)])[0]
    assert verdict != "allow"
    pattern = canonical(pattern)
    excepts = tuple(canonical(e) for e in excepts)
    with locked(paths, policy):
        data = _read(policy)
        if data.get("rules") is None:
            data["rules"] = {}
        result = _add(data["rules"], pattern, verdict, True)
        entries = data["rules"][verdict]
        at = next(i for i, e in enumerate(entries) if _pattern_of(e) == pattern)
        if _excepts_of(entries[at]) != excepts:
            entries[at] = _excepting(pattern, excepts)
            result = "updated" if result == "exists" else result
        if result != "exists":
            _write(policy, data)
    return result


def add_rules(
    paths: Paths, policy: Path, rules: list[tuple[str, str]], move: bool = True, write: bool = True, protect=()
) -> list[str]:
    """Add each (pattern, verdict) in order, under one lock and with one write; returns what happened to each:
    "added", "exists", "moved from VERDICT", or, with move=False, "kept as VERDICT"; then each
    (action, verdict, path) of `protect` under `protect: {action: {verdict: [...]}}` ("added" or "exists").

    move=False leaves a pattern that is already under another verdict where it is, so that
    an import never turns a rule the user wrote into a looser one. write=False only tells
    what would happen (a dry run): no lock, no write.
    """
    wanted = []
    for pattern, verdict in rules:
        assert verdict in VERDICTS
        pattern = canonical(pattern)
        if not pattern:
            raise FatalError("a pattern cannot be empty")
        wanted.append((pattern, verdict))
    with locked(paths, policy) if write else contextlib.nullcontext():
        data = _read(policy)
        if data.get("rules") is None:  # `rules:` with nothing under it
            data["rules"] = {}
        results = [_add(data["rules"], pattern, verdict, move) for pattern, verdict in wanted]
        results += [_add_protected(data, action, verdict, path) for action, verdict, path in protect]
        if write and any(r == "added" or r.startswith("moved") for r in results):
            _write(policy, data)
    return results


def _add(rules, pattern: str, verdict: str, move: bool) -> str:
    others = [v for v in VERDICTS if v != verdict and pattern in _patterns(rules, v)]
    if others and not move:
        return f"kept as {others[0]}"
    for other in others:
        _remove(rules, other, pattern)
    if rules.get(verdict) is None:
        rules[verdict] = _new_list()
    if pattern in _patterns(rules, verdict):
        result = "exists"
    else:
        rules[verdict].append(pattern)
        result = "added"
    return f"moved from {others[0]}" if others else result


def _add_protected(data, action: str, verdict: str, path: str) -> str:
    from ruamel.yaml.comments import CommentedMap

    if data.get("protect") is None:
        data["protect"] = CommentedMap()
    if data["protect"].get(action) is None:
        data["protect"][action] = CommentedMap()
    entries = data["protect"][action]
    if entries.get(verdict) is None:
        entries[verdict] = _new_list()
    present = [e if isinstance(e, str) else e.get("path") for e in entries[verdict]]
    if path in present:
        return "exists"
    entries[verdict].append(path)
    return "added"


def _patterns(rules, verdict: str) -> list[str]:
    return [p for p in map(_pattern_of, rules.get(verdict) or []) if p is not None]


def _pattern_of(entry) -> str | None:
    """An entry's pattern: the entry itself, or a `{pattern: ..., except: [...]}` entry's."""
    if isinstance(entry, dict):
        entry = entry.get("pattern")
    return canonical(entry) if isinstance(entry, str) else None


def _excepts_of(entry) -> tuple[str, ...]:
    return tuple(canonical(e) for e in entry.get("except") or ()) if isinstance(entry, dict) else ()


def remove_rule(paths: Paths, policy: Path, pattern: str) -> list[str]:
    """Remove `pattern` from every list of the file; returns the verdicts it was under."""
    pattern = canonical(pattern)
    with locked(paths, policy):
        data = _read(policy)
        rules = data.get("rules") or {}
        removed = [v for v in VERDICTS if _remove(rules, v, pattern)]
        if removed:
            _write(policy, data)
    return removed


def _remove(rules, verdict: str, pattern: str) -> bool:
    patterns = rules.get(verdict) or []
    keep = [i for i, p in enumerate(patterns) if _pattern_of(p) != pattern]
    if len(keep) == len(patterns):
        return False
    for i in reversed(range(len(patterns))):
        if i not in keep:
            del patterns[i]
    return True


def _excepting(pattern: str, excepts: tuple[str, ...]):
    """`{pattern: ..., except: [...]}` on one line: written in place of a pattern, it keeps the
    comment after that pattern where it was (a block mapping would move it)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    listed = CommentedSeq(excepts)
    listed.fa.set_flow_style()
    entry = CommentedMap(pattern=pattern)
    entry["except"] = listed
    entry.fa.set_flow_style()
    return entry


def _new_list():
    from ruamel.yaml.comments import CommentedSeq

    return CommentedSeq()


def _read(policy: Path):
    policy = Path(policy)
    text = policy.read_text(encoding="utf-8") if policy.exists() else NEW_POLICY
    parse_layer("user", policy, text)  # refuse to edit a file that does not load: fix it first
    data = load_roundtrip(policy, text)
    if data is None:
        data = load_roundtrip(policy, NEW_POLICY)
    return data


def _write(policy: Path, data) -> None:
    text = dump_roundtrip(data)
    parse_layer("user", policy, text)  # never write a file that would not load
    write_atomic(policy, text)


def edit_policy(paths: Paths, policy: Path, run_editor, again) -> str:
    """Edit `policy` as visudo edits sudoers: on a private copy, opened with `run_editor(path)`;
    what the editor saved is put in place (atomically) only when it loads as a policy. Otherwise
    the error is printed and `again(error)` says whether to edit the copy again; when not, the
    policy is left as it was. Returns "saved", "unchanged" or "kept" (the edit was given up).
    The copy is made and put back under the policy's lock, so that `rules add` waits for it."""
    import tempfile

    from gatekeep.core.errors import PolicyError

    policy = Path(policy)
    with locked(paths, policy):
        try:
            before = policy.read_text(encoding="utf-8")
        except FileNotFoundError:
            before = None
        os.makedirs(paths.state_dir, mode=0o700, exist_ok=True)
        fd, copy = tempfile.mkstemp(prefix="policy-edit-", suffix=".yaml", dir=paths.state_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(NEW_POLICY if before is None else before)
            while True:
                run_editor(copy)
                text = Path(copy).read_text(encoding="utf-8", errors="replace")
                if text == before:
                    return "unchanged"
                try:
                    parse_layer("user", str(policy), text)
                except PolicyError as e:
                    if again(str(e).replace(copy, str(policy))):
                        continue
                    return "kept"
                write_atomic(policy, text)
                return "saved"
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(copy)
