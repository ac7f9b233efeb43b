"""The parts of bash's grammar bashlex parses but refuses to build: `time`, `case`, `select`,
`coproc`, and arithmetic expansion (`$(( ))`, `$[ ]`); and, further down, the tokens it never
makes (`(( ))`, `[[ ]]`, arrays, zsh's `foreach` and `always`).

bashlex 0.18 has these rules in its grammar, and its tokenizer produces their tokens (TIME,
TIMEOPT, CASE, ESAC, SEMI_SEMI, SELECT, COPROC...), but their actions raise
NotImplementedError, so a line with `time make` or a `case` was "could not be read" and
never allowed. These are the actions, building nodes the walker in parse.py already reads:

  * `time [-p] [--] PIPELINE` and `! PIPELINE`: the pipeline, with `time`, `-p`, `--` and
    `!` as reserved words before its commands (bashlex's own action read `time` as `!`);
  * `case WORD in PATTERN) LIST ;; ... esac`: a `case` node whose parts are the subject word,
    reserved words, a `pattern` node per arm (its words, and `|`), and each arm's list;
  * `select NAME in WORDS; do LIST; done`: a `select` node shaped as bashlex's `for`;
  * `coproc [NAME] COMMAND`: a `coproc` node with `coproc`, the name and the command;
  * `$(( EXPR ))` and `$[ EXPR ]` in a word: an `arithmetic` node whose parts are the command
    substitutions bash runs inside it. The expression is read as bash reads it, as if in
    double quotes: a `$( )` or backquote inside single quotes there runs too. Whether the
    expression itself is inert is shellwords.expansion_risk's to say, from the text.

bashlex_loader installs them in place of bashlex's by the name of each action function; the
grammar itself (and so the shipped tables) is unchanged.
"""

from __future__ import annotations

from gatekeep.core.lazyre import lazy


def _nodes():
    from bashlex import ast, parser, tokenizer

    return ast, parser, tokenizer


def _reserved(p, index: int, word: str | None = None):
    ast, _, _ = _nodes()
    return ast.node(kind="reservedword", word=p[index] if word is None else word, pos=p.lexspan(index))


def _compound(kind: str, parts: list):
    ast, parser, _ = _nodes()
    span = parser._partsspan(parts)
    return ast.node(kind="compound", redirects=[], list=[ast.node(kind=kind, parts=parts, pos=span)], pos=span)


def p_timespec(p):
    """timespec : TIME
    | TIME TIMEOPT
    | TIME TIMEOPT TIMEIGN"""
    p[0] = [_reserved(p, i) for i in range(1, len(p))]


def p_pipeline_command(p):
    """pipeline_command : pipeline
    | BANG pipeline_command
    | timespec pipeline_command
    | timespec list_terminator
    | BANG list_terminator"""
    ast, _, _ = _nodes()
    if len(p) == 2:
        if len(p[1]) == 1:
            p[0] = p[1][0]
        else:
            p[0] = ast.node(kind="pipeline", parts=p[1], pos=(p[1][0].pos[0], p[1][-1].pos[1]))
        return
    prefix = p[1] if isinstance(p[1], list) else [_reserved(p, 1, "!")]
    rest = p[2]
    if rest is None or rest.kind == "operator":  # `time` or `!` alone: nothing runs but the shell's own
        parts = prefix + ([ast.node(kind="reservedword", word=rest.op, pos=rest.pos)] if rest is not None else [])
        p[0] = ast.node(kind="pipeline", parts=parts, pos=(parts[0].pos[0], parts[-1].pos[1]))
    elif rest.kind == "pipeline":
        rest.parts[0:0] = prefix
        rest.pos = (rest.parts[0].pos[0], rest.parts[-1].pos[1])
        p[0] = rest
    else:
        p[0] = ast.node(kind="pipeline", parts=[*prefix, rest], pos=(prefix[0].pos[0], rest.pos[1]))


def p_case_command(p):
    """case_command : CASE WORD newline_list IN newline_list ESAC
    | CASE WORD newline_list IN case_clause_sequence newline_list ESAC
    | CASE WORD newline_list IN case_clause ESAC"""
    _, parser, _ = _nodes()
    p[0] = _compound("case", parser._makeparts(p))


def p_case_clause(p):
    """case_clause : pattern_list
    | case_clause_sequence pattern_list"""
    p[0] = p[1] if len(p) == 2 else p[1] + p[2]


def p_pattern_list(p):
    """pattern_list : newline_list pattern RIGHT_PAREN compound_list
    | newline_list pattern RIGHT_PAREN newline_list
    | newline_list LEFT_PAREN pattern RIGHT_PAREN compound_list
    | newline_list LEFT_PAREN pattern RIGHT_PAREN newline_list"""
    ast, parser, _ = _nodes()
    parts = []
    for i in range(2, len(p)):
        if isinstance(p[i], list):  # the pattern's words
            parts.append(ast.node(kind="pattern", parts=p[i], pos=parser._partsspan(p[i])))
        elif isinstance(p[i], ast.node):  # the arm's commands
            parts.append(p[i])
        elif p[i] in ("(", ")"):
            parts.append(_reserved(p, i))
    p[0] = parts


