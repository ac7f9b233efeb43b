"""Commands inside one-liners (inline.py) and GNU parallel's jobs (scripts.py): what deny rules see.

`python -c`, `node -e`, `perl -e` and `ruby -e` code always asks unless a rule names that
form; the literal commands it hands to a shell must meet the deny rules whatever allows the
interpreter. `parallel` runs a command per argument, read the way xargs's is.
"""

from __future__ import annotations

import pytest

from gatekeep.judge.gate import evaluate
from gatekeep.name.inline import MAX_CODE, UNKNOWN, literals, names_one_of, shell_commands
from gatekeep.name.knowledge import load_knowledge
from tests.conftest import policy_from

TABLES = {"python": "python", "js": "node", "perl": "perl", "ruby": "ruby"}


def _calls(language: str):
    return load_knowledge().table(TABLES[language])[1]["shell-calls"]


@pytest.mark.parametrize(
    "language,code,commands",
    [
        ("python", 'import os; os.system("rm -rf ~")', ["rm -rf ~"]),
        ("python", "import subprocess; subprocess.run(['rm', '-rf', '/'])", ["rm -rf /"]),
        ("python", "import subprocess as s; s.check_output('make clean', shell=True)", ["make clean"]),
        ("python", 'os.system("\\x72m -rf ~")', ["rm -rf ~"]),  # escapes are read
        ("python", "os.system(r'rm -rf \\x')", ["rm -rf \\x"]),  # a raw string is not
        ("python", 'os.system("rm " "-rf ~")', ["rm -rf ~"]),
        ("python", '__import__("os").system("""rm -rf ~""")', ["rm -rf ~"]),
        ("python", 'os.system(f"rm -rf {d}")', [f"rm -rf {UNKNOWN}"]),
        ("python", 'os.system("rm -rf " + d)', [f"rm -rf {UNKNOWN}"]),
        ("python", 'subprocess.run(["rm", "-rf", x])', [f"rm -rf {UNKNOWN}"]),
        ("python", "subprocess.run(['echo', 'a b; c'])", ["echo 'a b; c'"]),  # an argv stays an argv
        ("python", "os.system(cmd)", [UNKNOWN]),  # a command nobody can read here
        ("python", 'os.system(("rm -rf ~"))', [UNKNOWN]),
        ("python", 'os.system("rm -rf " + ("~"))', [f"rm -rf {UNKNOWN}"]),
        ("python", 'os.system("rm -rf \\\n~")', ["rm -rf ~"]),  # a backslash-newline joins
        ("python", 'os.system("rm -rf \\N{TILDE}")', [f"rm -rf {UNKNOWN}"]),
        ("python", 'os.\uff53ystem("rm -rf ~")', ["rm -rf ~"]),  # names are read in NFKC
        ("js", 'exec\\u0053ync("rm -rf \\u{7e}")', ["rm -rf ~"]),
        ("perl", 'system("rm -rf \\x{7e}")', ["rm -rf ~"]),
        ("python", "print(1)", []),
        ("js", 'require("child_process").execSync("rm -rf ~")', ["rm -rf ~"]),
        ("js", "cp.spawn('rm', ['-rf', '/'], {stdio: 'inherit'})", ["rm -rf /"]),
        ("js", "x = /'/; exec(\"rm -rf ~\")", ["rm -rf ~"]),  # a quote in a regex hides nothing
        ("js", "await $`rm -rf ${dir}`", [f"rm -rf {UNKNOWN}"]),
        ("js", "console.log(1)", []),
        ("perl", 'system("rm -rf ~")', ["rm -rf ~"]),
        ("perl", "system 'rm', '-rf', '/'", ["rm -rf /"]),
        ("perl", "print `rm -rf ~`", ["rm -rf ~"]),
        ("perl", "qx{rm -rf ~}", ["rm -rf ~"]),
        ("perl", 'system "rm -rf $ENV{HOME}"', [f"rm -rf {UNKNOWN}"]),
        ("perl", "print 1", []),
        ("ruby", "`rm -rf ~`", ["rm -rf ~"]),
        ("ruby", "%x(rm -rf ~)", ["rm -rf ~"]),
        ("ruby", 'system("rm", "-rf", "/")', ["rm -rf /"]),
        ("ruby", 'system "rm -rf #{Dir.home}"', [f"rm -rf {UNKNOWN}"]),
        ("ruby", 'IO.popen("rm -rf ~").read', ["rm -rf ~"]),
        ("ruby", "puts 1", []),
    ],
)
def test_the_literal_commands_of_inline_code(language, code, commands):
    assert shell_commands(code, language, _calls(language)) == commands


INTERPRETERS_ALLOWED = "rules:\n  allow: ['python3 -c *', 'node -e *', 'perl -e *', 'ruby -e *', 'git *']\n"


@pytest.mark.parametrize(
    "line,decision",
    [
        ("python3 -c 'import os; os.system(\"rm -rf ~\")'", "deny"),
        ("python3 -c \"import subprocess; subprocess.run(['rm', '-rf', '/'])\"", "deny"),
        ("node -e 'require(\"child_process\").execSync(\"rm -rf ~\")'", "deny"),
        ("perl -e 'system(\"rm -rf ~\")'", "deny"),
        ("perl -e \"'\\`'; \\`rm -rf ~\\`\"", "deny"),  # a stray backtick hides no command
        ("perl -e 'system' -e '\"rm -rf ~\"'", "deny"),  # several -e are one program
        ("python3 -c 'import subprocess; subprocess.run(args=\"rm -rf ~\", shell=True)'", "ask"),
        ("ruby -e '`rm -rf ~`'", "deny"),
        ("python3 -c 'import os; os.system(\"git status\")'", "allow"),  # the rule names the form
        ("python3 -c 'import os; os.system(\"rm -rf \" + d)'", "ask"),  # a command made at run time
        ("python3 -c 'print(1)'", "allow"),
    ],
)
def test_inline_commands_meet_the_deny_rules_whatever_allows_the_interpreter(line, decision, tmp_path):
    verdict = evaluate(line, policy_from(INTERPRETERS_ALLOWED), str(tmp_path))
    assert verdict.decision == decision, verdict.reason


