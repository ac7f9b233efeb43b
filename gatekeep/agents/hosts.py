"""What each coding agent sends its pre-command hook, and which answers it understands (issue 20).

Coding agents run shell commands through a tool of their own, not a terminal, so
the shell hooks never see them; each host instead runs a hook of ours before the
tool runs, with the call as JSON on stdin. This module is the edge that speaks
each host's protocol and nothing else: `read(event)` finds the shell command in
a host's event (or None for a tool that runs none), `answer(decision, reason)`
and `fail(message)` say allow, ask or deny in the form that host obeys. The
command module (commands/agent_hook.py) decides the command with the same gate
as a typed line.

What every host does with a hook's answer, and which failures it lets through,
comes from the hosts' code and documentation (tests/test_agents.py names the
source of each example event). The rules that follow from it:

- Answer "ask" only where the host asks its user (`asks`); elsewhere what would be
  asked is denied, with the rule that would allow it.
- Say deny in the channel the host cannot misread: Codex blocks on exit 2 with a
  reason on stderr (any JSON it finds malformed lets the call through); Copilot CLI
  gets JSON on stdout with exit 0 (1.0.102 blocks on a failing exit, but its
  documentation once said such a hook is skipped); Gemini CLI reads stdout as JSON
  whatever the exit code; Cursor gets both its JSON and exit 2.
- `fail` is what a problem of ours (a malformed event, a broken policy, a bug)
  answers, and it must block in that host's terms too: never Python's exit 1,
  which every host reads as "go ahead".
"""

from __future__ import annotations

import os

from gatekeep.core.display import visible
from gatekeep.core.errors import FatalError
from gatekeep.core.jsontext import dumps, loads
from gatekeep.core.paths import current_directory

EXIT_BLOCK = 2  # Claude Code, Codex, Gemini CLI and Cursor all read exit 2 as "block"


class BadEvent(FatalError):
    """The input is not an event this host sends before a tool runs."""


class Call:
    """One command an agent is about to run: the tool's name as the host gives it, the command,
    the absolute directory it runs in, the session it belongs to, and the shell that reads it:
    "sh" for the POSIX shells gatekeep understands, else the shell's name (PowerShell).

    `also`: other directories it may run in, where which one the host uses depends on its
    version (the command is decided in each, and the strictest verdict counts). `cannot_ask`:
    why this call's host will not ask its user, though the host can (Claude Code's
    permission modes that skip or auto-approve asks), or None.

    A call of the agent's own file tool (Claude Code's Write, Edit) runs no shell: `writes` holds the
    files it writes (OpenCode's apply_patch may write several), and `command` names the tool and
    the files, for the record."""

    __slots__ = ("tool", "command", "cwd", "session", "shell", "also", "cannot_ask", "tool_input", "writes")

    def __init__(self, tool: str, command: str, cwd: str, session: str | None, shell: str = "sh") -> None:
        self.tool, self.command, self.cwd, self.session, self.shell = tool, command, cwd, session, shell
        self.also: tuple[str, ...] = ()
        self.cannot_ask: str | None = None
        self.tool_input: dict | None = None  # the tool's whole input, where the host lets a hook rewrite it
        self.writes: tuple[str, ...] | None = None  # for an agent's own file tool (no shell): the files it writes


class Answer:
    """What the hook prints on stdout and stderr, and its exit code."""

    __slots__ = ("stdout", "stderr", "code")

    def __init__(self, stdout: str = "", stderr: str = "", code: int = 0) -> None:
        self.stdout, self.stderr, self.code = stdout, stderr, code

    def __repr__(self) -> str:
        return f"Answer({self.stdout!r}, {self.stderr!r}, {self.code})"