def p_case_clause_sequence(p):
    """case_clause_sequence : pattern_list SEMI_SEMI
    | case_clause_sequence pattern_list SEMI_SEMI
    | pattern_list SEMI_AND
    | case_clause_sequence pattern_list SEMI_AND
    | pattern_list SEMI_SEMI_AND
    | case_clause_sequence pattern_list SEMI_SEMI_AND"""
    found = p[1] if len(p) == 3 else p[1] + p[2]
    p[0] = [*found, _reserved(p, len(p) - 1)]


def p_pattern(p):
    """pattern : WORD
    | pattern BAR WORD"""
    _, parser, _ = _nodes()
    word = parser._expandword(p.context, p.slice[len(p) - 1])
    p[0] = [word] if len(p) == 2 else [*p[1], _reserved(p, 2), word]


def p_select_command(p):
    """select_command : SELECT WORD newline_list DO list DONE
    | SELECT WORD newline_list LEFT_CURLY list RIGHT_CURLY
    | SELECT WORD SEMICOLON newline_list DO list DONE
    | SELECT WORD SEMICOLON newline_list LEFT_CURLY list RIGHT_CURLY
    | SELECT WORD newline_list IN word_list list_terminator newline_list DO list DONE
    | SELECT WORD newline_list IN word_list list_terminator newline_list LEFT_CURLY list RIGHT_CURLY"""
    ast, parser, _ = _nodes()
    parts = parser._makeparts(p)
    for i, part in enumerate(parts):  # a `;` before `do` belongs to the loop, as in bashlex's `for`
        if part.kind == "operator" and part.op == ";":
            parts[i] = ast.node(kind="reservedword", word=";", pos=part.pos)
            break
    p[0] = _compound("select", parts)


def p_coproc(p):
    """coproc : COPROC shell_command
    | COPROC shell_command redirection_list
    | COPROC WORD shell_command
    | COPROC WORD shell_command redirection_list
    | COPROC simple_command"""
    ast, parser, _ = _nodes()
    last = len(p) - 1
    redirects = p[last] if p.slice[last].type == "redirection_list" else []
    parts = parser._makeparts(p)
    if p.slice[last].type == "simple_command":  # its elements: made a command, as bashlex's `command` does
        elements = p[last]
        parts = parts[: len(parts) - len(elements)]
        parts.append(ast.node(kind="command", parts=elements, pos=parser._partsspan(elements)))
    elif redirects:
        parts = parts[: len(parts) - len(redirects)]
    p[0] = _compound("coproc", parts)
    if redirects:  # for every command of the coprocess, as `{ …; } > file`'s
        p[0].redirects = redirects
        p[0].pos = (p[0].pos[0], redirects[-1].pos[1])


ACTIONS = {
    f.__name__: f
    for f in (
        p_timespec,
        p_pipeline_command,
        p_case_command,
        p_case_clause,
        p_pattern_list,
        p_case_clause_sequence,
        p_pattern,
        p_select_command,
        p_coproc,
    )
}


def arithmetic(parserobj, string: str, start: int):
    """The `arithmetic` node of the expansion at `string[start]` (`$((` or `$[`), and the index
    after it; a ParsingError for one that does not close."""
    from bashlex import ast, errors

    closer = "))" if string.startswith("$((", start) else "]"
    end = nested_end(string, start + 3, "(", ")") + 1 if closer == "))" else nested_end(string, start + 2, "[", "]")
    if end > len(string) or not string.startswith(closer, end - len(closer)):
        raise errors.ParsingError("bad arithmetic expansion: it does not close", string, start)
    inner = start + (3 if closer == "))" else 2)
    parts = _substitutions_in(parserobj, string, inner, end - len(closer))
    return ast.node(kind="arithmetic", parts=parts, pos=(start, end)), end


def parameter_expansion(parserobj, string: str, start: int):
    """The node of the `${ … }` at `string[start]`, with the substitutions bash may run inside
    (`${x:-$(cmd)}`; quotes there do not always stop them, so none is skipped), and the index
    after it; a ParsingError for one that does not close."""
    from bashlex import ast, errors

    end = nested_end(string, start + 2, "{", "}")
    if end > len(string) or string[end - 1] != "}":
        raise errors.ParsingError("bad substitution: no closing }", string, start)
    parts = _substitutions_in(parserobj, string, start + 2, end - 1)
    return ast.node(kind="parameterexpansion", value=string[start + 2 : end - 1], parts=parts, pos=(start, end)), end


def nested_end(string: str, i: int, opener: str, closer: str) -> int:
    """Where the expansion whose inside starts at `string[i]` ends (just after its `closer`), or
    past the string's end: the substitutions inside skipped as the parser reads them (a `)` in a
    case pattern or a comment there closes nothing), and quoted text in `${ }`."""
    from gatekeep.read.shellwords import expansion_end

    depth, n = 0, len(string)
    while i < n:
        c = string[i]
        if c == "\\":
            i += 2
        elif string.startswith("$(", i) and not string.startswith("$((", i):
            i = substitution_end(string, i)
        elif c == "`":
            i = expansion_end(string, i)
        elif string.startswith("${", i):
            i = nested_end(string, i + 2, "{", "}")
        elif c in "'\"" and opener == "{":
            after = _quoted_end(string, i)
            i = n + 1 if after is None or after < 0 else after
        elif c == opener:
            depth += 1
            i += 1
        elif c == closer:
            if depth == 0:
                return i + 1
            depth -= 1
            i += 1
        else:
            i += 1
    return n + 1


