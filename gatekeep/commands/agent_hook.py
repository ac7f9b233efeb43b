"""`gatekeep agent-hook NAME`: the gate in front of a coding agent's shell tool (issue 20).

The host runs it before each tool call with the call as JSON on stdin
(agents.py reads each host's event and writes its answers). A shell command is
decided as `gatekeep check` decides a typed line: the same policy, project
trust and gate, one audit record naming the agent and its session. gatekeep
never prompts here: where the host can ask its user, "ask" is passed on and the
host asks (the record says outcome "ask", not who answered); where it cannot,
what would be asked is denied, with the rule that would allow it. A call of the
agent's own file tool (Claude Code's Write and Edit, Gemini CLI's write_file and
replace, Copilot CLI's create and edit, OpenCode's write, edit and apply_patch:
Host.FILE_TOOLS) is judged only for the places no line may write
(judge_file_write): denied or asked there, and recorded; anywhere else it passes
through, as calls of other tools do: no output, no record, the host's own
permissions decide. A shell gatekeep cannot read (PowerShell) is asked about, or
denied.

It fails closed, in the host's own terms (Host.fail): a malformed or unexpected
event, a broken policy, an audit log that cannot be written, a bug, Ctrl-C.
Nothing reaches stdout before the decision is recorded, and the answer is written
once. A process of its own (main passes `deadline`) also answers deny by itself
after DEADLINE_SECONDS, well inside the timeout `install --agent` gives the host,
because a hook the host has to kill is let through by almost every host; that
late deny is not recorded (whatever hung may be the audit log).
"""

from __future__ import annotations

import _thread
import os
import sys

from gatekeep.agents.hosts import HOSTS, Answer, BadEvent, Host, read_event
from gatekeep.core.display import visible
from gatekeep.core.errors import EXIT_ERROR, FatalError, PolicyError
from gatekeep.core.paths import get_paths
from gatekeep.judge.gate import evaluate, judge_file_write
from gatekeep.judge.policy import STRICTNESS, load_policy
from gatekeep.judge.reviewing import worth_asking
from gatekeep.record.decision import new_record, record_broken_policy, save_record

DEADLINE_SECONDS = 10.0  # under the 30 s hook timeout `gatekeep install --agent` writes
MAX_EVENT_BYTES = 4 << 20  # far above any command a host sends; past it, a hostile or broken event


def agent_hook(agent: str, policy_file: str | None = None, stdin=None, deadline: float | None = None) -> int:
    """Answer the event on `stdin` (binary; default: sys.stdin's) for host `agent`; the exit code is the host's."""
    import time

    host = HOSTS[agent]
    # a reviewer's time counts inside the deadline: it must be done a second before the deny at it
    until = time.monotonic() + (deadline if deadline is not None else DEADLINE_SECONDS) - 1
    answered = _thread.allocate_lock()  # taken by whoever answers first: the hook, or its deadline
    if deadline is not None:
        _thread.start_new_thread(_answer_at_deadline, (host, deadline, answered))
    try:
        data = (sys.stdin.buffer if stdin is None else stdin).read(MAX_EVENT_BYTES + 1)
        if len(data) > MAX_EVENT_BYTES:
            raise BadEvent(f"the hook event is over {MAX_EVENT_BYTES >> 20} MiB")
        answer = _decide(host, read_event(data), policy_file, until)
    except FatalError as e:
        answer = host.fail(f"gatekeep: blocked: {e}")
    except KeyboardInterrupt:
        answer = host.fail("gatekeep: interrupted; blocked")
    except Exception as e:  # a bug: block, one line, traceback in the error log, as main() does
        from gatekeep.core.errorlog import internal_error_line

        answer = host.fail(internal_error_line(e))
    answered.acquire()  # if the deadline answered first, it is ending the process
    return _write(answer)


