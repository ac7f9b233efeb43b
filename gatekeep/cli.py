"""The command line, with click: wires arguments to the command functions, nothing more.

Each command imports its module only when it runs. `gatekeep check` with its
usual arguments does not come here at all (see main.py).
"""

from __future__ import annotations

import click

from gatekeep import __version__
from gatekeep.agents.hosts import HOSTS  # the agents' names, for --agent and agent-hook

CONTEXT = {"help_option_names": ["-h", "--help"]}
policy_option = click.option(
    "--policy",
    "policy_file",
    type=click.Path(dir_okay=False),
    help="Use this file as the user policy (default: `gatekeep paths` shows it).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


class _Gatekeep(click.Group):
    """click ends a command whose output pipe was closed with exit 1 (it catches EPIPE itself): carry
    the error past it to main.py, which ends quietly, or blocks for check (main.output_closed)."""

    def make_context(self, *args, **kwargs):  # --help and --version print here
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError as e:
            from gatekeep.core.errors import OutputClosed

            raise OutputClosed() from e

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as e:
            from gatekeep.core.errors import OutputClosed

            raise OutputClosed() from e


class _Check(click.Command):
    """`gatekeep check ls -la`: click reads `-la` as gatekeep's own option and finds none; the
    error then says how to pass the line (after `--`), which is what was meant."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as e:
            e.message = e.message.rstrip(".") + ". To check a line, put it after `--`: gatekeep check -- 'ls -la'"
            raise


@click.group(cls=_Gatekeep, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="gatekeep")
def cli() -> None:
    """A permission gate for the shell: vets every command line before any part of it runs."""


@cli.command(cls=_Check, context_settings=CONTEXT)
@policy_option
@click.option("--no-prompt", is_flag=True, help="Never prompt: a line that needs approval is blocked.")
@json_option
@click.option("--cwd", type=str, help="The directory the line runs in (default: the current one).")
@click.option("-q", "--quiet", is_flag=True, help="Say nothing when the line is allowed.")
@click.option("--shell", help="The shell the line comes from, for the audit log (the hooks set it).")
@click.option(
    "--names-on-request",
    is_flag=True,
    help="The caller can say what its shell runs by name: exit 3, deciding nothing, when a command word may be a typo.",
)
@click.option(
    "--shell-names",
    metavar="NAMES",
    help="The aliases, functions and hashed commands of the calling shell, blank-separated: a command word"
    " that is none of them, no builtin and not on PATH cannot run, and is not asked about.",
)
@click.option(
    "--can-contain",
    is_flag=True,
    help="The caller runs the line contained (gatekeep run --sandbox) on exit 4: a line that may run contained"
    " is, under sandbox.contain, or the question offers it.",
)
@click.argument("command_line", nargs=-1, required=True)
def check(policy_file, no_prompt, as_json, cwd, quiet, shell, names_on_request, shell_names, can_contain, command_line) -> int:
    """Vet COMMAND_LINE: exit 0 to run it, 1 to block it, 2 on an error (also blocks), 3 (only
    with --names-on-request) to be asked again with --shell-names, 4 (only with --can-contain) to
    run it contained instead.

    Pass the line after `--`: gatekeep check -- 'git status && make'. A line
    that needs approval is asked on the terminal (/dev/tty) when standard input
    is a terminal; otherwise, or with --no-prompt, it is blocked.
    """
    from gatekeep.commands.check import check as run

    line = " ".join(command_line)
    return run(
        line,
        policy_file=policy_file,
        prompt=not no_prompt,
        as_json=as_json,
        cwd=cwd,
        quiet=quiet,
        shell=shell,
        names_on_request=names_on_request,
        shell_names=shell_names,
        can_contain=can_contain,
    )


@cli.group(context_settings=CONTEXT)
def rules() -> None:
    """Add, import, list, remove and test policy rules."""


@rules.command(name="add", context_settings=CONTEXT)
@click.argument("patterns", nargs=-1, required=True, metavar="PATTERN...")
@click.option("--allow", "verdict", flag_value="allow", default=True, help="Allow matching commands (default).")
@click.option("--ask", "verdict", flag_value="ask", help="Ask before running matching commands.")
@click.option("--deny", "verdict", flag_value="deny", help="Never run matching commands.")
@click.option(
    "--except",
    "excepts",
    multiple=True,
    metavar="PATTERN",
    help="With --ask or --deny: a command this rule leaves to the others (repeatable).",
)
@policy_option
def rules_add(patterns, verdict, excepts, policy_file) -> int:
    """Add each PATTERN to the user policy, e.g. 'npm run build *' 'make test *'.

    gatekeep rules add --deny 'rm -rf *' --except 'rm -rf /tmp/*'
    """
    from gatekeep.commands.rules import rules_add as run

    return run(patterns, verdict, policy_file, tuple(excepts))


@rules.command(name="edit", context_settings=CONTEXT)
@policy_option
def rules_edit(policy_file) -> int:
    """Edit the user policy in $VISUAL or $EDITOR; it is saved only when it loads (as visudo does).

    Typed at a gated prompt, it also works while the policy is broken.
    """
    from gatekeep.commands.rules import rules_edit as run

    return run(policy_file)


@rules.command(name="list", context_settings=CONTEXT)
@policy_option
@json_option
@click.option(
    "--layer",
    "layers",
    multiple=True,
    type=click.Choice(["built-in", "system", "managed", "user", "project"]),
    help="Only the rules of this layer (repeatable).",
)
@click.option("--no-builtin", is_flag=True, help="Leave out the built-in rules.")
def rules_list(policy_file, as_json, layers, no_builtin) -> int:
    """List every rule of every layer, with the file it comes from.

    gatekeep rules list --no-builtin shows only your own and your projects' rules.
    """
    from gatekeep.commands.rules import rules_list as run

    return run(policy_file, as_json, layers=tuple(layers), no_builtin=no_builtin)


@rules.command(name="remove", context_settings=CONTEXT)
@click.argument("pattern")
@policy_option
def rules_remove(pattern, policy_file) -> int:
    """Remove PATTERN from the user policy (exit 1 if it is not there)."""
    from gatekeep.commands.rules import rules_remove as run

    return run(pattern, policy_file)


@rules.command(name="test", context_settings=CONTEXT)
@policy_option
@json_option
@click.argument("command_line", nargs=-1, required=True)
def rules_test(policy_file, as_json, command_line) -> int:
    """Explain the verdict for COMMAND_LINE (after `--`), command by command. Records nothing."""
    from gatekeep.commands.rules import rules_test as run

    return run(" ".join(command_line), policy_file, as_json)


@rules.command(name="import", context_settings=CONTEXT)
@click.argument("settings_file", type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Show what would be added; write nothing.")
@policy_option
@json_option
def rules_import(settings_file, dry_run, policy_file, as_json) -> int:
    """Add the Bash permission rules of a Claude Code settings file to the policy.

    SETTINGS_FILE is e.g. ~/.claude/settings.json. Bash(npm run test:*) becomes
    'npm run test *', Bash(git status) 'git status'; other tools are skipped.
    A pattern already under another verdict stays there.
    """
    from gatekeep.commands.rules_import import rules_import as run

    return run(settings_file, dry_run, policy_file, as_json)


@cli.command(name="normalize", context_settings=CONTEXT)
@json_option
@click.argument("command_line", nargs=-1, required=True)
def normalize_command(as_json, command_line) -> int:
    """Print the normalized name of each simple command in COMMAND_LINE (after `--`)."""
    from gatekeep.commands.normalize_cmd import normalize_line

    return normalize_line(" ".join(command_line), as_json)


@cli.command(context_settings=CONTEXT)
@click.argument("source", required=False, metavar="[FILE | -]")
@policy_option
@json_option
@click.option("--null", is_flag=True, help="Input commands are separated by NUL, not newlines.")
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Suggest at most N rules, each worth at least 2 of the asked lines.",
    metavar="N",
)
def scan(source, policy_file, as_json, null, top) -> int:
    """Decide every line of a history file (bash, zsh extended or plain; `-` reads stdin).

    With no FILE: standard input if it is a pipe or a file, else your history
    file ($HISTFILE, or by $SHELL ~/.zsh_history or ~/.bash_history); stderr
    says which. Prints how many lines would be allowed, asked or denied, the
    denied lines with their counts, and the rules that would remove the most
    prompts; with --json, one object per line like `check --json`. Never
    prompts, writes no audit record.
    """
    from gatekeep.commands.scan import scan as run

    return run(source, policy_file, as_json, null, top)


@cli.command(context_settings=CONTEXT)
@click.argument("shell", type=click.Choice(["bash", "zsh"]))
def hook(shell) -> int:
    """Print the shell hook: add `eval "$(gatekeep hook bash)"` at the end of ~/.bashrc (zsh: ~/.zshrc)."""
    from gatekeep.commands.hook import print_hook

    return print_hook(shell)


AGENTS = tuple(HOSTS)  # the coding agents gatekeep speaks to


@cli.command(context_settings=CONTEXT)
@click.option("--shell", "shell", type=click.Choice(["bash", "zsh"]), help="Add the hook to this shell's rc file.")
@click.option("--agent", "agent", type=click.Choice(AGENTS), help="Register the hook with this coding agent.")
@click.option("--remove", is_flag=True, help="Take gatekeep out again.")
@click.option(
    "--managed",
    is_flag=True,
    help="With --agent claude, gemini or codex: in the machine's managed settings (as root), which no project can turn off.",
)
@click.option(
    "--path",
    "on_path",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="With --shell: also put DIR on PATH, in the same rc block (e.g. where make user-install links gatekeep).",
)
@click.option(
    "--export",
    "export",
    metavar="URL",
    is_flag=False,
    flag_value="",
    help="A systemd user service that sends the audit log to this OTLP collector (--managed: every user's).",
)
@json_option
def install(shell, agent, remove, managed, on_path, export, as_json) -> int:
    """Add the hook to ~/.bashrc or ~/.zshrc (--shell), or to a coding agent's settings (--agent),
    or the audit log's export to a collector as a service (--export).

    Running it again changes nothing; the rc block goes last in the file, and an
    agent's other settings are kept. It says which file it changed.
    """
    if sum(x is not None for x in (shell, agent, export)) != 1:
        raise click.UsageError("give one of --shell, --agent or --export")
    if export is not None:
        if on_path is not None:
            raise click.UsageError("--path goes with --shell")
        from gatekeep.commands.install import install_export

        return install_export(export, remove, managed, as_json)
    if on_path is not None and (shell is None or remove):
        raise click.UsageError("--path goes with --shell, and not with --remove (which takes the whole block out)")
    if managed and agent is None:
        raise click.UsageError("--managed goes with --agent or --export")
    if on_path is not None and ("\n" in on_path or "\r" in on_path):
        raise click.UsageError("--path: a directory whose name holds a line break cannot go on PATH")
    if agent is not None:
        from gatekeep.commands.install import install_agent

        return install_agent(agent, remove, as_json, managed)
    from gatekeep.commands.install import install as run

    return run(shell, remove, as_json, on_path)


@cli.command(context_settings=CONTEXT)
@click.option("--purge", is_flag=True, help="Also remove the user policy and the state (audit log, caches, trust).")
@json_option
def uninstall(purge, as_json) -> int:
    """Take gatekeep out of both shells' rc files and every coding agent, and stop its warm checker.

    Your policy and records stay unless --purge is given. Files install made that
    hold nothing else are removed; your own lines and settings stay.
    """
    from gatekeep.commands.uninstall import uninstall as run

    return run(purge, as_json)


@cli.command(name="agent-hook", context_settings=CONTEXT)
@click.argument("agent", type=click.Choice(AGENTS))
@policy_option
def agent_hook(agent, policy_file) -> int:
    """Vet a coding agent's shell commands: the hook AGENT runs before each tool call.

    Reads the host's event on stdin and answers allow, ask (where the host can
    ask its user; elsewhere deny) or deny, in that host's protocol. Any problem
    blocks in that host's terms. `gatekeep install --agent AGENT` registers it.
    """
    from gatekeep.commands.agent_hook import agent_hook as run

    return run(agent, policy_file)


@cli.command(name="claude-hook", context_settings=CONTEXT)
@policy_option
def claude_hook(policy_file) -> int:
    """The same as `agent-hook claude` (Claude Code's PreToolUse hook), kept for settings that name it."""
    from gatekeep.commands.agent_hook import agent_hook as run

    return run("claude", policy_file)


@cli.group(context_settings=CONTEXT)
def audit() -> None:
    """Read the audit log of decisions."""


@audit.command(name="tail", context_settings=CONTEXT)
@click.option("-n", "count", type=click.IntRange(min=0), default=10, show_default=True, help="How many records.")
@click.option("-f", "--follow", is_flag=True, help="Keep printing new records as they arrive.")
@json_option
@click.option("--outcome", type=click.Choice(["allow", "ask", "deny"]), help="Only records with this outcome.")
def audit_tail(count, follow, as_json, outcome) -> int:
    """Show the latest decisions (one JSON object per line with --json)."""
    from gatekeep.commands.audit_tail import audit_tail as run

    return run(count, follow, as_json, outcome)


@audit.command(name="stats", context_settings=CONTEXT)
@click.option("--since", metavar="DURATION|DATE", help="Only records since 30m, 24h, 7d, 2w ago, or a UTC date/time.")
@json_option
def audit_stats(since, as_json) -> int:
    """Summarize decisions and the rules that would remove the most asks.

    The asked lines are decided again under the current policy: lines it now
    allows or denies are counted as such; for the rest, the few rules that
    would turn the most asks into allows, and how many each removes. Made for
    a roll-out with `mode: audit`.
    """
    from gatekeep.commands.audit_stats import audit_stats as run

    return run(since, as_json)


@audit.command(name="export", context_settings=CONTEXT)
@click.option("--otlp", "url", required=True, metavar="URL", help="The collector's OTLP/HTTP logs endpoint, e.g. http://127.0.0.1:4318/v1/logs.")
@click.option("-f", "--follow", is_flag=True, help="Keep sending new records as they are written (a service).")
@click.option(
    "--commands",
    type=click.Choice(["redacted", "whole", "none"]),
    default="redacted",
    show_default=True,
    help="Send command lines with credentials masked, whole, or not at all.",
)
@click.option("--checkpoint", metavar="FILE", help="Where the export remembers what was sent (default: one per URL in the state directory).")
@click.option("--timeout", type=click.FloatRange(min=1, max=300), default=10.0, show_default=True, help="Seconds a request may take.")
def audit_export(url, follow, commands, checkpoint, timeout) -> int:
    """Send the audit log to an OpenTelemetry collector as OTLP log records.

    Every record once, in order, from where the last export stopped: a restart, a rotation of
    the log or a collector that is down loses nothing. Needs the extra gatekeep[otlp].
    """
    from gatekeep.commands.audit_export import audit_export as run

    return run(url, follow, commands, checkpoint, timeout)


@cli.command(context_settings={**CONTEXT, "ignore_unknown_options": True})
@click.option("--sandbox", is_flag=True, help="Run it contained (required): only the working tree is writable.")
@policy_option
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(sandbox, policy_file, command) -> int:
    """Run COMMAND under bubblewrap: it can change only the working tree, cannot read secrets or
    gatekeep's files, and reaches no network unless the policy's `sandbox.network` is on.

    It does not judge COMMAND (the gate judged the line that runs it). Exit status: the
    command's; 125 when the sandbox cannot be set up, and then nothing ran.
    """
    from gatekeep.commands.run import run as run_contained

    return run_contained(list(command), sandbox, policy_file)


@cli.command(context_settings=CONTEXT)
@json_option
def paths(as_json) -> int:
    """Show where the policy files, audit log and locks live (GATEKEEP_HOME moves them)."""
    from gatekeep.commands.paths_cmd import paths_show

    return paths_show(as_json)


@cli.command(context_settings=CONTEXT)
@json_option
def doctor(as_json) -> int:
    """Check that the gate works in this shell, and say how to fix what does not (exit 1 on any problem).

    Checks the hook is loaded here, the shell's version, the history settings
    the bash gate relies on, the policy, the audit log, and the interpreter the
    hook calls. Run it directly at the prompt of the shell you want checked.
    """
    from gatekeep.commands.doctor import doctor as run

    return run(as_json)


@cli.command(context_settings=CONTEXT)
@click.argument("directory", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--revoke", is_flag=True, help="Stop trusting it: its allow rules no longer apply.")
@json_option
def trust(directory, revoke, as_json) -> int:
    """Trust the project policy (.gatekeep.yaml) of DIRECTORY (default: here, or the nearest above).

    Its deny and ask rules always apply; its allow rules apply only once trusted.
    Trust is for the file's exact content: editing it revokes the trust.
    """
    from gatekeep.commands.trust import trust as run

    return run(directory, revoke, as_json)


@cli.command(context_settings=CONTEXT)
@json_option
def pending(as_json) -> int:
    """List the approval requests waiting for an answer from another terminal (approve: remote | both)."""
    from gatekeep.commands.approve import pending as run

    return run(as_json)


@cli.command(context_settings=CONTEXT)
@click.argument("request_id")
@click.option("--always", is_flag=True, help="Also add the suggested allow rules to the user policy.")
@json_option
def approve(request_id, always, as_json) -> int:
    """Let the line of the waiting request REQUEST_ID run (a unique start of its id is enough)."""
    from gatekeep.commands.approve import answer

    return answer(request_id, "always" if always else "once", as_json)


@cli.command(context_settings=CONTEXT)
@click.argument("request_id")
@click.option("--never", is_flag=True, help="Also add the suggested patterns as deny rules.")
@json_option
def deny(request_id, never, as_json) -> int:
    """Refuse the line of the waiting request REQUEST_ID (a unique start of its id is enough)."""
    from gatekeep.commands.approve import answer

    return answer(request_id, "never" if never else "deny", as_json)


@cli.command(context_settings=CONTEXT)
def watch() -> int:
    """Show approval requests as they arrive and answer them with a key: o once, a always, d deny, n never."""
    from gatekeep.commands.approve import watch as run

    return run()


@cli.command(context_settings=CONTEXT)
def console() -> int:
    """The approver console: watch, on a terminal of its own (approve: remote).

    Make it a terminal's own program (a terminal profile whose command is
    `gatekeep console`, or `xterm -e gatekeep console`): nothing that types into
    the asking terminal can type into it. It refuses to run on the terminal of a
    gated shell it was typed into. Inside tmux or screen, any program of yours
    can send keys to it (`tmux send-keys`), and it says so.
    """
    from gatekeep.commands.approve import console as run

    return run()