@pytest.mark.parametrize(
    "line", ["python3 -c 'import os; os.system(\"ls\")'", "node -e 'require(\"child_process\").execSync(\"ls\")'"]
)
def test_inline_code_still_asks_with_no_rule_naming_it(line, tmp_path):
    assert evaluate(line, policy_from(""), str(tmp_path)).decision == "ask"


@pytest.mark.parametrize(
    "line,everything,nothing",
    [
        # the jobs parallel runs meet the deny rules, however the arguments reach the command
        ("parallel 'rm -rf {}' ::: ~", "deny", "deny"),
        ("parallel rm -rf ::: ~ /", "deny", "deny"),
        ("parallel rm ::: -rf ::: ~", "deny", "deny"),  # one argument of each group, appended
        ("parallel ::: 'rm -rf ~' ls", "deny", "deny"),  # no command: each argument is one
        ("parallel -I @ 'r@ -rf ~' ::: m", "deny", "deny"),
        ("parallel -Ix 'rm -rf x' ::: ~", "deny", "deny"),
        ("parallel 'r{.} -rf ~' ::: m.x", "deny", "deny"),
        ("parallel --er @ 'r@ -rf ~' ::: m.x", "deny", "deny"),
        ("parallel 'rm -rf {2}' ::: a ::: ~", "deny", "deny"),
        # arguments nobody can see yet, or computed: never allowed
        ("echo ~ | parallel rm -rf", "ask", "ask"),
        ("parallel -a list.txt 'rm -rf {}'", "ask", "ask"),
        ("parallel 'rm -rf {}' :::: list.txt", "ask", "ask"),
        ("parallel --rpl '{x} s/a/b/' 'rm {x}' ::: a", "ask", "ask"),
        ("parallel 'rm {=s/x/y/=}' ::: a", "ask", "ask"),
        ("parallel -N3 {} ::: rm -rf ~", "ask", "ask"),  # several arguments to a job
        ("parallel -j1 -X {} ::: rm -rf ~", "ask", "ask"),
        ("parallel --colsep , rm ::: -rf,--no-preserve-root,/", "ask", "ask"),
        # arguments are quoted as parallel quotes them
        ("parallel echo ::: a ';rm -rf ~'", "allow", "allow"),
        # quiet options: parallel only runs its jobs, which decide
        ("parallel -j4 'wc -l {}' ::: *.txt", "allow", "allow"),
        ("parallel 'wc -l {/}' ::: src/a.txt", "allow", "allow"),
        ("parallel convert {} {.}.png ::: *.jpg", "allow", "ask"),  # a glob is cut as written
        ("parallel 'r{.} -rf ~' ::: m.*", "ask", "ask"),  # ...unless the cut part holds a glob
        ("parallel --joblog jobs.log 'wc -l {}' ::: a", "allow", "ask"),  # writes a log
        ("parallel -S host 'wc -l {}' ::: a", "allow", "ask"),  # runs elsewhere
    ],
)
def test_parallel_jobs_are_read_as_xargs_commands_are(line, everything, nothing, tmp_path):
    for text, decision in (("default: allow\nrules:\n  allow: ['*']\n", everything), ("", nothing)):
        verdict = evaluate(line, policy_from(text), str(tmp_path))
        assert verdict.decision == decision, (text, verdict.reason)


# The string literals of inline code (posture.inline_code reads them for paths), and the names
# it holds (loss-calls, home-calls).
LITERALS = [
    ("print(open('.env').read())", "python", [".env"]),
    ('open(r"a\\b", "w")', "python", ["a\\b", "w"]),
    ("x = '''a\nb'''", "python", ["a\nb"]),
    ("require('fs').readFileSync(`${d}/x`)", "js", ["/x"]),
    ("open F, q(~/.bashrc)", "perl", ["~/.bashrc"]),
    ("File.read(%q(.env))", "ruby", [".env"]),
]


@pytest.mark.parametrize("code,language,wanted", LITERALS)
def test_literals_are_read_as_the_language_reads_them(code, language, wanted):
    found = literals(code, language)
    assert all(any(w in f for f in found) for w in wanted), found


def test_too_many_literals_or_too_much_code_vouches_for_nothing():
    assert literals("'a'," * 300, "python") is None
    assert literals("x" * (MAX_CODE + 1), "python") is None


@pytest.mark.parametrize(
    "code,language,found",
    [
        ("import shutil; shutil.rmtree('x')", "python", "rmtree"),
        ("import os; os.ｒｅｍｏｖｅ('x')", "python", "remove"),  # NFKC, as Python reads names
        ("require('fs').rm\\u0053ync('x')", "js", "rmSync"),
        ("print(1)", "python", None),
    ],
)
def test_names_one_of_finds_a_name_as_the_language_spells_it(code, language, found):
    assert names_one_of(code, language, {"rmtree", "remove", "rmSync"}) == found
