"""How fast `gatekeep check` and `gatekeep scan` are, as ratios to Python's own start-up,
in a user's configuration (userenv.py: a temporary HOME, no GATEKEEP_HOME).

Every figure is the median of RUNS runs (GATEKEEP_BENCH_RUNS overrides it), and
each is printed beside its floor. The floor, `python -c pass` with the same
interpreter, is measured in the same run, interleaved with the runs it is
compared to, because these machines are noisy: read the ratios, not the ms.

  check          `gatekeep check --no-prompt -- LINE` as a whole process, default
                 policy + a 200-rule user policy;             target ≤ 2.0× floor
                 both through the `gatekeep` script and as the shell hooks run
                 it (`python -I -S -c …`, see shells/hook.py), which is what a
                 user waits for on every line
  memory         its peak resident size;                      target ≤ 30 MB
  10,000 rules   the same with 10 and with 10,000 user rules;  target ≤ 1.2× the 10-rule figure
  scan           `gatekeep scan --json` on 30,000 lines;       target ≥ 5,000 lines/s
  worst line     adversarial lines, slowest single check;      target ≤ 1 s

Compiled files (.pyc) and gatekeep's caches are warmed first, as they are on a
machine that has run gatekeep once.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from userenv import ROOT, RUNS, check_argv, floor_time, gatekeep_executable, rules, run_timed, user_environment

SCAN_LINES = 30_000
TYPICAL = ["git status", "ls -la", "npm run build", "git log --oneline | head", "cd src && make test"]
ADVERSARIAL = [
    "echo x'${'",  # bashlex's endless loop
    "echo " + "$(" * 40 + "x" + ")" * 40,
    "true && " * 1_000 + "true",
    "echo " + "'a'\"b\"$'c'" * 900,  # just under 10,000 characters
    "x" * 10_001,
    "x" * 9_990 + "(){ x|x& }",  # a fork bomb's shape after one long word
    "x " * 4_999,
    "for i in 1; do " * 60 + "rm x" + "; done" * 60,
    "bash -c " + "'bash -c " * 10 + "rm" + "'" * 10,
    # issue 18: lines of 128 KiB less one byte (one argument holds 128 KiB with its NUL), the
    # shapes that cost the most, or once grew as the square of the line or worse
    "ls " + "x " * 65_528 + "&& rm -rf /",
    "git log " + "x " * 65_531,
    "git push " + "+x " * 43_687,
    "git " + "-c a=b " * 18_723 + "status",
    "echo " + "$a " * 43_688,
    "cat " + " ".join(f"a{i}" for i in range(20_000)),
    "read " + " ".join(f"a{i}" for i in range(20_000)),
    "export " + " ".join(f"a{i}=1" for i in range(15_700)),
    "xargs " + "sh -c x " * 16_383,
    "sudo env nice " * 9_362 + "ls",
    "sudo -Z " + "x " * 65_531,
    "|".join(f"a{i}" for i in range(20_000)),
    "x" + " | x" * 32_767,
    "; ".join(f"cd d{i}" for i in range(12_900)),
    "echo " + "((" * 65_533,
    "cat " + "> f " * 32_766,
    # just under 10,000 characters, read by bashlex: thousands of commands
    "a\n" * 4_994,
    "echo " + "`a` " * 2_496,
]


def environment(home: Path, rule_count: int) -> dict:
    """A user's configuration (userenv.py): HOME = `home`, `rule_count` rules in the default place."""
    return user_environment(home, rules(rule_count))


def paired(env: dict, argv: list[str]) -> tuple[float, float, int]:
    """Medians of the command and of the floor, run alternately; and the command's peak memory (KB)."""
    run_timed(argv, env)  # warm compiled files and caches
    times, floors, memory = [], [], 0
    for _ in range(RUNS):
        floors.append(floor_time(env))
        elapsed, rss, _ = run_timed(argv, env)
        times.append(elapsed)
        memory = max(memory, rss)
    return statistics.median(times), statistics.median(floors), memory


def scan_input(path: Path) -> None:
    corpus = [row.split("\t")[0] for row in (ROOT / "tests/data/corpus.tsv").read_text().splitlines()[1:] if row]
    lines = [corpus[i % len(corpus)] + (f" x{i}" if i >= len(corpus) else "") for i in range(SCAN_LINES)]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gatekeep")], check=True)
    floor = f"`{sys.executable} -c pass`"
    print(f"gatekeep check benchmark: {os.cpu_count()} cores, median of {RUNS} runs; floor = {floor}")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = environment(tmp / "r200", 200)
        worst_memory = 0
        for hook, title in ((False, "`gatekeep check`"), (True, "as the hook runs it")):
            print(f"\ncheck, default policy + 200 user rules, {title:<20}  ms   floor ms   ratio  target")
            for line in TYPICAL:
                t, f, memory = paired(env, check_argv(line, env if hook else None))
                worst_memory = max(worst_memory, memory)
                ok = t / f <= 2.0
                failures += not ok
                verdict = "ok" if ok else "MISSED"
                print(f"  {line:<60} {t * 1000:6.1f}  {f * 1000:8.1f}  {t / f:5.2f}×  ≤ 2.0× {verdict}")
        ok = worst_memory <= 30 * 1024
        failures += not ok
        print(f"  peak memory {worst_memory / 1024:.1f} MB (target ≤ 30 MB) {'ok' if ok else 'MISSED'}")

        print("\npolicy size, `git status`                       ms   floor ms   ratio  target")
        small = paired(environment(tmp / "r10", 10), check_argv("git status"))
        large = paired(environment(tmp / "r10000", 10_000), check_argv("git status"))
        print(f"  {'10 rules':<44} {small[0] * 1000:6.1f}  {small[1] * 1000:8.1f}  {small[0] / small[1]:5.2f}×")
        ratio = (large[0] / large[1]) / (small[0] / small[1])
        ok = ratio <= 1.2
        failures += not ok
        print(
            f"  {'10,000 rules':<44} {large[0] * 1000:6.1f}  {large[1] * 1000:8.1f}  {large[0] / large[1]:5.2f}×"
            f"  {ratio:.2f}× the 10-rule ratio, ≤ 1.2× {'ok' if ok else 'MISSED'}"
        )

        print(f"\nscan --json, {SCAN_LINES:,} lines               lines/s   floor ms  target")
        history = tmp / "history"
        scan_input(history)
        scan = [gatekeep_executable(), "scan", "--json", str(history)]
        t, f, _ = paired(env, scan)
        rate = SCAN_LINES / t
        ok = rate >= 5_000
        failures += not ok
        print(f"  {'':<36} {rate:9,.0f}  {f * 1000:8.1f}  ≥ 5,000 lines/s {'ok' if ok else 'MISSED'}")

        print("\nadversarial lines, one check each                  ms  target")
        worst = 0.0
        for line in ADVERSARIAL:
            elapsed = max(run_timed(check_argv(line), env)[0] for _ in range(3))
            worst = max(worst, elapsed)
            shown = line if len(line) <= 40 else f"{line[:30]}… ({len(line):,} chars)"
            print(f"  {shown!r:<48} {elapsed * 1000:6.0f}")
        ok = worst <= 1.0
        failures += not ok
        print(f"  slowest {worst * 1000:.0f} ms (target ≤ 1,000 ms) {'ok' if ok else 'MISSED'}")
    print(f"\n{'all targets met' if not failures else f'{failures} target(s) missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
