"""Decide stage: per-command matches -> one verdict for the whole line.

Per command: a deny rule, or a write to a protected place -> deny; else an ask
rule, or a write outside the directory -> ask; else, if the command cannot be
allowed (dynamic command word, unsafe variable, parse problem) -> ask (or the
default, if that is stricter); else, if a deny or ask rule could match for some
value of its variables or globs -> ask; else, for inline code or a piped shell,
ask unless the allow rule names that form; else an allow rule, a script whose
commands decide, or the built-in read-only set -> allow; else the default.

For the line: deny if any command is denied, or if it defines a fork bomb
(a function that runs itself twice or in a pipeline, which no pattern can express); else ask if any command asks or
the parse was incomplete; else allow, which needs every command allowed.
A line that runs no command is allowed.
"""

from __future__ import annotations

import os
import posixpath

from gatekeep.core.display import visible
from gatekeep.core.lazyre import lazy
from gatekeep.core.paths import upward
from gatekeep.core.records import record
from gatekeep.judge.managed import FLOORS
from gatekeep.judge.match import Matches, Rule, locked_by
from gatekeep.judge.policy import Policy, read_regular
from gatekeep.judge.readonly import is_read_only
from gatekeep.judge.writes import HARMLESS, WriteContext, argument_writes, judge, judge_removal
from gatekeep.name.normalize import CHANGES_WHAT_RUNS, DIRECTORY_CHANGERS, Normalized
from gatekeep.read.line import UNCERTAIN
from gatekeep.read.parse import FunctionDef, ParseResult

MAX_SUGGESTIONS = 5
MAX_COMMANDS = 50


class CommandVerdict(record("CommandVerdict", "normalized decision rule why firm exact", defaults=(False, False))):
    """The verdict for one simple command, and the rule behind it (or None); `why` completes
    "`cmd` ..." in a sentence. firm: a deny of the built-in policy, which holds in `mode: audit`
    too; exact: it asks because it would lose work or read a secret, which only a rule naming
    the exact command (no `*`) allows."""

    __slots__ = ()

    @property
    def text(self) -> str:
        return self.normalized.command.text


class LineVerdict(
    record("LineVerdict", "decision reason rule commands suggestions firm contain reviewable", defaults=(False, None, False))
):
    """The verdict for a whole line: the strictest of its commands', or the line's own risk.

    rule: the Rule behind it or None; commands: a CommandVerdict per simple
    command; suggestions: patterns that would allow the line; firm: a deny that holds in
    `mode: audit` too (the built-in policy's: `rm -rf ~`, a fork bomb, a write to ~/.bashrc);
    contain: for an ask, why the line may run contained instead (gate.py), else None. A front
    end that cannot contain it asks, as for any ask. reviewable: for an ask, whether a
    reviewer's allow may answer it (gate.py; review/reviewer.py).
    """

    __slots__ = ()


def decide(
    parsed: ParseResult,
    normalized: list[Normalized],
    matches: list[Matches],
    policy: Policy,
    writes: WriteContext | None = None,
    shell_names: frozenset[str] | None = None,
    contained: bool = False,
) -> LineVerdict:
    """`shell_names`: what the shell runs by name beyond PATH and its builtins (typos.py), when
    the shell said; a command that cannot run is then not asked about. `contained`: the line is
    judged for running in the sandbox (gate.py), which hides every secret-named file of the
    working tree: a secret it would read only along the way (in a tree it reads whole, in
    what xargs is given) is then no concern; one it names itself still is."""
    writes = writes or WriteContext.here(None)
    links = links_made(normalized)
    feeding = _feeding(parsed)
    loops = frozenset(parsed.loop_variables)
    memo: dict = {}  # what writes.judge found for this line
    verdicts = tuple(
        _uncertain(_decide_command(n, m, policy, writes, links, feeding, loops, memo, contained))
        for n, m in zip(normalized, matches, strict=True)
    )
    suggestions = _suggestions(parsed.line, verdicts)
    bomb = fork_bomb(parsed)
    if bomb is not None:
        name = visible(bomb.name)
        reason = f"the line defines `{name}`, a function that runs copies of itself: a fork bomb (built-in policy)"
        return LineVerdict("deny", reason, None, verdicts, (), firm=True)
    denied = next((v for v in verdicts if v.decision == "deny" and v.firm), None)
    denied = denied or next((v for v in verdicts if v.decision == "deny"), None)
    if denied is not None:
        return LineVerdict("deny", _sentence(denied), denied.rule, verdicts, (), firm=denied.firm)
    if not parsed.complete:
        reason = f"the line could not be fully parsed: {parsed.problems[0]}"
        would = next((v for v in verdicts if v.decision == "ask" and v.why.startswith(WOULD_BE_DENIED)), None)
        if would is not None:
            reason += f"; in what may be only text (quoted, a heredoc, a comment), `{visible(would.text)}` {would.why}"
        reason += "; gatekeep never allows what it cannot read"
        return LineVerdict("ask", reason, None, verdicts, ())  # no rule could ever allow it
    risk = _line_risk(parsed, normalized, writes) or _runs_what_it_writes(normalized, writes, links, policy)
    risk = risk or _names_a_secret(parsed, policy, writes)
    if risk is None and parsed.risks:
        risk = f"the line cannot be allowed: {parsed.risks[0]}"
    if risk is not None:
        return LineVerdict("ask", risk, None, verdicts, ())
    asked = next((v for v in verdicts if v.decision == "ask"), None)
    if asked is not None and shell_names is not None:
        from gatekeep.judge.typos import settle

        functions = frozenset(f.name for f in parsed.functions)
        verdicts = settle(verdicts, functions, shell_names, writes.cwd, SHELL_BUILTINS)
        asked = next((v for v in verdicts if v.decision == "ask"), None)
    if asked is not None:
        return LineVerdict("ask", _sentence(asked), asked.rule, verdicts, suggestions)
    if not verdicts:
        return LineVerdict("allow", "the line runs no command", None, (), ())
    reason = "allowed: " + "; ".join(_sentence(v) for v in verdicts)
    rule = next((v.rule for v in verdicts if v.rule is not None), None)
    return LineVerdict("allow", reason, rule, verdicts, ())


