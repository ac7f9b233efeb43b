"""Claude Code permission rules -> gatekeep patterns, for `gatekeep rules import` (issue 8). No I/O.

Claude Code's settings list rules as `Tool` or `Tool(specifier)` strings under
permissions.allow, .ask and .deny. Only Bash rules name shell commands, and
their specifiers are close to gatekeep patterns already: `*` is a wildcard in
both, and Claude's legacy prefix form `npm run test:*` is what gatekeep reads
as `npm run test *` (a trailing ` *` also matches the bare command). What does
not carry over is skipped with the reason, never guessed at.

Read and Edit rules (Write, MultiEdit and NotebookEdit too) name paths: their deny
and ask entries become the policy's `protect: {read|write: ...}`, so that no shell
command reads or writes what Claude's own tools may not. Claude's `//abs` is the
absolute `/abs`, `~/x` stays, a trailing `/**` names the directory (gatekeep's
entries cover what lies below), and `./x`, `x` or `**/x` (relative to the project)
becomes `x` wherever it lies (`src/**` all below any `src`): a little broader, never
narrower. An allow of a path
adds nothing to a gate that only protects: skipped.
"""

from __future__ import annotations

import re
from collections import namedtuple

from gatekeep.judge.match import VERDICTS, compile_rule

# deny first: when Claude lists one pattern under two verdicts, its deny wins, and so must ours
ORDER = ("deny", "ask", "allow")
_ENTRY = re.compile(r"([A-Za-z0-9_.-]+)(?:\((.*)\))?", re.DOTALL)
_SEPARATORS = ("&&", "||", ";", "\n")


class Converted(namedtuple("Converted", "entry verdict pattern skipped action", defaults=(None,))):
    """One settings entry under `verdict`: its gatekeep `pattern`, or None and why it was `skipped`;
    action: "read" or "write" for a path to protect (then pattern is the path)."""

    __slots__ = ()


def convert_settings(settings: object) -> list[Converted]:
    """Every permission entry of a parsed settings file, deny first; ValueError if it has no permissions."""
    permissions = settings.get("permissions") if isinstance(settings, dict) else None
    if not isinstance(permissions, dict):
        raise ValueError('it has no "permissions" object (expected {"permissions": {"allow": [...], ...}})')
    converted = []
    for verdict in ORDER:
        entries = permissions.get(verdict) or []
        if not isinstance(entries, list):
            raise ValueError(f'"permissions.{verdict}" is not a list')
        converted += [convert_entry(entry, verdict) for entry in entries]
    return converted


def convert_entry(entry: object, verdict: str) -> Converted:
    assert verdict in VERDICTS
    if not isinstance(entry, str):
        return Converted(entry, verdict, None, "not a string")
    found = _ENTRY.fullmatch(entry.strip())
    if found is None or not _balanced(found.group(2) or ""):
        return Converted(entry, verdict, None, "not a rule of the form Tool or Tool(specifier)")
    tool, specifier = found.group(1), found.group(2)
    if tool in PATH_TOOLS:
        return _convert_path(entry, verdict, PATH_TOOLS[tool], specifier)
    if tool != "Bash":
        return Converted(entry, verdict, None, "not a shell command")
    specifier = specifier if specifier and specifier.strip() else "*"  # bare `Bash`: every command
    if any(s in specifier for s in _SEPARATORS):
        return Converted(entry, verdict, None, "gatekeep rules match one command at a time; add one for each")
    try:
        pattern = compile_rule(specifier, verdict, "user", "").pattern
    except ValueError as e:
        return Converted(entry, verdict, None, str(e))
    if not pattern.replace("*", "").strip():  # `*`, `:*`, `* *`: every command
        if verdict == "allow":
            reason = "would allow every command; set `default: allow` in the policy if you really mean it"
            return Converted(entry, verdict, None, reason)
        pattern = "*"
    if verdict == "allow" and any(not segment.replace("*", "").strip() for segment in pattern.split(" | ")):
        # `* | *`, `curl * | *`: any command at all may run in that part of the pipeline (`| sh`)
        reason = "would allow any command in a part of a pipeline; write that part out"
        return Converted(entry, verdict, None, reason)
    return Converted(entry, verdict, pattern, None)


PATH_TOOLS = {"Read": "read", "Edit": "write", "Write": "write", "MultiEdit": "write", "NotebookEdit": "write"}


def _convert_path(entry: str, verdict: str, action: str, specifier: str | None) -> Converted:
    if verdict == "allow":
        return Converted(entry, verdict, None, "gatekeep protects paths from reading and writing; an allow adds nothing")
    path = (specifier or "").strip()
    if not path:
        return Converted(entry, verdict, None, "names no path; gatekeep protects named paths only")
    if path.startswith("//"):
        path = path[1:]
    elif path.startswith("/"):  # relative to the settings file's project: wherever it lies
        path = path.lstrip("/")
    path = path.removeprefix("./")
    while path.startswith("**/"):
        path = path[3:]
    if path.startswith(("/", "~/")) and path.endswith("/**"):
        path = path[:-3]  # an anchored entry covers what lies below it
    if not path.replace("*", "").replace("/", ""):
        return Converted(entry, verdict, None, "names every path; gatekeep protects named paths only")
    return Converted(entry, verdict, path, None, action)


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0