def _decide(host: Host, event: dict, policy_file: str | None, until: float) -> Answer:
    call = host.read(event)
    if call is None:
        return host.pass_through()  # not a shell command
    paths = get_paths()
    record = new_record(call.command, call.cwd, None)
    record.update(agent=host.name, session_id=call.session, tool=call.tool)
    if isinstance(event.get("tool_use_id"), str):  # the host's id of the call (Claude Code's, Codex's)
        record["tool_use_id"] = event["tool_use_id"]
    directories = (call.cwd, *call.also)
    try:  # the policy of each directory the command may run in (its project's file)
        policies = [load_policy(paths, policy_file, cwd) for cwd in directories]
    except PolicyError as e:
        record_broken_policy(paths.audit_log, record, e)
        raise
    policy = policies[0]
    contain = None
    if call.writes is not None:
        found = max(
            (judge_file_write(path, policy, call.cwd) for path in call.writes),
            key=lambda verdict: -1 if verdict is None else STRICTNESS[verdict[0]],
        )  # the first of the strictest
        if found is None:
            return host.pass_through()  # not ours to judge: the host's own permissions decide
        decision, reason, rule, suggestions = found[0], f"{call.tool} {found[1]}", None, ()
    elif call.shell == "sh":
        judged = [(evaluate(call.command, p, cwd), p) for p, cwd in zip(policies, directories)]
        verdict, policy = max(judged, key=lambda pair: STRICTNESS[pair[0].decision])  # the first of the strictest
        decision, reason, rule, suggestions = verdict.decision, verdict.reason, verdict.rule, verdict.suggestions
        contain = all(v.contain for v, _ in judged if v.decision == "ask") and verdict.contain
        verdict = verdict._replace(reviewable=all(v.reviewable for v, _ in judged if v.decision == "ask"))
    else:
        decision, reason, rule, suggestions = "ask", f"gatekeep cannot read {call.shell} commands", None, ()
    if decision == "ask" and contain and host.rewrites and call.tool_input is not None:
        instead = contained_command(call.command, policy_file)
        if instead is not None:
            record.update(decision=decision, outcome="contained", rule=None, reason=reason, contain=contain)
            record.update(prompted=False, answer=None, timed_out=False, policy_sha256=policy.sha256)
            record.update(layer=None, posture=policy.posture)
            save_record(paths.audit_log, record, policy.syslog, policy.rotation)
            return host.allow_instead(call, instead, visible(f"gatekeep: {contain}"))
    cannot_ask = None if host.asks else f"{host.title} cannot ask for it"
    cannot_ask = cannot_ask or call.cannot_ask
    review = decided = None
    if call.writes is None and call.shell == "sh" and worth_asking(verdict, policy.review):
        review, decided = _review(call, verdict, policy, host, until)
    outcome = decided or ("deny" if decision == "ask" and cannot_ask else decision)
    if decided is not None:
        record["answered_from"] = "reviewer"
    record.update(
        decision=decision,
        outcome=outcome,
        rule=rule.pattern if rule else None,
        reason=reason,
        prompted=False,
        answer=None,
        timed_out=False,
        policy_sha256=policy.sha256,
        layer=rule.layer if rule else None,
        posture=policy.posture,
    )
    if review is not None:
        record["review"] = review.as_record(policy.review.command)
    save_record(paths.audit_log, record, policy.syslog, policy.rotation)
    if decided is not None:
        said = "allowed" if decided == "allow" else "blocked (deny)"
        return host.answer(decided, visible(f"gatekeep: {said} by the reviewer ({record['review']['reviewer']}): {review.reason}"))
    errors = [layer.error for layer in policy.layers if layer.error]
    return host.answer(outcome, explain(decision, reason, suggestions, errors, cannot_ask))


def _review(call, verdict, policy, host: Host, until: float):
    """The reviewer's Verdict on the call's command, run within the hook's own time (`until`,
    time.monotonic()), and what it makes of the line ("allow", "deny" or None: it asks)."""
    import time

    from gatekeep.review.reviewer import Verdict, outcome, request, run

    left = min(policy.review.timeout, until - time.monotonic())
    if left <= 0:
        return Verdict("none", None, "", 0.0, "no time was left for the reviewer within the hook's"), None
    found = run(policy.review.command, request(call.command, call.cwd, verdict, policy.review, host.name, call.session), left)
    return found, outcome(found, verdict, policy.review)


def contained_command(command: str, policy_file: str | None) -> str | None:
    """The shell command that runs `command` contained (`gatekeep run --sandbox -- bash -c …`,
    with this interpreter), or None when the sandbox cannot work here (then the line asks)."""
    import shlex
    import shutil

    from gatekeep.contain.sandbox import unavailable

    if unavailable() is not None:
        return None
    shell = shutil.which("bash") or "/bin/sh"
    policy = ["--policy", policy_file] if policy_file else []
    return shlex.join([sys.executable, "-I", "-m", "gatekeep", "run", "--sandbox", *policy, "--", shell, "-c", command])


HEADLINES = {"allow": "gatekeep", "ask": "gatekeep: needs approval", "deny": "gatekeep: blocked (deny)"}


def explain(
    decision: str, reason: str, suggestions: tuple[str, ...], errors: list[str], cannot_ask: str | None = None
) -> str:
    """One line for the agent (deny) or for the user's prompt (ask), with the rule that would allow it;
    `cannot_ask`: why an ask is answered deny instead."""
    headline = HEADLINES[decision]
    if decision == "ask" and cannot_ask:
        headline = f"gatekeep: blocked, as it needs approval and {cannot_ask}"
    text = f"{headline}: {reason}"
    for error in errors:
        text += f"; {error}; every line asks until it is fixed"
    if decision != "allow" and suggestions:
        text += "; to allow it from now on: " + " ; ".join(f"gatekeep rules add '{s}'" for s in suggestions)
    return visible(text)


def _write(answer: Answer) -> int:
    """Write the answer whole, once."""
    try:
        if answer.stdout:
            sys.stdout.write(answer.stdout)
            sys.stdout.flush()  # here, where a failure is still handled, not at interpreter exit
    except OSError:  # nobody reads the answer: the exit code alone must block
        return EXIT_ERROR
    finally:
        if answer.stderr:
            _say(answer.stderr)
    return answer.code


def _answer_at_deadline(host: Host, seconds: float, answered) -> None:
    import time

    time.sleep(seconds)
    if not answered.acquire(False):
        return  # the hook is answering; it ends the process
    answer = host.fail(f"gatekeep: no decision within {seconds:g} s; blocked (see `gatekeep doctor`)")
    for fd, text in ((1, answer.stdout), (2, answer.stderr)):
        try:
            os.write(fd, text.encode())
        except OSError:
            pass
    os._exit(answer.code)


def _say(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except OSError:
        pass
