"""The entry point: `gatekeep ARGS` -> an exit code, and every error as one line.

Exit codes: 0 allowed/ok, 1 blocked/not found, 2 usage, policy or internal error.

The shell hooks run `gatekeep check [options] -- LINE` before every line a
person types, and coding agents run `gatekeep agent-hook NAME` before every
shell tool call; importing click costs more than the rest of either (issues 6,
18 and 20). So those two calls, when their arguments are the plain, valid kind the
hooks send, are read here without click; anything else (help, an unknown or
malformed option, no `--`) goes to click (cli.py), which stays the one
definition of the command line and of its messages. tests/test_cli.py checks
that both readings agree.
"""

from __future__ import annotations

import os
import sys

from gatekeep.core.errors import EXIT_ALLOW, EXIT_BLOCKED, EXIT_ERROR, FatalError, OutputClosed

_FLAGS = {"--no-prompt": "no_prompt", "--json": "as_json", "-q": "quiet", "--quiet": "quiet"}
_FLAGS["--names-on-request"] = "names_on_request"
_FLAGS["--can-contain"] = "can_contain"
_VALUES = {"--policy": "policy_file", "--cwd": "cwd", "--shell": "shell", "--shell-names": "shell_names"}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    code = run(args, own_process=argv is None)
    return EXIT_ERROR if code is None else code  # None comes only with plain_only