class Host:
    name = ""  # as `gatekeep agent-hook NAME` and `gatekeep install --agent NAME` spell it
    title = ""  # as people call it
    asks = False  # the host can ask its user, so "ask" is passed on
    says_allow = False  # the host takes no answer for a failure: an allow must be said
    fail_code = EXIT_BLOCK  # the exit code of a failure's deny
    fail_with_answer = True  # a failure also prints the deny answer (else only stderr)
    rewrites = False  # an allow may replace the command (a line run contained: judge/gate.py)
    # the host's own file tools, and the key of the file each writes: judged for protected places
    # only (judge/gate.py judge_file_write), as they can write an agent's settings that turn gatekeep off
    FILE_TOOLS: dict[str, str] = {}

    def read(self, event: dict) -> Call | None:
        raise NotImplementedError

    def answer(self, decision: str, reason: str) -> Answer:
        raise NotImplementedError

    def file_call(self, tool: str, tool_input: dict, cwd: str, session: str | None) -> Call:
        """The call of file tool `tool` (one of FILE_TOOLS): the file it writes, for the judge."""
        key = self.FILE_TOOLS.get(tool) or self.FILE_TOOLS[tool.lower()]  # (Copilot's in any case)
        return _file_call(tool, (_path(tool_input.get(key), f"tool_input.{key}"),), cwd, session)

    def allow_instead(self, call: Call, command: str, reason: str) -> Answer:
        """Allow the call with `command` run in place of its own (only where `rewrites`)."""
        raise NotImplementedError

    def fail(self, message: str) -> Answer:
        """A problem of ours: deny, with `message` on stderr too, in a form this host cannot read as "go ahead"."""
        line = _line(message)
        return Answer(self.answer("deny", line.strip()).stdout if self.fail_with_answer else "", line, self.fail_code)

    def pass_through(self) -> Answer:
        """For a tool that runs no command: what lets the host go on as if no hook had run."""
        return self.answer("allow", "") if self.says_allow else Answer()


