"""`gatekeep check`: vet one command line, record the decision, exit 0 (run) or 1 (blocked)."""

from __future__ import annotations

import os
import sys

from gatekeep.core.display import visible
from gatekeep.core.errors import (
    EXIT_ALLOW,
    EXIT_BLOCKED,
    EXIT_CONTAIN,
    EXIT_ERROR,
    EXIT_NAMES,
    FatalError,
    HandBack,
    PolicyError,
)
from gatekeep.core.jsontext import dumps
from gatekeep.core.paths import get_paths, removed
from gatekeep.judge.gate import evaluate, verdict_json
from gatekeep.judge.policy import load_policy
from gatekeep.judge.reviewing import worth_asking
from gatekeep.record.decision import new_record, ready_to_record, record_broken_policy, save_record


ANSWERED = {"allow": "once", "deny": "deny"}  # a reviewer's decision, as the answer it stands for

# The lines a broken system or user policy still lets through, typed exactly: the checkup, and the
# editor that saves only a policy that loads (visudo's way), so that a typo in the policy never
# leaves a gated terminal with nothing to type but a new shell. Nothing else: no options that
# name other files, no expansions, no other command on the line.
WAY_OUT = (["gatekeep", "doctor"], ["gatekeep", "doctor", "--json"], ["gatekeep", "rules", "edit"])


