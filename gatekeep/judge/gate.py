"""The gate: parse -> normalize -> match -> decide, for one line under one policy.

This is the one place the pure stages are chained; `check` and `rules test`
both call it, then add prompt and audit, or an explanation, on top.
"""

from __future__ import annotations

import os

from gatekeep.core import resources
from gatekeep.core.paths import current_directory, get_paths, removed
from gatekeep.judge.decide import LineVerdict, decide, protected_writes
from gatekeep.judge.match import match_line
from gatekeep.judge.policy import Policy
from gatekeep.judge.writes import WriteContext
from gatekeep.name.normalize import Normalized, normalize, place, unread
from gatekeep.name.scripts import TRANSPARENT
from gatekeep.name.wrappers import basename
from gatekeep.read.parse import ParseResult, parse_line

MAX_REENTRY_DEPTH = 3
CHECK_SECONDS = 3.0  # of CPU time to decide one line: see evaluate
# Commands of a line (scripts of `bash -c` included) read and judged one by one; those past it
# are denied unread. A line of more than 50 commands asks anyway (decide.MAX_COMMANDS); each
# command costs ~60 µs to read and judge, and a 128 KiB line can hold 30,000 (`a;b;c;…`, or
# the pieces the fallback scan cuts out of a long heredoc), which took 2.5 s. Denying is never
# looser than judging them all: what a deny rule would have found in them is denied too.
MAX_COMMANDS_READ = 2_000
TOO_MANY = (
    f"the line runs more than {MAX_COMMANDS_READ:,} commands (as gatekeep splits it), too many to"
    " try every deny rule on each"
)


def read_line(line: str, cwd: str | None = None) -> tuple[ParseResult, list[Normalized]]:
    """Parse and normalize: every simple command the line runs, scripts of `bash -c` included,
    each placed in the directories it may run in (the line typed in `cwd`)."""
    parsed = parse_line(line)
    room = [MAX_COMMANDS_READ]
    parsed, normalized = _expand_scripts(parsed, _normalize_each(parsed.commands, room), room=room)
    cwd = cwd or current_directory()
    placed = place(normalized, cwd)
    if removed(cwd):
        # removed by another process while the shell stays in it: what is there is unknown, so
        # wherever a command runs in it, it may as well run in a directory known only at run
        # time; a relative write or removal asks, `cd /` and what only looks pass
        placed = [n._replace(directories=(*n.directories, None)) if cwd in n.directories else n for n in placed]
    return parsed, placed


def evaluate(
    line: str,
    policy: Policy,
    cwd: str | None = None,
    context: WriteContext | None = None,
    shell_names: frozenset[str] | None = None,
    offer_contain: bool = False,
) -> LineVerdict:
    """The verdict on `line` run in `cwd`; `context`, if given, is write_context(cwd) made once for
    many lines; `shell_names`, the names the shell runs beyond PATH and its builtins (typos.py);
    `offer_contain`: say whether an ask may run contained (`contain`) even when the policy does
    not contain lines by itself (a question can offer it).

    Given CHECK_SECONDS of CPU time (budget.py); past that the line asks, and the reason says
    so: a line is never allowed because its time ran out. 3 s: a typical line takes 5 to 20
    ms, the slowest adversarial line measured (5,000 words) 0.7 s on a busy machine, and
    bashlex stops itself at 0.5 s; so no real line meets the limit, while a person kept
    waiting by a hostile pattern waits seconds, not minutes. It is spent before any
    question, whose own timeout (300 s unless the policy says otherwise) starts after. The
    verdict is firm: even `mode: audit` asks, since what was not finished may have been a
    deny of the built-in policy."""
    from gatekeep.core.budget import Limit, OutOfTime

    try:
        with Limit(CHECK_SECONDS) as limit:
            return _evaluate(line, policy, cwd, context, shell_names, offer_contain)
    except OutOfTime as e:
        if e.limit is not limit:
            raise
    reason = (
        f"gatekeep could not finish judging the line within {CHECK_SECONDS:g} s of CPU time, so it asks"
        " (a policy pattern or a line too costly to match?)"
    )
    return LineVerdict("ask", reason, None, (), (), firm=True)


def _evaluate(
    line: str,
    policy: Policy,
    cwd: str | None,
    context: WriteContext | None,
    shell_names: frozenset[str] | None = None,
    offer_contain: bool = False,
) -> LineVerdict:
    if context is None or (policy.posture != "strict" and context.boundary is None):
        context = write_context(context.cwd if context else cwd, policy)  # (one made for strict: its posture's)
    parsed, normalized = read_line(line, context.cwd)
    matches = match_line(normalized, policy.index, policy.locked)
    _match_elsewhere(normalized, matches, context.cwd)
    verdict = decide(parsed, normalized, matches, policy, context, shell_names)
    wanted = policy.sandbox.contain or offer_contain
    guarded = None  # (`posture: guard` and where it judges writes: made once, for either below)
    if verdict.decision == "ask" and wanted and policy.default == "ask" and not verdict.firm:
        guarded = _guarded(policy, context)
        why = _containable(parsed, normalized, matches, policy, guarded, shell_names)
        verdict = verdict._replace(contain=why)
    if verdict.decision == "ask" and policy.review.command and policy.review.allow and not verdict.firm:
        guarded = guarded or _guarded(policy, context)
        verdict = verdict._replace(reviewable=_reviewable(parsed, normalized, matches, policy, guarded, shell_names))
    return verdict


