"""What containment costs: `gatekeep run --sandbox -- true` against `true` (issue 39).

In a user's configuration (userenv.py), in a fresh git repository of 200 files (the tree is
walked for secrets on each run), under the built-in policy. Ratios are to `python -c pass` in
the same run, min / median / max; the difference of the medians is the sandbox's overhead.
No goal: the figure is stated in docs/speed.md. Without bubblewrap it says so and ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from userenv import RUNS, gatekeep_executable, heading, paired, user_environment


def main() -> int:
    if shutil.which("bwrap") is None:
        print("bench_sandbox: bubblewrap is not installed; nothing measured")
        return 0
    print(f"the sandbox, as users run it: {sys.executable}; {RUNS} samples a figure; ratios to `python -c pass`")
    with tempfile.TemporaryDirectory() as tmp:
        env = user_environment(Path(tmp) / "home")
        tree = Path(tmp) / "home" / "src" / "app"
        for i in range(200):
            (tree / f"pkg{i % 10}").mkdir(parents=True, exist_ok=True)
            (tree / f"pkg{i % 10}" / f"m{i}.py").write_text("x = 1\n")
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
        os.chdir(tree)
        heading("a command, and the same command contained")
        plain = paired(env, [shutil.which("true")])
        print(f"  {'true':<56} {plain.shown()}")
        contained = paired(env, [gatekeep_executable(), "run", "--sandbox", "--", "true"])
        print(f"  {'gatekeep run --sandbox -- true':<56} {contained.shown()}")
        extra = contained.median - plain.median
        ms = (sorted(contained.samples)[len(contained.samples) // 2] - sorted(plain.samples)[len(plain.samples) // 2]) * 1000
        print(f"  {'overhead (difference of the medians)':<56} {extra:5.2f}×  ({ms:6.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