WOULD_BE_DENIED = "would be denied, if it is a command:"


def _uncertain(verdict: CommandVerdict) -> CommandVerdict:
    """A command the fallback found where it may be only text (line.UNCERTAIN) is never
    denied: the line asks, saying what would be denied (a heredoc writing a file is data)."""
    if verdict.decision != "deny" or UNCERTAIN not in verdict.normalized.command.problems:
        return verdict
    why = verdict.why.removeprefix("is ")
    return verdict._replace(decision="ask", why=f"{WOULD_BE_DENIED} {why}", firm=False)


def _decide_command(
    normalized: Normalized,
    matches: Matches,
    policy: Policy,
    writes: WriteContext,
    links: dict[str, str],
    feeding=lambda command: False,
    loops: frozenset[str] = frozenset(),
    memo: dict | None = None,
    contained: bool = False,
) -> CommandVerdict:
    if normalized.unchecked:
        return CommandVerdict(normalized, "deny", None, f"is denied: {normalized.unchecked}", firm=True)
    if contained and normalized.not_allowable:
        normalized = _without_code_variables(normalized)
    redirects = [(r.target, r.dynamic) for r in normalized.command.redirects if r.writes_file]
    # (the forms place() adds resolve relative words for rules: a sed script there looks like a path)
    forms = [f for f in normalized.deny_forms if f not in normalized.resolved_forms]
    targets = redirects + [(t, True) for t in dict.fromkeys(t for f in forms for t in argument_writes(f))]
    # A link made (or moved into place) on the line writes through to where it points; but not
    # for the command that makes it: `cp ~/.bashrc backup` writes backup, never ~/.bashrc (mv
    # renames, ln and cp -s make the link, cp -P copies it). Made by another command, it counts
    # wherever it stands, as a loop may run it first.
    own = links_made([normalized]) if links else {}
    targets += [(through, True) for t, _ in targets for through in _through_links(t, links, own)]
    targets = list(dict.fromkeys(targets))  # `> f > f > f …`: each once, the first where it was
    directories = normalized.directories or ("",)
    memo = {} if memo is None else memo
    judged = [judge(target, dynamic, writes, d, memo) for target, dynamic in targets for d in directories]
    if targets:
        judged += protected_writes(targets, directories, policy, writes)
    secret = None
    if policy.protected:
        from gatekeep.judge.protect import judge_reads

        secret = judge_reads(
            normalized, policy.protected, writes.home, writes.cwd, lambda: feeding(normalized.command), loops
        )
    if secret is not None and contained and _hidden_along_the_way(secret, writes):
        secret = None
    if secret is not None and secret[0].entry.verdict == "deny":
        return CommandVerdict(normalized, "deny", None, _read_why(secret))
    for decision in ("deny", "ask"):
        rule = getattr(matches, decision)
        if contained and decision == "ask" and rule is not None and _session_variable(rule):
            rule = None  # (`export PYTHONPATH=…`) the contained line's shell is its own, and ends with it
        if rule is not None:
            why = "is denied" if decision == "deny" else "needs approval"
            firm = decision == "deny" and rule.layer == "built-in"
            return CommandVerdict(normalized, decision, rule, f"{why} by {rule.describe()}", firm)
        write = next((j for j in judged if j is not None and j[0] == decision), None)
        if write is not None:
            return CommandVerdict(normalized, decision, None, write[1], decision == "deny")
    if normalized.not_allowable:
        return CommandVerdict(normalized, _unallowed(policy), None, f"cannot be allowed: {normalized.not_allowable[0]}")
    maybe = matches.maybe_deny or matches.maybe_ask
    if maybe is not None:
        why = f"could match {maybe.describe()}, depending on its variables or globs"
        return CommandVerdict(normalized, "ask", maybe, why)
    lock = locked_by(normalized, policy.locked) if policy.locked else None
    if lock is not None and (matches.allow is None or matches.allow.layer not in FLOORS):
        why = f"is locked by {lock.describe()}: only an allow rule of the system or managed policy allows it"
        return CommandVerdict(normalized, _unallowed(policy), lock, why)
    concern = _loss_or_secret(normalized, policy, writes, memo) or (secret and _read_why(secret))
    concern = concern or _names_code_place(normalized, writes) or _overwrites_secret(normalized, forms, policy, writes)
    if concern is not None and not _exact(matches.allow):
        return CommandVerdict(normalized, "ask", None, concern, exact=True)
    inline = normalized.exact_form and not _names_the_form(matches.allow, normalized)
    if inline and not _guard_inline(normalized, policy, writes):
        return CommandVerdict(
            normalized, "ask", None, f"{normalized.exact_form}: only a rule naming that form allows it"
        )
    if matches.allow is not None:
        return CommandVerdict(normalized, "allow", matches.allow, f"by {matches.allow.describe()}")
    if normalized.transparent:
        return CommandVerdict(normalized, "allow", None, "runs a script whose commands are decided one by one")
    if is_read_only(normalized):
        startup = _startup_file(normalized, writes)
        if startup is None:
            return CommandVerdict(normalized, "allow", None, "as a built-in read-only command")
        why = f"starts by reading {startup}, which can make it run code that file names, whatever its options"
        return CommandVerdict(normalized, _unallowed(policy), None, why)
    if policy.posture != "strict":
        from gatekeep.judge.posture import allows

        why = allows(normalized, policy, writes, targets, lambda t: _through_links(t, links, own), contained)
        if why is not None:
            return CommandVerdict(normalized, "allow", None, why)
    layer = policy.default_layer
    default = f"the default ({policy.default}) comes from the {layer.name} policy ({layer.path})"
    refused = next((r for r in policy.refused if r.startswith("`default: ")), None)
    if refused is not None:
        default += f"; {refused}"
    writing = _redirect_writes(normalized)
    if writing and is_read_only(normalized._replace(command=normalized.command._replace(redirects=()))):
        # the command only reads: what asks is where its output goes, and the reason says so
        where = ", ".join(f"`{visible(r.op)} {visible(r.target)}`" for r in writing)
        return CommandVerdict(normalized, policy.default, None, f"writes a file through {where}; {default}")
    return CommandVerdict(normalized, policy.default, None, f"matches no rule, and {default}")


