"""Where each coding agent is told to run gatekeep's hook, and what is written there (issue 20).

`gatekeep install --agent NAME` (commands/install.py) reads the file, lets the
host's Setup add or remove gatekeep's entry, and writes it back only if that
changed something: the user's other settings are kept, in their order, and a
second install finds nothing to do. gatekeep's entry is recognised by its
command (`agent-hook NAME`, or the older `claude-hook`), so an install replaces
it rather than adding a second one.

How the hook starts (hook_command, as the shell hooks start gatekeep: this
interpreter, isolated, without site), and what covers the failures each host
would let through (tests/test_agents.py runs each with the interpreter gone):

- `|| /bin/sh -c 'echo ... >&2; exit 2'` after the command, for the hosts that block on
  exit 2 (Claude Code, Codex, Gemini CLI, Cursor): if gatekeep cannot start (the
  virtualenv was removed: exit 127), or dies on a signal, the host sees exit 2
  with a line on stderr (Codex ignores an exit 2 without one) and blocks.
  gatekeep's own exit 2 stays 2, with that line after its reason. Codex runs
  hooks through the login shell ($SHELL -lc): sh, bash, zsh and fish read `||`.
- Copilot CLI skips a failing hook: `|| echo` a JSON deny instead.
- OpenCode runs a plugin, which starts gatekeep without a shell and throws
  (stops the call) on anything but an allow, including gatekeep missing or slow.
- A timeout of 30 s where the host takes one (Cursor's unit is not documented:
  none is written, and `failClosed` makes its timeout a block). gatekeep answers
  deny by itself at 10 s (commands/agent_hook.py), since a hook the host has to
  kill is let through by every host but Cursor.
- Claude Code blocks on any hook failure with `"onFailure": "block"`, a key
  added in 2.1.295: it is written when `claude --version` says at least that,
  since an older version may refuse a key it does not know.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import subprocess
import sys

from gatekeep.agents.hosts import HOSTS
from gatekeep.core.errors import FatalError
from gatekeep.core.jsontext import loads
from gatekeep.core.paths import absolute_env, expand_home

TIMEOUT_SECONDS = 30
CLAUDE_ON_FAILURE = (2, 1, 295)  # the first Claude Code that reads "onFailure"
# After a hook that exited non-zero: exit 2 with a line on stderr. Codex reads exit 2 with nothing on
# stderr as a failed hook (zsh, unlike bash, says nothing when the hook is killed); sh -c, since the
# login shell Codex uses may be fish, which has no `{ ...; }` or `$?`.
BLOCK_ON_FAILURE = "/bin/sh -c 'echo \"gatekeep: blocked (no reason above? run: gatekeep doctor)\" >&2; exit 2'"
COPILOT_FALLBACK = '{"permissionDecision":"deny","permissionDecisionReason":"gatekeep could not run; blocked"}'


def _dir(variable: str, default: str) -> str:
    """$variable when it is an absolute path, else `default` under the home directory."""
    return absolute_env(variable) or expand_home(default)


class Setup:
    """One host's settings file and gatekeep's entry in it."""

    name = ""
    notes: tuple[str, ...] = ()  # what the user must still do, said after an install
    on_failure = BLOCK_ON_FAILURE  # the shell words after `||`: what the host reads as a block

    @property
    def title(self) -> str:
        return HOSTS[self.name].title

    def path(self) -> str:
        raise NotImplementedError

    def render(self, current: str | None, start: list[str], remove: bool, managed: bool = False) -> str | None:
        """The file's new text (None: delete it) from its `current` text (None: there is none);
        `start` is how gatekeep is started (self.start()); `managed`: the file is managed_path()."""
        raise NotImplementedError

    def command(self, start: list[str]) -> str:
        return f"{shlex.join(start)} agent-hook {self.name} || {self.on_failure}"

    def managed_path(self) -> str | None:
        """The file of gatekeep's own among the host's managed settings, which the machine's
        administrator sets and no user or project setting can turn off, or None where gatekeep
        writes none (`install --agent NAME --managed`)."""
        return None

    def start(self, managed: bool = False) -> list[str]:
        """How the host starts gatekeep (without the `agent-hook NAME` words); `managed`: for every
        user of the machine (each finds the warm checker in their own home)."""
        from gatekeep.shells.hook import hook_argv

        again = f"run: gatekeep install --agent {self.name}" + (" --managed" if managed else "")
        return hook_argv(again, any_user=managed)

    def off_switches(self, directory: str) -> list[str]:
        """What, in the settings the host reads for a session started in `directory` (its project's
        and the user's), turns the user's hooks off, gatekeep's among them: one line each."""
        return []

    def after_install(self, start: list[str], managed: bool = False) -> list[str]:
        """What must happen once the entry is written for the host to run it (done here where
        gatekeep can do it); the lines to say. It never fails: what it could not do, it says."""
        return list(self.notes)

    def after_remove(self) -> list[str]:
        """What must be undone once the entry is taken out (what after_install did); the lines to say."""
        return []

    def not_in_force(self, directory: str | None = None) -> str | None:
        """Why an installed entry does not run (in `directory`, where given), where the host can
        say (doctor), or None."""
        return None

    def entries(self) -> list[str]:
        """The commands of gatekeep's entries in the user's settings file."""
        found, hooks = [], _settings(self.path()).get("hooks")
        for groups in hooks.values() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else ():
                for handler in group.get("hooks", []) if isinstance(group, dict) else ():
                    if isinstance(handler, dict) and self.ours(handler.get("command")):
                        found.append(handler["command"])
        return found

    def ours(self, command: object) -> bool:
        return isinstance(command, str) and f"agent-hook {self.name}" in command


class JsonHooks(Setup):
    """Hosts whose settings list hooks by event, in groups with a matcher: {"hooks": {EVENT: [{"matcher": M,
    "hooks": [{"type": "command", "command": C, ...}]}]}} (Claude Code, Codex, Gemini CLI)."""

    event = matcher = ""

    def handler(self, start: list[str], previous: list[dict], managed: bool = False) -> dict:
        """gatekeep's handler; `previous`: the ones an earlier install wrote."""
        return {"type": "command", "command": self.command(start), "timeout": TIMEOUT_SECONDS}

    def render(self, current: str | None, start: list[str], remove: bool, managed: bool = False) -> str | None:
        settings = _json_object(current, self.path())
        groups = _list(_object(settings, "hooks", self.path()), self.event, self.path())
        kept, previous = [], []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept.append(group)  # not ours to judge: the host reports it
                continue
            others = [h for h in handlers if not (isinstance(h, dict) and self.ours(h.get("command")))]
            previous += [h for h in handlers if h not in others]
            if others or not handlers:
                kept.append(group if len(others) == len(handlers) else {**group, "hooks": others})
        if not remove:
            kept.append({"matcher": self.matcher, "hooks": [self.handler(start, previous, managed)]})
        return _dump(self.finish(_put(settings, self.event, kept), remove, managed), self.path())

    def finish(self, settings: dict, remove: bool, managed: bool) -> dict:
        """The settings to write, once gatekeep's handler is in (or out)."""
        return settings


class Claude(JsonHooks):
    """Claude Code: the user's settings.json. Its file tools (Write, Edit, ...) are gated too, for
    the places no line may write (an agent's settings among them: commands/agent_hook.py).

    A project's `.claude/settings.json` or `.claude/settings.local.json` with `"disableAllHooks":
    true` turns the user's hooks off, but not managed ones (seen with the real CLI: tests/
    test_real_agents.py): `--managed` writes gatekeep's entry as a drop-in of the machine's
    managed settings, MANAGED_DIR/managed-settings.d/gatekeep.json, which takes root."""

    name, event, matcher = "claude", "PreToolUse", "Bash|Monitor|PowerShell|Write|Edit|MultiEdit|NotebookEdit"
    MANAGED_DIR = "/Library/Application Support/ClaudeCode" if sys.platform == "darwin" else "/etc/claude-code"

    def path(self) -> str:
        return os.path.join(_dir("CLAUDE_CONFIG_DIR", "~/.claude"), "settings.json")

    def managed_path(self) -> str:
        return os.path.join(self.MANAGED_DIR, "managed-settings.d", "gatekeep.json")

    def off_switches(self, directory: str) -> list[str]:
        files = _project_files(directory, ".claude/settings.json", ".claude/settings.local.json")
        why = "sets disableAllHooks: Claude Code runs none of your hooks"
        return [f"{path} {why}" for path in _disabling([self.path(), *files])]

    def ours(self, command: object) -> bool:
        older = isinstance(command, str) and "gatekeep" in command and "claude-hook" in command  # README's before
        return older or super().ours(command)

    def handler(self, start: list[str], previous: list[dict], managed: bool = False) -> dict:
        handler = super().handler(start, previous)
        kept = any(h.get("onFailure") == "block" for h in previous)  # `claude` may be off PATH this time
        if kept or (claude_version() or ()) >= CLAUDE_ON_FAILURE:
            handler["onFailure"] = "block"
        return handler


class Codex(JsonHooks):
    """Codex: hooks.json in $CODEX_HOME. It runs a new or changed hook only once trusted, which
    install records itself through Codex's app server (codex_trust.py).

    A trusted project's `.codex/config.toml` with `[features] hooks = false` (or the older
    `codex_hooks`) turns every hook off there, the user's included (seen with the real CLI,
    0.169.0; an untrusted project's configuration is not read). The machine's requirements (`/etc/codex/requirements.toml`)
    outrank it: `--managed` puts gatekeep's hook there, with `[features] hooks = true`, which no
    user or project setting can turn off, and which Codex runs without a trust of its own."""

    name, event, matcher = "codex", "PreToolUse", "^Bash$"
    UNTRUSTED = (
        "Codex runs a new or changed hook only once you trust it: in Codex, type /hooks, choose the gatekeep hook"
        " and press t. Until then Codex runs its commands ungated."
    )
    REQUIREMENTS = "/etc/codex/requirements.toml"
    BEGIN = "# >>> gatekeep: written by `gatekeep install --agent codex --managed`; its --remove takes it out >>>"
    END = "# <<< gatekeep <<<"

    def after_install(self, start: list[str], managed: bool = False) -> list[str]:
        from gatekeep.agents.codex_trust import CodexError, trust

        if managed:
            return []  # a managed hook needs no trust
        try:
            return [trust(self.command(start))]
        except CodexError as e:
            return [f"WARNING: gatekeep could not record Codex's trust in the hook ({e}).", self.UNTRUSTED]

    def not_in_force(self, directory: str | None = None) -> str | None:
        from gatekeep.agents.codex_trust import status

        for command in self.entries():
            why = status(command, directory)
            if why is not None:
                return why
        return None

    def off_switches(self, directory: str) -> list[str]:
        """The user's config.toml, and a trusted project's (Codex reads an untrusted one's not at all)."""
        from gatekeep.judge.writes import work_tree

        user = os.path.join(_dir("CODEX_HOME", "~/.codex"), "config.toml")
        projects = _toml(user).get("projects")
        trusted = {
            place for place in (directory, work_tree(directory))
            if isinstance(projects, dict) and isinstance(projects.get(place), dict)
            and projects[place].get("trust_level") == "trusted"
        }  # fmt: skip
        found = []
        for path in (user, *_project_files(directory, ".codex/config.toml")):
            if path != user and os.path.dirname(os.path.dirname(path)) not in trusted:
                continue
            features = _toml(path).get("features")
            if isinstance(features, dict) and any(features.get(k) is False for k in ("hooks", "codex_hooks")):
                found.append(f"{path} sets [features] hooks = false: Codex runs no hook")
        return found

    def path(self) -> str:
        return os.path.join(_dir("CODEX_HOME", "~/.codex"), "hooks.json")

    def managed_path(self) -> str:
        return self.REQUIREMENTS

    def handler(self, start: list[str], previous: list[dict], managed: bool = False) -> dict:
        return {**super().handler(start, previous), "statusMessage": "gatekeep"}

    def render(self, current: str | None, start: list[str], remove: bool, managed: bool = False) -> str | None:
        if not managed:
            return super().render(current, start, remove, managed)
        return self.requirements(current, start, remove)

    def requirements(self, current: str | None, start: list[str], remove: bool) -> str | None:
        """requirements.toml with gatekeep's block (between BEGIN and END) in it, or out of it
        (None: nothing is left). The rest of the file is the machine's: kept as it is, and
        refused when it sets the features or hooks itself, which gatekeep will not merge."""
        import json

        block = re.compile(rf"(?:^|\n){re.escape(self.BEGIN)}\n.*?\n{re.escape(self.END)}\n?", re.S)
        rest = block.sub("\n", current or "").strip("\n")
        if remove:
            return rest + "\n" if rest.strip() else None
        if rest.strip():
            try:
                import tomllib
            except ImportError:  # Python 3.10
                raise FatalError(f"{self.REQUIREMENTS} has requirements of its own, which this Python cannot read") from None
            try:
                theirs = tomllib.loads(rest)
            except ValueError as e:
                raise FatalError(f"{self.REQUIREMENTS} is not TOML ({e}); nothing changed") from None
            if "features" in theirs or "hooks" in theirs:
                raise FatalError(
                    f"{self.REQUIREMENTS} sets features or hooks of its own; gatekeep does not merge them: add"
                    " `[features] hooks = true` and gatekeep's PreToolUse hook by hand (docs/agents.md); nothing changed"
                )
        lines = [
            self.BEGIN, "[features]", "hooks = true", "", "[[hooks.PreToolUse]]", f"matcher = {json.dumps(self.matcher)}",
            "", "[[hooks.PreToolUse.hooks]]", 'type = "command"', f"command = {json.dumps(self.command(start))}",
            f"timeout = {TIMEOUT_SECONDS}", 'statusMessage = "gatekeep"', self.END,
        ]  # fmt: skip  (a JSON string, ASCII, is a TOML basic string)
        return (rest + "\n\n" if rest.strip() else "") + "\n".join(lines) + "\n"


class Gemini(JsonHooks):
    name, event, matcher = "gemini", "BeforeTool", "^(run_shell_command|write_file|replace)$"

    def off_switches(self, directory: str) -> list[str]:
        found = []
        for path in (self.path(), *_project_files(directory, ".gemini/settings.json")):
            hooks = _settings(path).get("hooksConfig")
            if not isinstance(hooks, dict):
                continue
            if hooks.get("enabled") is False:
                found.append(f"{path} sets hooksConfig.enabled to false: Gemini CLI runs no hook")
            disabled = hooks.get("disabled")
            if isinstance(disabled, list) and "gatekeep" in disabled:
                found.append(f"{path} lists gatekeep in hooksConfig.disabled: Gemini CLI skips it")
        return found

    def path(self) -> str:
        return os.path.join(_dir("GEMINI_CLI_HOME", "~"), ".gemini", "settings.json")

    def managed_path(self) -> str:
        """The system settings file, which overrides the user's and the project's (its
        documentation; $GEMINI_CLI_SYSTEM_SETTINGS_PATH moves it). Gemini CLI reads it only when
        it and every directory above it are writable by root alone."""
        default = "/Library/Application Support/GeminiCli" if sys.platform == "darwin" else "/etc/gemini-cli"
        return absolute_env("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or os.path.join(default, "settings.json")

    def handler(self, start: list[str], previous: list[dict], managed: bool = False) -> dict:
        """The user's handler is named gatekeep. A project's `hooksConfig.disabled` (merged with
        the system's) skips a hook by name: the managed one's is unguessable, kept across installs."""
        milliseconds = TIMEOUT_SECONDS * 1000  # Gemini CLI's unit
        name = "gatekeep"
        if managed:
            names = [h.get("name") for h in previous if str(h.get("name", "")).startswith("gatekeep-")]
            name = names[0] if names else f"gatekeep-{secrets.token_hex(6)}"
        return {"type": "command", "name": name, "command": self.command(start), "timeout": milliseconds}

    def finish(self, settings: dict, remove: bool, managed: bool) -> dict:
        """In the system settings, `hooksConfig.enabled: true`, which a project's `false` cannot
        override (taken out again with the entry only if gatekeep's is all it holds)."""
        if not managed:
            return settings
        config = settings.get("hooksConfig")
        config = dict(config) if isinstance(config, dict) else {}
        if remove:
            if config == {"enabled": True}:
                return {k: v for k, v in settings.items() if k != "hooksConfig"}
            return settings
        return {**settings, "hooksConfig": {**config, "enabled": True}}


class Cursor(Setup):
    """{"version": 1, "hooks": {"beforeShellExecution": [{"command": C, "failClosed": true}]}}."""

    name, event = "cursor", "beforeShellExecution"

    def path(self) -> str:
        return expand_home("~/.cursor/hooks.json")

    def render(self, current: str | None, start: list[str], remove: bool, managed: bool = False) -> str | None:
        settings = _json_object(current, self.path())
        version = settings.setdefault("version", 1)
        if version != 1:
            raise FatalError(f"{self.path()} has hooks version {version!r}; gatekeep writes version 1; nothing changed")
        handlers = _list(_object(settings, "hooks", self.path()), self.event, self.path())
        kept = [h for h in handlers if not (isinstance(h, dict) and self.ours(h.get("command")))]
        if not remove:
            kept.append({"command": self.command(start), "failClosed": True})
        return _dump(_put(settings, self.event, kept), self.path())


class Copilot(Setup):
    """A hooks file of gatekeep's own in Copilot CLI's user hooks directory. A trusted folder's
    `.github/copilot/settings.json` (or `settings.local.json`) with `disableAllHooks` turns it
    off (seen with the real CLI, 1.0.102); doctor reports it."""

    name = "copilot"
    on_failure = f"echo {shlex.quote(COPILOT_FALLBACK)}"  # a failing hook is skipped: say deny instead

    def path(self) -> str:
        return os.path.join(_dir("COPILOT_HOME", "~/.copilot"), "hooks", "gatekeep.json")

    def off_switches(self, directory: str) -> list[str]:
        user = os.path.join(_dir("COPILOT_HOME", "~/.copilot"), "settings.json")
        files = _project_files(directory, ".github/copilot/settings.json", ".github/copilot/settings.local.json")
        return [f"{path} sets disableAllHooks: Copilot CLI runs no hook" for path in _disabling([user, *files])]

    def render(self, current: str | None, start: list[str], remove: bool, managed: bool = False) -> str | None:
        if remove:
            return None
        handler = {"type": "command", "bash": self.command(start), "timeoutSec": TIMEOUT_SECONDS}
        return _dump({"version": 1, "hooks": {"preToolUse": [handler]}}, self.path())


class OpenCode(Setup):
    """A plugin of gatekeep's own in OpenCode's global plugins directory (agents/opencode.js).

    Once any plugin is present, OpenCode (1.18.33) waits at each start for an npm install of its
    plugin SDK (@opencode-ai/plugin) into every configuration directory it may write, unless the
    directory has a `node_modules` and a `package-lock.json` whose root lists the SDK and each of
    the directory's `package.json` dependencies; offline, that install fails after about a minute,
    at every start. gatekeep's plugin imports nothing, so where the directory has none of the
    three, install writes that pair (an empty `node_modules`, a lock naming the SDK), and remove
    takes it back while it is as install wrote it. Where the directory is npm's already, it is
    left alone, and install says what OpenCode will fetch. A plugin of the user's own that
    imports the SDK at run time needs `npm install @opencode-ai/plugin` there (docs/agents.md)."""

    name = "opencode"
    notes = ("OpenCode loads plugins when it starts: restart it.",)
    SDK = "@opencode-ai/plugin"
    LOCK = {"name": "opencode", "lockfileVersion": 3, "requires": True, "packages": {"": {"dependencies": {SDK: "*"}}}}

    def config_dir(self) -> str:
        return os.path.join(_dir("XDG_CONFIG_HOME", "~/.config"), "opencode")

    def path(self) -> str:
        return os.path.join(self.config_dir(), "plugins", "gatekeep.js")

    def render(self, current: str | None, start: list[str], remove: bool, managed: bool = False) -> str | None:
        if remove:
            return None
        from gatekeep.core import jsontext, resources

        with open(os.path.join(resources.data_dir("agents"), "opencode.js"), encoding="utf-8") as f:
            template = f.read()
        return template.replace("__GATEKEEP_ARGV__", jsontext.dumps(start))

    def off_switches(self, directory: str) -> list[str]:
        """A project's own plugins: OpenCode runs them as the user when it starts there, and one
        can change a command's arguments after gatekeep's hook has passed them."""
        from gatekeep.judge.writes import work_tree

        found = []
        for place in dict.fromkeys((directory, work_tree(directory))):
            for sub in ("plugin", "plugins"):
                folder = os.path.join(place, ".opencode", sub)
                try:
                    names = sorted(os.listdir(folder))
                except OSError:
                    continue
                found += [os.path.join(folder, n) for n in names if n.endswith((".js", ".ts", ".mjs", ".mts"))]
        files = _project_files(directory, "opencode.json", "opencode.jsonc", ".opencode/opencode.json")
        found += [path for path in files if _settings(path).get("plugin")]
        return [f"{path} is a project plugin, which runs as you and can change a command gatekeep passed" for path in found]

    def after_install(self, start: list[str], managed: bool = False) -> list[str]:
        return [*self.notes, *self._settle_sdk()]

    def after_remove(self) -> list[str]:
        folder = self.config_dir()
        lock, modules = os.path.join(folder, "package-lock.json"), os.path.join(folder, "node_modules")
        if _read(lock) != self._lock_text():
            return []
        try:
            os.unlink(lock)
            os.rmdir(modules)  # only while empty
        except OSError:
            pass
        return [f"took out the package-lock.json and empty node_modules install wrote in {folder}"]

    def _lock_text(self) -> str:
        import json

        return json.dumps(self.LOCK, indent=2) + "\n"

    def _settle_sdk(self) -> list[str]:
        folder = self.config_dir()
        lock, modules, package = (os.path.join(folder, n) for n in ("package-lock.json", "node_modules", "package.json"))
        if not any(os.path.lexists(p) for p in (lock, modules, package)):
            from gatekeep.core.atomic import write_atomic

            try:
                os.mkdir(modules)
                write_atomic(lock, self._lock_text(), 0o644)
            except OSError as e:
                return [f"WARNING: OpenCode will install {self.SDK} from npm at each start: {e}"]
            return [f"{lock} says {self.SDK} is there, so OpenCode fetches nothing at its start (docs/agents.md)"]
        wanted = {self.SDK, *_dependencies(_settings(package))}
        listed = _settings(lock).get("packages", {})
        root = listed.get("") if isinstance(listed, dict) else None
        if os.path.isdir(modules) and isinstance(root, dict) and wanted <= set(_dependencies(root)):
            return []
        return [f"OpenCode will install {self.SDK} from npm into {folder} at its next start (offline, at each)"]


def _dependencies(package: dict) -> list[str]:
    """The names of every kind of dependency a package.json (or a lock's root) lists."""
    kinds = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
    return [name for kind in kinds if isinstance(package.get(kind), dict) for name in package[kind]]


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(1 << 20)
    except (OSError, ValueError):
        return None


SETUPS: dict[str, Setup] = {s.name: s for s in (Claude(), Codex(), Gemini(), Cursor(), Copilot(), OpenCode())}


def check_agents(directory: str):
    """doctor's check of the coding agents (a shells.health.Check): for each host whose entry is
    installed, whether a setting of the user's or of the project in `directory` turns it off; a
    managed entry (Claude Code's) is out of their reach."""
    from gatekeep.shells.health import Check

    installed, problems = [], []
    for setup in SETUPS.values():
        managed = setup.managed_path()
        held = managed is not None and _holds_entry(managed, setup)
        if not (held or _holds_entry(setup.path(), setup)):
            continue
        installed.append(setup.title + (" (managed)" if held else ""))
        if held:
            continue  # no user or project setting turns a managed entry off
        problems += [f"{setup.title}: {line}" for line in setup.off_switches(directory)]
        why = setup.not_in_force(directory)
        if why is not None:
            problems.append(f"{setup.title}: {why}")
    if problems:
        fix = (
            "take those settings out (a managed entry, `sudo gatekeep install --agent claude --managed`, or gemini"
            " or codex, cannot be turned off); for an untrusted Codex hook, run `gatekeep install --agent codex`"
            " again, or trust the hook in its /hooks"
        )
        return Check("agents", False, "; ".join(problems) + ": gatekeep is off there, or can be turned off", fix)
    if not installed:
        return Check("agents", True, "no agent hook installed")
    return Check("agents", True, f"hook installed for {', '.join(installed)}; no setting here turns it off")


def _holds_entry(path: str, setup: Setup) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f"agent-hook {setup.name}" in f.read(1 << 20)
    except OSError:
        return False


def _project_files(directory: str, *names: str) -> list[str]:
    """Each of `names` that exists in `directory` or in the git work tree's top it lies in."""
    from gatekeep.judge.writes import work_tree

    places = dict.fromkeys((directory, work_tree(directory)))
    found = [os.path.join(place, name) for place in places for name in names]
    return [path for path in found if os.path.isfile(path)]


def _disabling(paths: list[str]) -> list[str]:
    """Those of the settings files `paths` that set `disableAllHooks` (Claude Code, Copilot CLI)."""
    return [path for path in paths if _settings(path).get("disableAllHooks") not in (None, False, "false")]


def _toml(path: str) -> dict:
    """The TOML table in `path`; {} when there is none, it is not TOML, or Python cannot read TOML (3.10)."""
    try:
        import tomllib

        with open(path, "rb") as f:
            return tomllib.loads(f.read(1 << 20).decode("utf-8"))
    except (ImportError, OSError, ValueError):
        return {}


def _settings(path: str) -> dict:
    """The JSON object in `path`; {} when there is none or it is not one (the host then reports it)."""
    try:
        with open(path, encoding="utf-8") as f:
            value = loads(f.read(1 << 20))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def claude_version() -> tuple[int, ...] | None:
    """The version `claude --version` prints (e.g. "2.1.330 (Claude Code)"), or None."""
    try:
        out = subprocess.run(["claude", "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(n) for n in found.groups()) if found else None


def _json_object(text: str | None, path: str) -> dict:
    if text is None or not text.strip():
        return {}
    try:
        value = loads(text)
    except ValueError as e:
        raise FatalError(f"{path} is not JSON ({e}); nothing changed") from None
    if not isinstance(value, dict):
        raise FatalError(f"{path} is not a JSON object; nothing changed")
    return value


def _object(settings: dict, key: str, path: str) -> dict:
    value = settings.get(key, {})
    if not isinstance(value, dict):
        raise FatalError(f"{path}: {key!r} is not an object; nothing changed")
    return value


def _list(hooks: dict, event: str, path: str) -> list:
    value = hooks.get(event, [])
    if not isinstance(value, list):
        raise FatalError(f"{path}: hooks.{event} is not a list; nothing changed")
    return value


def _put(settings: dict, event: str, entries: list) -> dict:
    """`settings` with hooks.EVENT set to `entries`; an emptied list (and then hooks) taken out."""
    hooks = dict(settings.get("hooks", {}))
    if entries:
        hooks[event] = entries
    else:
        hooks.pop(event, None)
    settings = dict(settings)
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    return settings


def _dump(value: dict, path: str) -> str:
    """The settings as JSON text that every host reads: no NaN or Infinity (`1e400` reads as
    Infinity), nothing that is not UTF-8 (an escaped lone surrogate); else nothing is written."""
    import json

    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        text.encode("utf-8")
    except (ValueError, UnicodeEncodeError) as e:  # UnicodeEncodeError is a ValueError too
        raise FatalError(f"{path} holds a value JSON cannot write back ({e}); nothing changed") from None
    return text