def check(
    line: str,
    *,
    policy_file: str | None,
    prompt: bool,
    as_json: bool,
    cwd: str | None,
    quiet: bool,
    shell: str | None = None,
    questions: bool = True,
    names_on_request: bool = False,
    shell_names: str | None = None,
    can_contain: bool = False,
) -> int:
    """`questions` False: a question is not asked here but raises HandBack (a warm checker's worker).

    `shell_names`: the names the calling shell runs beyond PATH and its builtins, blank-separated
    (judge/typos.py); `names_on_request`: the caller can give them, so a line whose only questions
    are about command words that may be typos returns EXIT_NAMES, deciding and recording nothing,
    for the caller to check again with them.

    `can_contain`: the caller (a shell hook) runs the line contained (`gatekeep run --sandbox`)
    when told so by EXIT_CONTAIN: a line that asks and may run contained (judge/gate.py) is then
    contained without a question when the policy says `sandbox.contain: true`, and otherwise
    the question offers it (`c`). Either only when the sandbox works here."""
    paths = get_paths()
    record = new_record(line, cwd, shell or os.path.basename(os.environ.get("SHELL", "")) or None)
    try:
        policy = load_policy(paths, policy_file, record["cwd"])
    except PolicyError as e:
        if line.split() in WAY_OUT and not set(line) & set("\n\r;&|`$<>()"):
            record_broken_policy(paths.audit_log, record, e, way_out=True)
            return EXIT_ALLOW
        record_broken_policy(paths.audit_log, record, e)
        # Every other line is blocked, an editor or `bash --norc` typed at this prompt too
        other = {"bash": "bash --norc", "zsh": "zsh -f"}.get(record["shell"] or "", "bash --norc, zsh -f")
        print(
            f"gatekeep: blocked: {e}; every line is blocked until {e.path} is fixed: run `gatekeep rules edit`"
            f" (it saves only a policy that loads), or edit it in a shell without the hook ({other})",
            file=sys.stderr,
        )
        return EXIT_ERROR

    for layer in policy.layers:
        if layer.error:
            print(f"gatekeep: {layer.error}; every line asks until it is fixed", file=sys.stderr)
    names = frozenset(shell_names.split()) if shell_names is not None else None
    if names is None and names_on_request:
        names = frozenset()  # as if the shell ran nothing by name: if that allows a typo, ask for the names
    if names is None:
        verdict = evaluate(line, policy, record["cwd"], offer_contain=can_contain)
    else:
        verdict = evaluate(line, policy, record["cwd"], shell_names=names, offer_contain=can_contain)
    typos = []
    if names is not None:
        from gatekeep.judge.typos import NOT_A_COMMAND

        typos = [v for v in verdict.commands if v.decision == "allow" and v.why == NOT_A_COMMAND]
        if typos and shell_names is None:
            return EXIT_NAMES
    if verdict.decision != "allow" and removed(record["cwd"]):
        _gone(record["cwd"])
    # roll-out: record what would happen, block and prompt nothing, except what the built-in
    # policy denies (`rm -rf ~`, a fork bomb, a write to ~/.bashrc), which no mode lets run
    audit_mode = policy.mode == "audit"
    audit_only = audit_mode and not verdict.firm
    answer = None
    on_terminal = bool(record["tty"]) and sys.stdin.isatty()
    if verdict.decision == "ask" and verdict.contain is not None and not audit_only:
        if not questions:
            raise HandBack  # (whether the sandbox works here is found out by the process the shell started)
        verdict = _containable_here(verdict, can_contain)
        if verdict.contain is not None and policy.sandbox.contain:
            return _contained(paths, record, verdict, policy)
    review = None  # the reviewer's Verdict (review/reviewer.py), when one was asked
    will_ask = verdict.decision == "ask" and prompt and not audit_only and (on_terminal or policy.approve != "tty")
    reviewing = not audit_only and worth_asking(verdict, policy.review)
    if reviewing:
        if not questions:
            raise HandBack  # (a reviewer runs in the process that may ask, not in the warm checker)
        if not will_ask:  # nobody to ask: its verdict alone may answer
            from gatekeep.review.reviewer import outcome as review_outcome
            from gatekeep.review.reviewer import run

            review = run(policy.review.command, _review_request(record, verdict, policy), policy.review.timeout)
            if (decided := review_outcome(review, verdict, policy.review)) is not None:
                from gatekeep.ask.prompt import Answer

                answer = Answer(ANSWERED[decided], source="reviewer", note=review.reason)
    if will_ask:
        if not questions:
            raise HandBack
        ready_to_record(paths)
        if reviewing:
            answer, review = _ask_reviewed(paths, record, verdict, policy, on_terminal)
        else:
            answer = _ask(paths, record, verdict, policy, on_terminal)
        if answer.answer in ("always", "never"):
            target = policy_file or paths.user_policy  # the user layer this check used
            _save_answer(paths, target, verdict.suggestions, "allow" if answer.answer == "always" else "deny")
    if answer is not None and answer.answer == "contained":
        return _contained(paths, record, verdict, policy, answer="contained")
    approved = verdict.decision == "allow" or (answer is not None and answer.approved)
    outcome = "allow" if approved or audit_only else "deny"
    record.update(
        decision=verdict.decision,
        outcome=outcome,
        rule=verdict.rule.pattern if verdict.rule else None,
        reason=verdict.reason,
        prompted=answer is not None and (answer.source != "reviewer" or will_ask),  # (a reviewer alone: no question)
        answer=answer.answer if answer else None,
        timed_out=bool(answer and answer.timed_out),
        policy_sha256=policy.sha256,
        layer=verdict.rule.layer if verdict.rule else None,
        posture=policy.posture,
    )
    if answer is not None and answer.source != "tty":
        record["answered_from"] = answer.source
    if review is not None:
        record["review"] = review.as_record(policy.review.command)
    if audit_mode:
        record["mode"] = "audit"
    save_record(paths.audit_log, record, policy.syslog, policy.rotation)

    if as_json:
        output = {"id": record["id"], "command": line, **verdict_json(verdict), "outcome": outcome}
        print(dumps(output))
    elif audit_only and verdict.decision != "allow":
        print(f"gatekeep: audit mode, not blocked; it would {verdict.decision}: {verdict.reason}", file=sys.stderr)
    elif answer is not None and answer.source == "reviewer" and not record["prompted"]:
        said = "allowed" if answer.approved else "blocked"
        print(f"gatekeep: {said} by the reviewer: {visible(answer.note)}", file=sys.stderr)
    elif answer is not None:
        if not answer.approved:
            print(f"gatekeep: blocked: not approved ({answer.answer})", file=sys.stderr)
    elif outcome == "deny":
        firm = " even in audit mode" if audit_mode else ""
        print(f"gatekeep: blocked{firm} ({verdict.decision}): {verdict.reason}", file=sys.stderr)
        if verdict.suggestions:
            hint = " ; ".join(f"gatekeep rules add '{s}'" for s in verdict.suggestions)
            print(f"gatekeep: to allow it from now on: {visible(hint)}", file=sys.stderr)
    elif not quiet:
        print(f"gatekeep: {verdict.reason}", file=sys.stderr)
    elif typos:  # said even when quiet: the line was not asked about because of what gatekeep found
        shown = ", ".join(f"`{visible(v.normalized.command.argv[0])}`" for v in typos)
        why = "no such command here (not on PATH, no builtin, alias or function); not asked"
        print(f"gatekeep: {shown}: {why}", file=sys.stderr)
    return EXIT_ALLOW if outcome == "allow" else EXIT_BLOCKED


def _containable_here(verdict, can_contain: bool):
    """The verdict with its `contain` kept only if the caller can run the line contained and the
    sandbox works here (contain/sandbox.py); otherwise the line is asked as any other."""
    if can_contain:
        from gatekeep.contain.sandbox import unavailable

        if unavailable() is None:
            return verdict
    return verdict._replace(contain=None)