def _unallowed(policy: Policy) -> str:
    """The verdict on a command nothing may allow: the default's, but never allow."""
    return "deny" if policy.default == "deny" else "ask"


def _holds(directory: str, home: str) -> bool:
    """Whether `directory` is `home` or a directory above it."""
    return bool(home) and (home == directory or home.startswith(directory.rstrip("/") + "/"))


def _startup_file(normalized: Normalized, writes: WriteContext) -> str | None:
    """A file the command's tool reads at every start (`startup-files`: mvn's `.mvn/jvm.config`, a
    Rails app's `bin/rails`) found in the directory it runs in or one above, shown as found; None
    where there is none, or the tool has no such files. Such a file comes with the repository and
    can name code to run, so even `mvn --version` runs the repository's code there. The home
    directory and those above it are not a repository's: the user's own `~/.cargo/config.toml`
    does not count (a line that writes one is judged as a write outside the tree)."""
    from gatekeep.name.knowledge import startup_files

    form = normalized.allow_form or normalized.command.argv
    names = startup_files(list(form)) if form else ()
    if not names:
        return None
    for place in normalized.directories or ("",):
        if place is None:  # after a `cd` to a directory known only when it runs: any file may be there
            return f"{' or '.join(sorted(names))} wherever it runs"
        for directory in upward(posixpath.normpath(posixpath.join(writes.cwd, place))):
            if _holds(directory, writes.home):
                break  # the home directory, or above it: the user's own files
            for name in sorted(names):
                candidate = posixpath.join(directory, name)
                if os.path.lexists(candidate):
                    return candidate
    return None


def _session_variable(rule) -> bool:
    """Whether `rule` is one of the built-in policy's asks about a variable that changes what later
    commands of the session run (`PYTHONPATH=*`, `PATH=*`): in the sandbox a line runs in a shell
    of its own, which ends with it, so there is no later session for it to change."""
    from gatekeep.name.variables import names_files_only

    name, equals, rest = rule.pattern.partition("=")
    return rule.layer == "built-in" and equals == "=" and rest == "*" and name.isidentifier() and names_files_only(name)