def run(args: list[str], *, own_process: bool, questions: bool = True, plain_only: bool = False) -> int | None:
    """`gatekeep ARGS` -> an exit code. `own_process`: this process is the command's alone (not a
    caller's or a test's), so it may drop the cycle collector and end itself at an agent hook's
    deadline. A warm checker's worker (gatekeep/server/) runs here with `questions` False, where a
    question raises HandBack, and `plain_only`, where arguments that need click give None."""
    try:
        check = read_check_args(args)
        hook = None if check is not None else read_agent_hook_args(args)
        if check is None and hook is None and plain_only:
            return None
        if own_process and (check is not None or hook is not None):
            _no_collector()
        contained = read_run_args(args) if check is None and hook is None and not plain_only else None
        if contained is not None:
            from gatekeep.commands.run import run as run_contained

            return run_contained(**contained)
        if check is not None:
            from gatekeep.commands.check import check as run_check

            code = run_check(**check, questions=questions)
        elif hook is not None:
            from gatekeep.commands.agent_hook import DEADLINE_SECONDS, agent_hook

            code = agent_hook(**hook, deadline=DEADLINE_SECONDS if own_process else None)
        else:
            code = _with_click(args)
    except (BrokenPipeError, OutputClosed):
        return output_closed(args)
    except FatalError as e:
        _say(f"gatekeep: {e}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _say("gatekeep: interrupted")
        return interrupted(args)
    except Exception as e:  # a bug: block, say so in one line, keep the traceback
        return _internal_error(e)
    try:
        sys.stdout.flush()  # here, where a closed pipe is handled, rather than at exit
    except BrokenPipeError:
        return output_closed(args, code)
    return code


def _no_collector() -> None:
    """A check is a short process whose imports and caches allocate a great many objects and
    free few: Python's cycle collector, run every 700 allocations, finds nothing to free and
    cost a check 7% of its time (a plain line 1.6 ms, a parser line 3.5 ms; issue 18). Memory
    is given back when the process ends. Long-running commands keep the collector."""
    import gc

    gc.disable()


def read_check_args(args: list[str]) -> dict | None:
    """The arguments of `check [options] -- WORDS...` as check() takes them, or None to let click read them."""
    if args[:1] != ["check"] or "--" not in args:
        return None
    split = args.index("--")
    options, words = args[1:split], args[split + 1 :]
    if not words:
        return None
    found: dict = {"no_prompt": False, "as_json": False, "quiet": False, "names_on_request": False, "can_contain": False}
    found.update(policy_file=None, cwd=None, shell=None, shell_names=None)
    i = 0
    while i < len(options):
        option = options[i]
        name, has_value, value = option.partition("=")
        if option in _FLAGS:
            found[_FLAGS[option]] = True
        elif name in _VALUES and has_value and value:
            found[_VALUES[name]] = value
        elif option in _VALUES and i + 1 < len(options):
            i += 1
            found[_VALUES[option]] = options[i]
        else:
            return None
        i += 1
    if found["policy_file"] is not None and os.path.isdir(found["policy_file"]):
        return None  # click explains that a directory is not a policy file
    return {
        "line": " ".join(words),
        "policy_file": found["policy_file"],
        "prompt": not found["no_prompt"],
        "as_json": found["as_json"],
        "cwd": found["cwd"],
        "quiet": found["quiet"],
        "shell": found["shell"],
        "names_on_request": found["names_on_request"],
        "shell_names": found["shell_names"],
        "can_contain": found["can_contain"],
    }


def read_run_args(args: list[str]) -> dict | None:
    """The arguments of `run --sandbox [--policy FILE] -- COMMAND...` as commands.run takes them, or
    None to let click read them (help, other spellings): a contained line starts ~18 ms sooner."""
    if args[:1] != ["run"] or "--" not in args:
        return None
    split = args.index("--")
    options, command = args[1:split], args[split + 1 :]
    policy = None
    if options[:1] == ["--sandbox"] and len(options) in (1, 3) and (len(options) == 1 or options[1] == "--policy"):
        policy = options[2] if len(options) == 3 else None
    else:
        return None
    if not command or (policy is not None and (not policy or os.path.isdir(policy))):
        return None
    return {"command": command, "sandbox": True, "policy_file": policy}


def read_agent_hook_args(args: list[str]) -> dict | None:
    """The arguments of `agent-hook NAME [--policy FILE]`, or of `claude-hook [--policy FILE]` (the same
    as `agent-hook claude`, kept for the settings written before), as agent_hook() takes them;
    None for click."""
    if args[:1] == ["claude-hook"]:
        agent, options = "claude", args[1:]
    elif args[:1] == ["agent-hook"] and len(args) > 1:
        from gatekeep.agents.hosts import HOSTS

        if args[1] not in HOSTS:
            return None
        agent, options = args[1], args[2:]
    else:
        return None
    if not options:
        return {"agent": agent, "policy_file": None}
    if len(options) == 2 and options[0] == "--policy":
        policy_file = options[1]
    elif len(options) == 1 and options[0].startswith("--policy=") and len(options[0]) > len("--policy="):
        policy_file = options[0].partition("=")[2]
    else:
        return None
    if policy_file.startswith("-") or os.path.isdir(policy_file):
        return None  # click explains that a directory is not a policy file
    return {"agent": agent, "policy_file": policy_file}


def _with_click(args: list[str]) -> int:
    import click

    from gatekeep.cli import cli

    try:
        result = cli.main(args=args, prog_name="gatekeep", standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        try:
            e.show()
        except OSError:  # nobody reads the message; the exit code still says it
            pass
        return EXIT_ERROR
    except click.exceptions.Abort:  # click's form of Ctrl-C
        return interrupted(args)
    return result if isinstance(result, int) else 0


# Commands whose exit code is a verdict: check (the shell hooks), agent-hook and claude-hook (agents).
_GATES = ("check", "agent-hook", "claude-hook")


def output_closed(args: list[str], code: int = EXIT_ALLOW) -> int:
    """Whoever read the output has gone (`gatekeep audit tail | head -1`), the usual end of a pipeline:
    end quietly with the command's own code. But a gate whose output is cut short blocks (exit 2),
    so that a closed pipe can never turn a block, or a half-written answer, into a yes.

    The command is args[0]: the group's only options (--help, --version) end before any command runs.
    """
    if args[:1] and args[0] in _GATES:
        _say("gatekeep: the output was closed before it was written whole; blocked")
        code = EXIT_ERROR
    _silence_output()
    return code


def _silence_output() -> None:
    """Python flushes stdout and stderr at exit; a closed pipe would fail that flush again and make
    the exit code 120. Point both at /dev/null, as the Python documentation on SIGPIPE advises."""
    fds = []
    for stream in (sys.stdout, sys.stderr):
        try:
            fds.append(stream.fileno())
        except (OSError, ValueError, AttributeError):  # not a real descriptor (a test captures it)
            pass
    devnull_over(fds)


def devnull_over(fds) -> None:
    """Point each descriptor in `fds` at /dev/null (a warm checker's worker lets go of its client's
    streams this way); one that cannot be is left as it is."""
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in fds:
        try:
            os.dup2(devnull, fd)
        except OSError:
            pass
    os.close(devnull)


def _say(message: str) -> None:
    """One line on stderr; if stderr is closed too, the exit code alone has to say it."""
    try:
        print(message, file=sys.stderr)
    except OSError:
        pass


def interrupted(args: list[str]) -> int:
    """Blocked (1); but agents read a hook's exit 1 as "go ahead", so there it is an error (2)."""
    return EXIT_ERROR if args[:1] in (["agent-hook"], ["claude-hook"]) else EXIT_BLOCKED


def _internal_error(error: Exception) -> int:
    from gatekeep.core.errorlog import internal_error_line

    _say(internal_error_line(error))
    return EXIT_ERROR
