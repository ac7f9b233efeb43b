"""The reviewer (issue 40): real reviewer programs, run by `gatekeep check`, the agent hook and the
question on a real pseudo-terminal. What it may change: only a line that would ask; never a deny,
a loss, a secret read or a protected write; a reviewer that fails leaves the question."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from gatekeep.ask import prompt
from gatekeep.judge.gate import evaluate
from gatekeep.judge.policy import PolicyError, parse_layer
from gatekeep.record import audit
from gatekeep.review import reviewer
from tests.conftest import policy_from, write

pytestmark = pytest.mark.timeout(90)
GATEKEEP = [sys.executable, "-m", "gatekeep"]

# Reviewer programs: each reads the request and answers, or misbehaves, as its name says. The
# request is kept beside the program (seen.json), for the tests to read what was sent.
PROGRAMS = {
    "allows": 'print(json.dumps({"decision": "allow", "confidence": "high", "reason": "runs the build"}))',
    "denies": 'print(json.dumps({"decision": "deny", "confidence": "high", "reason": "touches production"}))',
    "unsure": 'print(json.dumps({"decision": "allow", "confidence": "medium", "reason": "probably fine"}))',
    "no-opinion": 'print(json.dumps({"decision": "none", "confidence": "low", "reason": "no idea"}))',
    "hangs": "time.sleep(300)",
    "crashes": "sys.exit(3)",
    "garbage": 'print("ALLOW, certainly")',
    "floods": 'sys.stdout.write("{" + " " * (1 << 20)); sys.stdout.flush()',
    "strange-decision": 'print(json.dumps({"decision": "yes", "confidence": "high", "reason": "x"}))',
    "leaves-a-child": (
        'subprocess.Popen(["sleep", "300"]); '
        'print(json.dumps({"decision": "allow", "confidence": "high", "reason": "ok"}))'
    ),
    "slowly-allows": (
        'time.sleep(1.5); print(json.dumps({"decision": "allow", "confidence": "high", "reason": "runs the build"}))'
    ),
}


def program(tmp_path: Path, behaviour: str) -> Path:
    path = tmp_path / "reviewers" / f"{behaviour}.py"
    seen = path.with_suffix(".seen.json")
    write(
        path,
        "import json, subprocess, sys, time\n"
        f"open({str(seen)!r}, 'w').write(sys.stdin.read())\n"
        f"{PROGRAMS[behaviour]}\n",
    )
    return path


def seen(path: Path) -> dict:
    return json.loads(path.with_suffix(".seen.json").read_text())


def review_policy(path: Path | None, timeout: int = 5, allow=("build the project",), deny=("touch production",)) -> str:
    command = json.dumps([sys.executable, str(path)]) if path else "null"
    return (
        f"review:\n  command: {command}\n  timeout: {timeout}\n"
        f"  allow: {json.dumps(list(allow))}\n  deny: {json.dumps(list(deny))}\n"
    )


@pytest.fixture
def project(isolated_home: Path) -> Path:
    tree = isolated_home / "src" / "app"
    tree.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    write(tree / "build.py", "print('built')\n")
    write(tree / ".env", "TOKEN=secret\n")
    return tree


def user_policy(text: str) -> None:
    write(Path(os.environ["GATEKEEP_HOME"]) / "config" / "policy.yaml", text)


def check(line: str, project: Path) -> subprocess.CompletedProcess:
    """`gatekeep check LINE` with no terminal: nobody to ask, so the reviewer's verdict alone may answer."""
    return subprocess.run(
        [*GATEKEEP, "check", line], cwd=project, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip


def last_record() -> dict:
    from gatekeep.core.paths import get_paths

    return audit.read_last(get_paths().audit_log, 1)[0]


# --- the policy -------------------------------------------------------------------------------------


def test_review_settings_combine_over_the_layers():
    policy = policy_from(review_policy(Path("/bin/true"), timeout=7) + "posture: strict\n")
    assert policy.review.command == (sys.executable, "/bin/true") and policy.review.timeout == 7
    assert policy.review.allow == ("build the project",) and policy.review.deny == ("touch production",)
    assert policy_from("posture: strict\n").review.command == ()


@pytest.mark.parametrize("text, key", [
    ("review:\n  command: 'python3 reviewer.py'\n", "review.command"),  # a shell line, not an argv list
    ("review:\n  command: []\n", "review.command"),
    ("review:\n  command: [./review.sh]\n", "review.command"),  # found in whatever directory a line runs in
    ("review:\n  command: [bin/review]\n", "review.command"),
    ("review:\n  timeout: 0\n", "review.timeout"),
    ("review:\n  timeout: 121\n", "review.timeout"),
    ("review:\n  allow: run the tests\n", "review.allow"),
    ('review:\n  deny: ["line one\\nline two"]\n', "review.deny[0]"),  # a control character
    ("review:\n  allow: ['" + "x" * 501 + "']\n", "review.allow[0]"),
    ("review:\n  model: x\n", "review.model"),
    ("review: yes\n", "review"),
])  # fmt: skip
def test_a_bad_review_section_is_a_policy_error(text, key):
    with pytest.raises(PolicyError) as raised:
        parse_layer("user", "/p.yaml", text)
    assert raised.value.key == key


def test_a_project_names_no_reviewer_and_adds_allow_descriptions_only_once_trusted(project):
    with pytest.raises(PolicyError, match="cannot name a reviewer"):
        parse_layer("project", str(project / ".gatekeep.yaml"), "review:\n  command: [evil]\n")
    from gatekeep.core.paths import get_paths
    from gatekeep.judge.policy import load_policy

    write(project / ".gatekeep.yaml", "review:\n  timeout: 2\n  allow: [anything at all]\n  deny: [deleting data]\n")
    user_policy(review_policy(Path("/bin/true"), timeout=9))
    policy = load_policy(get_paths(), None, str(project))
    assert policy.review.timeout == 2  # only ever shorter
    assert "anything at all" not in policy.review.allow and "deleting data" in policy.review.deny
    assert policy.review.command == (sys.executable, "/bin/true")


# --- the reviewer program, run for real -------------------------------------------------------------

# (reviewer, what check does with `python3 build.py` where nobody can ask, the record's review fields)
BEHAVIOURS = [
    ("allows", "allow", {"decision": "allow", "confidence": "high"}),
    ("denies", "deny", {"decision": "deny", "confidence": "high"}),
    ("unsure", "deny", {"decision": "allow", "confidence": "medium"}),  # not sure: asked, nobody answers
    ("no-opinion", "deny", {"decision": "none", "confidence": "low"}),
    ("hangs", "deny", {"decision": "none", "error": "the reviewer did not answer in time"}),
    ("crashes", "deny", {"decision": "none", "error": "the reviewer's answer is not JSON"}),
    ("garbage", "deny", {"decision": "none", "error": "the reviewer's answer is not JSON"}),
    ("floods", "deny", {"decision": "none", "error": "the reviewer wrote more than 64 KiB"}),
    ("strange-decision", "deny", {"decision": "none"}),
]


@pytest.mark.parametrize("behaviour, outcome, review", BEHAVIOURS)
def test_only_a_sure_verdict_answers_a_line_nobody_can_ask(behaviour, outcome, review, project, tmp_path):
    path = program(tmp_path, behaviour)
    user_policy(review_policy(path, timeout=2))
    started = time.monotonic()
    done = check("python3 build.py", project)
    assert time.monotonic() - started < 20  # a hung reviewer is cut at its timeout
    assert done.returncode == (0 if outcome == "allow" else 1), done.stderr
    record = last_record()
    assert (record["decision"], record["outcome"]) == ("ask", outcome)
    assert {k: record["review"].get(k) for k in review} == review
    assert record["review"]["reviewer"] == os.path.basename(sys.executable)
    assert 0 <= record["review"]["latency_ms"] < 10_000
    assert record.get("answered_from") == ("reviewer" if behaviour in ("allows", "denies") else None)
    assert record["prompted"] is False  # nobody was asked
    if behaviour in ("allows", "denies"):
        said = "allowed" if behaviour == "allows" else "blocked"
        assert f"gatekeep: {said} by the reviewer: " in done.stderr, done.stderr
    sent = seen(path)
    assert (sent["line"], sent["cwd"], sent["may_allow"]) == ("python3 build.py", str(project), True)
    assert sent["allow"] == ["build the project"] and sent["deny"] == ["touch production"]
    assert sent["host"] is None and sent["commands"] and "python3" in sent["why"] or sent["why"]


@pytest.mark.parametrize("line, rules, sent, why", [
    ("git clean -fdx", "", True, "loses work"),  # asked, and sent (a deny could count), but an allow cannot
    ("cat .env", "", True, "reads a secret"),
    ("python3 build.py", "rules:\n  deny: ['python3 *']\n", False, "a deny rule"),
    ("python3 build.py", "rules:\n  ask: ['python3 *']\n", True, "an ask rule of yours"),
    ("echo x >> ~/.bashrc", "", False, "a protected write"),
])  # fmt: skip
def test_no_answer_of_the_reviewer_allows_a_deny_a_loss_a_secret_or_a_protected_write(
    line, rules, sent, why, project, tmp_path
):
    path = program(tmp_path, "allows")
    user_policy(review_policy(path) + rules)
    done = check(line, project)
    assert done.returncode == 1, (why, done.stderr)
    assert last_record()["outcome"] == "deny"
    assert path.with_suffix(".seen.json").exists() == sent, why
    if sent:
        assert seen(path)["may_allow"] is False


@pytest.mark.parametrize("layer", ["system", "project"])
def test_a_posture_floor_of_the_system_or_the_project_holds_against_the_reviewer(layer, project, tmp_path):
    path = program(tmp_path, "allows")
    user_policy(review_policy(path))
    if layer == "system":
        write(Path(os.environ["GATEKEEP_SYSTEM_POLICY"]), "posture: workspace\n")
    else:
        write(project / ".gatekeep.yaml", "posture: workspace\n")
    assert check("python3 build.py", project).returncode == 1
    assert seen(path)["may_allow"] is False
    write(project / ".gatekeep.yaml", "posture: guard\n")  # (no stricter than the reviewer's bound)
    Path(os.environ["GATEKEEP_SYSTEM_POLICY"]).unlink(missing_ok=True)
    assert check("python3 build.py", project).returncode == 0


def test_a_deny_description_needs_no_allow_one_and_an_allow_counts_only_with_one(project, tmp_path):
    user_policy(review_policy(program(tmp_path, "allows"), allow=()))
    assert check("python3 build.py", project).returncode == 1  # no allow description it could match
    user_policy(review_policy(program(tmp_path, "denies"), allow=()))
    assert check("git clean -fdx", project).returncode == 1
    assert last_record()["answered_from"] == "reviewer"


def test_a_missing_reviewer_leaves_the_question_with_the_reason_recorded(project, tmp_path):
    user_policy(review_policy(tmp_path / "nowhere.py").replace(sys.executable, str(tmp_path / "no-such-program")))
    assert check("python3 build.py", project).returncode == 1
    assert "could not start" in last_record()["review"]["error"]


def test_the_reviewer_does_not_run_where_the_line_runs(project, tmp_path):
    """A file the command names relatively is never the repository's: the reviewer runs in /."""
    write(project / "review.py", 'print(\'{"decision": "allow", "confidence": "high", "reason": "planted"}\')\n')
    user_policy(f"review:\n  command: [{sys.executable}, review.py]\n  allow: [build the project]\n")
    assert check("python3 build.py", project).returncode == 1  # /review.py does not exist: no verdict
    assert last_record()["review"]["decision"] == "none" and "not JSON" in last_record()["review"]["error"]


def test_what_the_reviewer_leaves_running_is_ended_with_it(project, tmp_path):
    user_policy(review_policy(program(tmp_path, "leaves-a-child")))
    assert check("python3 build.py", project).returncode == 0
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", "^sleep 300$"], capture_output=True, text=True).stdout.split()
    assert left == [], "the reviewer's child outlived it"


# --- an agent's hook: the reviewer's time inside the hook's ------------------------------------------


def hook(agent: str, event: dict, project: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*GATEKEEP, "agent-hook", agent], input=json.dumps(event), cwd=project, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip


def claude_event(command: str, cwd: Path, mode: str = "default") -> dict:
    return {
        "session_id": "s-1", "cwd": str(cwd), "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command}, "permission_mode": mode,
    }  # fmt: skip


@pytest.mark.parametrize("behaviour, decision", [("allows", "allow"), ("denies", "deny"), ("unsure", "ask")])
def test_an_agents_hook_takes_a_sure_verdict_and_passes_the_rest_on(behaviour, decision, project, tmp_path):
    path = program(tmp_path, behaviour)
    user_policy(review_policy(path))
    done = hook("claude", claude_event("python3 build.py", project), project)
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == decision, done
    if decision != "ask":
        assert "by the reviewer" in answer["permissionDecisionReason"]
    sent = seen(path)
    assert (sent["host"], sent["session"]) == ("claude", "s-1")
    assert last_record()["review"]["decision"] == ("allow" if behaviour != "denies" else "deny")


def test_a_hung_reviewer_costs_an_agent_no_more_than_the_hooks_deadline(project, tmp_path):
    from gatekeep.commands.agent_hook import DEADLINE_SECONDS

    user_policy(review_policy(program(tmp_path, "hangs"), timeout=120))
    started = time.monotonic()
    done = hook("claude", claude_event("python3 build.py", project), project)
    assert time.monotonic() - started < DEADLINE_SECONDS + 3
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask", done
    assert last_record()["review"]["error"] == "the reviewer did not answer in time"


# --- at the terminal: the question at once, the reviewer beside it --------------------------------------


def test_the_reviewer_answers_a_question_already_on_screen(terminal, tmp_path, project):
    policy = policy_from(review_policy(program(tmp_path, "slowly-allows")) + "posture: workspace\n")
    line = "python3 build.py"
    verdict = evaluate(line, policy, str(project))
    assert verdict.decision == "ask" and verdict.reviewable
    beside = reviewer.Beside(policy.review.command, reviewer.request(line, str(project), verdict, policy.review), 5)

    def poll():
        found = beside.poll()
        decided = found and reviewer.outcome(found, verdict, policy.review)
        return (("once" if decided == "allow" else "deny"), found.reason) if decided else None

    started = time.monotonic()
    answer = prompt.ask(line, verdict, 30, tmp_path / "tty.lock", terminal.path, reviewer=prompt.Reviewer("allows", poll))
    assert answer == prompt.Answer("once", source="reviewer", note="runs the build")
    assert 1.0 < time.monotonic() - started < 10  # on screen first, answered when the reviewer was done
    shown = terminal.output()
    assert "the reviewer (allows) is looking at it too" in shown
    assert "answered by the reviewer (allows): runs the build" in shown


def test_a_person_who_answers_first_ends_the_reviewer(terminal, tmp_path, project):
    path = program(tmp_path, "hangs")
    policy = policy_from(review_policy(path) + "posture: workspace\n")
    line = "python3 build.py"
    verdict = evaluate(line, policy, str(project))
    beside = reviewer.Beside(policy.review.command, reviewer.request(line, str(project), verdict, policy.review), 60)
    terminal.press(b"d")
    answer = prompt.ask(line, verdict, 30, tmp_path / "tty.lock", terminal.path, reviewer=prompt.Reviewer("x", lambda: None))
    assert answer == prompt.Answer("deny")
    beside.stop()
    assert beside.verdict.error == "the question was answered first"
    assert beside.process.poll() is not None  # killed, and reaped


def test_gatekeep_check_at_a_terminal_shows_the_question_and_takes_the_reviewers_answer(project, tmp_path):
    user_policy(review_policy(program(tmp_path, "slowly-allows")))
    child = pexpect.spawn(GATEKEEP[0], [*GATEKEEP[1:], "check", "python3 build.py"], cwd=str(project),
                          env={**os.environ, "NO_COLOR": "1"}, timeout=30)  # fmt: skip
    child.expect("this line needs your approval")
    child.expect("answered by the reviewer")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    record = last_record()
    assert (record["outcome"], record["answer"], record["answered_from"]) == ("allow", "once", "reviewer")
    assert record["prompted"] is True and record["review"]["decision"] == "allow"


# --- the llm reviewer, through llm's offline echo model ---------------------------------------------

LLM_REVIEWER = [sys.executable, "-m", "gatekeep.review.llm_reviewer"]
SURE_ALLOW = json.dumps({"raw": json.dumps({"decision": "allow", "confidence": "high", "reason": "builds it"})})


@pytest.fixture
def echo_model():
    pytest.importorskip("llm_echo", reason="llm-echo is not installed (pip install -e '.[test]')")


def llm_review(request: dict, *args: str) -> dict:
    done = subprocess.run(
        [*LLM_REVIEWER, *args], input=json.dumps(request), capture_output=True, text=True, timeout=60
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


REQUEST = {"version": 1, "line": "python3 build.py", "cwd": "/src/app", "commands": ["python3 build.py"],
           "why": "runs code", "may_allow": True, "allow": ["build the project"], "deny": [], "host": None,
           "session": None}  # fmt: skip


def test_the_llm_reviewer_sends_the_model_the_line_and_takes_no_text_for_a_verdict(echo_model):
    said = llm_review(REQUEST, "-m", "echo")  # echo answers with the prompt it was sent: no verdict
    assert (said["decision"], said["confidence"]) == ("none", "low")
    assert said["reason"].startswith("the model's answer is not a verdict")
    assert "python3 build.py" in said["reason"]  # (the excerpt of what echo said: the prompt, the line first)


def test_the_llm_reviewer_reads_the_models_verdict(echo_model):
    said = llm_review(REQUEST, "-m", "echo", "--template", SURE_ALLOW)  # echo answers the raw text
    assert said == {"decision": "allow", "confidence": "high", "reason": "builds it"}


@pytest.mark.parametrize("args, why", [
    (("-m", "no-such-model"), "the model no-such-model failed"),
    (("-m", "echo", "--template", json.dumps({"raw": "```json\n{\"decision\": \"maybe\"}\n```"})), "not a verdict"),
])  # fmt: skip
def test_the_llm_reviewer_says_none_when_there_is_no_verdict(echo_model, args, why):
    said = llm_review(REQUEST, *args)
    assert said["decision"] == "none" and why in said["reason"], said


def test_the_llm_reviewer_finds_the_verdict_in_a_fence_or_after_words():
    from gatekeep.review.llm_reviewer import verdict_in

    text = 'Sure. Here it is:\n```json\n{"decision": "deny", "confidence": "high", "reason": "drops a table"}\n```'
    assert verdict_in(text) == {"decision": "deny", "confidence": "high", "reason": "drops a table"}
    assert verdict_in('{"note": {"decision": "allow"}} then {"decision": "allow", "confidence": "low", "reason": ""}') == {
        "decision": "allow", "confidence": "low", "reason": ""
    }  # fmt: skip
    assert verdict_in("allow, with high confidence") is None


def test_gatekeep_takes_the_llm_reviewers_verdict(echo_model, project):
    user_policy(
        "review:\n"
        f"  command: {json.dumps([*LLM_REVIEWER, '-m', 'echo', '--template', SURE_ALLOW])}\n"
        "  timeout: 30\n  allow: [build the project]\n"
    )
    assert check("python3 build.py", project).returncode == 0
    assert last_record()["review"] | {"latency_ms": 0} == {
        "reviewer": os.path.basename(sys.executable), "decision": "allow", "confidence": "high",
        "reason": "builds it", "latency_ms": 0,
    }  # fmt: skip
    assert check("git clean -fdx", project).returncode == 1  # the same sure allow: a loss still asks
    assert "review" not in last_record()  # (no deny description: nothing the reviewer could change there)
    stats = subprocess.run([*GATEKEEP, "audit", "stats"], capture_output=True, text=True, timeout=60).stdout
    assert "reviewer: asked about 1 questions, answered 1 (1 allowed, 0 denied); overruled by you 0" in stats


# --- audit stats: what the reviewer answered, and where people overruled it --------------------------


def test_audit_stats_counts_the_reviewers_answers_and_overrulings():
    from gatekeep.record.stats import summarize

    def ask(**fields) -> dict:
        return {"command": "python3 build.py", "decision": "ask", "prompted": True, **fields}

    records = [
        ask(outcome="allow", answer="once", answered_from="reviewer", review={"decision": "allow"}),
        ask(outcome="deny", answer=None, prompted=False, answered_from="reviewer", review={"decision": "deny"}),
        ask(outcome="deny", answer="deny", review={"decision": "allow", "confidence": "medium"}),  # overruled
        ask(outcome="allow", answer="once", review={"decision": "deny", "confidence": "low"}),  # overruled
        ask(outcome="allow", answer="once", review={"decision": "allow", "confidence": "low"}),  # agreed
        ask(outcome="deny", answer="deny", review={"decision": "none", "error": "the reviewer did not answer in time"}),
        ask(outcome="deny", answer="deny", review={"decision": "none", "error": "the question was answered first"}),
        ask(outcome="deny", answer="deny"),  # no reviewer
    ]
    said = summarize(records)["review"]
    assert said == {"asked": 7, "answered": 2, "allowed": 1, "denied": 1, "overruled": 2, "failed": 1}


def test_the_smallest_reviewer_in_the_docs_is_no_verdict(project, tmp_path):
    text = (Path(__file__).resolve().parents[1] / "docs" / "policy.md").read_text()
    script = text.split("The smallest reviewer:\n\n```sh\n", 1)[1].split("```", 1)[0]
    write(tmp_path / "smallest.sh", script)
    user_policy(f"review:\n  command: [/bin/sh, {tmp_path / 'smallest.sh'}]\n  allow: [build the project]\n")
    assert check("python3 build.py", project).returncode == 1  # no opinion: asked, and nobody can answer
    assert last_record()["review"] | {"latency_ms": 0} == {
        "reviewer": "sh", "decision": "none", "confidence": "low", "reason": "no opinion", "latency_ms": 0,
    }  # fmt: skip


def test_the_protocols_schema_in_the_docs_is_what_gatekeep_sends_and_reads(project, tmp_path):
    from gatekeep.review.reviewer import CONFIDENCES, DECISIONS

    text = (Path(__file__).resolve().parents[1] / "docs" / "policy.md").read_text()
    schema = json.loads(text.split("As JSON Schema", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    path = program(tmp_path, "no-opinion")
    user_policy(review_policy(path))
    check("python3 build.py", project)
    sent = seen(path)
    assert sorted(sent) == sorted(schema["request"]["required"]) == sorted(schema["request"]["properties"])
    types = {"string": str, "boolean": bool, "array": list}
    for key, rule in schema["request"]["properties"].items():
        kinds = rule.get("type", [])
        kinds = [kinds] if isinstance(kinds, str) else kinds
        assert sent[key] == rule["const"] if "const" in rule else any(
            sent[key] is None if k == "null" else isinstance(sent[key], types[k]) for k in kinds
        ), key
    answer = schema["answer"]["properties"]
    assert (tuple(answer["decision"]["enum"]), tuple(answer["confidence"]["enum"])) == (DECISIONS, CONFIDENCES)


@pytest.mark.parametrize("command, ok, said", [
    (None, True, "none (review.command is not set)"),
    (["no-such-reviewer-here"], False, "'no-such-reviewer-here', which is not found here"),
    ([sys.executable, "x.py"], True, "within 5 s; 1 allow and 1 deny descriptions"),
])  # fmt: skip
def test_doctor_says_whether_the_reviewer_can_start(command, ok, said, project):
    if command is not None:
        user_policy(f"review:\n  command: {json.dumps(command)}\n  timeout: 5\n  allow: [a]\n  deny: [d]\n")
    done = subprocess.run([*GATEKEEP, "doctor", "--json"], cwd=project, capture_output=True, text=True, timeout=60)
    [check] = [c for c in json.loads(done.stdout)["checks"] if c["name"] == "reviewer"]
    assert check["ok"] is ok and said in check["detail"], check