def _without_code_variables(normalized: Normalized) -> Normalized:
    """The command judged without the variables set for it that change what it runs through the
    files they name (`PYTHONPATH=. pytest`, `LD_PRELOAD=./x.so ls`: variables.names_files_only),
    where it runs contained: what they make run is held by the sandbox as the command is. Its
    deny and ask rules were matched with them (the caller's `matches`); the verdict's text still
    names them. Other reasons, and a variable whose value is a command line, stand."""
    from gatekeep.name.variables import names_files_only

    named = [r[: -len(CHANGES_WHAT_RUNS)] if r.endswith(CHANGES_WHAT_RUNS) else "" for r in normalized.not_allowable]
    if not all(names_files_only(name) for name in named):
        return normalized  # (a command line in GIT_SSH_COMMAND, PAGER: text that may lose work)
    from gatekeep.name.normalize import normalize
    from gatekeep.name.wrappers import ASSIGNMENT, unwrap_all

    argv = normalized.command.argv
    inner = unwrap_all(argv)[0]
    wrapping = len(argv) - len(inner) if inner else 0  # `timeout 5 env PYTHONPATH=. python x.py`: env's own words
    words = tuple(
        w
        for i, w in enumerate(normalized.command.words)
        if i >= wrapping or not ((m := ASSIGNMENT.match(w.value)) and names_files_only(m.group(1)))
    )
    command = normalized.command._replace(assignments=(), words=words)
    return normalize(command)._replace(command=normalized.command, directories=normalized.directories)


def _guard_inline(normalized: Normalized, policy: Policy, writes: WriteContext) -> bool:
    """Whether `posture: guard` may judge this inline code as it judges a script (posture.py)."""
    if policy.posture != "guard":
        return False
    from gatekeep.judge.posture import inline_code

    return inline_code(normalized, policy, writes) is not None


def _names_code_place(normalized: Normalized, writes: WriteContext) -> str | None:
    """A word of a command that may name a start-up file, ~/.ssh, .git/config or .git/hooks, or
    gatekeep's own files (writes.code_place), where the data does not say the command only reads
    that word: a tool gatekeep does not know, or an option it does not know, may write there
    (`ln -sf x ~/.bashrc`, `git config -f ~/.bashrc`, `tar -tf x --index-file ~/.bashrc`). The
    words it says are written were judged as writes already."""
    from gatekeep.judge.protect import pieces
    from gatekeep.judge.writes import code_place
    from gatekeep.name.knowledge import credential_values, form_of, paths_named, read_operands, text_values

    dynamic = {w.value for w in normalized.command.words if w.dynamic}
    for form in normalized.deny_forms:
        if not form or form in normalized.resolved_forms or not _may_name_code(form) or not paths_named(list(form)):
            continue
        found = form_of(list(form))
        if found.read_only:
            continue
        known = set(argument_writes(form)) | set(read_operands(list(form)))  # (written: judged as writes)
        known |= set(credential_values(list(form))) | set(text_values(list(form)))  # used, never written
        for word in form[1:]:
            if word in known:
                continue
            for piece in pieces(word):
                for directory in normalized.directories or ("",):
                    named = code_place(piece, word in dynamic or piece.startswith("~"), writes, directory)
                    if named:
                        return (
                            f"names {named}; gatekeep does not know that it only reads it, so it asks"
                            " whatever rule allows the tool"
                        )
    return None


_CODE_MARKS = (".ssh", ".git", "rc", "profile", "login", "logout", ".zsh", "aliases", ".envrc", ".npmrc", ".yarnrc", "gatekeep")


def _may_name_code(form: tuple[str, ...]) -> bool:
    """A cheap test first: whether a word of the form could name such a place at all."""
    return any(c in w for w in form[1:] for c in ("$", "~", "`", "*", "?", "[")) or any(
        mark in w for w in form[1:] for mark in _CODE_MARKS
    )


def _redirect_writes(normalized: Normalized) -> list:
    """The redirections of the command that write a file (not /dev/null and the like)."""
    return [r for r in normalized.command.redirects if r.writes_file and r.target not in HARMLESS]


def protected_writes(targets, directories, policy: Policy, writes: WriteContext) -> list[tuple[str, str]]:
    """(verdict, why) for each write to a path the policy's `protect: write:` names."""
    if not any(e.action == "write" for e in policy.protected):
        return []
    from gatekeep.judge.protect import judge_path

    found = []
    for target, dynamic in targets:
        for directory in directories:
            hit = judge_path(policy.protected, "write", target, dynamic, writes.home, directory or writes.cwd)
            if hit:
                found.append((hit.entry.verdict, f"writes to {hit.path}, protected by {hit.entry.describe()}"))
    return found