class Claude(Host):
    """Claude Code's PreToolUse hook. It asks its user on "ask"; exit 2 blocks, with stderr shown to
    Claude. Bash and Monitor run shell commands (Monitor's is optional: it may watch a socket
    instead); PowerShell's commands are not read by gatekeep's parser."""

    name, title, asks = "claude", "Claude Code", True
    fail_with_answer = False  # exit 2 blocks and shows stderr; stdout is not read
    rewrites = True  # hookSpecificOutput.updatedInput replaces the tool's input (Bash's command)
    SHELL_TOOLS = {"Bash": "sh", "Monitor": "sh", "PowerShell": "PowerShell"}
    FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
    ASKING_MODES = ("default", "acceptEdits", "plan")  # where Claude Code shows its permission prompt

    def read(self, event: dict) -> Call | None:
        _expect(event, "hook_event_name", "PreToolUse")
        tool = _tool(event, "tool_name")
        if tool not in self.SHELL_TOOLS and tool not in self.FILE_TOOLS:
            return None
        tool_input = _object(event, "tool_input")
        if tool in self.FILE_TOOLS:
            call = self.file_call(tool, tool_input, _cwd(event.get("cwd")), _session(event, "session_id"))
        elif tool == "Monitor" and tool_input.get("command") is None:
            return None  # a Monitor that watches a socket runs no command
        else:
            command = _command(tool_input.get("command"), "tool_input.command")
            call = Call(tool, command, _cwd(event.get("cwd")), _session(event, "session_id"), self.SHELL_TOOLS[tool])
            if tool == "Bash":
                call.tool_input = tool_input
        mode = event.get("permission_mode")
        if mode not in self.ASKING_MODES:  # bypassPermissions, auto, dontAsk...: an "ask" may not be asked
            call.cannot_ask = f"Claude Code may not ask in permission mode {visible(repr(mode))[:40]}"
        return call

    def answer(self, decision: str, reason: str) -> Answer:
        output = {"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}
        return Answer(_json({"hookSpecificOutput": output}))

    def allow_instead(self, call: Call, command: str, reason: str) -> Answer:
        output = {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": reason}
        output["updatedInput"] = {**(call.tool_input or {}), "command": command}  # (its other keys kept)
        return Answer(_json({"hookSpecificOutput": output}))


class Codex(Host):
    """OpenAI Codex's PreToolUse hook. Codex calls every shell tool "Bash" here. It cannot ask
    ("ask" is invalid output, and invalid output lets the call run), and a JSON deny without a
    reason, like any failure, is ignored: so deny is exit 2 with the reason on stderr, the one
    form it never lets through."""

    name, title = "codex", "Codex"
    rewrites = True  # hookSpecificOutput.updatedInput with an allow (its command is read; 0.169.0, the real CLI)

    def read(self, event: dict) -> Call | None:
        _expect(event, "hook_event_name", "PreToolUse")
        if _tool(event, "tool_name") != "Bash":
            return None
        tool_input = _object(event, "tool_input")
        command = _command(tool_input.get("command"), "tool_input.command")
        call = Call("Bash", command, _cwd(event.get("cwd")), _session(event, "session_id"))
        call.tool_input = tool_input
        return call

    def answer(self, decision: str, reason: str) -> Answer:
        return Answer() if decision == "allow" else Answer(stderr=_line(reason), code=EXIT_BLOCK)

    def allow_instead(self, call: Call, command: str, reason: str) -> Answer:
        output = {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": reason}
        return Answer(_json({"hookSpecificOutput": {**output, "updatedInput": {"command": command}}}))


class Gemini(Host):
    """Gemini CLI's BeforeTool hook, for its run_shell_command tool (and write_file and replace,
    for protected places: Host.FILE_TOOLS). It reads stdout as JSON
    whatever the exit code, and "ask" forces its confirmation dialog. The command runs in
    `dir_path` (relative to the project) when the call has one."""

    name, title, asks = "gemini", "Gemini CLI", True
    rewrites = True  # hookSpecificOutput.tool_input (0.61.0, the real CLI)
    FILE_TOOLS = {"write_file": "file_path", "replace": "file_path"}

    def read(self, event: dict) -> Call | None:
        _expect(event, "hook_event_name", "BeforeTool")
        tool = _tool(event, "tool_name")
        if tool not in self.FILE_TOOLS and tool != "run_shell_command":
            return None
        tool_input = _object(event, "tool_input")
        if tool in self.FILE_TOOLS:
            call = self.file_call(tool, tool_input, _cwd(event.get("cwd")), _session(event, "session_id"))
        else:
            command = _command(tool_input.get("command"), "tool_input.command")
            cwd = _cwd(event.get("cwd"), tool_input.get("dir_path"), "tool_input.dir_path")
            call = Call(tool, command, cwd, _session(event, "session_id"))
            call.tool_input = tool_input
            if tool_input.get("directory") is not None:  # the parameter's name before dir_path
                call.also = (_cwd(event.get("cwd"), tool_input.get("directory"), "tool_input.directory"),)
        call.cannot_ask = self.headless()
        return call

    PROGRAMS = ("gemini", "gemini.js", "gemini.mjs")  # `node …/bin/gemini`, `node …/bundle/gemini.js`
    HEADLESS_FLAGS = ("-p", "--prompt")
    ASKING_FLAGS = ("-i", "--prompt-interactive", "--acp", "--experimental-acp")  # a screen, or an IDE that asks

    def headless(self) -> str | None:
        """Why the Gemini CLI running this hook cannot ask, or None.

        Headless (`gemini -p`, or with an input that is not a terminal, as its documentation
        defines it), Gemini CLI still shows its confirmation on "ask", to nobody, and waits for
        ever (seen with the real CLI, 0.61.0). The event does not say which mode it runs in, so
        the process that runs the hook is found: the nearest one above the hook whose program
        (one of its first three words) is gemini, read from /proc (core/process.py). Its flags say headless or not (`-i`
        and an IDE's `--acp` ask), else its standard input does. Where no such process is found
        (no /proc, a wrapper of another name), it cannot be told: then an ask is denied too,
        since a hang would never end, and the reason says why."""
        from gatekeep.core import process

        for pid, argv in process.ancestors(process.ids()[1]):
            if not any(os.path.basename(word) in self.PROGRAMS for word in argv[:3]):
                continue
            flags = [word.split("=", 1)[0] for word in argv[1:]]
            if any(flag in self.ASKING_FLAGS for flag in flags):
                return None
            if any(flag in self.HEADLESS_FLAGS for flag in flags):
                return "Gemini CLI runs headless here (-p), where it cannot ask"
            if process.reads_a_terminal(pid) is False:
                return "Gemini CLI runs headless here (its input is no terminal), where it cannot ask"
            return None
        return "gatekeep found no Gemini CLI process above its hook, so cannot tell whether it can ask"

    def answer(self, decision: str, reason: str) -> Answer:
        if decision == "allow":
            return Answer()  # no output: Gemini CLI's own policy and confirmation still apply
        return Answer(_json({"decision": decision, "reason": reason, "systemMessage": reason}))

    def allow_instead(self, call: Call, command: str, reason: str) -> Answer:
        """hookSpecificOutput.tool_input is merged over the call's arguments (its dir_path stays)."""
        specific = {"hookEventName": "BeforeTool", "tool_input": {"command": command}}
        return Answer(_json({"decision": "allow", "reason": reason, "hookSpecificOutput": specific}))


class Cursor(Host):
    """Cursor's beforeShellExecution hook (the IDE agent and cursor-agent). Installed with
    `failClosed`, so a crash or timeout blocks; it then wants an explicit allow. Deny is its JSON
    and exit 2. "ask" is in its protocol (some versions answer it as deny, which is safe)."""

    name, title, asks, says_allow = "cursor", "Cursor", True, True

    def read(self, event: dict) -> Call | None:
        _expect(event, "hook_event_name", "beforeShellExecution")
        command = _command(event.get("command"), "command")
        cwd = event.get("cwd")
        if not cwd:  # the first workspace root: the directory Cursor runs commands in
            roots = event.get("workspace_roots")
            cwd = roots[0] if isinstance(roots, list) and roots else None
        if not cwd:
            raise BadEvent("the beforeShellExecution event has no cwd and no workspace_roots")
        return Call("Shell", command, _cwd(cwd), _session(event, "conversation_id"))

    def answer(self, decision: str, reason: str) -> Answer:
        if decision == "allow":
            return Answer(_json({"permission": "allow"}))
        output = _json({"permission": decision, "user_message": reason, "agent_message": reason})
        return Answer(output, code=EXIT_BLOCK if decision == "deny" else 0)


class Copilot(Host):
    """GitHub Copilot CLI's preToolUse hook (camelCase events: toolName, toolArgs). Its hooks see
    every tool, with no matcher. Every answer, failures included, is JSON on stdout with exit 0:
    1.0.102 blocks on a failing hook too, but its documentation once said a failing hook is
    skipped. "ask" is honoured by 1.0.102 (it asks in a session, and denies by itself where it
    cannot ask: seen with the real CLI), while the documentation disagrees with itself ("only
    deny is processed") and an ask ignored would let the command run: so an ask is passed on only
    to a Copilot CLI that says (COPILOT_CLI_BINARY_VERSION, in the hook's environment) it is at
    least ASKS_FROM; to any other, what would be asked is denied."""

    name, title, asks = "copilot", "GitHub Copilot CLI", True
    rewrites = True  # modifiedArgs with an allow (1.0.102, the real CLI)
    fail_code = 0  # a failing exit is skipped by some versions: the deny must be an answer
    SHELL_TOOLS = {"bash": "sh", "powershell": "PowerShell"}
    FILE_TOOLS = {"create": "path", "edit": "path"}
    ASKS_FROM = (1, 0, 102)  # the first version seen to honour "ask"

    def read(self, event: dict) -> Call | None:
        tool = _tool(event, "toolName")
        known = tool.lower()  # documented lower-case; a "Bash" must not slip past
        if known not in self.SHELL_TOOLS and known not in self.FILE_TOOLS:
            return None
        args = event.get("toolArgs")
        if isinstance(args, str):  # documented as a JSON string; some builds send the object
            try:
                args = loads(args)
            except ValueError:
                raise BadEvent("the preToolUse event's toolArgs is not JSON") from None
        if not isinstance(args, dict):
            raise BadEvent("the preToolUse event's toolArgs is not an object")
        cwd, session = _cwd(event.get("cwd")), _session(event, "sessionId")
        if known in self.FILE_TOOLS:
            call = self.file_call(tool, args, cwd, session)
        else:
            call = Call(tool, _command(args.get("command"), "toolArgs.command"), cwd, session, self.SHELL_TOOLS[known])
            call.tool_input = args if known == "bash" else None
        call.cannot_ask = self.cannot_ask(os.environ.get("COPILOT_CLI_BINARY_VERSION", ""))
        return call

    def cannot_ask(self, version: str) -> str | None:
        parts = version.strip().split(".")
        known = len(parts) == 3 and all(p.isdigit() for p in parts)
        if known and tuple(int(p) for p in parts) >= self.ASKS_FROM:
            return None
        said = visible(version[:20]) if version else "its version unknown"
        return f"GitHub Copilot CLI ({said}) may not honour an ask"

    def answer(self, decision: str, reason: str) -> Answer:
        if decision == "allow":
            return Answer()
        return Answer(_json({"permissionDecision": decision, "permissionDecisionReason": reason}))

    def allow_instead(self, call: Call, command: str, reason: str) -> Answer:
        args = {**(call.tool_input or {}), "command": command}  # modifiedArgs replaces the arguments
        return Answer(_json({"permissionDecision": "allow", "permissionDecisionReason": reason, "modifiedArgs": args}))


class OpenCode(Host):
    """OpenCode, through the plugin `gatekeep install --agent opencode` writes: its
    tool.execute.before hook sends this event and throws (which stops the call) unless the
    answer is exactly an allow on exit 0. The plugin hook cannot ask. An allow may carry `args`,
    which the plugin writes over the call's arguments (OpenCode runs the arguments a
    tool.execute.before hook leaves: a contained command, 1.18.33, the real CLI).

    Its file tools (write, edit, multiedit: `filePath`; apply_patch: the files named in
    `patchText`, relative to the project) are judged for protected places, as other hosts' are:
    the write tool can plant a project plugin (`.opencode/plugins/`), which OpenCode runs at its
    next start there, and which can change a command after gatekeep has passed it."""

    name, title, says_allow = "opencode", "OpenCode", True
    rewrites = True
    SHELL_TOOLS = ("bash", "shell")  # OpenCode 1.x calls it bash, 2.x shell
    FILE_TOOLS = {"write": "filePath", "edit": "filePath", "multiedit": "filePath"}
    PATCH_TOOLS = ("apply_patch", "patch")
    # the lines of a patch that name a file (OpenCode's parser: after these, the rest of the line)
    PATCH_HEADERS = ("*** Add File:", "*** Delete File:", "*** Update File:", "*** Move to:")

    def read(self, event: dict) -> Call | None:
        _expect(event, "hook_event_name", "tool.execute.before")
        tool = _tool(event, "tool")
        if tool not in self.SHELL_TOOLS and tool not in self.FILE_TOOLS and tool not in self.PATCH_TOOLS:
            return None
        args = _object(event, "args")
        directory, session = _cwd(event.get("directory")), _session(event, "sessionID")
        if tool in self.FILE_TOOLS:
            return self.file_call(tool, args, directory, session)
        if tool in self.PATCH_TOOLS:
            return _file_call(tool, self.patch_paths(args.get("patchText")), directory, session)
        command = _command(args.get("command"), "args.command")
        cwd = _cwd(directory, args.get("workdir"), "args.workdir")
        call = Call(tool, command, cwd, session)
        call.tool_input = args
        if args.get("workdir"):  # older versions' bash tool has no workdir and runs in the project
            call.also = (directory,)
        return call

    def patch_paths(self, text: object) -> tuple[str, ...]:
        """Every file a patch names, whatever it does to it. Read more widely than OpenCode reads
        it (a header after spaces counts too), and a patch that names none is refused: what it
        would write cannot be told."""
        if not isinstance(text, str):
            raise BadEvent("the hook event has no args.patchText string")
        paths = []
        for line in text.splitlines():
            line = line.strip()
            for header in self.PATCH_HEADERS:
                if line.startswith(header) and line[len(header) :].strip():
                    paths.append(_path(line[len(header) :].strip(), "args.patchText"))
        if not paths:
            raise BadEvent("the hook event's args.patchText names no file")
        return tuple(dict.fromkeys(paths))

    def answer(self, decision: str, reason: str) -> Answer:
        output = _json({"decision": decision, "reason": reason})
        return Answer(output, "" if decision == "allow" else _line(reason), 0 if decision == "allow" else EXIT_BLOCK)

    def allow_instead(self, call: Call, command: str, reason: str) -> Answer:
        return Answer(_json({"decision": "allow", "reason": reason, "args": {"command": command}}))


HOSTS: dict[str, Host] = {host.name: host for host in (Claude(), Codex(), Gemini(), Cursor(), Copilot(), OpenCode())}


def read_event(data: bytes) -> dict:
    """The JSON object on stdin."""
    try:
        event = loads(data)
    except ValueError as e:  # UnicodeDecodeError included
        raise BadEvent(f"the hook event on stdin is not JSON ({e})") from None
    if not isinstance(event, dict):
        raise BadEvent(f"the hook event on stdin is a JSON {type(event).__name__}, not an object")
    return event


def _expect(event: dict, key: str, value: str) -> None:
    if event.get(key) != value:
        got = visible(repr(event.get(key)))[:80]
        raise BadEvent(f"expected a {value} event, got {got}: register this hook under {value}")


def _tool(event: dict, key: str) -> str:
    tool = event.get(key)
    if not isinstance(tool, str):
        raise BadEvent(f"the hook event has no {key}")
    return tool


def _object(event: dict, key: str) -> dict:
    value = event.get(key)
    if not isinstance(value, dict):
        raise BadEvent(f"the hook event's {key} is not an object")
    return value


def _command(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise BadEvent(f"the hook event has no {where} string")
    if not value.strip():
        raise BadEvent(f"the hook event's {where} is empty")
    return value


def _path(value: object, where: str) -> str:
    path = _command(value, where)
    if "\0" in path:
        raise BadEvent(f"the hook event's {where} holds a NUL")
    return path


def _file_call(tool: str, paths: tuple[str, ...], cwd: str, session: str | None) -> Call:
    """The call of an agent's own file tool writing `paths` (no shell runs)."""
    call = Call(tool, " ".join((tool, *paths)), cwd, session, "")
    call.writes = paths
    return call


def _cwd(cwd: object, sub: object = None, sub_key: str = "") -> str:
    """The absolute directory a command runs in: the event's (ours, if it has none), then the
    call's own directory, relative to it unless absolute."""
    cwd = cwd or current_directory()
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise BadEvent(f"the hook event's cwd is not an absolute path: {visible(repr(cwd))[:200]}")
    if sub is None or sub == "":
        return cwd
    if not isinstance(sub, str):
        raise BadEvent(f"the hook event's {sub_key} is not a path")
    return os.path.normpath(os.path.join(cwd, sub))


def _session(event: dict, key: str) -> str | None:
    session = event.get(key)
    return session if isinstance(session, str) else None


def _json(value: dict) -> str:
    return dumps(value) + "\n"


def _line(message: str) -> str:
    return visible(message).replace("\n", " ") + "\n"
