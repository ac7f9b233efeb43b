"""Lines up to 128 KiB (issues 18, 35): each gets its verdict from a real `gatekeep check`: read
whole, the verdict its commands deserve (a long `ls x x x …` is allowed, a heredoc's body is
data however long); one the parser cannot read in time asks; a deny rule still holds anywhere
in them.

The shapes are an attacker's: many words, options, commands, redirections, assignments,
substitutions, quotes, wrappers, scripts, heredocs; and the shapes whose cost grew as the
square of the line (or worse) before it was bounded. How long each takes is measured by
tests/bench/bench_check.py (its ADVERSARIAL lines), not here: these tests only check verdicts.

Where reading a line in full would cost too much, gatekeep denies it unread (wrappers.FORM_WORDS,
normalize.place's MAX_DIRECTORIES, gate.MAX_COMMANDS_READ): never looser than reading it all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gatekeep.core.paths import get_paths
from gatekeep.judge import gate
from gatekeep.judge.policy import load_policy
from gatekeep.name.knowledge import load_table
from gatekeep.name.normalize import normalize
from gatekeep.name.wrappers import FORM_WORDS
from gatekeep.read.parse import SimpleCommand, parse_line
from gatekeep.read.shellwords import Word

SIZE = 128 * 1024  # bytes: the longest line the hooks hand to check


def fill(prefix: str, unit: str, suffix: str = "") -> str:
    """prefix, then `unit` as often as fits in SIZE with the suffix after it."""
    return prefix + unit * ((SIZE - len(prefix) - len(suffix)) // len(unit)) + suffix


def distinct(template: str, separator: str, prefix: str = "", suffix: str = "") -> str:
    """`template` with 0, 1, 2, … joined by `separator`, as many as fit in SIZE."""
    parts, size, i = [], len(prefix) + len(suffix), 0
    while size + len(template) + len(str(i)) + len(separator) <= SIZE:
        parts.append(template.format(i))
        size += len(parts[-1]) + len(separator)
        i += 1
    return prefix + separator.join(parts) + suffix


ALLOW, ASK, DENY = "allow", "ask", "deny"
UNPARSED = "could not be fully parsed"
TOO_MANY = "more than 2,000 commands"

# (id, line, verdict, words the message holds)
SHAPES = [
    ("words", fill("ls ", "x "), ALLOW, ""),
    ("words-after-a-subcommand", fill("git log ", "x "), ALLOW, ""),
    ("options", fill("foo ", "-x a "), ASK, "matches no rule"),
    ("long-options", fill("foo ", "--opt=value "), ASK, "matches no rule"),
    ("distinct-words", distinct("a{}", " ", "cat "), ALLOW, ""),
    ("one-long-word", "echo " + "x" * (SIZE - 6), ALLOW, ""),
    ("and-lists", fill("true", " && true"), DENY, TOO_MANY),
    ("semicolons", fill("a", "; a"), ASK, UNPARSED),
    ("newlines", fill("", "a\n")[:-1], ASK, UNPARSED),
    ("pipes", fill("x", " | x"), DENY, TOO_MANY),
    ("distinct-commands", distinct("a{}", ";"), DENY, TOO_MANY),
    ("distinct-pipes", distinct("a{}", "|"), DENY, TOO_MANY),
    ("redirections", fill("cat ", "> f "), ASK, UNPARSED),
    ("distinct-redirections", distinct("> f{}", " ", "cat "), ASK, ""),  # read in ~0.5 s: or not,
    ("assignments", fill("", "A=1 ", "ls"), ALLOW, ""),  # A is no variable that changes what runs
    ("exports", distinct("a{}=1", " ", "export "), ALLOW, ""),  # the shell's own state (posture: workspace)
    ("read-variables", distinct("a{}", " ", "read "), ASK, "read a0 a1"),
    ("git-config", fill("git ", "-c a=b ", "status"), ALLOW, ""),
    ("variables", fill("echo ", "$a "), ASK, UNPARSED),
    ("substitutions", fill("echo ", "$(a) "), ASK, UNPARSED),
    ("nested-substitutions", "echo " + "$(" * 43_000 + "x" + ")" * 43_000, ASK, UNPARSED),
    ("backquotes", fill("echo ", "`a` "), ASK, UNPARSED),
    ("quotes", fill("echo ", "'a' \"b\" "), ASK, UNPARSED),
    ("unclosed-quote", fill("echo '", "x "), ASK, UNPARSED),
    ("backslashes", fill("echo ", "\\\\ "), ASK, UNPARSED),
    ("arithmetic-opened", fill("echo ", "(("), ASK, UNPARSED),
    ("arithmetic-nested", "echo " + "$((" * 26_000 + "1" + "))" * 26_000, ASK, UNPARSED),
    ("braces", fill("echo ", "{a,b} "), ASK, ""),
    ("globs", fill("ls ", "*.py "), ASK, ""),
    ("home-paths", fill("ls ", "~/x "), ASK, UNPARSED),
    ("harmless-wrapper", fill("time ", "x "), ASK, UNPARSED),
    ("wrappers-nested", fill("", "sudo env nice ", "ls"), DENY, "too many to try every deny rule"),
    ("unknown-wrapper-options", fill("sudo ", "-Z x ", "ls"), DENY, "too many to try every deny rule"),
    ("words-after-an-unknown-option", fill("sudo -Z ", "x "), DENY, "too many to try every deny rule"),
    ("cds", distinct("cd d{}", "; "), DENY, "directories, too many"),
    ("shell-script", "bash -c '" + "x; " * ((SIZE - 10) // 3) + "'", ASK, UNPARSED),
    ("eval-script", "eval '" + "x; " * ((SIZE - 7) // 3) + "'", ASK, UNPARSED),
    ("xargs-shells", fill("xargs ", "sh -c x "), ASK, UNPARSED),
    ("heredoc", "cat <<EOF\n" + "line $x\n" * ((SIZE - 14) // 8) + "EOF", ALLOW, ""),
    ("for-loop", fill("for i in ", "a ", "; do echo $i; done"), ASK, UNPARSED),
    ("comment", "ls # " + "x " * ((SIZE - 5) // 2), ALLOW, ""),
    ("fork-bomb-shaped-word", fill("", "x", "(){ x|x& }"), ASK, "`x` matches no rule"),
    # a deny rule holds wherever the command stands in a long line
    ("rm-last", fill("ls ", "x ", " && rm -rf /"), DENY, "rule 'rm * / *'"),
    ("rm-first", fill("rm -rf / ", "x "), DENY, "rule 'rm * / *'"),
    ("rm-in-a-script", "bash -c '" + "x; " * ((SIZE - 30) // 3) + "rm -rf /'", DENY, "rule 'rm * / *'"),
    ("rm-in-a-heredoc", "cat <<EOF\n" + "line $x\n" * ((SIZE - 30) // 8) + "rm -rf /\nEOF", ALLOW, ""),  # data for cat,
    ("rm-after-many-commands", distinct("a{}", ";", suffix=";rm -rf /"), DENY, ""),
    ("fork-bomb", fill("ls ", "x ", "; :(){ :|:& };:"), DENY, "fork bomb"),
]


def gatekeep_argv() -> list[str]:
    script = Path(sys.executable).with_name("gatekeep")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gatekeep"]


def words(line: str) -> list[str]:
    """`line` as check's arguments, which it joins with spaces: one argument holds at most
    128 KiB with its NUL (Linux's MAX_ARG_STRLEN), so a line of exactly 128 KiB goes as two."""
    if len(line.encode()) < SIZE:
        return [line]
    cut = line.find(" ", len(line) // 2)
    cut = line.rindex(" ") if cut < 0 else cut
    found = [line[:cut], line[cut + 1 :]]
    assert all(len(w.encode()) < SIZE for w in found)
    return found


@pytest.mark.parametrize("name,line,verdict,said", SHAPES, ids=[s[0] for s in SHAPES])
def test_a_long_line_gets_its_verdict_from_a_real_check(name, line, verdict, said):
    assert 120 * 1024 <= len(line.encode()) <= SIZE
    env = dict(os.environ)
    env.pop("GATEKEEP_HOME", None)  # as a user runs it: the XDG directories, under this test's home
    done = subprocess.run(
        [*gatekeep_argv(), "check", "--no-prompt", "-q", "--", *words(line)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if verdict == ALLOW:
        assert (done.returncode, done.stderr) == (0, ""), done.stderr[:300]  # -q: an allowed line says nothing
        return
    assert done.returncode == 1, done.stderr[-500:]
    assert done.stderr.startswith(f"gatekeep: blocked ({verdict}): "), done.stderr[:300]
    assert said in done.stderr


@pytest.fixture(scope="module")
def policy():
    return load_policy(get_paths())


def command(argv: list[str]) -> SimpleCommand:
    return SimpleCommand(tuple(Word(w) for w in argv))


@pytest.mark.parametrize(
    "short",
    [
        "git log --oneline",
        "git -C sub commit -m x",
        "npm run build",
        "kubectl -n prod get pods",
        "gcloud artifacts docker images list",
        "docker compose up -d",
        "cargo build --release",
        "mytool frobnicate",
    ],
)
def test_a_command_of_20000_words_is_named_as_its_short_form(short):
    argv = short.split() + [f"x{i}" for i in range(20_000)]
    assert load_table().name(argv) == load_table().name(short.split())
    n = normalize(command(argv))
    assert n.name == normalize(command(short.split())).name
    assert n.unchecked is None


def test_a_real_command_of_many_words_under_wrappers_is_read_in_full():
    argv = "sudo -u root nice -n 5 timeout 10 rm -rf".split() + [f"x{i}" for i in range(20_000)]
    n = normalize(command(argv))
    assert n.unchecked is None and ("rm", "-rf", "x0") == n.deny_forms[-1][:3]
    unknown = normalize(command(["sudo", "--bogus", "make", *(f"t{i}" for i in range(150))]))
    assert unknown.unchecked is None and ("make", "t0") in [f[:2] for f in unknown.deny_forms]


def test_forms_past_the_budget_leave_the_command_unchecked_and_denied(policy):
    line = "sudo env nice " * 2_000 + "ls"
    n = normalize(parse_line(line).commands[0])
    assert n.unchecked and sum(len(f) for f in n.deny_forms) <= FORM_WORDS + 3 * len(n.command.argv)
    verdict = gate.evaluate(line, policy)
    assert (verdict.decision, verdict.firm) == ("deny", True)


def test_a_command_in_too_many_directories_is_denied(policy):
    four = "cd a; cd b; cd c; cd d; ls"
    assert not any(n.unchecked for n in gate.read_line(four)[1])
    assert gate.evaluate(four, policy).decision == "ask"  # more than one cd asks
    five = "cd a; cd b; cd c; cd d; cd e; ls"
    assert [n.command.argv for n in gate.read_line(five)[1] if n.unchecked] == [["ls"]]
    verdict = gate.evaluate(five, policy)
    assert (verdict.decision, verdict.firm) == ("deny", True)


def test_past_the_most_commands_a_line_reads_it_is_denied(policy):
    most = "; ".join(f"a{i}" for i in range(gate.MAX_COMMANDS_READ))
    assert not any(n.unchecked for n in gate.read_line(most)[1])
    assert gate.evaluate(most, policy).decision == "ask"
    more = most + "; rm -rf /"
    normalized = gate.read_line(more)[1]
    assert len(normalized) == gate.MAX_COMMANDS_READ + 1 and normalized[-1].unchecked == gate.TOO_MANY
    verdict = gate.evaluate(more, policy)
    assert (verdict.decision, verdict.firm) == ("deny", True)