def _overwrites_secret(normalized: Normalized, forms, policy: Policy, writes: WriteContext) -> str | None:
    """A write that replaces a file `protect:` guards from reading and that exists (`echo X=1 >
    .env`, `cp .env.example .env`, `sort -o .env`): the secret it holds is lost. It asks whatever
    rule allows the tool: `cat *`, learned from `cat <<'EOF' > fix.py`, must not cover `cat > .env
    <<'EOF'`. An append (`>> .env`) loses nothing, and a file not there yet holds no secret."""
    if not policy.protected:
        return None
    from gatekeep.judge.protect import judge_path

    redirects = normalized.command.redirects
    targets = [(r.target, r.dynamic) for r in redirects if r.writes_file and r.op not in (">>", "&>>")]
    targets += [(t, True) for f in forms for t in argument_writes(f)]
    for target, dynamic in targets:
        for directory in normalized.directories or ("",):
            if directory is None:
                continue  # (after a cd known only at run time the write asks already)
            where = directory or writes.cwd
            hit = judge_path(policy.protected, "read", target, dynamic, writes.home, where)
            if hit is None or hit.held or not os.path.lexists(os.path.join(where, hit.path)):
                continue
            protected = f"{_what(hit)} protected by {hit.entry.describe()}"
            return f"replaces {target}, {protected}, so it asks whatever rule allows the tool"
    return None


def _hidden_along_the_way(secret, writes: WriteContext) -> bool:
    """Whether a secret read is one the sandbox hides and the command does not name: inside a
    tree it reads whole (`grep -r x .`), or in an input known only at run time (`$XARGS_INPUT`),
    in the working tree."""
    hit, word = secret
    tree = writes.workspace
    inside = tree is not None and hit.path.startswith(tree.rstrip("/") + "/")
    return inside and (hit.held or word.startswith("$"))


def _read_why(secret) -> str:
    hit, word = secret
    shown = word if hit.path in (word, word.rstrip("/")) else f"{word} ({hit.path})"
    return f"reads {shown}, {_what(hit)} protected by {hit.entry.describe()}"


def _what(hit) -> str:
    return "a directory holding a secret" if hit.held else "a secret"


def _names_a_secret(parsed: ParseResult, policy: Policy, writes: WriteContext) -> str | None:
    """A `for` list (or another word outside the commands) that names a protected file: the loop's
    commands read it through a variable no rule can see (`for f in ~/.ssh/*; do cat $f; done`)."""
    if not parsed.names or not policy.protected:
        return None
    from gatekeep.judge.protect import judge_path, pieces

    for word in parsed.names:
        for piece in pieces(word.value):
            hit = judge_path(policy.protected, "read", piece, word.dynamic, writes.home, writes.cwd)
            if hit:
                what = f"{_what(hit)} protected by {hit.entry.describe()}"
                return f"the line names {visible(piece)}, {what}, for its commands to use"
    return None


def _feeding(parsed: ParseResult):
    """A test of whether what a command prints goes on to another command: it is piped on, or
    it runs inside a `$( )`, a backquote or a process substitution.

    Made once per line: looking through every command and every earlier character for each
    command took time quadratic in the line (`true && ` 1,250 times: 1.3 s)."""
    piped_on = {(c.pipeline, c.position - 1) for c in parsed.commands}
    substitutions = _Substitutions(parsed.line)

    def feeding(command) -> bool:
        if command.pipeline >= 0 and (command.pipeline, command.position) in piped_on:
            return True
        return command.start < 0 or substitutions.hold(command.start)

    return feeding


_OPENERS = lazy(r"`|[$<>]\(")


class _Substitutions:
    """Which places of a line lie inside a substitution opened before them, as shellwords.expansion_end
    reads where each ends. The ends are found once each, from the left, as far as a question needs.

    Each costs the length of the substitution, so a line of many long ones (`$(` quoted 900 times
    before an unbalanced rest) could cost the square of its length: past SCAN_CHARS characters
    read, every later place counts as inside one, which only ever makes a command's reads count."""

    SCAN_CHARS = 1_000_000

    def __init__(self, line: str) -> None:
        self.line = line
        self.openers = [m.start() for m in _OPENERS.finditer(line)] if "(" in line or "`" in line else []
        self.reach: list[int] = []  # reach[k]: the furthest end of the first k + 1 openers
        self.budget = self.SCAN_CHARS

    def hold(self, at: int) -> bool:
        """Whether a substitution opened before `at` ends after it."""
        from bisect import bisect_left

        from gatekeep.read.shellwords import expansion_end

        k = bisect_left(self.openers, at)  # the openers before `at`
        while len(self.reach) < k:
            if self.budget < 0:
                return True
            i = self.openers[len(self.reach)]
            end = expansion_end(self.line, i)
            self.budget -= end - i
            self.reach.append(max(end, self.reach[-1]) if self.reach else end)
        return k > 0 and self.reach[k - 1] > at