def _substitutions_in(parserobj, string: str, i: int, end: int) -> list:
    """The command substitutions (and nested arithmetic) bash runs in `string[i:end]`, an
    arithmetic expression: quotes there do not stop them."""
    from bashlex import ast, errors, subst

    parts = []
    while i < end:
        c = string[i]
        if c == "\\":
            i += 2
        elif string.startswith("$[", i):
            node, i = arithmetic(parserobj, string, i)
            parts.append(node)
        elif string.startswith("$(", i):  # `$((` too: arithmetic, or a `$( (…) )` (_install_arithmetic)
            node, i = subst._extractcommandsubst(parserobj, string, i + 2)
            parts.append(node)
        elif string.startswith("``", i):  # an empty substitution: it runs nothing
            i += 2
        elif c == "`":
            close = subst._stringextract(string, i + 1, "`")
            if close < 0 or close >= end:
                raise errors.ParsingError('bad substitution: no closing "`"', string, i)
            command, _ = subst._recursiveparse(parserobj, string[i + 1 : close], 0)
            subst._adjustpositions(command, i + 1, len(string))
            parts.append(ast.node(kind="commandsubstitution", command=command, pos=(i, close + 1)))
            i = close + 1
        else:
            i += 1
    return parts


def _install_arithmetic() -> None:
    from bashlex import subst

    command_substitution, parameter = subst._extractcommandsubst, subst._paramexpand

    def extractcommandsubst(parserobj, string, sindex, sxcommand=False):
        if string[sindex : sindex + 1] != "(":
            return command_substitution(parserobj, string, sindex, sxcommand)
        end = nested_end(string, sindex + 1, "(", ")")  # `$((`: sindex is after `$(`
        if string.startswith(")", end):
            return arithmetic(parserobj, string, sindex - 2)
        # not closed by `))`: as bash, a command substitution whose command starts with `(`
        from bashlex import ast

        node, end = subst._parsedolparen(parserobj, string, sindex)
        return ast.node(kind="commandsubstitution", command=node, pos=(sindex - 2, end + 1)), end + 1

    def paramexpand(parserobj, string, sindex):
        if string.startswith("$[", sindex):
            return arithmetic(parserobj, string, sindex)
        if string.startswith("${", sindex):  # bashlex ends it at the first `}` and reads nothing inside
            return parameter_expansion(parserobj, string, sindex)
        return parameter(parserobj, string, sindex)

    subst._extractcommandsubst, subst._paramexpand = extractcommandsubst, paramexpand


KINDS = (
    "case", "select", "coproc", "pattern", "arithmetic", "arithcommand", "condcommand", "arithfor", "arithexpressions",
    "parameterexpansion",
)  # fmt: skip  # the nodes these actions make that bashlex has none of


def install(yaccparser) -> None:
    """Put these actions in place of bashlex's in its built parser (productions name their
    action), and teach bashlex's tree visitor (its parse walks each tree with one) the new nodes."""
    from bashlex import ast

    actions = {
        **ACTIONS,
        "p_arith_command": p_arith_command,
        "p_arith_for_command": p_arith_for_command,
        "p_cond_command": p_cond_command,
    }
    for production in yaccparser.productions:
        action = getattr(production, "callable", None)
        name = getattr(action, "__name__", None)
        if name in actions:
            production.callable = actions[name]
    visit = ast.nodevisitor.visit

    def visit_new_kinds(self, n):
        if n.kind not in KINDS:
            return visit(self, n)
        self.visitnode(n)
        handler = getattr(self, "visit" + n.kind, None)
        descend = handler(n, n.parts) if handler is not None else None
        if descend is None or descend:
            for child in n.parts:
                self.visit(child)
        self.visitnodeend(n)
        return None

    ast.nodevisitor.visit = visit_new_kinds
    _install_arithmetic()
    _install_tokens()


# --- `(( … ))` and `[[ … ]]`: tokens bashlex's tokenizer never makes ---------------------------
#
# bash's read_token makes one ARITH_CMD token of `(( EXPR ))` (ARITH_FOR_EXPRS after `for`), and
# one COND_CMD token of what stands between `[[` and `]]`, wherever a reserved word may stand;
# bashlex reads `((` as two subshells and `[[ a < b ]]` as a command with a redirection. The
# tokenizer below makes these tokens first, and the grammar's actions build nodes of them:
# `arithcommand` (and `arithfor`) and `condcommand`, each with the substitutions bash runs inside.


