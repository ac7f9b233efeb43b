"""Replay: a project's agent lines in order, with a user who answers "always" to every question.

Reads a JSONL file of agent command lines with a `command` and a `source` (the trajectory it was
first seen in, as tests/bench/bench_agent_lines.py reads them), groups the lines by project (the
repository a trajectory worked on: `astropy__astropy-12907` is astropy), keeps each project's lines
in file order, and replays them under the built-in policy and `posture: P`, in a fresh git
repository. At each question the simulated user answers "always" with the first suggestion (the
rule is added to the user policy, as the prompt adds it), or, when there is none, "once". The
corpus is unlabelled and treated as benign; the destructive lines are those of bench_postures.py,
decided at the end under each project's learned rules, but for the attempts that lose nothing,
read no secret, write only inside the tree and feed no shell (test_corpus.GUARD_ALLOWS: `sort -o
out.txt in.txt`), which a learned `sort *` may allow as any rule may.

  questions   per 100 lines after a project's first 100 lines        goal <= 2
  learned     rules learned, and how many of them are exact lines (no `*`)
  destructive destructive lines the learned rules let through         goal 0

With --contain, the policy also says `sandbox: {contain: true}`: a line gatekeep would run
contained (judge/gate.py) is not a question, as with an agent host that takes the contained
command (Claude Code); a destructive line it would contain is counted apart from one it allows
(goal: none allowed; a contained one runs in the sandbox).

Projects are split into a tuning part (3 in 4) and a held-out part (1 in 4) by a hash of their
name; only figures are printed for either.

With --misses N, the N commonest reasons the tuning projects still ask after their warm-up (never
the held-out ones').

  python tests/bench/bench_replay.py LINES.jsonl [--posture P] [--limit N] [--contain] [--misses N]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WARM_UP = 100  # a project's first lines, where learning is expected
CONTAIN = "sandbox:\n  contain: true\n"


def projects(path: str, limit: int | None) -> dict[str, list[str]]:
    found: dict[str, list[str]] = collections.defaultdict(list)
    with open(path, encoding="utf-8") as stream:
        for n, raw in enumerate(stream):
            if limit and n >= limit:
                break
            if raw.strip():
                entry = json.loads(raw)
                task = entry.get("source", "").rstrip("/").split("/")[-2:-1] or ["unknown"]
                found[task[0].split("__")[0]].append(entry["command"])
    return found


def replay(
    lines: list[str],
    posture: str,
    cwd: str,
    contain: bool = False,
    questions: list | None = None,
    extra: str = "",
    reviewed=None,
) -> tuple[int, int, list[str]]:
    """(questions after the warm-up, lines after it, the rules learned) for one project; with
    `contain`, a line gatekeep would run contained is no question. `questions`, if given, gets
    each question after the warm-up, as (line, verdict). `extra`: more policy text (a `review:`
    section); `reviewed(n, line, verdict, policy)`, if given, is asked first at each question and
    returns what a reviewer made of it ("allow", "deny" or None: the question stands)."""
    from gatekeep.judge.gate import evaluate, write_context
    from tests.conftest import policy_from

    rules: list[str] = []

    def policy_now():
        learned = f"posture: {posture}\nrules:\n  allow: {json.dumps(rules)}\n{CONTAIN if contain else ''}"
        return policy_from(learned + extra)

    policy = policy_now()
    context = write_context(cwd, policy)
    asked = counted = 0
    for n, line in enumerate(lines):
        verdict = evaluate(line, policy, cwd, context)
        counted += n >= WARM_UP
        if verdict.decision == "ask" and verdict.contain is not None:
            continue  # run contained: no question, nothing learned
        if verdict.decision == "ask" and reviewed is not None and reviewed(n, line, verdict, policy) is not None:
            continue  # the reviewer answered: no question, nothing learned
        if n >= WARM_UP:
            asked += verdict.decision == "ask"
            if questions is not None and verdict.decision == "ask":
                questions.append((line, verdict))
        if verdict.decision == "ask" and verdict.suggestions and verdict.suggestions[0] not in rules:
            rules.append(verdict.suggestions[0])
            policy = policy_now()
    return asked, counted, rules


def layered(system_text: str, user_text: str):
    """The built-in policy, `system_text` as the system layer and `user_text` as the user's."""
    from gatekeep.judge.policy import combine, parse_layer
    from tests.conftest import policy_from

    base = policy_from("")
    system = parse_layer("system", "/bench/system.yaml", system_text)
    return combine([base.layers[0], system, parse_layer("user", "/bench/user.yaml", user_text)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a JSONL file of agent command lines, with their `source`")
    parser.add_argument("--posture", choices=("strict", "workspace", "guard"), action="append")
    parser.add_argument("--limit", type=int, help="only the first N lines of the file")
    parser.add_argument("--contain", action="store_true", help="with `sandbox: {contain: true}`")
    parser.add_argument("--misses", type=int, default=0, help="the N commonest reasons the tuning projects ask")
    args = parser.parse_args()
    from tests.bench.bench_agent_lines import held_out, print_misses
    from gatekeep.judge.gate import evaluate
    from tests.bench.bench_postures import destructive_lines, in_a_fresh_repository
    from tests.security.test_corpus import GUARD_ALLOWS, _fill

    grouped = projects(args.path, args.limit)
    failed = False
    with in_a_fresh_repository("gatekeep-replay-") as cwd:
        long = {name: lines for name, lines in grouped.items() if len(lines) > WARM_UP}
        print(f"{args.path}: {len(grouped)} projects, {len(long)} with more than {WARM_UP} lines")
        for posture in args.posture or ("strict", "workspace", "guard"):
            parts = {"tuning": [0, 0, 0, 0], "held-out": [0, 0, 0, 0]}  # asked, counted, rules, exact
            through, contained = set(), set()
            tuning_questions: list = []
            for name, lines in sorted(long.items()):
                mine = None if held_out(name) else tuning_questions  # held-out projects give figures only
                asked, counted, rules = replay(lines, posture, cwd, args.contain, mine)
                part = parts["held-out" if held_out(name) else "tuning"]
                part[0] += asked
                part[1] += counted
                part[2] += len(rules)
                part[3] += sum("*" not in r for r in rules)
                learned = f"rules:\n  allow: {json.dumps(rules)}\nposture: {posture}\n{CONTAIN if args.contain else ''}"
                for policy_text, setup, line in destructive_lines():
                    if setup or line in GUARD_ALLOWS:
                        continue  # (not destructive: a write inside the tree, a request; a rule may allow them)
                    # the attack's own policy (as the system layer) under the user's learned one
                    verdict = evaluate(_fill(line), layered(policy_text, learned), cwd)
                    if verdict.decision == "allow":
                        through.add(line)
                    elif verdict.decision == "ask" and verdict.contain is not None:
                        contained.add(line)
            for label, (asked, counted, rules, exact) in parts.items():
                rate = 100 * asked / counted if counted else 0.0
                print(
                    f"  {posture:<9} {label:<8} {rate:5.1f} questions per 100 lines after the first {WARM_UP}"
                    f" ({asked:,} of {counted:,}; goal <= 2); {rules:,} rules learned, {exact:,} of them exact lines"
                )
            print(f"  {posture:<9} destructive lines the learned rules let through: {len(through)} (goal 0)")
            if args.contain:
                print(f"  {posture:<9} destructive lines run contained instead of asked: {len(contained)}")
            for line in sorted(through):
                print(f"  {'':<11}{line[:150]!r}")
            failed = failed or bool(through)
            if args.misses:
                print_misses(tuning_questions, args.misses, indent="    ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