def _loss_or_secret(
    normalized: Normalized, policy: Policy, writes: WriteContext, memo: dict | None = None
) -> str | None:
    """Why the command asks whatever rule allows its tool: it throws away work no command brings
    back (knowledge.form_of: `git reset --hard`, `docker volume rm`; `rm -r` of a .git or of what
    lies outside the working tree), unless the policy's `loss:` turns that class off; or it
    shows a secret (`gh auth token`)."""
    from gatekeep.name.knowledge import form_of

    def fed() -> str | None:  # read only for a tool whose loss depends on its input (psql, redis-cli)
        return _input_text(normalized.command)

    for form in normalized.deny_forms:  # as written, and through its wrappers (`sudo git clean -f`)
        if not form or form in normalized.resolved_forms:
            continue
        found = form_of(list(form), fed)
        if found.secret:
            return f"shows a secret ({found.secret}), so it asks whatever rule allows the tool"
        quiet = found.loss_class in policy.quiet_losses
        if found.loss and not quiet:
            return f"would lose work: {found.loss} (`loss: {{{found.loss_class}: allow}}` turns these questions off)"
        if found.removes and "files" not in policy.quiet_losses:
            for target in found.removes:
                for directory in normalized.directories or ("",):
                    why = judge_removal(target, writes, directory, memo)
                    if why:
                        return f"would lose work: it {why} (`loss: {{files: allow}}` turns these questions off)"
    return None


MAX_INPUT = 256 * 1024


def _input_text(command) -> str | None:
    """What the command reads on its input, as far as the line shows it: a here-string's or
    heredoc's text, or a file's (`< dump.sql`, at most MAX_INPUT); FROM_A_PIPE when it cannot
    be seen (a pipe, a file too large, unreadable or named at run time); None for the terminal."""
    from gatekeep.name.checks import FROM_A_PIPE

    for redirect in reversed(command.redirects):
        if redirect.stdin_text is not None:
            return redirect.stdin_text
        if redirect.op == "<" and redirect.target is not None:
            if redirect.dynamic:
                return FROM_A_PIPE
            try:  # bytes, not characters, bound it now: a character is at least one byte
                data = read_regular(redirect.target, MAX_INPUT * 4 + 1)
            except OSError:
                return FROM_A_PIPE
            if data is None:
                return FROM_A_PIPE
            text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it
            return text if len(text) <= MAX_INPUT else FROM_A_PIPE
    return FROM_A_PIPE if command.position > 0 else None


def _exact(rule: Rule | None) -> bool:
    """An allow rule that names the exact command: no `*` (an escaped `\\*` is a literal star)."""
    return rule is not None and "*" not in rule.pattern.replace("\\*", "")


# `:(){ :|:& };:` and its kind, for a line the parser could not read. The name may only start
# where a word starts (the lookbehind): without that, a long word makes the search quadratic
# (10,000 x's took 2 s), since every position inside it would be tried as a name's start.
_FORK_BOMB_TEXT = lazy(r"(?<![^\s(){};|&])(?P<f>[^\s(){};|&]+)\s*\(\)\s*\{\s*(?P=f)\s*\|\s*(?P=f)")


def fork_bomb(parsed: ParseResult) -> FunctionDef | None:
    """A function that runs copies of itself, directly (`f(){ f|f& }`), through others
    (`f(){ g; }; g(){ f|f& }`), or, in text the parser could not read, in the classic form."""
    defined = {f.name: f for f in parsed.functions}
    for function in parsed.functions:
        if function.is_fork_bomb:
            return function
        reached, todo = set(), [function.name]
        while todo:
            for name in defined[todo.pop()].calls:
                if name in defined and name not in reached:
                    reached.add(name)
                    todo.append(name)
        if function.name in reached and any(defined[n].spawns for n in reached):
            return function
    match = None if parsed.complete else _FORK_BOMB_TEXT.search(parsed.line)
    return FunctionDef(match["f"], 2, True) if match else None


# Commands that can put a link (or a file that is one) in place: `ln -s TARGET LINK`, and
# `mv`/`cp` of an existing link (`mv notes.lnk notes.txt`), whose result points where it did.
_LINKERS = frozenset({"ln", "mv", "cp", "install", "link"})


def links_made(normalized: list[Normalized]) -> dict[str, dict[str, int]]:
    """The paths the line may turn into links, as written -> what each may point to, with how
    many of its commands may make that link (`ln -sf ~/.bashrc out.txt`: out.txt -> ~/.bashrc;
    `mv a.lnk b`: b -> a.lnk, which may itself be a link, and is judged through it). Every
    command's link counts: `ln -s A b; ln -sf B b` may leave either, when a loop runs them."""
    links: dict[str, dict[str, int]] = {}
    for n in normalized:
        made = {}  # (link, source), once a command however many forms it has
        for form in n.deny_forms:
            if form and form[0].rsplit("/", 1)[-1] in _LINKERS:
                operands = [w for w in form[1:] if not w.startswith("-")]
                if len(operands) >= 2:
                    for source in operands[:-1]:
                        made[operands[-1].rstrip("/"), source] = None
                        made[operands[-1].rstrip("/") + "/" + source.rstrip("/").rsplit("/", 1)[-1], source] = None
                elif len(operands) == 1:
                    made[operands[0].rstrip("/").rsplit("/", 1)[-1], operands[0]] = None
        for link, source in made:
            sources = links.setdefault(link, {})
            sources[source] = sources.get(source, 0) + 1
    return links