def arithmetic_close(text: str, start: int) -> int:
    """Where the `))` that closes the `((` at `text[start]` begins, or -1 when that `((` does
    not close as one (bash then reads two subshells)."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if (text.startswith("$", i) and text.startswith(("(", "{"), i + 1) and not text.startswith("$((", i)) or c == "`":
            i = _quoted_end(text, i)  # a substitution's own parentheses (a case pattern's `)`) close nothing
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 1:
                return i if text.startswith("))", i) else -1
            if depth < 1:
                return -1
        i += 1
    return -1


_COND_ENDS_WORD = " \t\n;&|()<>"


def cond_close(text: str, start: int) -> int:
    """Where the `]]` that closes the `[[` at `text[start]` begins, or -1."""
    return cond_words(text, start)[1]


def cond_words(text: str, start: int) -> tuple[list[tuple[int, int]], int]:
    """The spans of the words and operators of the conditional whose `[[` is at `text[start]`,
    and where its `]]` begins (-1: it does not close as one). The words are read as bash reads
    them: quotes, substitutions, and the regular expression after `=~`, in which `(`, `)` and
    `|` are part of the word."""
    spans: list[tuple[int, int]] = []
    i, n = start + 2, len(text)
    regex_next = False
    while i < n:
        c = text[i]
        if c in " \t\n":
            i += 1
            continue
        if text.startswith("]]", i) and (i + 2 == n or text[i + 2] in _COND_ENDS_WORD):
            return spans, i
        if text.startswith(("&&", "||"), i):
            spans.append((i, i + 2))
            i += 2
            continue
        if c in "()<>" and not regex_next:
            spans.append((i, i + 1))
            i += 1
            continue
        if c in ";&|":
            return spans, -1  # not a conditional bash can read
        word_start, depth = i, 0
        while i < n:
            c, after = text[i], _quoted_end(text, i)
            if after is not None:
                if after < 0:
                    return spans, -1
                i = after
            elif regex_next and c == "(":
                depth += 1
                i += 1
            elif regex_next and c == ")" and depth:
                depth -= 1
                i += 1
            elif (regex_next and c == "|") or c not in _COND_ENDS_WORD:
                i += 1
            else:
                break
        spans.append((word_start, min(i, n)))
        regex_next = text[word_start:i] == "=~"
    return spans, -1


def _install_comsub_in_quotes() -> None:
    """A `$( )` inside double quotes is a command all the same: bash 5 parses it as one, heredocs
    and all (`"$(cat <<'EOF' … What's … EOF\n)"`, the usual way agents pass a PR's body); bashlex's
    port of bash 4 scans it as text there, takes the heredoc's `'` for a quote and fails. It is
    read as outside quotes instead."""
    from bashlex import tokenizer

    parse = tokenizer.tokenizer._parse_comsub

    def parse_comsub(self, doublequotes, open, close, parsingcommand=False, dquote=False, firstclose=False):
        if parsingcommand and open == "(":
            doublequotes, dquote = None, False
        return parse(self, doublequotes, open, close, parsingcommand, dquote, firstclose)

    tokenizer.tokenizer._parse_comsub = parse_comsub


def heredoc_end(node) -> int:
    """Where the last heredoc body in `node`'s tree ends (-1: it holds none)."""
    from bashlex import ast

    class Finder(ast.nodevisitor):
        end = -1

        def visitheredoc(self, n, value):
            self.end = max(self.end, n.pos[1])

    finder = Finder()
    finder.visit(node)
    return finder.end


_CASE_WORD = lazy(r"(?<![A-Za-z0-9_])case[ \t\n]")


def _parsed_substitution_end(text: str, i: int) -> int | None:
    """Where the `)` that closes the `$( )` whose command starts at `text[i]` stands, as the
    parser reads that command; None when it cannot."""
    from bashlex import errors, parser, subst

    try:
        _, end = subst._parsedolparen(parser._parser(text), text, i)
    except (errors.ParsingError, NotImplementedError, AssertionError, IndexError):
        return None
    return end if text.startswith(")", end) else None


def substitution_end(text: str, i: int) -> int:
    """Where the substitution at `text[i]` ends, as bashlex's tokenizer finds the end of a `$( )`
    in a word (case patterns, comments and quotes inside taken into account); for anything else,
    or one that does not close, shellwords' approximate expansion_end."""
    from bashlex import errors, state, tokenizer

    from gatekeep.read.shellwords import expansion_end

    if not text.startswith("$(", i) or text.startswith("$((", i):
        return expansion_end(text, i)
    reader = tokenizer.tokenizer(text[i + 2 :], parserstate=state.parserstate())
    try:
        inside = reader._parse_comsub(None, "(", ")", parsingcommand=True)
    except (errors.ParsingError, tokenizer.MatchedPairError):
        return expansion_end(text, i)
    return i + 2 + len(inside)


def _install_heredocs_in_substitutions() -> None:
    """bashlex ends a `$( )` where its command ends, before the body of a heredoc the command
    reads (`"$(cat <<'EOF' … EOF\n)"`), and then reads that body as more of the word: a
    backquoted `name` in a PR's text became a command. The substitution ends at its `)`,
    after the body."""
    from bashlex import errors, flags, subst

    parse = subst._parsedolparen

    def parsedolparen(parserobj, base, sindex):
        # the substitution's parse starts from a copy of the enclosing parser's state: not inside
        # a case pattern, where that parser may be after reading a `;;` (the `)` ends no pattern)
        state = parserobj.parserstate
        pattern = flags.parser.CASEPAT in state
        state.discard(flags.parser.CASEPAT)
        try:
            node, end = parse(parserobj, base, sindex)
        finally:
            if pattern:
                state.add(flags.parser.CASEPAT)
        close = end
        while close < len(base) and base[close] in " \t":
            close += 1
        if base[close : close + 1] == ")":  # (its end is the last command's, before any blanks)
            end = close
        last = heredoc_end(node)
        if last > end:
            j = last
            while j < len(base) and base[j] in " \t\n":
                j += 1
            if j >= len(base) or base[j] != ")":
                raise errors.ParsingError("a heredoc in $( ) that does not end before its )", base, sindex)
            end = j
        return node, end

    subst._parsedolparen = parsedolparen
    _install_lines_in_substitutions()


def _install_lines_in_substitutions() -> None:
    """bashlex reads a substitution's first line only (`$(a\nb)`, `` `a\nb` ``, `<(a\nb)`): its
    parse stops at a newline, as a line's does. The lines after it are read too, up to the `)`
    or the end of the backquoted text; the substitution's command is then a list of them."""
    import copy

    from bashlex import ast, subst

    parse = subst._recursiveparse

    def fresh(arguments):
        if arguments is None:
            return None
        return {**arguments, "parserstate": copy.copy(arguments["parserstate"])} if "parserstate" in arguments else dict(arguments)

    def recursiveparse(parserobj, base, sindex, tokenizerargs=None):
        node, endp = parse(parserobj, base, sindex, fresh(tokenizerargs))
        nodes, n = [node], len(base)
        while True:
            j = max(sindex + endp, heredoc_end(nodes[-1]))
            while j < n and base[j] in " \t":
                j += 1
            if j < n and base[j] == "#" and base[j - 1] in " \t;&|":  # a comment, to the end of its line
                end = base.find("\n", j)
                j = n if end < 0 else end
            if j >= n or base[j] != "\n":
                break
            while j < n and base[j] in " \t\n":
                j += 1
            if j >= n or base[j] == ")":
                endp = j - sindex
                break
            more, more_end = parse(parserobj, base, j, fresh(tokenizerargs))
            if more_end <= 0:
                break
            nodes.append(more)
            endp = j - sindex + more_end
        if len(nodes) > 1:
            node = ast.node(kind="list", parts=nodes, pos=(nodes[0].pos[0], nodes[-1].pos[1]))
        return node, endp

    subst._recursiveparse = recursiveparse


_COMPOUND = lazy(r"[A-Za-z_][A-Za-z_0-9]*\+?=\(")
_DECLARATIONS = frozenset({"declare", "typeset", "local", "readonly", "export"})
_FOREACH = lazy(r"foreach[ \t]+([A-Za-z_][A-Za-z_0-9]*)[ \t]*\(")
_ZSH_END = lazy(r"end(?=[ \t\n;&|)]|$)")
_ZSH_ALWAYS = lazy(r"always(?=[ \t\n])")
_ZSH_ANONYMOUS = lazy(r"(?:\(\)|function)[ \t]*\{(?=[ \t\n])")
_ZSH_REPEAT = lazy(r"repeat[ \t]+([0-9]+)(?:[ \t]*[;\n][ \t\n]*|[ \t]+)(?=do(?=[ \t\n;]))")
_ZSH_CLOSE = lazy(r"\}(?=[ \t\n;&|)]|$)")


def _compound_close(text: str, start: int) -> int:
    """Where the `)` that closes the array value whose `(` is at `text[start]` stands, or -1."""
    depth, i, n = 0, start, len(text)
    while i < n:
        after = _quoted_end(text, i)
        if after is not None:
            if after < 0:
                return -1
            i = after
            continue
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _quoted_end(text: str, i: int) -> int | None:
    """Where what starts at `text[i]` and is one piece of a word ends: a backslash and its
    character, a quoted part (the substitutions in double quotes skipped whole), a `$( )`,
    `${ }`, `$[ ]` or backquotes; -1 for a single quote that never closes; None when none starts
    there."""
    c, n = text[i], len(text)
    if c == "\\":
        return i + 2
    if c == "'":
        close = text.find("'", i + 1)
        return -1 if close < 0 else close + 1
    if c == '"':
        i += 1
        while i < n and text[i] != '"':
            if text[i] == "\\":
                i += 2
            elif text.startswith(("$(", "${", "$[", "`"), i):
                i = _expansion_end(text, i)
            else:
                i += 1
        return i + 1
    return _expansion_end(text, i) if text.startswith(("$(", "${", "$[", "`"), i) else None


def _expansion_end(text: str, i: int) -> int:
    """Where the `$( )`, `$(( ))`, `${ }`, `$[ ]` or backquotes at `text[i]` end, the parser's
    way (substitution_end, nested_end)."""
    from gatekeep.read.shellwords import expansion_end

    if text.startswith("$((", i):
        end = nested_end(text, i + 3, "(", ")")
        return end + 1 if text.startswith(")", end) else substitution_end(text, i)
    if text.startswith("$(", i):
        return substitution_end(text, i)
    if text.startswith("${", i):
        return nested_end(text, i + 2, "{", "}")
    if text.startswith("$[", i):
        return nested_end(text, i + 2, "[", "]")
    return expansion_end(text, i)


def _install_quoted_word_ends() -> None:
    """bashlex takes a word that starts and ends with `'` for one quoted string, and so hides
    `$(cmd)` in `'x'$(cmd)'y'`; and it reads no process substitution in a word with a double
    quote (`"x"<(cmd)`). Bash runs both. Such a word is read in two pieces, split after its first
    quoted part or before the `<(`, each as bashlex reads it (no tilde at the second's start)."""
    import copy

    from bashlex import flags, subst, utils

    expand = subst._expandwordinternal

    def piece(wordtoken, start: int, end: int):
        token = copy.copy(wordtoken)
        token.value, token.lexpos, token.endlexpos = wordtoken.value[start:end], wordtoken.lexpos + start, wordtoken.lexpos + end
        token.flags = utils.typedset(flags.word)
        for flag in wordtoken.flags:
            if flag != flags.word.DQUOTE or '"' in token.value:
                token.flags.add(flag)
        if start:
            token.flags.add(flags.word.NOTILDE)
        return token

    def expandwordinternal(parserobj, wordtoken, qheredocument, qdoublequotes, quoted, isexp):
        value = wordtoken.value
        if qheredocument:
            at = None
        elif qdoublequotes:  # bashlex's parser says so of any word that starts with `"`
            at = _quoted_end(value, 0) if value[:1] == '"' else None
            at = at if at is not None and 0 < at < len(value) else None
        else:
            at = _split_point(value)
        if at is None:
            return expand(parserobj, wordtoken, qheredocument, qdoublequotes, quoted, isexp)
        found, text = [], ""
        for start, end in ((0, at), (at, len(value))):
            inside = value[start] == '"' and bool(qdoublequotes or start)
            parts, expanded = expandwordinternal(parserobj, piece(wordtoken, start, end), 0, inside, quoted, isexp)
            found += parts
            text += expanded
        return found, text

    subst._expandwordinternal = expandwordinternal


def _split_point(value: str) -> int | None:
    """Where to cut a word bashlex would misread (see _install_quoted_word_ends), or None."""
    if len(value) > 2 and value[0] == "'" and value[-1] == "'":
        close = value.find("'", 1)
        if 0 < close < len(value) - 1:
            return close + 1
    if '"' in value and ("<(" in value or ">(" in value):
        i = 0
        while i < len(value):
            if value.startswith(("<(", ">("), i):
                if i > 0:
                    return i
                i = nested_end(value, i + 2, "(", ")")  # the word's own first one, whole
                continue
            after = _quoted_end(value, i)
            i = i + 1 if after is None else after
            if i < 0:
                return None
    return None


def _install_tokens() -> None:
    from bashlex import heredoc, tokenizer, utils

    _install_quoted_word_ends()
    _install_comsub_in_quotes()
    _install_heredocs_in_substitutions()
    read = tokenizer.tokenizer._readtoken
    types = tokenizer.tokentype

    def readtoken(self):
        if self.redirstack and self._last_read_token.ttype == types.NEWLINE and self._token_to_read is None:
            # bash reads the bodies of the heredocs a line opened as soon as that line ends, in a
            # compound command too (`( cat <<EOF` … `EOF` … `)`); bashlex only at the end of a
            # whole list, and took the bodies for commands
            heredoc.gatherheredocuments(self)
        pending = getattr(self, "_gatekeep_pending", None)
        pattern = bool(self._parserstate & tokenizer.parserflags.CASEPAT)  # (reading a `)` ends it)
        token = pending.pop(0) if pending else self._gatekeep_read()
        kind = token if isinstance(token, types) else getattr(token, "ttype", None)
        if self._shell_eof_token is not None and not pattern:
            # a substitution's own parse: its `)` ends it, as a line's end does, wherever its
            # parentheses are balanced (bashlex's grammar took it there after some commands only:
            # `$(a && b)` failed)
            depth = self.__dict__.get("_gatekeep_parens", 0)
            if kind == types.RIGHT_PAREN and depth == 0:
                return types.NEWLINE
            self._gatekeep_parens = depth + (kind == types.LEFT_PAREN) - (kind == types.RIGHT_PAREN)
        braces = self.__dict__.setdefault("_gatekeep_braces", [])  # True: a group zsh closes at any `}`
        if kind == types.LEFT_CURLY:
            braces.append(bool(braces and braces[-1]) or getattr(self, "_gatekeep_anonymous", False))
            self._gatekeep_anonymous = False
        elif kind == types.RIGHT_CURLY and braces:
            braces.pop()
        return token

    def read_token(self):
        if self._token_to_read is None:
            text, i = self._shell_input_line, self._shell_input_line_index
            while i < len(text) and text[i] in " \t":
                i += 1
            last = self._last_read_token
            zsh = self._gatekeep_zsh(text, i, last)
            if zsh is not None:
                return zsh
            if text.startswith("((", i) and (last.ttype == types.FOR or self._reserved_word_acceptable(last)):
                close = arithmetic_close(text, i)
                if close >= 0:
                    kind = types.ARITH_FOR_EXPRS if last.ttype == types.FOR else types.ARITH_CMD
                    return self._gatekeep_token(kind, i, close + 2, text[i + 2 : close])
            if (  # `coproc NAME { …; }`: the brace opens the coprocess's command
                text.startswith("{", i)
                and text[i + 1 : i + 2] in (" ", "\t", "\n")
                and last.ttype == types.WORD
                and self._token_before_that.ttype == types.COPROC
            ):
                self._open_brace_count += 1
                return self._gatekeep_token(types.LEFT_CURLY, i, i + 1, "{")
            if text[i : i + 1].isalpha() or text[i : i + 1] == "_":
                token = self._gatekeep_compound_assignment(text, i)
                if token is not None:
                    return token
            if (
                text.startswith("[[", i)
                and text[i + 2 : i + 3] in (" ", "\t", "\n")
                and self._reserved_word_acceptable(last)
                and not self._parserstate & tokenizer.parserflags.CASEPAT
            ):
                close = cond_close(text, i)
                if close >= 0:
                    start = self._gatekeep_token(types.COND_START, i, i + 2, "[[")
                    inner = self._gatekeep_token(types.COND_CMD, i + 2, close, text[i + 2 : close])
                    end = self._gatekeep_token(types.COND_END, close, close + 2, "]]")
                    self._gatekeep_pending = [inner, end]
                    return start
        return read(self)

    def compound_assignment(self, text: str, i: int):
        """`NAME=( … )` or `NAME+=( … )` where an assignment may stand: one ASSIGNMENT_WORD, as
        bash reads it (parse_compound_assignment); None for anything else."""
        m = _COMPOUND.match(text, i)
        if m is None:
            return None
        recent = (self._last_read_token, self._token_before_that, self._two_tokens_ago)
        declared = any(  # `declare -a a=(…)`, `local a=(…)`: an argument of a declaration builtin
            t.value in _DECLARATIONS and all(u.ttype == types.WORD for u in recent[: k + 1])
            for k, t in enumerate(recent)
        )
        if not declared and not self._assignment_acceptable(self._last_read_token):
            return None
        close = _compound_close(text, m.end() - 1)
        if close < 0 or (close + 1 < len(text) and text[close + 1] not in " \t\n;&|)<>"):
            return None
        token = self._gatekeep_token(types.ASSIGNMENT_WORD, i, close + 1, text[i : close + 1])
        token.flags = utils.typedset(tokenizer.wordflags)
        for flag in (tokenizer.wordflags.ASSIGNMENT, tokenizer.wordflags.NOSPLIT, tokenizer.wordflags.COMPASSIGN):
            token.flags.add(flag)
        return token

    def zsh_forms(self, text: str, i: int, last):
        """zsh's `foreach NAME (WORDS) LIST end`, read as bash's `for NAME in WORDS; do LIST done`,
        and `{ A } always { B }`, read as `{ A }; { B }` (both run A, then B). Bash rejects
        both, so reading them as zsh does only adds what zsh runs."""
        loops = self.__dict__.setdefault("_gatekeep_loops", [])  # "list" or "body", innermost last
        command_position = self._reserved_word_acceptable(last)
        if loops and loops[-1] == "list" and text.startswith(")", i):
            loops[-1] = "body"
            semicolon = self._gatekeep_token(types.SEMICOLON, i, i + 1, ";")
            j = i + 1
            while j < len(text) and text[j] in " \t":
                j += 1
            if text.startswith(";", j) and not text.startswith(";;", j):  # `foreach x (a); cmd`: the `;` is `do`
                self._gatekeep_pending = [self._gatekeep_token(types.DO, j, j + 1, "do")]
            else:
                self._gatekeep_pending = [self._gatekeep_token(types.DO, i, i + 1, "do")]  # the `)` stands for both
                self._shell_input_line_index = i + 1
            return semicolon
        if loops and loops[-1] == "body" and command_position and _ZSH_END.match(text, i):
            loops.pop()
            return self._gatekeep_token(types.DONE, i, i + 3, "done")
        m = _FOREACH.match(text, i) if command_position else None
        if m is not None:
            loops.append("list")
            start = self._gatekeep_token(types.FOR, i, i + 7, "for")
            name = self._gatekeep_token(types.WORD, m.start(1), m.end(1), m.group(1))
            name.flags = utils.typedset(tokenizer.wordflags)
            opening = m.end() - 1
            self._gatekeep_pending = [name, self._gatekeep_token(types.IN, opening, opening + 1, "in")]
            return start
        if last.ttype == types.RIGHT_CURLY and _ZSH_ALWAYS.match(text, i):
            return self._gatekeep_token(types.SEMICOLON, i, i + 6, ";")
        anonymous = command_position and last.ttype != types.WORD  # (`function f() {` is bash's)
        m = _ZSH_ANONYMOUS.match(text, i) if anonymous else None
        if m is not None:  # `() { … }`, `function { … }`: run at once, as a group is
            self._open_brace_count += 1
            self._gatekeep_anonymous = True
            return self._gatekeep_token(types.LEFT_CURLY, i, m.end(), "{")
        braces = self.__dict__.get("_gatekeep_braces")
        if braces and braces[-1] and not command_position and _ZSH_CLOSE.match(text, i):
            # in zsh's own groups a `}` closes the group where bash would need a `;` before it
            semicolon = self._gatekeep_token(types.SEMICOLON, i, i + 1, ";")
            self._gatekeep_pending = [self._gatekeep_token(types.RIGHT_CURLY, i, i + 1, "}")]
            return semicolon
        m = _ZSH_REPEAT.match(text, i) if command_position else None
        if m is not None:  # `repeat N do … done` (N a literal number): a loop over N
            count, at = m.group(1), m.span(1)
            start = self._gatekeep_token(types.FOR, i, i + 6, "for")
            name = self._gatekeep_token(types.WORD, *at, "_")
            inside = self._gatekeep_token(types.IN, *at, "in")
            word = self._gatekeep_token(types.WORD, *at, count)
            for token in (name, word):
                token.flags = utils.typedset(tokenizer.wordflags)
            self._gatekeep_pending = [name, inside, word, self._gatekeep_token(types.SEMICOLON, at[1], m.end(), ";")]
            return start
        return None

    def gatekeep_token(self, kind, start: int, end: int, value: str):
        self._shell_input_line_index = end
        self._positions += [start, end]
        return self._createtoken(kind, value)

    tokenizer.tokenizer._readtoken = readtoken
    comsub = tokenizer.tokenizer._parse_comsub

    def parse_comsub(self, doublequotes, open, close, *args, **kwargs):
        """`$((` in a word: its end as nested_end finds it (bashlex counted parentheses, and a
        case pattern's `)` in a `$( )` inside ended the expansion)."""
        text, i = self._shell_input_line, self._shell_input_line_index
        if open != "(":
            return comsub(self, doublequotes, open, close, *args, **kwargs)
        if not text.startswith("(", i):
            found = comsub(self, doublequotes, open, close, *args, **kwargs)
            if not _CASE_WORD.search(found):
                return found
            # bashlex's scan knows a case pattern's `)` only where the `case` opens the `$( )`:
            # the parser finds where a `$( )` holding a `case` anywhere ends
            end = _parsed_substitution_end(text, i)
            if end is None:
                return found
            self._shell_input_line_index = end + 1
            return text[i : end + 1]
        end = nested_end(text, i + 1, "(", ")")
        if end >= len(text) or text[end] != ")":
            return comsub(self, doublequotes, open, close, *args, **kwargs)
        self._shell_input_line_index = end + 1
        return text[i : end + 1]

    tokenizer.tokenizer._parse_comsub = parse_comsub
    matched_pair = tokenizer.tokenizer._parse_matched_pair

    def parse_matched_pair(self, doublequotes, open, close, *args, **kwargs):
        """`${ … }` in a word: its end as nested_end finds it. bashlex read no `$( )` inside
        one, and ended it at a `}` within (`${u:-$(f {p,q})}` ran `f {p,q}` in bash)."""
        if open != "{" or not kwargs.get("dolbrace"):
            return matched_pair(self, doublequotes, open, close, *args, **kwargs)
        text, i = self._shell_input_line, self._shell_input_line_index
        end = nested_end(text, i, "{", "}")
        if end > len(text):
            return matched_pair(self, doublequotes, open, close, *args, **kwargs)
        self._shell_input_line_index = end
        return text[i:end]

    tokenizer.tokenizer._parse_matched_pair = parse_matched_pair
    tokenizer.tokenizer._gatekeep_read = read_token
    tokenizer.tokenizer._gatekeep_token = gatekeep_token
    tokenizer.tokenizer._gatekeep_compound_assignment = compound_assignment
    tokenizer.tokenizer._gatekeep_zsh = zsh_forms


def p_arith_command(p):
    """arith_command : ARITH_CMD"""
    start, end = p.lexspan(1)
    text = p.lexer._shell_input_line
    parts = _substitutions_in(p.context, text, start + 2, end - 2)
    ast, _, _ = _nodes()
    node = ast.node(kind="arithcommand", parts=parts, pos=(start, end))
    p[0] = ast.node(kind="compound", redirects=[], list=[node], pos=(start, end))


def p_arith_for_command(p):
    """arith_for_command : FOR ARITH_FOR_EXPRS list_terminator newline_list DO compound_list DONE
    | FOR ARITH_FOR_EXPRS list_terminator newline_list LEFT_CURLY compound_list RIGHT_CURLY
    | FOR ARITH_FOR_EXPRS DO compound_list DONE
    | FOR ARITH_FOR_EXPRS LEFT_CURLY compound_list RIGHT_CURLY"""
    ast, parser, _ = _nodes()
    start, end = p.lexspan(2)
    parts = [_reserved(p, 1)]
    parts.append(
        ast.node(
            kind="arithexpressions",
            parts=_substitutions_in(p.context, p.lexer._shell_input_line, start + 2, end - 2),
            pos=(start, end),
        )
    )
    for i in range(3, len(p)):
        if isinstance(p[i], ast.node):
            is_operator = p[i].kind == "operator"  # the `;` before `do`: the loop's, as in bashlex's `for`
            parts.append(ast.node(kind="reservedword", word=p[i].op, pos=p[i].pos) if is_operator else p[i])
        elif isinstance(p[i], str):
            parts.append(_reserved(p, i))
    p[0] = _compound("arithfor", parts)


def p_cond_command(p):
    """cond_command : COND_START COND_CMD COND_END"""
    ast, _, _ = _nodes()
    start, end = p.lexspan(1)[0], p.lexspan(3)[1]
    inner = p.lexspan(2)
    parts = _cond_substitutions(p.context, p.lexer._shell_input_line, inner[0], inner[1])
    node = ast.node(kind="condcommand", parts=parts, pos=(start, end))
    p[0] = ast.node(kind="compound", redirects=[], list=[node], pos=(start, end))


def _cond_substitutions(parserobj, string: str, i: int, end: int) -> list:
    """The command substitutions bash runs in a conditional's text: not inside single quotes."""
    from gatekeep.read.shellwords import expansion_end

    found = []
    while i < end:
        c = string[i]
        if c == "\\":
            i += 2
        elif c == "'":
            close = string.find("'", i + 1)
            i = end if close < 0 else close + 1
        elif string.startswith(("$(", "$[", "`"), i):
            end_of = expansion_end(string, i)
            found += _substitutions_in(parserobj, string, i, end_of)
            i = end_of
        else:
            i += 1
    return found