def _contained(paths, record: dict, verdict, policy, answer: str | None = None) -> int:
    """Record the line as run contained, say so, and tell the caller to run it so."""
    record.update(
        decision=verdict.decision,
        outcome="contained",
        rule=None,
        reason=verdict.reason,
        prompted=answer is not None,
        answer=answer,
        timed_out=False,
        policy_sha256=policy.sha256,
        layer=None,
        posture=policy.posture,
        contain=verdict.contain,
    )
    save_record(paths.audit_log, record, policy.syslog, policy.rotation)
    print(f"gatekeep: {visible(verdict.contain)}", file=sys.stderr)
    return EXIT_CONTAIN


def _review_request(record: dict, verdict, policy) -> dict:
    from gatekeep.review.reviewer import request

    return request(record["command"], record["cwd"], verdict, policy.review)


def _ask_reviewed(paths, record: dict, verdict, policy, on_terminal: bool):
    """Ask (_ask), with the reviewer beside the question: the answer, and the reviewer's Verdict.
    A person who answers first ends the reviewer; what it said by then is kept for the record."""
    from gatekeep.review.reviewer import Beside
    from gatekeep.review.reviewer import outcome as review_outcome

    beside = Beside(policy.review.command, _review_request(record, verdict, policy), policy.review.timeout)

    def poll():
        found = beside.poll()
        decided = review_outcome(found, verdict, policy.review) if found is not None else None
        return None if decided is None else (ANSWERED[decided], found.reason)

    from gatekeep.ask.prompt import Reviewer

    reviewer = Reviewer(os.path.basename(policy.review.command[0]), poll)
    try:
        answer = _ask(paths, record, verdict, policy, on_terminal, reviewer)
    finally:
        beside.stop()
    return answer, beside.verdict


def _ask(paths, record: dict, verdict, policy, on_terminal: bool, reviewer=None):
    """Ask on this terminal, or (approve: remote | both) publish the request for another terminal
    too (approvals.py) and take the first answer; it is withdrawn whatever happens."""
    from gatekeep.ask.prompt import Remote, ask, wait_remote

    line, lock = record["command"], paths.lock_for(record["tty"]) if record["tty"] else None
    if policy.approve == "tty":
        return ask(line, verdict, policy.timeout, lock, confirm=policy.confirm, reviewer=reviewer)
    import time

    from gatekeep.record import approvals

    request_id = record["id"]
    names = list(dict.fromkeys(c.normalized.name for c in verdict.commands if c.decision != "allow"))
    request = {
        **{key: record[key] for key in ("id", "command", "cwd", "tty", "pid", "user")},
        "reason": verdict.reason,
        "names": names,
        "suggestions": list(verdict.suggestions),
    }

    def poll() -> str | None:
        given = approvals.answer_of(paths, request_id)
        return given["answer"] if given else None

    def shown(deadline: float) -> None:
        # published only once the question is on screen, the terminal's lock held: its time to
        # answer, in `pending` and `watch`, is the time the person really has
        approvals.publish(paths, {**request, "created": time.time(), "deadline": deadline})

    remote = Remote(request_id[:8], poll, here=policy.approve == "both", shown=shown)
    try:
        if on_terminal:
            return ask(line, verdict, policy.timeout, lock, remote=remote, confirm=policy.confirm, reviewer=reviewer)
        print(f"gatekeep: waiting up to {policy.timeout} s for `gatekeep approve {request_id[:8]}`", file=sys.stderr)
        return wait_remote(policy.timeout, remote, reviewer)
    finally:
        approvals.withdraw(paths, request_id)


def _save_answer(paths, target: str, patterns: tuple[str, ...], verdict: str) -> None:
    """Add the suggested patterns to the user policy; the line's outcome does not depend on it."""
    from gatekeep.record.policy_edit import add_rule

    for pattern in patterns:
        try:
            add_rule(paths, target, pattern, verdict)
            print(f"gatekeep: added {verdict} rule '{visible(pattern)}' to {target}", file=sys.stderr)
        except FatalError as e:
            print(f"gatekeep: could not save the rule '{visible(pattern)}': {e}", file=sys.stderr)


def _gone(cwd: str) -> None:
    """Why a line typed in a directory that no longer exists asks (paths.current_directory)."""
    print(
        f"gatekeep: the current directory {visible(cwd)} no longer exists (removed by another process?);"
        " what a line writes there asks: `cd` to a directory that exists",
        file=sys.stderr,
    )
