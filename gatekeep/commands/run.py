"""`gatekeep run --sandbox -- COMMAND...`: run a command contained (gatekeep/contain/sandbox.py).

It does not judge the command: the gate judged the line that runs it (a shell hook, an agent
hook), and this only runs it where it can change nothing but the working tree. Its exit status
is the command's; EXIT_NOT_RUN when the sandbox cannot be set up, and then nothing ran.
"""

from __future__ import annotations

import sys

EXIT_NOT_RUN = 125  # as `env`, `docker run` and `chroot` say their own failure: the command never started


def run(command: list[str], sandbox: bool, policy_file: str | None, cwd: str | None = None) -> int:
    from gatekeep.contain.sandbox import ContainError, bwrap, disarm_new_repositories, prepare, run_contained
    from gatekeep.core.paths import current_directory, get_paths
    from gatekeep.judge.policy import load_policy

    if not sandbox:
        _say("gatekeep: run takes --sandbox (gatekeep run --sandbox -- COMMAND...): it only runs a command contained")
        return EXIT_NOT_RUN
    if not command:
        _say("gatekeep: run --sandbox needs a command: gatekeep run --sandbox -- COMMAND...")
        return EXIT_NOT_RUN
    try:
        if bwrap() is None:  # (a kernel that refuses it: bubblewrap says so, and nothing runs)
            raise ContainError("bubblewrap is not installed (`apt install bubblewrap`, or your system's package)")
        paths = get_paths()
        cwd = cwd or current_directory()
        policy = load_policy(paths, policy_file, cwd=cwd)
        args, hold = prepare(list(command), cwd, policy, paths)
    except Exception as e:  # a broken policy, an unreadable tree, a bug: nothing runs, never uncontained
        reason = str(e) if isinstance(e, ContainError) else f"{type(e).__name__}: {e}"
        _say(f"gatekeep: not run: the sandbox could not be set up: {reason}")
        return EXIT_NOT_RUN
    try:
        return run_contained(args)
    except ContainError as e:
        _say(f"gatekeep: not run: {e}")
        return EXIT_NOT_RUN
    finally:
        hold.release()
        for renamed in disarm_new_repositories(hold.repositories, hold.workspace):
            _say(f"gatekeep: the contained line made a repository; renamed it {renamed}, since git would run its config and hooks outside the sandbox")


def _say(text: str) -> None:
    print(text, file=sys.stderr)
    sys.stderr.flush()


