"""Parse stage: every simple command in a line, and never a silent miss.

COMPLETE lines must yield exactly the listed commands. INCOMPLETE lines are
the inputs bashlex hides commands in, rejects, or hangs on
(see gatekeep/read/crosscheck.py): each must be marked incomplete *and* the
command bash would run must still be found (by the tree or the fallback scan),
so deny rules apply to it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatekeep.read import bashlex_loader
from gatekeep.read.parse import MAX_LINE_CHARS, parse_line, parse_plain_line, parse_with_bashlex

ROOT = Path(__file__).resolve().parents[1]


def argvs(line: str) -> list[tuple[str, ...]]:
    return sorted(tuple(c.argv) for c in parse_line(line).commands)


COMPLETE = [
    ("git status", [("git", "status")]),
    ("git status && rm -rf build", [("git", "status"), ("rm", "-rf", "build")]),
    ("a; b", [("a",), ("b",)]),
    ("a || b", [("a",), ("b",)]),
    ("a | b | c", [("a",), ("b",), ("c",)]),
    ("a |& b", [("a",), ("b",)]),
    ("a & b", [("a",), ("b",)]),
    ("a &", [("a",)]),
    ("a\nb", [("a",), ("b",)]),
    ("a\n\nb\n", [("a",), ("b",)]),
    ("(a; b)", [("a",), ("b",)]),
    ("{ a; b; }", [("a",), ("b",)]),
    ("! a", [("a",)]),
    ("echo $(a)", [("a",), ("echo", "$(a)")]),
    ("echo `a`", [("a",), ("echo", "`a`")]),
    ('echo "$(a "b c")"', [("a", "b c"), ("echo", '$(a "b c")')]),
    ("echo $(a $(b))", [("a", "$(b)"), ("b",), ("echo", "$(a $(b))")]),
    ("diff <(a) >(b)", [("a",), ("b",), ("diff", "<(a)", ">(b)")]),
    ('echo "`a`"', [("a",), ("echo", "`a`")]),
    ("x=$(a) b", [("a",), ("b",)]),
    ("if a; then b; elif c; then d; else e; fi", [("a",), ("b",), ("c",), ("d",), ("e",)]),
    ("for x in 1 2; do a $x; done", [("a", "$x")]),
    ("for x in $(a); do b; done", [("a",), ("b",)]),
    ("while a; do b; done", [("a",), ("b",)]),
    ("until a; do b; done", [("a",), ("b",)]),
    ("f() { a; }", [("a",)]),
    ("function f { a; }", [("a",)]),
    ("while read -r l; do echo $l; done < file", [("echo", "$l"), ("read", "-r", "l")]),
    ("r''m -rf x", [("rm", "-rf", "x")]),
    ('"r"m x', [("rm", "x")]),
    ("\\rm x", [("rm", "x")]),
    ("$'\\x72m' x", [("rm", "x")]),
    ("$'\\162m' x", [("rm", "x")]),
    ("$'\\u0072m' x", [("rm", "x")]),
    ('$"rm" x', [("rm", "x")]),
    ("echo 'it'\\''s'", [("echo", "it's")]),
    ("echo 'a'\"b\"'c'", [("echo", "abc")]),
    ("echo \"mixed\"'quotes'u", [("echo", "mixedquotesu")]),
    ('echo "a\\b"', [("echo", "a\\b")]),
    ('echo "a\\$b"', [("echo", "a$b")]),
    ("ls \\\n  -la", [("ls", "-la")]),
    ("ls # rm -rf /", [("ls",)]),
    ("echo a#b", [("echo", "a#b")]),
    ("", []),
    ("   \t ", []),
    ("# only a comment", []),
    ("\n# comment\n\n", []),
    ("cat <<EOF\nhello $USER\nEOF", [("cat",)]),
    ("cat <<-EOF\n\thi\n\tEOF\necho next", [("cat",), ("echo", "next")]),
    ("cat <<EOF | grep x\nbody\nEOF", [("cat",), ("grep", "x")]),
    ("x=1", [()]),
    # a quoted delimiter ends at the line holding the word without its quotes, as in bash
    ("cat <<'EOF'\nEOF\ncmd\n'EOF'", [("cat",), ("cmd",), ("EOF",)]),
    ('cat <<"EOF"\n$(x)\nEOF\ncmd', [("cat",), ("cmd",)]),
    ("cat <<\\EOF\nx\nEOF\ncmd", [("cat",), ("cmd",)]),
    ('cat <<E"O"F\nx\nEOF\ncmd', [("cat",), ("cmd",)]),
    ("cat <<-'EOF'\n\tx\n\tEOF\ncmd", [("cat",), ("cmd",)]),
    (
        "git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"; cmd",
        [("cat",), ("cmd",), ("git", "commit", "-m", "$(cat <<'EOF'\nmsg\nEOF\n)")],
    ),
    ("git commit -m 'fix: a; b && c'", [("git", "commit", "-m", "fix: a; b && c")]),
    ("echo '$(not run)'", [("echo", "$(not run)")]),
    ("echo \"a\" 'b' c\\ d", [("echo", "a", "b", "c d")]),
]


@pytest.mark.parametrize("line,expected", COMPLETE)
def test_complete_lines_yield_every_command(line, expected):
    result = parse_line(line)
    assert result.complete, result.problems
    assert argvs(line) == sorted(expected)


INCOMPLETE = [
    # bashlex hides commands (silent classes 1-7)
    ("cat <<EOF\n`a \\`cmd\\``\nEOF", ("cmd\\",)),  # backquotes bash unescapes first: not read
    # bashlex raises on valid bash
    ("echo a=(1); cmd", ("cmd",)),  # not an assignment: bash reads `(` there as an error
    ("ls !(x); cmd", ("cmd",)),
    ("echo `a \\`cmd\\``", ("cmd",)),
    # zsh's forms gatekeep does not read: never allowed
    ("repeat $n do\ncmd\ndone", ("cmd",)),  # zsh evaluates the count as arithmetic
    ("() { a } cmd", ("cmd",)),  # an anonymous function's arguments
    # bashlex hangs: the time limit turns these into "could not parse"
    ("echo x'${'; cmd", ("cmd",)),
    ("echo $'${'; cmd", ("cmd",)),
    ("echo '${x'y; cmd", ("cmd",)),
]


# The grammar bashlex leaves unbuilt (read/bashlex_grammar.py): read completely, every command found.
GRAMMAR = [
    # heredocs inside compound commands: bash reads a body as soon as the line that opened it ends
    ("{ cat <<EOF\nhi\nEOF\n}\ncmd", [["cat"], ["cmd"]]),
    ("if true; then cat <<EOF\nhi\nEOF\nfi; cmd", [["true"], ["cat"], ["cmd"]]),
    ("( cat <<EOF\n$(a)\nEOF\n)", [["cat"], ["a"]]),
    ("for i in 1; do cat <<'EOF'\n$(a)\nEOF\ndone; b", [["cat"], ["b"]]),
    ("while read l; do\n  cat <<EOF\nrm -rf /\nEOF\ndone < f", [["read", "l"], ["cat"]]),
    ("x <(( y <<'EOF'\n$(a)\nEOF\n))", [["x", "<(( y <<'EOF'\n$(a)\nEOF\n))"], ["y"]]),
    # several heredocs on one line: each body starts on the line after the one before ends
    ("cat <<A; cat <<B\na\nA\n$(b)\nB", [["cat"], ["cat"], ["b"]]),
    ("( cat <<A; cat <<'B'\na\nA\n$(b)\nB\n)", [["cat"], ["cat"]]),
    ("time cmd", [["cmd"]]),
    ("time -p make test | tee log", [["make", "test"], ["tee", "log"]]),
    ("time -p -- cmd", [["cmd"]]),
    ("! time cmd", [["cmd"]]),
    ("case x in y) cmd;; esac", [["cmd"]]),
    ("case $1 in a|b) one;; (c) two;& *) three;;& esac", [["one"], ["two"], ["three"]]),
    ("case x in\n  y)\n    cmd\n    ;;\nesac", [["cmd"]]),
    ("case x in y) ;; esac; cmd", [["cmd"]]),
    ("case $(a) in $(b)) c;; esac", [["a"], ["b"], ["c"]]),
    ("select x in a; do cmd; done", [["cmd"]]),
    ("coproc cmd", [["cmd"]]),
    ("coproc { cmd; } > out", [["cmd"]]),
    ("coproc NAME { cmd; }; other", [["cmd"], ["other"]]),
    ("echo $((1+2)); cmd", [["echo", "$((1+2))"], ["cmd"]]),
    ('echo "$(( 1 + $(a) ))"', [["a"], ["echo", "$(( 1 + $(a) ))"]]),
    ("echo $(( '$(a)' + `b` ))", [["a"], ["b"], ["echo", "$(( '$(a)' + `b` ))"]]),
    ("echo $[1+2]; cmd", [["echo", "$[1+2]"], ["cmd"]]),
    ("x=$(( $(( 2 * 3 )) + 1 )); cmd", [[], ["cmd"]]),
    ("for ((i=0;i<2;i++)); do cmd; done", [["cmd"]]),
    ("for ((i=0; i<$(a); i++)) { cmd; }", [["a"], ["cmd"]]),
    ("(( i++ )) && cmd", [["((", "i++", "))"], ["cmd"]]),
    ("(( x = $(a) + 1 ))", [["a"], ["((", "x = $(a) + 1", "))"]]),
    ("while (( n < 3 )); do cmd; done", [["((", "n < 3", "))"], ["cmd"]]),
    ("( (a) )", [["a"]]),
    ("((a) )", [["a"]]),
    ("[[ -f x ]] && cmd", [["[[", "-f", "x", "]]"], ["cmd"]]),
    ("[[ $a < $b && ( -d y || ! -e z ) ]]", [["[[", "$a", "<", "$b", "&&", "(", "-d", "y", "||", "!", "-e", "z", ")", "]]"]]),
    ("[[ $x =~ ^(a|b)$ ]] && cmd", [["[[", "$x", "=~", "^(a|b)$", "]]"], ["cmd"]]),
    ('if [[ -n "$(a)" ]]; then cmd; fi', [["a"], ["[[", "-n", "$(a)", "]]"], ["cmd"]]),
    ("[[ -v a[$(a)] ]]", [["a"], ["[[", "-v", "a[$(a)]", "]]"]]),
    ("[[ '$(a)' == x ]]", [["[[", "$(a)", "==", "x", "]]"]]),  # single quotes: no substitution
    ("[[\n -f x\n]] && cmd", [["[[", "-f", "x", "]]"], ["cmd"]]),
    ("echo [[ x ]]", [["echo", "[[", "x", "]]"]]),  # not in command position: words
    # a word that starts and ends with a single quote (bashlex took it for one quoted string)
    ("echo 'x'$(cmd)'y'", [["cmd"], ["echo", "x$(cmd)y"]]),
    ("echo 'x'`cmd`'y' 'a''b'", [["cmd"], ["echo", "x`cmd`y", "ab"]]),
    ('echo "a"<(cmd) "b"\'$(no)\'', [["cmd"], ["echo", "a<(cmd)", "b$(no)"]]),
    # a parameter expansion's words (bashlex ended it at the first `}` and read nothing inside)
    ("echo ${x:-$(cmd)}", [["cmd"], ["echo", "${x:-$(cmd)}"]]),
    ("echo ${x:-${y:-`cmd`}}s", [["cmd"], ["echo", "${x:-${y:-`cmd`}}s"]]),
    ('x="${y/"a"/$(cmd)}" other', [["cmd"], ["other"]]),
    # a substitution's lines after its first (bashlex read only the first)
    ("echo $(true\ncmd)", [["cmd"], ["echo", "$(true\ncmd)"], ["true"]]),
    ("echo `true\n  cmd`", [["cmd"], ["echo", "`true\n  cmd`"], ["true"]]),
    ("cat <(a # c)\n\nb\n) d", [["a"], ["b"], ["cat", "<(a # c)\n\nb\n)", "d"]]),
    # a substitution's `)` after any list (bashlex's grammar took it after some commands only)
    ("echo $(a && cmd)", [["a"], ["cmd"], ["echo", "$(a && cmd)"]]),
    ("echo $(cmd;) $(a &) $( (b) )", [["a"], ["b"], ["cmd"], ["echo", "$(cmd;)", "$(a &)", "$( (b) )"]]),
    ("x=$([[ -d d ]] && cd d || a | b)", [["[[", "-d", "d", "]]"], ["a"], ["b"], ["cd", "d"], []]),
    ("echo $(case x in a) b;; (c) d;; esac)", [["b"], ["d"], ["echo", "$(case x in a) b;; (c) d;; esac)"]]),
    # zsh's forms typed lines use
    ("foreach f (a b); cmd $f; end", [["cmd", "$f"]]),
    ("foreach f (a $(b)) cmd; end; other", [["b"], ["cmd"], ["other"]]),
    ("foreach x (a)\n  foreach y (b)\n    cmd\n  end\nend", [["cmd"]]),
    ("{ a; } always { b; }", [["a"], ["b"]]),
    ("repeat 3 cmd", [["repeat", "3", "cmd"]]),
    ("repeat 3 do cmd; done", [["cmd"]]),
    ("repeat 2; do a; b; done; c", [["a"], ["b"], ["c"]]),
    ("repeat 2\ndo cmd\ndone", [["cmd"]]),
    ("() { cmd }", [["cmd"]]),
    ("() { a; b; }; c", [["a"], ["b"], ["c"]]),
    ("function { a && { b }; c $(d) }", [["a"], ["b"], ["c", "$(d)"], ["d"]]),
    ("{ echo }; }", [["echo", "}"]]),  # bash's: outside zsh's forms `}` is a word where bash reads one
    ("echo end always", [["echo", "end", "always"]]),
    # arrays
    ("a=(1 2 3)", [[]]),
    ("a=(x $(b) 'c d') cmd", [["b"], ["cmd"]]),
    ("a+=(\n  one\n  two\n)", [[]]),
    ("declare -a a=(1 2); local b=($(c))", [["c"], ["declare", "-a", "a=(1 2)"], ["local", "b=($(c))"]]),
    # an unquoted heredoc's body runs its substitutions: each is read
    ("cat <<EOF\n$(cmd)\nEOF", [["cat"], ["cmd"]]),
    ("cat <<EOF\n'`cmd`'\nEOF", [["cat"], ["cmd"]]),
    ("cat <<EOF\n${x:-y}\nEOF\nls", [["cat"], ["ls"]]),
    ("cat <<EOF\n$(( 1 + $(a) )) ${x:-$(b)}\nEOF", [["cat"], ["a"], ["b"]]),
    ("cat <<'EOF'\n$(cmd)\nEOF", [["cat"]]),  # quoted: text
    ("cat <<EOF\n\\$(cmd)\nEOF", [["cat"]]),  # escaped: text
]


@pytest.mark.parametrize("line,commands", GRAMMAR)
def test_the_grammar_bashlex_leaves_unbuilt_is_read_completely(line, commands):
    result = parse_line(line)
    assert result.complete, result.problems
    assert sorted(c.argv for c in result.commands) == sorted(commands)


@pytest.mark.parametrize("line,hidden", INCOMPLETE)
@pytest.mark.timeout(10)
def test_hidden_or_unparseable_commands_are_incomplete_but_found(line, hidden):
    result = parse_line(line)
    assert not result.complete
    assert result.problems
    assert hidden in argvs(line)
    assert all(c.problems for c in result.commands if tuple(c.argv) == hidden) or result.problems


def test_a_line_longer_than_the_limit_is_not_parsed():
    line = "echo " + "x" * MAX_LINE_CHARS + "; rm -rf /"
    result = parse_line(line)
    assert not result.complete
    assert "longer than" in result.problems[0]
    assert ("rm", "-rf", "/") in argvs(line)


@pytest.mark.parametrize(
    "line,problem",
    [
        ("a[0]=x cmd", "array"),
        ("exec {fd}>file", "named file descriptors"),
    ],
)
def test_constructs_bashlex_misreads_mark_the_command(line, problem):
    (command,) = parse_line(line).commands
    assert any(problem in p for p in command.problems)


@pytest.mark.parametrize("line", ["echo {x}", "echo '{x}'", "awk '{print}' f", "echo '{x}'>out", "echo {x} >out"])
def test_a_braced_word_not_before_a_redirection_is_a_word(line):
    """`{fd}>file` names a descriptor only unquoted and right before the redirection."""
    (command,) = parse_line(line).commands
    assert not command.problems and "{" in command.argv[1]


def test_assignments_and_redirects_are_kept():
    (command,) = parse_line("FOO=1 BAR='a b' cmd arg > out 2>&1 < in").commands
    assert command.assignments == ("FOO=1", "BAR=a b")
    assert command.argv == ["cmd", "arg"]
    assert [(r.op, r.target, r.writes_file) for r in command.redirects] == [
        (">", "out", True),
        (">&", "1", False),
        ("<", "in", False),
    ]


def test_a_compound_redirect_applies_to_every_command_inside():
    commands = parse_line("{ echo a; echo b; } > out").commands
    assert [[r.target for r in c.redirects] for c in commands] == [["out"], ["out"]]


def test_pipeline_positions():
    commands = parse_line("a | b; c | d").commands
    assert [(c.argv[0], c.position) for c in commands] == [("a", 0), ("b", 1), ("c", 0), ("d", 1)]
    assert commands[0].pipeline == commands[1].pipeline != commands[2].pipeline


def test_dynamic_words_are_marked():
    (command,) = parse_line("$X \"$Y\" z* {a,b} '$lit' plain").commands
    assert [w.dynamic for w in command.words] == [True, True, True, True, False, False]


def test_fork_bomb_function_is_recorded():
    (function,) = parse_line(":(){ :|:& };:").functions
    assert function.name == ":" and function.is_fork_bomb
    (plain,) = parse_line("f() { f; }").functions
    assert not plain.is_fork_bomb


# ---------------------------------------------------------------------------
# The fast path for plain lines, and bashlex's loader
# ---------------------------------------------------------------------------

PLAIN = [
    ("git status", [("git", "status")]),
    ("git log --oneline | head", [("git", "log", "--oneline"), ("head",)]),
    ("cd src && make test", [("cd", "src"), ("make", "test")]),
    ("a | b | c && d ; e || f | g", [("a",), ("b",), ("c",), ("d",), ("e",), ("f",), ("g",)]),
    ("FOO=1 BAR= npm test", [("npm", "test")]),
    ("A=1 B=2", [()]),
    ("  ls  -la  ", [("ls", "-la")]),
]
NOT_PLAIN = [
    "echo 'quoted'",
    "echo $HOME",
    "ls *.py",
    "cat ~/x",
    "echo {a,b}",
    "a&&b",  # operators must stand apart
    "a &",
    "a |& b",
    "ls > out",
    "ls # comment",
    "for x in a; do b; done",
    "time make",
    "a+=b c",
    "ls;",
    "| ls",
    "ls ;",
    "a | | b",
    "a ; && b",
    "a|b",
    "1=x ls",
    "A.B=1 ls",
    "",
    "   ",
    "ls\nrm x",
    "ls\trm",
    "echo a\\ b",
    "x" * (MAX_LINE_CHARS + 1),
]


@pytest.mark.parametrize("line,expected", PLAIN)
def test_plain_lines_take_the_fast_path(line, expected):
    result = parse_plain_line(line)
    assert result is not None
    assert [tuple(c.argv) for c in result.commands] == expected
    assert result == parse_with_bashlex(line)


@pytest.mark.parametrize("line", NOT_PLAIN)
def test_lines_with_shell_syntax_go_to_bashlex(line):
    assert parse_plain_line(line) is None


def _corpus_lines() -> list[str]:
    from tests.security.test_corpus import ATTEMPTS, BENIGN

    rows = (ROOT / "tests/data/corpus.tsv").read_text(encoding="utf-8").splitlines()[1:]
    lines = [row.split("\t")[0] for row in rows if row]
    lines += [case.line for case in ATTEMPTS + BENIGN]
    lines += [line for line, _ in COMPLETE] + [line for line, _ in INCOMPLETE] + NOT_PLAIN
    return lines


def test_the_fast_path_gives_what_bashlex_gives_on_every_corpus_line():
    accepted = 0
    for line in _corpus_lines():
        plain = parse_plain_line(line)
        if plain is not None:
            accepted += 1
            assert plain == parse_with_bashlex(line), line
    assert accepted > 1_500  # the corpus is mostly plain lines, so the comparison is real


_plain_token = st.one_of(
    st.text(alphabet="abcxyz019_./:@%+,=-", min_size=1, max_size=6),
    st.sampled_from(["|", "||", "&&", ";", "&", "if", "done", "time", "A=1", "=x", "a+=1", "x=y=z"]),
)


@settings(max_examples=400, derandomize=bool(os.environ.get("CI")), deadline=None)
@given(st.lists(_plain_token, min_size=1, max_size=8), st.sampled_from([" ", "  "]))
def test_the_fast_path_agrees_with_bashlex_on_generated_lines(tokens, separator):
    line = separator.join(tokens)
    plain = parse_plain_line(line)
    if plain is not None:
        assert plain == parse_with_bashlex(line)


@pytest.mark.timeout(10)
def test_a_parse_that_never_ends_is_cut_off(monkeypatch):
    bashlex = bashlex_loader.load()

    def endless(line):
        while True:
            pass

    monkeypatch.setattr(bashlex, "parse", endless)
    started = time.monotonic()
    result = parse_with_bashlex("echo 'hangs'")
    assert time.monotonic() - started < 2
    assert not result.complete
    assert "did not finish" in result.problems[0]


def test_the_shipped_parser_tables_are_the_ones_bashlex_builds():
    assert Path(bashlex_loader.TABLES_FILE).read_text(encoding="utf-8") == bashlex_loader.build_tables(), (
        "bashlex's grammar changed: run `make tables`"
    )


def test_bashlex_uses_the_shipped_tables():
    bashlex_loader.load()
    import bashlex.parser

    assert type(bashlex.parser.yaccparser.productions[1]).__name__ == "_Production"


def test_the_full_parser_refuses_to_run_outside_the_main_thread():
    """Its time limit is a signal, which only the main thread receives: elsewhere it would have none,
    so it does not run, and the line is not fully parsed (never allowed)."""
    import threading

    from gatekeep.read.parse import parse_with_bashlex

    results = []
    thread = threading.Thread(target=lambda: results.append(parse_with_bashlex('echo "$HOME"')))
    thread.start()
    thread.join()
    (elsewhere,) = results
    assert not elsewhere.complete
    assert elsewhere.problems == ("the parser could not run: parse_line needs the main thread for its time limit",)
    assert parse_with_bashlex('echo "$HOME"').complete


# What a heredoc feeds its command: an unquoted body is read with bash's escapes, and is
# computed at run time when it expands anything (`bash <<EOF` then runs a script nobody saw).
HEREDOC_BODIES = [
    ("cat <<'EOF'\na \\$x `b`\nEOF", "a \\$x `b`", False),
    ("cat <<EOF\na \\$x \\`b\\` c\\\\d\nEOF", "a $x `b` c\\d", False),
    ("cat <<EOF\nline \\\nmore\nEOF", "line more", False),
    ("cat <<EOF\nhi $USER\nEOF", "hi $USER", True),
    ("cat <<EOF\n`date`\nEOF", "`date`", True),
    ("cat <<EOF\n\\\\$(date)\nEOF", "\\$(date)", True),
    ("cat <<EOF\ncost: 5$ each\nEOF", "cost: 5$ each", False),
    ('cat <<"EOF"\n$x\nEOF', "$x", False),
]


@pytest.mark.parametrize("line,body,computed", HEREDOC_BODIES)
def test_a_heredoc_body_is_what_bash_feeds_the_command(line, body, computed):
    (cat,) = [c for c in parse_line(line).commands if c.argv == ["cat"]]
    (redirect,) = cat.redirects
    assert (redirect.stdin_text, redirect.dynamic) == (body, computed)