def _through_links(target: str, links: dict[str, dict[str, int]], own: dict | None = None) -> list[str]:
    """Where a write to `target` lands if the links the line makes are in place: the link
    itself, or a directory link on its way (`ln -s ~/.ssh d; echo k >> d/authorized_keys`);
    less the links that only `own` (the writing command's links_made) makes. A glob (`m/*.py`)
    may match any of them, however they are spelled."""
    found = []
    glob = any(c in target for c in "*?[")
    for link, sources in links.items():
        if glob:
            found += [to for to, makers in sources.items() if not (own and makers == 1 and to in own.get(link, ()))]
            continue
        if target != link and not target.startswith(link + "/"):
            continue
        for points_to, makers in sources.items():
            if own and makers == 1 and points_to in own.get(link, ()):
                continue
            found.append(points_to if target == link else points_to.rstrip("/") + target[len(link) :])
    return found


def _git_elsewhere_after_cd(normalized: list[Normalized], tools: list[str], cd: int, writes: WriteContext) -> bool:
    """Whether git after the line's `cd` may run in another repository than the line's, whose
    config (hooks, fsmonitor) can run code: unless the line's directory is in a git work tree,
    git runs in directories that exist now and lie in that same tree (none holds a .git of its
    own: `cd src && git status`), and every other command of the line only reads (so none can
    make a repository there first)."""
    from gatekeep.judge.writes import work_tree

    here = work_tree(writes.cwd)
    if not os.path.lexists(os.path.join(here, ".git")):
        return True
    for i, n in enumerate(normalized):
        if i > cd and tools[i] == "git":
            for d in n.directories or ("",):
                where = d or writes.cwd
                if d is None or not os.path.isdir(where) or work_tree(where) != here:
                    return True
        elif i != cd and not is_read_only(n):
            return True
    return False


def _line_risk(parsed: ParseResult, normalized: list[Normalized], writes: WriteContext) -> str | None:
    """What makes a line ask whatever its commands' rules say."""
    if len(normalized) > MAX_COMMANDS:
        return f"the line runs {len(normalized)} commands; more than {MAX_COMMANDS} always ask"
    tools = [n.name.split(" ", 1)[0].rsplit("/", 1)[-1] for n in normalized]  # in order, through wrappers
    cds = [i for i, tool in enumerate(tools) if tool in DIRECTORY_CHANGERS]
    if len(cds) > 1:
        return "the line changes directory more than once; which directory each command runs in is hard to see"
    if cds and "git" in tools[cds[0] + 1 :] and _git_elsewhere_after_cd(normalized, tools, cds[0], writes):
        return "the line runs git after cd: a repository's own config (hooks, fsmonitor) can run code"
    if any(_git_elsewhere(form) for n in normalized for form in n.deny_forms):
        return "git runs in another repository (-C, --git-dir, --work-tree), whose config can run code"
    for function in parsed.functions:
        if function.name.startswith(GATE_FUNCTIONS) or function.name in HOOK_FUNCTIONS:
            return f"the line redefines `{visible(function.name)}`, part of gatekeep's shell hook"
        if is_command_name(function.name):
            return f"the line defines a function `{visible(function.name)}`, named like a command it would shadow"
    return None


GIT_ELSEWHERE = ("-C", "--git-dir", "--work-tree")


def _runs_what_it_writes(
    normalized: list[Normalized], writes: WriteContext, links: dict[str, str], policy: Policy | None = None
) -> str | None:
    """A line that writes a file and runs it as a program (`echo … > Makefile && make`,
    `> x.py; python3 x.py`, `> s; sh s`): whatever the file says runs, and no rule has seen it.
    Under `posture: guard`, which lets scripts run, an interpreter of a language gatekeep reads
    inline (python, node, perl, ruby: `shell-language`) may run what the line wrote; a Makefile,
    a shell script or any other program file still asks."""
    from gatekeep.name.knowledge import load_knowledge, program_files

    def places(n: Normalized, path: str) -> set[str]:
        return {posixpath.normpath(posixpath.join(d or writes.cwd, path)) for d in n.directories or ("",)}

    written: set[str] = set()
    for n in normalized:
        targets = [r.target for r in n.command.redirects if r.writes_file]
        targets += [t for f in n.deny_forms for t in argument_writes(f)]  # (the data's written files too)
        for target in targets + [p for t in targets for p in _through_links(t, links)]:
            written |= places(n, target)
    if not written:
        return None
    guard = policy is not None and policy.posture == "guard" and policy.default == "ask"
    for n in normalized:
        if guard and n.allow_form and "shell-language" in (load_knowledge().table(n.allow_form[0]) or ("", {}))[1]:
            continue
        for program in program_files(list(n.allow_form or n.command.argv)):
            if places(n, program) & written:
                return f"the line writes {program} and runs it: what it holds runs, and no rule has seen it"
            path = _glob_place(places(n, program), written)
            if path:
                why = f"the line writes {path} and {n.name} runs {program}"
                return f"{why}: what it holds runs, and no rule has seen it"
    return None


