"""Inert words (issue 15): an expansion is allowed only if it is proven inert, in bash and zsh alike.

Each row is one word as typed, and either None (inert: a command holding it may
be allowed) or a piece of the reason it is not. The judge is an allow-list
(shellwords.expansion_risk), so the rows of the second table are examples of
what falls outside it, not the list itself.
"""

from __future__ import annotations

import pytest

from gatekeep.judge.gate import evaluate
from gatekeep.read.parse import parse_line
from gatekeep.read.shellwords import text_risk, unquote
from tests.conftest import policy_from

INERT = [
    "plain",
    "'single $(quoted)'",
    '"double"',
    "$x",
    "${x}",
    '"$x"',
    "$1",
    "${10}",
    '"$@"',
    "$*",
    "$#",
    "$?",
    "$$",
    "$!",
    "$-",
    "$_",
    "${#x}",
    "${#a[@]}",
    "${#}",
    "${!}",
    "${x:-default}",
    "${x-default}",
    "${x:+alt}",
    "${x+alt}",
    "${x:-$HOME/bin}",
    "${f%.png}.jpg",
    "${f%%.*}",
    "${f#*/}",
    "${f##*/}",
    "${f/a/b}",
    "${f//a/b}",
    "${a[@]}",
    "${a[*]}",
    "${a[0]}",
    "${a[-1]}",
    "${x:1}",
    "${x:1:2}",
    "${x: -1}",
    "$((1 + 2))",
    "$PATH:/usr/bin",
    "$x:h",  # a zsh modifier: it only edits the value
    "$a[1]",
    "*.py",
    "{a,b}",
    "~/src",
    "~root",
    "$(date)",  # its commands are read and decided on their own
    "`date`",
    "<(ls)",
    "$'\\x41'",
]

NOT_INERT = [
    ("${x:=v}", "assigns"),
    ("${x=v}", "assigns"),
    ("${x::=v}", "assigns"),
    ("${x@P}", "transformation"),
    ("${x@E}", "transformation"),
    ("${x@A}", "transformation"),
    ("${x@Q}", "transformation"),
    ('"${_@P}"', "transformation"),
    ("${!x}", "indirection"),
    ("${!x*}", "indirection"),
    ("${a[x]}", "subscript"),
    ("${a[$i]}", "subscript"),
    ("${a[i+1]}", "subscript"),
    ("${HOME:x}", "offset"),
    ("${HOME:1:n}", "offset"),
    ("${x:h}", "offset"),  # zsh's modifier is bash's arithmetic offset `h`
    ("$((x))", "arithmetic"),
    ("$((a[1]))", "arithmetic"),
    ("$[x]", "arithmetic"),
    ("$[1]x$[y]", "arithmetic"),
    ("${(e)x}", "zsh"),
    ("${(P)x}", "zsh"),
    ("${(%)x}", "zsh"),
    ("${~x}", "zsh"),
    ("${=x}", "zsh"),
    ("${^x}", "zsh"),
    ("${+x}", "zsh"),
    ("$~x", "zsh"),
    ("$=x", "zsh"),
    ("$^x", "zsh"),
    ('"$~x"', "zsh"),
    ("$a[x]", "subscript to zsh"),
    ('"$a[i]"', "subscript to zsh"),
    ("~[x]", "zsh_directory_name"),
    ("${x^^}", "not an expansion gatekeep knows"),
    ("${x,,}", "not an expansion gatekeep knows"),
    ("${x:?msg}", "not an expansion gatekeep knows"),
    ("${x:-'a b'}", "quotes inside"),
    ("${x:-'}'}${y@P}", "quotes inside"),  # a quoted brace must not end the expansion early
    ("${x:-${y@P}}", "transformation"),  # nested
    ("${x/a/${y:=z}}", "assigns"),
    ("${BASH_ALIASES[ls]}", "BASH_ALIASES"),
    ("${BASH_CMDS[ls]:=/bin/rm}", "BASH_CMDS"),
    ("$BASH_ALIASES", "BASH_ALIASES"),
    ("${aliases[ls]::=x}", "aliases"),
    ("${galiases[x]}", "galiases"),
    ("${functions[f]::=x}", "functions"),
    ("$functions", "functions"),
    ("${commands[ls]::=/bin/rm}", "commands"),
    ("${precmd_functions[1]}", "precmd_functions"),
    ("__gatekeep_gate", "gatekeep's own"),
    ("'__gate''keep_gate'", "gatekeep's own"),
    ("$'\\x5f_gatekeep_gate'", "gatekeep's own"),
    ("${__gatekeep_verdict}", "gatekeep's own"),
    ("x__gatekeep", "gatekeep's own"),
]