def _guarded(policy: Policy, context: WriteContext) -> tuple[Policy, WriteContext]:
    """The policy under `posture: guard`, and where it judges writes from (its workspace:
    posture.workspace_of, or None)."""
    guard = policy._replace(posture="guard")
    return guard, write_context(context.cwd, guard)


def _reviewable(parsed, normalized, matches, policy: Policy, guarded: tuple, shell_names) -> bool:
    """Whether a reviewer's allow may answer a line that asks (review/reviewer.py): when `posture:
    guard` would allow it, so that what asks is only that it runs code or changes files of the
    working tree, never a rule, a loss, a secret, a protected path, a write outside the tree, a
    pipe into a shell or a change to the system (posture.py). A line with no working tree is
    not: guard has nothing to hold it to. Nor is any line where the system or managed policy or a
    project's sets a posture stricter than guard: that floor means what it says, and a reviewer of the
    user's choosing does not loosen it."""
    stricter = ("system", "managed", "project")
    if any(layer.posture not in (None, "guard") for layer in policy.layers if layer.name in stricter):
        return False
    guard, context = guarded
    if context.workspace is None:
        return False
    return decide(parsed, normalized, matches, guard, context, shell_names).decision == "allow"


def _containable(parsed, normalized, matches, policy: Policy, guarded: tuple, shell_names) -> str | None:
    """Why a line that asks may run contained instead (`sandbox.contain: true`), or None.

    It may when `posture: guard` would allow it: what asks is only that it runs code or changes
    files, never a rule, a loss, a secret, a protected path, a write outside the working tree,
    a pipe into a shell or a change to the system (posture.py says what guard allows). The
    sandbox then holds it to the working tree (contain/sandbox.py), so what guard must trust
    the line not to do, the sandbox makes it unable to do. A line with no working tree (the
    home directory, a directory outside any repository or trusted project) is not contained:
    there is no project to give it. With the sandbox's network off, a line with a command whose
    data says it needs the network (`git push`, `pip install`, `curl`, `docker`: `needs-network`
    in tools/*.toml) is not contained either: it would only fail."""
    guard, context = guarded  # (_guarded)
    tree = context.workspace
    if tree is None:
        return None
    if policy.sandbox.network == "off":
        from gatekeep.name.knowledge import form_of

        forms = [n.allow_form or n.command.argv for n in normalized]  # (`PYTHONPATH=. pip install`: pip's)
        if any(form and form_of(list(form)).network for form in forms):
            return None  # (`git push`, `npm install`: without the network it would only fail; it asks)
    judged = decide(parsed, normalized, matches, guard, context, shell_names, contained=True)
    if judged.decision != "allow":
        return None
    where = f"in a sandbox it can change only the working tree ({tree})"
    return f"runs contained: {where}, with no secrets and {_network(policy)}"


def _network(policy: Policy) -> str:
    return "the network on" if policy.sandbox.network == "on" else "no network"


def _match_elsewhere(normalized: list[Normalized], matches: list, cwd: str) -> None:
    """A command that may run in another directory than the line's (after a `cd` on the line)
    also meets the deny and ask rules of the project policies there (`cd mono && make deploy`,
    typed outside mono, meets mono's `make deploy *`). Allow rules of those files do not count:
    they were trusted for lines typed there."""
    elsewhere = sorted({d for n in normalized for d in n.directories if d is not None and d != cwd})
    if not elsewhere:
        return
    from gatekeep.judge.policy import load_project_policy
    from gatekeep.judge.project import find_project_files

    here = set(find_project_files(cwd))
    for directory in elsewhere:
        files = [f for f in find_project_files(directory) if f not in here]
        if not files:
            continue
        other = load_project_policy(get_paths(), files)
        indexes = [i for i, n in enumerate(normalized) if directory in n.directories]
        for i, found in zip(indexes, match_line([normalized[i] for i in indexes], other.index), strict=True):
            matches[i].add_stricter(found)


def judge_file_write(path: str, policy: Policy, cwd: str) -> tuple[str, str] | None:
    """("deny" | "ask", why) for a coding agent's own file tool (Claude Code's Write or Edit)
    writing `path`, or None.

    Such a tool is judged only for the places no line may write either: start-up files, ~/.ssh,
    ~/.config, /etc, a repository's .git, gatekeep's own files and project policies, the agents'
    settings (which can turn gatekeep off), `protect: write` entries, and the ask of a file that
    makes programs run commands or of a directory on PATH. Whether the agent may write anywhere
    else, inside the project or out, stays its host's own permission's call: no posture applies,
    and nothing here allows a write the host would have asked about."""
    from gatekeep.judge.policy import STRICTNESS
    from gatekeep.judge.writes import judge

    context = write_context(cwd)._replace(boundary=("/",))  # no "outside the tree": the host's call
    path = os.path.join(cwd, path)
    found = [judge(path, False, context), *protected_writes([(path, False)], [cwd], policy, context)]
    return max(found, key=lambda verdict: -1 if verdict is None else STRICTNESS[verdict[0]])


