"""`gatekeep audit stats`: the summary of hand-written records, --since, and a real audit-mode roll-out."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gatekeep.main import main
from gatekeep.record import audit
from gatekeep.record.best_rules import best_suggestions, removals
from gatekeep.record.stats import parse_since, summarize
from tests.conftest import policy_from, write

DAY = 24 * 3600


def rec(command: str, decision: str = "ask", **fields) -> dict:
    """A record as `gatekeep check` writes it, for a line nobody was asked about."""
    outcome = "allow" if decision == "allow" else "deny"
    return {
        "ts": "2026-11-22T15:39:30.123Z",
        "command": command,
        "cwd": "/tmp",
        "decision": decision,
        "outcome": outcome,
        "prompted": False,
        "answer": None,
        "timed_out": False,
        **fields,
    }


def answered(command: str, answer: str) -> dict:
    approved = answer in ("once", "always")
    return rec(command, outcome="allow" if approved else "deny", prompted=True, answer=answer)


# (records, user policy, the expected part of the summary)
SUMMARIES = [
    pytest.param(
        [],
        "",
        {
            "records": 0,
            "unreadable": 0,
            "first": None,
            "decisions": {"allow": 0, "ask": 0, "deny": 0},
            "top_names": [],
            "rules": [],
            "removed": 0,
        },
        id="nothing",
    ),
    pytest.param(
        [
            rec("git status", "allow"),
            rec("rm -rf ~", "deny"),
            rec("npm install"),
            rec("make", outcome="ask", shell="claude-code"),
            rec("npm test", outcome="allow", mode="audit"),
            rec("rm -rf /", "deny", outcome="allow", mode="audit"),
            rec("rm -rf ~", "deny", outcome="deny", mode="audit"),  # the built-in policy's, even so
        ],
        "",
        {
            "records": 7,
            "decisions": {"allow": 1, "ask": 3, "deny": 3},
            "outcomes": {"allow": 3, "deny": 3, "ask": 1},
            "audit_mode": 3,
            "audit_blocked": 1,
            "prompted": 0,
            "answers": {},
        },
        id="decisions, outcomes and audit mode",
    ),
    pytest.param(
        [
            answered("npm install", "once"),
            answered("npm install", "once"),
            answered("make", "always"),
            answered("curl x", "timeout"),
            answered("curl y", "never"),
            rec("ls", "allow"),
        ],
        "",
        {
            "prompted": 5,
            "answers": {"once": 2, "always": 1, "never": 1, "timeout": 1},
            "outcomes": {"allow": 4, "deny": 2},
        },
        id="answers by kind",
    ),
    pytest.param(
        [
            None,
            {"decision": "ask"},
            {"command": 3},
            rec("make", ts="2026-11-20T08:00:00.000Z"),
            rec("make", ts="2026-11-21T09:00:00.000Z"),
        ],
        "",
        {"records": 2, "unreadable": 3, "first": "2026-11-20T08:00:00.000Z", "last": "2026-11-21T09:00:00.000Z"},
        id="unreadable lines are skipped and counted",
    ),
    pytest.param(
        [
            rec("git status && npm run build --watch"),
            rec("npm run build"),
            rec("cargo build"),
            rec("ls | frobnicate deploy --now"),
            rec("cargo build --release"),
            rec("npm run build -- --prod"),
            rec("npm run build && npm run build"),
            rec("npm run build", "allow"),
            rec("cargo build", "deny"),
        ],
        "",
        {
            "top_names": [
                {"name": "npm run build", "asks": 4},
                {"name": "cargo build", "asks": 2},
                {"name": "frobnicate deploy", "asks": 1},
            ]
        },
        id="top names: what asked, once per line, most frequent first",
    ),
    pytest.param(
        [
            rec("cargo build"),
            rec("make deploy"),
            rec("make deploy"),
            rec("npm run build --watch"),
            rec("npm run build"),
            rec("$EDITOR notes"),
        ],
        "rules:\n  allow: ['cargo build *']\n  deny: ['make deploy']\n",
        {
            "asks": {"total": 6, "rechecked": True, "now_allowed": 1, "now_denied": 2, "still_ask": 3, "no_rule": 1},
            "rules": [{"rule": "npm run build *", "removes": 2}],
            "removed": 2,
        },
        id="asks the current policy allows or denies are counted, not suggested",
    ),
    pytest.param(
        [rec("frobnicate deploy x && quux build y")] * 2 + [rec("quux build z")] * 3 + [rec("zork run")],
        "",
        {
            "rules": [
                {"rule": "quux build *", "removes": 3},
                {"rule": "frobnicate deploy *", "removes": 2},
                {"rule": "zork run *", "removes": 1},
            ],
            "removed": 6,
        },
        id="a line that needs two rules counts for the second",
    ),
    pytest.param(
        [rec("pip install requests"), rec("pip install rich"), rec("git status && pip install x")],
        "rules:\n  allow: ['pip install *']\n",
        {
            "top_names": [{"name": "pip install", "asks": 3}],
            "asks": {"total": 3, "rechecked": True, "now_allowed": 3, "now_denied": 0, "still_ask": 0, "no_rule": 0},
            "rules": [],
        },
        id="names of lines now allowed: what the new rule allows",
    ),
    pytest.param(
        [
            rec("git status", "deny", rule=None, policy_sha256=None, reason="policy error in x; fix the policy"),
            rec("rm -rf ~", "deny", policy_sha256="ab12"),
            rec("rm -rf /", "deny"),  # from before records named their policy
        ],
        "",
        {"decisions": {"allow": 0, "ask": 0, "deny": 2}, "policy_errors": 1, "outcomes": {"allow": 0, "deny": 3}},
        id="a line blocked by a policy that did not load is a policy error, not a deny",
    ),
]


@pytest.mark.parametrize("records,policy_text,expected", SUMMARIES)
def test_summary(records, policy_text, expected):
    policy = policy_from(policy_text)
    summary = summarize(records, lambda cwd: policy)
    assert {key: summary[key] for key in expected} == expected


def test_summary_without_a_policy_names_every_command_and_suggests_nothing():
    summary = summarize([rec("git status && npm run build"), rec("npm run build")], policy_for=None)
    assert summary["top_names"] == [{"name": "npm run build", "asks": 2}, {"name": "git status", "asks": 1}]
    assert summary["asks"] == {
        "total": 2,
        "rechecked": False,
        "now_allowed": 0,
        "now_denied": 0,
        "still_ask": 0,
        "no_rule": 0,
    }
    assert summary["rules"] == []


def test_summary_keeps_only_the_top_names():
    records = [rec(f"tool{i} run") for i in range(5) for _ in range(i + 1)]
    names = summarize(records, lambda cwd: policy_from(""), top=2)["top_names"]
    assert names == [{"name": "tool4 run", "asks": 5}, {"name": "tool3 run", "asks": 4}]


def test_each_asked_line_is_decided_in_its_own_directory(tmp_path):
    project = tmp_path / "app"
    write(project / ".gatekeep.yaml", "rules:\n  deny: ['make deploy']\n")
    seen = []

    def policy_for(cwd):
        seen.append(cwd)
        return policy_from("")

    records = [rec("make deploy", cwd=str(project)), rec("make deploy", cwd="/tmp"), rec("make deploy", cwd="/tmp")]
    summary = summarize(records, policy_for)
    # once per line and directory, and once more for the looser postures (policies_now caches the load)
    assert seen == [str(project), str(project), "/tmp", "/tmp"]
    assert summary["asks"]["still_ask"] == 3


@pytest.mark.parametrize(
    "asked,rules,counts",
    [
        ([("a *",)] * 3 + [("b *",)], ["a *", "b *"], [3, 1]),
        ([("a *", "b *")] * 2 + [("b *",)], ["b *", "a *"], [1, 2]),
        ([("a *",), ()], ["a *", "c *"], [1, 0]),
    ],
)
def test_removals_add_up_to_what_the_rules_cover(asked, rules, counts):
    assert removals(asked, rules) == counts
    assert sum(counts) == best_suggestions(asked, count=len(rules))[1]


@pytest.mark.parametrize(
    "value,ago",
    [("30m", 1800), ("24h", DAY), ("7d", 7 * DAY), ("2w", 14 * DAY), ("0s", 0), (" 3 d ", 3 * DAY)],
)
def test_since_a_duration(value, ago):
    expected = time.time() - ago
    assert abs(parse_since(value).timestamp() - expected) < 5


@pytest.mark.parametrize(
    "value,expected",
    [
        ("2026-11-22", "2026-11-22T00:00:00+00:00"),
        ("2026-11-22T15:00", "2026-11-22T15:00:00+00:00"),
        ("2026-11-22 15:00:30", "2026-11-22T15:00:30+00:00"),
        ("2026-11-22T15:39:30.123Z", "2026-11-22T15:39:30.123000+00:00"),
        ("2026-11-22T15:00+02:00", "2026-11-22T13:00:00+00:00"),
    ],
)
def test_since_a_date_or_time_is_utc_unless_it_says(value, expected):
    assert parse_since(value).astimezone(timezone.utc).isoformat() == expected


def test_since_longer_ago_than_the_calendar_goes_means_everything(capsys, paths):
    audit.append(paths.audit_log, rec("make", ts="1970-01-01T00:00:01.000Z"))
    assert _stats(capsys, "--since", "999999999w")["records"] == 1


@pytest.mark.parametrize("value", ["7x", "", "yesterday", "-3d", "7 days", "2026-13-01", "d7", "9999999999d"])
def test_a_bad_since_is_one_line_and_exit_2(capsys, value):
    assert main(["audit", "stats", "--since", value]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"gatekeep: --since: cannot read {value!r}: give a duration")
    assert err.count("\n") == 1


def _ago(seconds: float) -> str:
    return audit.timestamp(time.time() - seconds)


def _stats(capsys, *args: str) -> dict:
    assert main(["audit", "stats", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_since_keeps_the_period_and_stops_reading_before_it(capsys, paths):
    write(paths.audit_log, "not json\n")
    audit.append(paths.audit_log, rec("ancient-tool run", ts=_ago(30 * DAY)))
    audit.append(paths.audit_log, rec("old-tool run", ts=_ago(8 * DAY)))
    audit.append(paths.audit_log, rec("new-tool run", ts=_ago(6 * DAY)))
    # decided later than it arrived (a long prompt): in the log after a newer record
    audit.append(paths.audit_log, rec("edge-tool run", ts=_ago(7 * DAY - 60)))
    audit.append(paths.audit_log, rec("outside-tool run", ts=_ago(7 * DAY + 1800)))
    audit.append(paths.audit_log, rec("fresh-tool run", ts=_ago(60)))
    audit.append(paths.audit_log, rec("timeless-tool run", ts="yesterday"))  # cannot be placed in a period

    week = _stats(capsys, "--since", "7d")
    assert [n["name"] for n in week["top_names"]] == ["edge-tool run", "fresh-tool run", "new-tool run"]
    assert (week["records"], week["unreadable"]) == (3, 1)  # "not json" lies before the period: never read
    since = datetime.fromisoformat(week["since"].replace("Z", "+00:00"))
    assert week["since"].endswith("Z") and abs(since.timestamp() - (time.time() - 7 * DAY)) < 5

    everything = _stats(capsys)
    assert (everything["since"], everything["records"], everything["unreadable"]) == (None, 7, 1)

    nine_days = (datetime.now(timezone.utc) - timedelta(days=9)).strftime("%Y-%m-%dT%H:%M")
    since_date = _stats(capsys, "--since", nine_days)
    assert since_date["records"] == 5
    assert since_date["since"] == f"{nine_days}:00.000Z"
    assert _stats(capsys, "--since", "1h")["records"] == 1


def test_a_missing_or_empty_log(capsys, paths):
    assert not Path(paths.audit_log).exists()
    empty = _stats(capsys)
    assert (empty["records"], empty["unreadable"], empty["top_names"], empty["rules"]) == (0, 0, [], [])
    assert _stats(capsys, "--since", "7d")["records"] == 0
    write(paths.audit_log, "")
    assert main(["audit", "stats"]) == 0
    assert capsys.readouterr().out == "audit log: no records\n"


def test_text_output(capsys, paths):
    for command in ["npm run build", "npm run build --watch", "cargo build", "$EDITOR x"]:
        audit.append(paths.audit_log, rec(command, ts="2026-11-22T15:39:30.123Z", mode="audit", outcome="allow"))
    audit.append(paths.audit_log, answered("make", "timeout") | {"ts": "2026-11-23T08:00:00.000Z"})
    with open(paths.audit_log, "a") as f:
        f.write("{torn\n")
    assert main(["audit", "stats"]) == 0
    assert capsys.readouterr().out == (
        "audit log: 5 records, 2026-11-22 15:39 to 2026-11-23 08:00 UTC, 4 in audit mode (nothing blocked)\n"
        "decision: 0 allow, 5 ask, 0 deny\n"
        "outcome:  4 allow, 1 deny\n"
        "answers:  1 timeout\n"
        "unreadable lines skipped: 1\n"
        "most asked:\n"
        "       2  npm run build\n"
        "       1  $EDITOR x\n"
        "       1  cargo build\n"
        "       1  make\n"
        "under the current policy, of the 5 asks: 0 would now be allowed, 0 denied, 5 would still ask"
        " (1 that no rule can allow)\n"
        "`posture: guard` would remove 3 of the 5 that still ask (what it lets through: docs/policy.md#postures)\n"
        "these 3 rules would remove 4 of them (80%):\n"
        "  gatekeep rules add 'npm run build *'  # removes 2\n"
        "  gatekeep rules add 'make *'           # removes 1\n"
        "  gatekeep rules add 'cargo build *'    # removes 1\n"
    )


def test_text_output_says_what_audit_mode_blocked_even_so(capsys, paths):
    audit.append(paths.audit_log, rec("npm test", ts="2026-11-22T15:39:30.123Z", mode="audit", outcome="allow"))
    audit.append(paths.audit_log, rec("rm -rf ~", "deny", ts="2026-11-22T15:40:00.000Z", mode="audit", outcome="deny"))
    assert main(["audit", "stats"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("UTC, 2 in audit mode (1 blocked even so)")


def test_a_broken_policy_still_counts(capsys, paths):
    audit.append(paths.audit_log, rec("npm run build"))
    write(paths.user_policy, "rules: [\n")
    summary = _stats(capsys)
    assert summary["records"] == 1 and summary["asks"]["rechecked"] is False
    assert summary["policy_error"].startswith(f"policy error in {paths.user_policy}")
    assert main(["audit", "stats"]) == 0
    assert "the asks were not decided again: policy error in" in capsys.readouterr().out


def test_policy_errors_as_check_records_them(tmp_path, paths):
    write(paths.user_policy, "rules: [\n")
    for line in ("git status", "make"):
        assert _gatekeep("check", "--no-prompt", "--", line, cwd=tmp_path).returncode == 2
    write(paths.user_policy, "")
    assert _gatekeep("check", "--no-prompt", "--", "rm -rf ~", cwd=tmp_path).returncode == 1

    stats = json.loads(_gatekeep("audit", "stats", "--json", cwd=tmp_path).stdout)
    assert stats["decisions"] == {"allow": 0, "ask": 0, "deny": 1}
    assert (stats["policy_errors"], stats["outcomes"]["deny"], stats["records"]) == (2, 3, 3)
    text = _gatekeep("audit", "stats", cwd=tmp_path).stdout.splitlines()
    assert "decision: 0 allow, 0 ask, 1 deny" in text
    assert "policy errors: 2 lines blocked because the policy did not load" in text


def _gatekeep(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gatekeep", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


ROLL_OUT = [
    "git status",
    "npm run build --watch",
    "npm run build",
    "npm run build -- --prod",
    "cargo build --release",
    "cargo build",
    "git status && docker run --rm alpine sh",
    "pip install requests",
    "make deploy",
    "$EDITOR notes.txt",
    "rm -rf ~",
]


def test_a_real_audit_mode_roll_out(tmp_path, paths):
    write(paths.user_policy, "mode: audit\n")
    for line in ROLL_OUT:
        result = _gatekeep("check", "--no-prompt", "--", line, cwd=tmp_path)
        # audit mode blocks nothing but what the built-in policy denies
        assert result.returncode == (1 if line == "rm -rf ~" else 0), (line, result.stderr)
    # a week later, two rules were added by hand
    write(paths.user_policy, "mode: audit\nrules:\n  allow: ['pip install *']\n  deny: ['make deploy']\n")

    result = _gatekeep("audit", "stats", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["records"] == len(ROLL_OUT) == stats["audit_mode"]
    assert stats["audit_blocked"] == 1  # rm -rf ~, which the built-in policy denies even in audit mode
    assert stats["decisions"] == {"allow": 1, "ask": 9, "deny": 1}
    assert stats["outcomes"] == {"allow": 10, "deny": 1}
    assert stats["answers"] == {} and stats["prompted"] == 0
    assert stats["top_names"] == [
        {"name": "npm run build", "asks": 3},
        {"name": "cargo build", "asks": 2},
        {"name": "$EDITOR", "asks": 1},
        {"name": "docker run", "asks": 1},
        {"name": "make", "asks": 1},  # a make target is a value
        {"name": "pip install", "asks": 1},
    ]
    assert stats["asks"] == {
        "total": 9,
        "rechecked": True,
        "now_allowed": 1,
        "now_denied": 1,
        "still_ask": 7,
        "no_rule": 1,
    }
    assert stats["rules"] == [
        {"rule": "npm run build *", "removes": 3},
        {"rule": "cargo build *", "removes": 2},
        {"rule": "docker run *", "removes": 1},
    ]
    assert stats["removed"] == 6