@pytest.mark.parametrize("word", INERT)
def test_inert_words(word):
    assert unquote(word).unsafe is None


@pytest.mark.parametrize("word,why", NOT_INERT)
def test_words_not_proven_inert(word, why):
    unsafe = unquote(word).unsafe
    assert unsafe is not None and why in unsafe


@pytest.mark.parametrize(
    "body,why",
    [("plain $HOME `date`", None), ("${x@P}", "transformation"), ("$[x]", "arithmetic"), ("$~x", "zsh")],
)
def test_unquoted_heredoc_bodies_are_judged_alike(body, why):
    risk = text_risk(body)
    assert (risk is None) if why is None else (why in risk)


# Lines under a policy that allows echo, cat and ls: every unsafe word makes the line ask, wherever it
# stands: an argument, an assignment, a redirection's target, a here-string, a heredoc, a `for` list.
POLICY = "default: ask\nrules:\n  allow: ['echo *', 'cat *', 'ls *', 'true', 'x=*']\n  deny: ['touch *']\n"

LINES = [
    ("echo $HOME ${x:-none} ${f%.c}.o", "allow"),
    ("for x in a b; do echo $x; done", "allow"),
    ("echo ${x@P}", "ask"),
    ("x=${y@P}", "ask"),
    ("x=${y@P} true", "ask"),
    ("echo hi > ${x@P}", "ask"),
    ("cat <<< ${x@P}", "ask"),
    ("cat <<EOF\n${x@P}\nEOF", "ask"),
    ("cat <<'EOF'\n${x@P}\nEOF", "allow"),  # a quoted heredoc is literal
    ("cat <<EOF\n$[x]\nEOF", "ask"),
    ("for x in ${y@P}; do true; done", "ask"),
    ("{ true; } > ${x@P}", "ask"),
    ("echo ${x@P}; touch p", "deny"),  # deny rules still see what can be read
    ("echo __gatekeep_gate", "ask"),
]


@pytest.mark.parametrize("line,decision", LINES)
def test_lines_with_unsafe_words_never_allow(line, decision):
    assert evaluate(line, policy_from(POLICY)).decision == decision


def test_a_plain_line_naming_the_hook_is_not_read_by_the_fast_path_as_harmless():
    parsed = parse_line("echo __gatekeep_gate")
    assert parsed.commands[0].problems


def test_every_shell_table_asks_when_a_builtin_sets_it():
    """The tables an expansion may not name are also ask rules, for `read`, `printf -v`, `typeset`..."""
    from gatekeep.core import resources
    from gatekeep.judge.policy import read_layer
    from gatekeep.read.shellwords import SHELL_TABLES

    asks = {pattern for verdict, pattern, _ in read_layer("built-in", resources.DEFAULT_POLICY).rules if verdict == "ask"}
    assert {f"{name}*" for name in SHELL_TABLES} <= asks


@pytest.mark.parametrize(
    "line",
    [
        "printf -v 'BASH_ALIASES[ls]' rm",
        "read 'BASH_CMDS[ls]' <<< /bin/rm",
        "print -v 'aliases[ls]' rm",
        "typeset -A functions",
        "vared commands",
        "getopts ab 'galiases[x]'",
        "functions -c ls git",
        "PS1='$(touch p)'",
        "HISTFILE=~/.bashrc",
        "CDPATH=~",
        "set -o globsubst",
        "emulate sh",
        "bindkey -s '^M' 'touch p^M'",
        "complete -C 'touch p' ls",
    ],
)
def test_lines_that_reach_the_shells_own_tables_ask_under_a_broad_allow(line):
    assert evaluate(line, policy_from("default: allow\nrules:\n  allow: ['*']\n")).decision == "ask"