def write_context(cwd: str | None, policy: Policy | None = None) -> WriteContext:
    """Where writes are judged from, gatekeep's own files, which no line may write, and, under
    the policy's posture, the working tree and where a write may land unasked (posture.py)."""
    from gatekeep.judge.posture import boundary

    paths = get_paths()
    own = (paths.config_dir, paths.state_dir, paths.user_policy, paths.system_policy, paths.managed_dir)
    own = tuple(str(p) for p in own)
    cwd = cwd or current_directory()
    workspace, places = boundary(cwd, policy, paths) if policy is not None else (None, None)
    return WriteContext.here(cwd, (*own, str(resources.PACKAGE_DIR)), workspace, places)


def _normalize_each(commands, room: list[int]) -> list[Normalized]:
    """Each command normalized while room[0], the commands left to read on the line, lasts; the
    first past it stands unread for the rest (normalize.unread), which denies the line (see
    MAX_COMMANDS_READ), and the others are left out."""
    found = []
    for command in commands:
        room[0] -= 1
        if room[0] >= 0:
            found.append(normalize(command))
        elif room[0] == -1:
            found.append(unread(command, TOO_MANY))
        else:
            break
    return found


def _expand_scripts(parsed: ParseResult, normalized: list[Normalized], depth: int = 1, room: list[int] | None = None):
    """Parse the literal scripts of `bash -c '...'` and `eval '...'`; their commands join the line.

    A shell, eval or xargs that runs a script is then named after the script's first command,
    and one that only runs it is decided by its commands (see decide.py); too deep a nesting is
    unreadable.
    `room` counts the commands left to read on the line (MAX_COMMANDS_READ).
    """
    room = [MAX_COMMANDS_READ] if room is None else room
    problems = list(parsed.problems)
    complete = parsed.complete
    functions = list(parsed.functions)
    risks = list(parsed.risks)
    names, loops = list(parsed.names), list(parsed.loop_variables)
    result: list[Normalized] = []
    pipelines = max((n.command.pipeline for n in normalized), default=0)
    for n in normalized:
        if n.reentry is None or room[0] < 0:  # (past MAX_COMMANDS_READ the line is denied unread)
            result.append(n)
            continue
        if depth > MAX_REENTRY_DEPTH:
            complete = False
            problems.append(f"shells nested more than {MAX_REENTRY_DEPTH} deep")
            result.append(n._replace(reentry=None))
            continue
        inner = parse_line(n.reentry)
        inner, inner_normalized = _expand_scripts(inner, _normalize_each(inner.commands, room), depth + 1, room)
        first = min(inner_normalized, key=lambda m: m.command.start, default=None)
        # a shell, eval or xargs is named after the script it runs (`bash -c 'git status'`); a
        # command that carries a script but does its own work (`find -exec`, `rsync -e`, `watch`,
        # `git bisect run`) keeps its own name
        runner = n.transparent or basename(n.name) in TRANSPARENT
        name = first.name if first is not None and runner else n.name
        inner_normalized = [
            m._replace(command=m.command._replace(pipeline=m.command.pipeline + pipelines, start=n.command.start))
            for m in inner_normalized
        ]
        pipelines = max([pipelines, *(m.command.pipeline for m in inner_normalized)])
        result.append(n._replace(name=name))
        result.extend(inner_normalized)
        complete = complete and inner.complete
        problems.extend(inner.problems)
        functions.extend(inner.functions)
        risks.extend(inner.risks)
        names.extend(inner.names)
        # a script's variables are its own, and its text may be spelled so that no search of the
        # line finds `read f` in it ($'read\x20f'): with a script in the line, no loop variable is known
        loops = []
    commands = tuple(n.command for n in result)
    merged = ParseResult(
        parsed.line, commands, complete, tuple(problems), tuple(functions), tuple(risks), tuple(names), tuple(loops)
    )
    return merged, result


def verdict_json(verdict: LineVerdict) -> dict:
    """The per-command part of `check --json` and `rules test --json`."""
    return {
        "decision": verdict.decision,
        "reason": verdict.reason,
        "rule": verdict.rule.pattern if verdict.rule else None,
        "commands": [
            {
                "argv": c.normalized.command.argv,
                "name": c.normalized.name,
                "decision": c.decision,
                "rule": c.rule.pattern if c.rule else None,
                "suggestion": c.normalized.suggestion,
            }
            for c in verdict.commands
        ],
        "suggestions": list(verdict.suggestions),
        "contain": verdict.contain,
    }