def _glob_place(patterns: set[str], written: set[str]) -> str | None:
    """A written path that fits a program given as a glob (`go test` runs ./*_test.go), or None."""
    if not any(c in p for p in patterns for c in "*?["):
        return None
    from fnmatch import fnmatchcase

    return next((path for pattern in patterns for path in sorted(written) if fnmatchcase(path, pattern)), None)


def _git_elsewhere(form: tuple[str, ...]) -> bool:
    """`git -C dir ...`, `git --git-dir=...`: a global option, before the subcommand."""
    if not form or form[0].rsplit("/", 1)[-1] != "git":
        return False
    for word in form[1:]:
        if not word.startswith("-"):
            return False
        if word.split("=", 1)[0] in GIT_ELSEWHERE:
            return True
    return False


GATE_FUNCTIONS = ("__gatekeep", "TRAP")
HOOK_FUNCTIONS = frozenset({"fc", "r", "preexec", "precmd", "command_not_found_handle", "zshaddhistory"})


# bash's and zsh's builtins and reserved words: a function named like one stands in for it (a
# function `kill` or `return` or `builtin` can turn a hook's block into nothing).
SHELL_BUILTINS = frozenset(
    ". : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown "
    "echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile "
    "popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true "
    "type typeset ulimit umask unalias unset wait autoload bindkey bye cap chdir clone comparguments compcall "
    "compctl compdescribe compfiles compgroups compquote comptags comptry compvalues disable emulate float "
    "functions getcap getln integer limit log noglob nocorrect print pushln r rehash sched setcap setopt stat "
    "unfunction unhash unlimit unsetopt vared whence where which zcompile zformat zle zmodload zparseopts zprof "
    "zpty zregexparse zsocket zstyle ztcp if then else elif fi case esac for select while until do done in "
    "function time coproc repeat foreach end".split()
)


def is_command_name(name: str) -> bool:
    import shutil

    from gatekeep.name.knowledge import load_knowledge

    if name in SHELL_BUILTINS or load_knowledge().table(name) is not None:
        return True
    return shutil.which(name) is not None


def _names_the_form(rule: Rule | None, normalized: Normalized) -> bool:
    """An allow rule names inline code when it spells out the option, and a piped shell when it
    is a pipeline pattern (`curl https://x/install.sh | sh`)."""
    if rule is None:
        return False
    if len(rule.segments) > 1:
        return True
    words = rule.pattern.split(" ")
    return any(w.startswith("-") and w in (normalized.allow_form or ()) for w in words[1:])


def _exact_pattern(normalized: Normalized) -> str | None:
    """The rule that allows exactly this command and nothing more (a loss or a secret read):
    its words as rules see them, `*` escaped; None when a word is known only at run time."""
    form = normalized.allow_form
    if not form or normalized.unknown_forms:
        return None
    return " ".join(w.replace("*", "\\*") for w in form)


def _sentence(verdict: CommandVerdict) -> str:
    return f"`{visible(verdict.text)}` {verdict.why}"


def _suggestions(line: str, verdicts: tuple[CommandVerdict, ...]) -> tuple[str, ...]:
    """One per distinct command asked by the default, at most five; of a multi-line line, only
    from its first line (a heredoc's body is not a line of its own: its command starts on the first)."""
    if any(v.decision != "allow" and v.normalized.not_allowable for v in verdicts):
        return ()  # no allow rule can make this line run
    first_line_end = line.find("\n") if "\n" in line else len(line)
    found: list[str] = []
    for v in verdicts:
        if v.normalized.command.start > first_line_end:
            continue
        s = _exact_pattern(v.normalized) if v.exact else v.normalized.suggestion
        # only where an allow rule would change the verdict: asked by the default, not by an ask rule
        if v.decision == "ask" and v.rule is None and s and s not in found and _fits(s, v.normalized):
            found.append(s)
    return tuple(found[:MAX_SUGGESTIONS])


def _fits(pattern: str, normalized: Normalized) -> bool:
    """Whether an allow rule `pattern` matches the command it is suggested for, tried on the spot:
    a suggestion that would not (code with a newline or a run of spaces in it) is none at all, as
    "always" would ask again at once."""
    from gatekeep.judge.match import RuleIndex, match_line
    from gatekeep.judge.policy import Layer

    layer = Layer("suggestion", "<suggested rule>", "", None, None, (("allow", pattern, ()),))
    return match_line([normalized], RuleIndex((layer,)))[0].allow is not None
