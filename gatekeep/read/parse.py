"""Parse stage: a command line -> every simple command in it.

bashlex does the parsing; gatekeep does not trust it blindly
(crosscheck.py lists where it silently misreads):
  * any exception, and any parse that takes more than PARSE_SECONDS of CPU time (bashlex
    loops forever on `echo x'${'`), means "could not parse";
  * `crosscheck.py` reads the raw text independently, and any substitution,
    heredoc or text the tree does not account for makes the parse incomplete;
  * word values are recomputed from their source text (`shellwords.py`).
An incomplete result still lists what was found, plus a conservative split of
the raw text (`fallback.py`), so that deny rules apply; it is never allowed.
"""

from __future__ import annotations

import sys

from gatekeep.core.lazyre import lazy
from gatekeep.read.line import FunctionDef, ParseResult, Redirect, SimpleCommand
from gatekeep.read.shellwords import (
    Word,
    arithmetic_risk,
    assignment_risk,
    counters,
    expansion_end,
    text_risk,
    unquote,
)

# of the process's own CPU time (ITIMER_VIRTUAL): a machine busy with other work stretches the
# wall clock, and a line must not be read differently for it (budget.py's reasoning; its timer is
# ITIMER_PROF, so the two never disturb each other)
PARSE_SECONDS = 0.5
MAX_LINE_CHARS = 128 << 10  # what a hook can pass as one argument (MAX_ARG_STRLEN, Linux)

_ARRAY_ASSIGNMENT = lazy(r"(?s)[A-Za-z_][A-Za-z_0-9]*\[.*\]\+?=")
_NAMED_FD = lazy(r"\{[A-Za-z_][A-Za-z_0-9]*\}")
_ESCAPED = lazy(r"(?s)\\.")  # in an unquoted heredoc body `\$` is a `$`
_BODY_ESCAPE = lazy(r"\\([$`\\\n])")
_EXPANDS = lazy(r"\$[A-Za-z_0-9{(@*#?$!-]|`")


class _ParseTimeout(BaseException):
    """Raised from SIGVTALRM; a BaseException so no `except Exception` inside bashlex swallows it."""


def parse_line(line: str) -> ParseResult:
    plain = parse_plain_line(line)
    if plain is not None:
        return plain
    return parse_with_bashlex(line)


# The fast path. Most lines people type are words and a few operators: `git status`,
# `git log --oneline | head`, `cd src && make test`. For those, bash's grammar has
# nothing left to decide, so they are split here without importing bashlex (≈20 ms).
# The character set is deliberately small: no quotes, no `$`, no backslash, no glob,
# no tilde, no braces, no redirection, no comment, no newline, no tab; operators
# stand between spaces. Plain string tests, not a regex: compiling one costs more
# than the whole split. tests/test_parse.py checks, over every line of the test
# corpora, that this gives exactly what the bashlex path gives for every line it accepts.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@%+,=-")
_LINE_CHARS = _WORD_CHARS | frozenset(" |&;")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_OPERATORS = {"|", "||", "&&", ";"}
# bash's reserved words: any of them sends the line to bashlex, wherever it stands
_RESERVED = {
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "coproc",
}  # fmt: skip


def parse_plain_line(line: str) -> ParseResult | None:
    """The parse of a line of plain words joined by `|`, `&&`, `||` or `;`; None for anything else."""
    if len(line) > MAX_LINE_CHARS or not _LINE_CHARS.issuperset(line):
        return None
    segments: list[list[tuple[str, int]]] = [[]]  # the words between operators, with their offsets
    operators: list[str] = []
    offset = 0
    for token in line.split(" "):
        start, offset = offset, offset + len(token) + 1
        if not token:
            continue
        if token in _RESERVED:
            return None
        if token in _OPERATORS:
            if not segments[-1]:
                return None  # an operator first, or two in a row
            operators.append(token)
            segments.append([])
        elif _WORD_CHARS.issuperset(token):
            segments[-1].append((token, start))
        else:
            return None  # `a|b`, `a;`, `&`: operators must stand alone between words
    if not segments[-1]:
        return None  # an empty line, or one that ends with an operator
    commands = []
    pipelines = position = 0
    for index, segment in enumerate(segments):
        if index and operators[index - 1] == "|":
            position += 1
        else:
            pipelines, position = pipelines + 1, 0
        words: list[Word] = []
        assignments: list[Word] = []
        for token, _ in segment:
            if not words and "=" in token:
                if not _is_name(token.split("=", 1)[0]):
                    return None  # `a+=b`, `1=x`: leave such words to bashlex
                assignments.append(unquote(token))
            else:
                words.append(unquote(token))
        problems = tuple(w.unsafe for w in (*assignments, *words) if w.unsafe)  # plain words: only `__gatekeep`
        problems += tuple(r for a in assignments if (r := assignment_risk(a.value)))
        values = tuple(a.value for a in assignments)
        commands.append(SimpleCommand(tuple(words), values, (), pipelines, position, segment[0][1], problems))
    return ParseResult(line, tuple(commands))


