"""Per posture: how often real agent lines ask, and how many destructive lines get through.

For each posture (strict, workspace, guard), with the built-in policy and `posture: P` as the
only user setting, in a fresh git repository (bench_look_only.make_workspace):

  asked        the share of a JSONL file of real agent command lines (a `command` key per
               object: pass its path) that asks, for its tuning part (3 in 4) and its held-out
               part (1 in 4, split by a hash of the text as bench_agent_lines.py does)
               goal: workspace <= 10 %, guard <= 2 %
  destructive  how many of the destructive lines are allowed: the bypass attempts of
               tests/security/test_corpus.py under a policy that asks by default, and the lines
               of tests/security/test_effects_attacks.py decided with no configuration (lose work,
               read a secret, write a protected file, feed a shell); those guard lets through by
               its definition (GUARD_ALLOWS there) are not counted for guard      goal: 0

Under guard it also says how many of the lines workspace asks guard lets through: running the
project's code and the network, which workspace asks about by definition.

With --contain, the policy also says `sandbox: {contain: true}` (issue 39): a line gatekeep would
run contained instead of asking (judge/gate.py) is counted apart, as `contained`, not as asked
(an agent host that takes the contained command, or a terminal hook, runs it in the sandbox
without a question); a destructive line it would contain is said apart from one it allows.

Only the tuning part's asked lines can be listed (`--misses N`: the N commonest reasons, per
posture); the held-out part only ever gives its figure.

  python tests/bench/bench_postures.py LINES.jsonl [--limit N] [--misses N] [--posture P] [--contain]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POSTURES = ("strict", "workspace", "guard")
GOALS = {"workspace": 10.0, "guard": 2.0}


def destructive_lines() -> list[tuple[str, str, str]]:
    """(policy text, set-up, line) for each destructive line: the set-up is run in a fresh
    repository first (a shell line: `mkdir -p config && cp .env config/.env`); @HOME@-style
    placeholders are filled later."""
    from tests.security import test_corpus, test_effects_attacks

    found = [
        (test_corpus.POLICIES[a.policy], "", a.line)
        for a in test_corpus.ATTEMPTS
        if a.policy in ("STRICT", "DEFAULT") and not a.gap and a.cwd == test_corpus.CWD
    ]
    none = test_effects_attacks.NONE
    for table in (test_effects_attacks.READS, test_effects_attacks.WRITES, test_effects_attacks.LOSSES):
        found += [(none, entry[2], entry[3]) for entry in table if entry[1] == none]
    return found


@contextlib.contextmanager
def in_a_fresh_repository(prefix: str):
    """gatekeep isolated (bench_look_only.isolated), and the process in a fresh git repository
    holding a .env, whose path it yields; the directory the process was in again after."""
    from tests.bench.bench_look_only import isolated

    with isolated(), tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        cwd = set_up(Path(tmp) / "repo", "")
        before = os.getcwd()
        os.chdir(cwd)
        try:
            yield cwd
        finally:
            os.chdir(before)


def set_up(directory: Path, setup: str) -> str:
    """A fresh repository in `directory` holding a .env, with `setup` run in it (as far as it goes:
    some set-ups expect files of their own test); its real path."""
    import subprocess

    from tests.bench.bench_look_only import make_workspace

    cwd = make_workspace(directory).resolve()
    (cwd / ".env").write_text("TOKEN=1\n")
    if setup:
        who = {f"GIT_{k}_{v}": "bench" if v == "NAME" else "bench@example.com" for k in ("AUTHOR", "COMMITTER") for v in ("NAME", "EMAIL")}
        subprocess.run(
            ["bash", "-c", setup], cwd=cwd, check=False, capture_output=True, stdin=subprocess.DEVNULL, env={**os.environ, **who}
        )
    return str(cwd)


def decide_all(lines: list[str], policy_text: str, cwd: str) -> list[tuple[str, object]]:
    from gatekeep.judge.gate import evaluate, write_context
    from tests.conftest import policy_from

    policy = policy_from(policy_text)
    context = write_context(cwd, policy)
    return [(line, evaluate(line, policy, cwd, context)) for line in lines]


def asks(verdict) -> bool:
    """Whether the verdict puts a question: not allowed, and not run contained instead."""
    return verdict.decision != "allow" and not (verdict.decision == "ask" and verdict.contain)


def share(results, counted=asks) -> str:
    n = sum(1 for _, v in results if counted(v))
    total = len(results) or 1
    return f"{n:>5} of {len(results):>5} = {100 * n / total:5.1f}%"


def contained(verdict) -> bool:
    return verdict.decision == "ask" and bool(verdict.contain)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a JSONL file of agent command lines")
    parser.add_argument("--limit", type=int, help="only the first N lines")
    parser.add_argument("--misses", type=int, default=0, help="the N commonest reasons the tuning part asks")
    parser.add_argument("--posture", choices=POSTURES, action="append", help="only these postures")
    parser.add_argument("--contain", action="store_true", help="with `sandbox: {contain: true}`")
    args = parser.parse_args()
    sandbox = "sandbox:\n  contain: true\n" if args.contain else ""
    from tests.bench.bench_agent_lines import held_out, print_misses, read_lines
    from tests.security.test_corpus import GUARD_ALLOWS, _fill

    lines = read_lines(args.path, args.limit)
    failed = False
    asked: dict[str, set[str]] = {}
    with in_a_fresh_repository("gatekeep-posture-") as cwd:
        print(f"{args.path}: {len(lines)} lines; the built-in policy and `posture: P`, in a fresh git repository")
        for posture in args.posture or POSTURES:
            results = decide_all(lines, f"posture: {posture}\n" + sandbox, cwd)
            tuning = [(line, v) for line, v in results if not held_out(line)]
            held = [(line, v) for line, v in results if held_out(line)]
            bad, boxed = [], 0
            for n, (policy_text, setup, line) in enumerate(destructive_lines()):
                if posture == "guard" and line in GUARD_ALLOWS:
                    continue
                where = set_up(Path(cwd).parent / f"{posture}-{n}", setup) if setup else cwd
                os.chdir(where)
                verdict = decide_all([_fill(line)], policy_text + f"posture: {posture}\n" + sandbox, where)[0][1]
                os.chdir(cwd)
                if verdict.decision == "allow":
                    bad.append(line)
                boxed += contained(verdict)
            goal = GOALS.get(posture)
            print(f"  {posture:<9} asked: tuning {share(tuning)}   held-out {share(held)}"
                  + (f"   (goal <= {goal:g}%)" if goal else ""))
            if args.contain:
                print(f"  {'':<9} contained: tuning {share(tuning, contained)}   held-out {share(held, contained)}")
            print(f"  {'':<9} destructive lines allowed: {len(bad)} (goal 0)" + (f"; contained: {boxed}" if args.contain else ""))
            for line in bad:
                print(f"  {'':<11}{line[:150]!r}")
            failed = failed or bool(bad)
            asked[posture] = {line for line, v in results if asks(v)}
            if posture == "guard" and "workspace" in asked:
                # what workspace asks and guard lets run: the project's code and the network, which
                # workspace asks by definition (containment, issue 39, is the way to quiet them)
                only = asked["workspace"] - asked["guard"]
                parts = [[line for line in lines if held_out(line) is h] for h in (False, True)]
                counts = [(sum(1 for line in part if line in only), len(part) or 1) for part in parts]
                print(f"  {'':<9} of workspace's asks, guard allows (running code, the network): "
                      + "   ".join(f"{name} {n:>5} = {100 * n / total:5.1f}%" for name, (n, total) in zip(("tuning", "held-out"), counts)))
            if args.misses:
                print_misses([(line, v) for line, v in tuning if asks(v)], args.misses, indent="    ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