def _is_name(text: str) -> bool:
    """A shell variable name: letters, digits and `_`, not starting with a digit."""
    return bool(text) and not text[0].isdigit() and _NAME_CHARS.issuperset(text)


# Words and operators, outside any heredoc, past which bashlex is not tried: it would run into its
# time limit (PARSE_SECONDS) on such a line anyway, and the fallback's reading then comes on top
# (`echo $a $a …` at 128 KiB took 0.99 s in all). No line a person or an agent types comes near
# it; a long heredoc's body (a file written whole) does not count.
MAX_PARSED_WORDS = 25_000
_PIECES = lazy(r"[\s;|&]+")
_QUOTED = lazy(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")


def _words(line: str, raw) -> int:
    """About how many words and operators the line holds outside its comments and quoted text
    (a long quoted script or comment is one word to the parser's grammar)."""
    for start, end in reversed(raw.comments):
        line = line[:start] + line[end:]
    return len(_PIECES.split(_QUOTED.sub("q", line)))


def parse_with_bashlex(line: str) -> ParseResult:
    from gatekeep.read import crosscheck

    if len(line) > MAX_LINE_CHARS:
        # all blanks and comments, it runs nothing; else it is not parsed. Only a line whose first
        # non-blank is a `#` can be all comments, and only such a long line is scanned for it
        if line.lstrip()[:1] == "#" and crosscheck.scan(line).blank_or_comment(line):
            return ParseResult(line, ())
        return _incomplete(line, (), f"the line is longer than {MAX_LINE_CHARS:,} characters")
    raw = crosscheck.scan(line)
    if raw.blank_or_comment(line):
        return ParseResult(line, ())
    if not raw.heredocs and len(line) > MAX_PARSED_WORDS and _words(line, raw) > MAX_PARSED_WORDS:
        return _incomplete(line, (), f"the line holds more than {MAX_PARSED_WORDS:,} words, more than the parser reads in time")
    try:
        trees = _bashlex_parse(line)
        walker = _Walker(line)
        for tree in trees:
            walker.walk(tree)
    except _ParseTimeout:
        return _incomplete(line, (), f"the parser did not finish within {PARSE_SECONDS} s of CPU time")
    except BaseException as e:  # bashlex raises many types on valid bash; all mean "could not parse"
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return _incomplete(line, (), unreadable(e, line))
    problems = walker.crosscheck(raw)
    if problems:
        return _incomplete(line, walker.commands, *problems, functions=walker.functions)
    risks = tuple(walker.risks)
    return ParseResult(
        line,
        tuple(walker.commands),
        functions=tuple(walker.functions),
        risks=risks,
        names=tuple(walker.names),
        loop_variables=tuple(v for v in walker.loop_variables if _named_once(line, v)),
    )


def unreadable(error: BaseException, line: str) -> str:
    """What could not be read, and where, in words (never an exception's name)."""
    message = str(getattr(error, "message", "") or "")
    where = ""
    if isinstance(getattr(error, "position", None), int) and isinstance(getattr(error, "s", None), str):
        offset = line.rfind(error.s) if error.s else -1  # a substitution's own parse counts from its start
        where = f" at column {max(offset, 0) + error.position + 1}"
    if isinstance(error, NotImplementedError):
        form = str(error).partition("type = {")[2].partition("}")[0] or "a form of bash"
        return f"{form} is bash gatekeep cannot read yet"
    if message.startswith("unexpected EOF"):
        return f"the line ends inside something it opened (a quote, a bracket, a heredoc){where}"
    if message:
        return f"bash syntax the parser cannot read{where}: {message}"
    if isinstance(error, RuntimeError) and str(error):  # gatekeep's own: why the parser could not run
        return f"the parser could not run: {error}"
    return f"a form of bash the parser stops on{where}"


def _incomplete(line: str, found, *problems: str, functions=()) -> ParseResult:
    from gatekeep.read import fallback

    commands = tuple(found) + tuple(fallback.candidate_commands(line))
    return ParseResult(line, commands, complete=False, problems=problems, functions=tuple(functions))


def _bashlex_parse(line: str) -> list:
    # _signal, signal's own C module: `import signal` wraps its constants in enums, and that
    # and threading cost a parser line ~1.5 ms (issue 18)
    import _signal

    from gatekeep.read import bashlex_loader

    bashlex = bashlex_loader.load()

    def on_alarm(signum, frame):
        raise _ParseTimeout

    def drop_our_timeout(unraisable) -> None:
        if not isinstance(unraisable.exc_value, _ParseTimeout):
            unraisablehook(unraisable)

    try:
        previous = _signal.signal(_signal.SIGVTALRM, on_alarm)
    except ValueError:  # not the main thread, where alone a signal handler runs
        raise RuntimeError("parse_line needs the main thread for its time limit") from None
    # Repeat every 50 ms: a handler that happens to run inside a finalizer (a generator
    # closed by the garbage collector) has its exception swallowed, and the parse would
    # then loop on, eating memory without end. The next alarm lands somewhere else.
    # Python reports a swallowed exception to sys.unraisablehook ("Exception ignored
    # in ..." on the user's terminal); for ours there is nothing to report.
    unraisablehook, sys.unraisablehook = sys.unraisablehook, drop_our_timeout
    _signal.setitimer(_signal.ITIMER_VIRTUAL, PARSE_SECONDS, 0.05)
    try:
        return bashlex.parse(line)
    finally:
        _signal.setitimer(_signal.ITIMER_VIRTUAL, 0)
        _signal.signal(_signal.SIGVTALRM, previous)
        sys.unraisablehook = unraisablehook


def _only_read_elsewhere(line: str, name: str, header: tuple[int, int]) -> bool:
    """Whether, outside the `for (( ))` header at `header`, `name` stands in the line only as
    `$name` or `${name}`: read, never given another value (`name=x`, `read name`, `(( name=… ))`)."""
    start, end = header
    return _uses_not_read(line[:start] + " " * (end - start) + line[end:], name) == 0


def _named_once(line: str, name: str) -> bool:
    """Whether `name` stands in the line once other than after `$` or `${` (its `for`): no
    `read name`, `name=…`, `printf -v name` or second loop can give it another value."""
    return _uses_not_read(line, name) <= 1


def _uses_not_read(line: str, name: str) -> int:
    """How often the word `name` stands in the line other than after `$` or `${`."""
    count, i = 0, line.find(name)
    while i >= 0:
        end = i + len(name)
        before, after = line[i - 1 : i] or " ", line[end : end + 1] or " "
        if not (before in _NAME_CHARS or before == "$") and after not in _NAME_CHARS:  # bash's names are ASCII
            count += before != "{" or line[i - 2 : i - 1] != "$"
        i = line.find(name, end)
    return count


class _Walker:
    """Collects simple commands from bashlex trees, and what the tree covers of the text."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.commands: list[SimpleCommand] = []
        self.substitutions: set[int] = set()
        self.heredocs: set[tuple[int, int]] = set()
        self.covered = bytearray(len(line))
        self.pipelines = 0
        self.functions: list[FunctionDef] = []
        self.risks: list[str] = []  # unsafe words outside simple commands
        self.names: list[Word] = []  # the words outside simple commands
        self.loop_variables: list[str] = []
        self.read_bodies: set[int] = set()  # unquoted heredoc bodies whose substitutions were read

    def cover(self, start: int, end: int) -> None:
        self.covered[start:end] = b"\x01" * (end - start)

    def walk(self, node) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node)
        elif kind == "pipeline":
            self.pipelines += 1
            position = 0
            for part in node.parts:
                if part.kind == "pipe":
                    self.cover(*part.pos)
                    position += 1
                elif part.kind == "command":
                    self.command(part, self.pipelines, position)
                else:
                    self.walk(part)
        elif kind in ("commandsubstitution", "processsubstitution"):
            # bashlex's own end position can be wrong (text after a newline is dropped): use bash's
            start = node.pos[0]
            end = expansion_end(self.line, start)
            from gatekeep.read.bashlex_grammar import heredoc_end

            if heredoc_end(node) >= 0:  # a heredoc's body inside, which may hold `'` or `)`: bashlex
                end = node.pos[1]  # has read it (bashlex_grammar makes the substitution end after it)
            self.substitutions.add(start)
            self.covered[start:end] = bytes(end - start)  # the inside must be covered by its own commands
            self.cover(start, start + (1 if self.line[start] == "`" else 2))
            self.cover(end - 1, end)
            self.walk(node.command)
        elif kind == "arithmetic":  # `$(( ))` in a word: its text is the word's (expansion_risk); the
            self.cover(*node.pos)  # substitutions inside are covered by their own commands
            for part in node.parts:
                self.walk(part)
            self.substitutions.add(node.pos[0])  # the raw scan reads `$((` as the start of a `$(`
        elif kind == "parameterexpansion":  # `${x:-$(cmd)}`: the substitutions inside run
            self.cover(*node.pos)
            for part in node.parts:
                self.walk(part)
        elif kind in ("word", "assignment"):  # outside a simple command: a `for` list, a function's name
            word = self.word(node)
            self.names.append(word)
            if word.unsafe:
                self.risks.append(word.unsafe)
        elif kind in ("reservedword", "operator", "pipe"):
            self.cover(*node.pos)
        elif kind == "redirect":
            self.redirect(node)
        elif kind == "function":
            self.function(node)
        elif kind == "arithcommand":
            self.arithmetic_command(node)
        elif kind == "arithexpressions":  # `for (( … ))`'s: evaluated, never run
            self.cover(*node.pos)
            for part in node.parts:
                self.walk(part)
            header = self.line[node.pos[0] + 2 : node.pos[1] - 2]
            known = frozenset(n for n in counters(header) if _only_read_elsewhere(self.line, n, node.pos))
            risk = arithmetic_risk(header, known=known)
            if risk:
                self.risks.append(risk)
        elif kind == "condcommand":
            self.cond_command(node)
        elif kind == "pattern":  # a `case` arm's patterns: matched against a string, never files
            for part in node.parts:
                if part.kind == "word":
                    word = self.word(part)
                    if word.unsafe:
                        self.risks.append(word.unsafe)
                else:
                    self.walk(part)
        else:
            first = len(self.commands)
            if kind == "for":
                words = [p for p in node.parts if p.kind == "word"]
                texts = [self.line[slice(*w.pos)] for w in words[1:]]
                if words and not any("$" in t or "`" in t for t in texts):
                    self.loop_variables.append(self.line[slice(*words[0].pos)])
            for child in _children(node):
                self.walk(child)
            # `{ ...; } > file`, `while ...; done < file`: the redirection applies to every command inside
            redirects = tuple(self.redirect(r) for r in getattr(node, "redirects", None) or ())
            if redirects:
                unsafe = tuple(r.unsafe for r in redirects if r.unsafe)
                self.commands[first:] = [
                    c._replace(redirects=c.redirects + redirects, problems=c.problems + unsafe)
                    for c in self.commands[first:]
                ]
                if first == len(self.commands):  # nothing inside runs a command, yet the target expands
                    self.risks += unsafe

    def function(self, node) -> None:
        first = len(self.commands)
        for child in node.parts:
            self.walk(child)
        name_node = next(part for part in node.parts if part.kind == "word")  # after `function`, if written
        name = unquote(self.line[slice(*name_node.pos)]).value
        body = self.commands[first:]
        calls = [c for c in body if c.argv[:1] == [name]]
        sizes = {c.pipeline: sum(1 for d in body if d.pipeline == c.pipeline) for c in calls}
        names = tuple(c.argv[0] for c in body if c.argv)
        piped = any(sum(1 for d in body if d.pipeline == c.pipeline) > 1 for c in body)
        spawns = piped or len(names) != len(set(names))
        self.functions.append(FunctionDef(name, len(calls), any(n > 1 for n in sizes.values()), names, spawns))

    def word(self, node) -> Word:
        start, end = node.pos
        self.cover(start, end)
        for part in getattr(node, "parts", ()):
            if part.kind in ("commandsubstitution", "processsubstitution", "arithmetic", "parameterexpansion"):
                self.walk(part)
        return unquote(self.line[start:end])

    def redirect(self, node) -> Redirect:
        start = node.pos[0]
        target = node.output
        if getattr(node, "heredoc", None) is not None:
            body = node.heredoc
            self.heredocs.add(tuple(body.pos))
            self.cover(*body.pos)
            self.cover(start, target.pos[1])
            text = self.line[body.pos[0] : body.pos[1]].rpartition("\n")[0]
            if node.type == "<<-":
                text = "\n".join(part.lstrip("\t") for part in text.split("\n"))
            delimiter = self.line[slice(*target.pos)]
            quoted = any(q in delimiter for q in "'\"\\")
            word = unquote(delimiter)  # `<<$"EOF"` ends at EOF in bash, at $EOF in zsh and dash
            unsafe = word.unsafe or (None if quoted else text_risk(text))
            if not quoted:
                self.heredoc_substitutions(*body.pos)
            # an unquoted body is expanded first: its text is computed when it runs (`bash <<EOF`
            # with `echo $x` in it runs what x holds as code)
            computed = not quoted and _EXPANDS.search(_ESCAPED.sub("", text)) is not None
            if not quoted:  # and its `\$`, `` \` ``, `\\` and `\newline` are read as bash reads them
                text = _BODY_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)
            return Redirect(node.type, word.value, computed, body=text, unsafe=unsafe)
        if isinstance(target, int):
            self.cover(*node.pos)
            return Redirect(node.type, str(target))
        self.cover(start, target.pos[0])
        word = self.word(target)
        return Redirect(node.type, word.value, word.dynamic, unsafe=word.unsafe)

    def arithmetic_command(self, node) -> None:
        """`(( EXPR ))`: a command named `((`, whose expression is one word (tools/builtins.toml
        judges it: arithmetic that names a variable runs what its value holds)."""
        start, end = node.pos
        self.cover(start, end)
        for part in node.parts:
            self.walk(part)
        expression = self.line[start + 2 : end - 2]
        words = (Word("(("), Word(" ".join(expression.split()), "$" in expression or "`" in expression), Word("))"))
        self.pipelines += 1
        self.commands.append(SimpleCommand(words, (), (), self.pipelines, 0, start, ()))

    def cond_command(self, node) -> None:
        """`[[ … ]]`: a command named `[[` whose words are the conditional's (tools/builtins.toml
        judges its operands: those of -eq and its kind are arithmetic there)."""
        from gatekeep.read.bashlex_grammar import cond_words

        start, end = node.pos
        self.cover(start, end)
        for part in node.parts:
            self.walk(part)
        spans, _ = cond_words(self.line, start)
        words = (Word("[["), *(unquote(self.line[a:b]) for a, b in spans), Word("]]"))
        problems = tuple(w.unsafe for w in words if w.unsafe)
        self.pipelines += 1
        self.commands.append(SimpleCommand(words, (), (), self.pipelines, 0, start, problems))

    def heredoc_substitutions(self, start: int, end: int) -> None:
        """The commands of the `$( )` and backquotes bash runs in the unquoted heredoc body at
        `line[start:end]`, each parsed by itself (bashlex reads such a body as text). A body
        whose backquotes hold a backslash (bash unescapes it first) is left unread."""
        from gatekeep.read.bashlex_grammar import substitution_end
        from gatekeep.read.crosscheck import body_substitutions

        for at, close in body_substitutions(self.line, start, end, substitution_end):
            backquoted = self.line[at] == "`"
            if self.line[close - 1 : close] != ("`" if backquoted else ")") or close - 1 == at:
                return  # one that does not close in the body: bash's own error, not a command to read
            inner_start = at + (1 if backquoted else 2)
            inner = self.line[inner_start : close - 1]
            if (backquoted and "\\" in inner) or not self.read_apart(inner, inner_start):
                return
        self.read_bodies.add(start)

    def read_apart(self, text: str, offset: int) -> bool:
        """Read `text` (a substitution's command, at `offset` in the line) as a line of its own,
        with the same cross-check (bashlex hides some substitutions it reads), and take in what
        it runs; False, taking nothing, when it cannot be read whole."""
        from gatekeep.read import crosscheck

        inner = _Walker(text)
        for tree in _bashlex_parse(text):
            inner.walk(tree)
        if inner.crosscheck(crosscheck.scan(text)):
            return False
        self.commands += [
            c._replace(pipeline=c.pipeline + self.pipelines, start=c.start + offset) for c in inner.commands
        ]
        self.pipelines += inner.pipelines
        self.functions += inner.functions
        self.risks += inner.risks
        self.names += inner.names
        return True

    def _named_fd(self, part) -> bool:
        """`{fd}>file`: an unquoted `{NAME}` right before a redirection opens a descriptor and
        names it (`echo {x}` and `echo '{x}'>f` print `{x}`)."""
        start, end = part.pos
        return bool(_NAMED_FD.fullmatch(self.line[start:end])) and self.line[end : end + 1] in ("<", ">")

    def command(self, node, pipeline: int = 0, position: int = 0) -> None:
        words: list[Word] = []
        assignments: list[str] = []
        redirects: list[Redirect] = []
        problems: list[str] = []
        for part in node.parts:
            if part.kind == "assignment" and not words:
                assignment = self.word(part)
                assignments.append(assignment.value)
                risk = assignment.unsafe or assignment_risk(assignment.value)
                if risk:
                    problems.append(risk)
            elif part.kind in ("word", "assignment"):
                words.append(self.word(part))
            elif part.kind == "redirect":
                redirects.append(self.redirect(part))
            else:
                self.walk(part)
        problems += [x.unsafe for x in (*words, *redirects) if x.unsafe]
        if any(r.writes_file and r.target.startswith("!") for r in redirects):
            # zsh's `>! FILE` and `>>! FILE` write FILE; bash reads a file named `!` and an argument
            problems.append("zsh reads `>!` and `>>!` as redirections to the word after them")
            redirects += [Redirect(">|", w.value, w.dynamic) for w in words[1:]]
            redirects += [Redirect(">|", r.target[1:], r.dynamic) for r in redirects if r.target.startswith("!")]
        if words and _ARRAY_ASSIGNMENT.match(words[0].value):
            problems.append("array assignments are not understood")
        if any(self._named_fd(part) for part in node.parts if part.kind == "word"):
            problems.append("named file descriptors ({fd}>file) are not understood")
        if not pipeline:
            self.pipelines += 1
            pipeline = self.pipelines
        self.commands.append(
            SimpleCommand(
                tuple(words), tuple(assignments), tuple(redirects), pipeline, position, node.pos[0], tuple(problems)
            )
        )

    def crosscheck(self, raw) -> list[str]:
        problems = []
        hidden = raw.substitutions - self.substitutions
        if hidden:
            problems.append(f"a substitution at column {min(hidden) + 1} is hidden from the parser")
        if any(h.expands_substitution and h.body_start not in self.read_bodies for h in raw.heredocs):
            problems.append("a heredoc body runs a command substitution gatekeep could not read")
        if {(h.body_start, h.end) for h in raw.heredocs} != self.heredocs:
            problems.append("the parser read a heredoc differently from bash")
        for start, end in raw.comments:
            self.cover(start, end)
        line = self.line
        for i, flag in enumerate(self.covered):
            if not flag and not line[i].isspace() and not line.startswith("\\\n", i):
                problems.append(f"the parser skipped text at column {i + 1}")
                break
        return problems


def _children(node) -> list:
    children = []
    for attr in ("parts", "list"):
        children.extend(getattr(node, attr, None) or ())
    command = getattr(node, "command", None)
    if command is not None:
        children.append(command)
    return children
