"""Names (the naming data in tools/*.toml), and the suggestions an "always" answer adds."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import tomllib

from gatekeep.core import resources
from gatekeep.judge.gate import evaluate, read_line
from gatekeep.name.knowledge import load_table
from gatekeep.name.wrappers import is_bare
from tests.conftest import policy_from


def tool_tables():
    """(file stem, prefix, table) of every tool and subcommand table in tools/*.toml, the tool's
    own name first in each prefix (`git stash`)."""
    for path in sorted(Path(resources.data_dir("tools")).glob("*.toml")):
        with path.open("rb") as f:
            data = tomllib.load(f)
        todo = [(tool, table) for tool, table in data.items()]
        while todo:
            prefix, table = todo.pop(0)
            yield path.stem, prefix, table
            todo += [(f"{prefix} {k}", v) for k, v in table.items() if isinstance(v, dict) and k != "flag-aliases"]


TABLES = list(tool_tables())
ENTRIES = [
    pytest.param(prefix, example, id=f"{stem}:{example}")
    for stem, prefix, table in TABLES
    for example in table.get("name-examples", ())
]


def test_the_data_names_at_least_450_lines_across_ecosystems():
    assert len(ENTRIES) >= 450
    files = {stem for stem, _, table in TABLES if "name-examples" in table}
    assert {
        "shell", "vcs", "js", "python", "rust", "go", "jvm", "dotnet", "ruby", "php", "containers", "cloud",
        "infra", "databases", "packages", "system",
    } <= files  # fmt: skip


def test_every_table_with_an_arity_shows_it_with_an_example():
    missing = [prefix for _, prefix, table in TABLES if "arity" in table and "name-examples" not in table]
    assert not missing, missing[:20]


@pytest.mark.parametrize("prefix,example", ENTRIES)
def test_every_example_normalizes_to_its_name(prefix, example):
    line, name = example.rsplit(" -> ", 1)
    assert load_table().name(shlex.split(line)) == name


def names(line: str) -> list[str]:
    return [n.name for n in read_line(line)[1]]


@pytest.mark.parametrize(
    "line,name",
    [
        ("npm run build --watch", "npm run build"),
        ("git status -s", "git status"),
        ("git config --global user.name Ann", "git config"),
        ("touch a b c", "touch"),
        ("git -C dir commit -m x", "git commit"),
        ("pnpm --filter web build", "pnpm build"),
        ("npm -w pkg run test", "npm run test"),
        ("cargo -p x build", "cargo build"),
        ("kubectl -n ns get pods", "kubectl get pods"),
        ("docker --context x ps", "docker ps"),
        ("docker compose -f dev.yml up -d", "docker compose up"),
        ("kubectl -n prod rollout restart deploy/api", "kubectl rollout restart"),
        ("git checkout -- file.txt", "git checkout"),
        ("/usr/bin/git -C x log", "/usr/bin/git log"),
        # the real command behind wrappers and assignments
        ("sudo apt-get install -y jq", "apt-get install"),
        ("doas -u root systemctl restart nginx", "systemctl restart"),
        ("env -i PATH=/bin npm ci", "npm ci"),
        ("FOO=1 BAR=2 cargo test", "cargo test"),
        ("timeout 30 go test ./...", "go test"),
        ("repeat 3 git fetch", "git fetch"),  # zsh's
        ("nice -n 10 nohup stdbuf -oL make build", "make"),
        ("command git push", "git push"),
        ("xargs -0 -n 1 rm -f", "rm"),
        ("find . -name '*.tmp' | xargs -I{} git rm {}", "git rm"),
        ("bash -c 'pnpm --filter web test'", "pnpm test"),
        ("sh -ec 'cd x && make install'", "cd"),
        ("eval 'git fetch origin'", "git fetch"),
        # tools the table does not know: the next word joins only if it looks like a subcommand
        ("frobnicate deploy --now", "frobnicate deploy"),
        ("frobnicate ./file.txt", "frobnicate"),
        ("frobnicate -v deploy", "frobnicate"),
        ("frobnicate 42", "frobnicate"),
        ("./scripts/deploy.sh prod", "./scripts/deploy.sh prod"),
    ],
)
def test_names(line, name):
    assert name in names(line)


def test_the_name_of_a_shell_script_is_its_first_command():
    assert names("bash -c 'pnpm --filter web test'")[0] == "pnpm test"
    assert names("FOO=1 bash -c 'git status; npm test'")[0] == "git status"


def suggestions(line: str, policy_text: str = "posture: strict\n") -> tuple[str, ...]:
    return evaluate(line, policy_from(policy_text)).suggestions  # (strict: the line asks, so it has some)


@pytest.mark.parametrize(
    "line,expected",
    [
        ("npm run build --watch", ("npm run build *",)),
        ("git -C sub commit -m x", ()),  # git in another repository always asks: nothing to suggest
        ("docker compose -f dev.yml up -d", ("docker compose -f dev.yml up *",)),
        ("sudo apt-get install -y jq", ("sudo apt-get install *",)),
        ("cargo build --release", ("cargo build *",)),
        # where `tool *` would allow anything the tool can do: the exact command
        ("python script.py --fast", ("python script.py --fast",)),
        # a module run with -m gets the module's own name, as a command would (issue 36)
        ("python -m pytest -q", ("python -m pytest *",)),
        ("python3 -m pip install -r req.txt", ("python3 -m pip install *",)),
        ("python -m code", ("python -m code",)),  # it runs code it is given: the exact command
        ("python3 -m mymod x", ("python3 -m mymod x",)),  # a module the data does not know
        ("rm -rf build", ("rm -rf build",)),
        ("curl -fsSL https://x.io/a*b", ("curl -fsSL https://x.io/a\\*b",)),
        # quoted text never becomes a pattern's operator: `npm run x | sh *` would be a pipeline rule
        ("npm run 'x | sh'", ()),
        ("npm run '|' sh", ()),
        ("python 'a | sh'", ()),
        # never for a bare shell or wrapper: for the command inside, or nothing
        ("bash -c 'npm test'", ("npm test *",)),
        ("sudo", ()),
        ("env", ("env",)),  # it prints the environment, a secret: only the exact line, never `env *`
        ("bash", ()),
        ("xargs", ()),
        ("nohup", ()),
        ("timeout 5", ()),
        ("eval $CMD", ()),
        # but sourcing one file gets the exact line (issue 36): `source *` would run any file
        ("source .venv/bin/activate", ("source .venv/bin/activate",)),
        (". ./env.sh", (". ./env.sh",)),
        ("source $F", ()),
        # a heredoc line: from the part before the heredoc
        ("cat <<EOF | kubectl apply -f -\nkind: Pod\nEOF", ("kubectl apply *",)),
        # a multi-line line: from its first line
        ("npm test\nnpm run lint", ("npm test *",)),
        # a compound line: one per distinct command, only the parts not already allowed, at most 5
        ("git status && npm test && npm test -- -u", ("npm test *",)),
        ("a1 x; a2 x; a3 x; a4 x; a5 x; a6 x", ("a1 x *", "a2 x *", "a3 x *", "a4 x *", "a5 x *")),
        # nothing when no allow rule could make the line run
        ("PATH=/tmp npm test", ()),
        ("npm test; $X", ()),
    ],
)
def test_suggestions(line, expected):
    assert suggestions(line) == expected


def test_a_suggestion_never_allows_what_the_policy_denies():
    policy = "rules:\n  allow: ['rm *']\n  deny: ['rm -rf *']\n"
    assert evaluate("rm -rf build", policy_from(policy)).decision == "deny"
    assert evaluate("rm build", policy_from(policy)).decision == "allow"


def test_an_always_rule_allows_the_line_it_came_from():
    for line in ("docker compose -f dev.yml up -d", "sudo apt-get install -y jq", "bash -c 'npm test'", "rm -rf build"):
        rules = "".join(f"\n    - '{s}'" for s in suggestions(line))
        assert evaluate(line, policy_from(f"rules:\n  allow:{rules}\n")).decision == "allow", line


@pytest.mark.parametrize(
    "line",
    [
        'python3 -c "import os\nprint(1)"', 'python3 -c "a  =  1"', "curl -d '{\"a\": 1}' http://localhost:8000/x",
        "node -e 'console.log(1)'", "printf 'a  b\n' > out.txt", "git commit -m 'two  spaces'",
    ],
)  # fmt: skip
def test_a_suggestion_is_tried_on_the_spot(line):
    """Every suggestion allows the line it was offered for, or there is none: "always" never adds a
    rule that asks again at once (issue 36)."""
    import json

    found = suggestions(line)
    for s in found:
        policy = policy_from("posture: strict\nrules:\n  allow: [" + json.dumps(s) + "]\n")
        assert evaluate(line, policy).decision == "allow", (line, s)


def bare_names() -> list[str]:
    """Every name (tools and their aliases) whose table says `wrapper` or `bare`."""
    from gatekeep.name.knowledge import load_knowledge

    knowledge = load_knowledge()
    return sorted(name for name in (*knowledge.tables, *knowledge.aliases) if is_bare(name))


BARE = bare_names()


def test_the_data_knows_the_shells_and_wrappers_as_bare():
    assert {"sudo", "env", "xargs", "nice", "timeout", "sh", "bash", "zsh", "eval", "source", ".", "su"} <= set(BARE)
    assert not is_bare("git") and not is_bare("frobnicate")


@pytest.mark.parametrize("wrapper", BARE)
def test_no_pattern_for_a_bare_wrapper_is_ever_suggested(wrapper):
    for line in (wrapper, f"{wrapper} -x", f"{wrapper} x y"):
        for s in suggestions(line):
            if s == line and "*" not in s:
                continue  # the exact line (a secret it shows: `env`), which allows nothing else
            words = s.removesuffix(" *").split()
            assert any(not is_bare(w) and not w.startswith("-") for w in words), (line, s)


# --- the data's shape: subcommand lists, runners, flag aliases ------------------------------


def _bad_word(word: str) -> bool:
    return not word or word != word.strip() or " " in word or word[0] in "-+" or "/" in word or "=" in word


def test_subcommand_lists_hold_words_once_each():
    for stem, prefix, table in TABLES:
        words = table.get("subcommands")
        if words is None:
            continue
        assert isinstance(words, list) and all(isinstance(w, str) for w in words), (stem, prefix)
        bad = [w for w in words if _bad_word(w)]
        assert not bad, f"{stem}: {prefix} lists {bad}"
        twice = sorted({w for w in words if words.count(w) > 1})
        assert not twice, f"{stem}: {prefix} lists {twice} twice"


def test_a_closed_list_names_every_subcommand_that_has_naming_data():
    # `[kubectl.create.service]` arity = 3 under a kubectl create list without `service`: the
    # list would not be the whole truth
    missing = []
    for stem, prefix, table in TABLES:
        words = table.get("subcommands")
        if words is None:
            continue
        for key, sub in table.items():
            naming = isinstance(sub, dict) and ({"arity", "subcommands", "runner"} & set(sub))
            if naming and key not in words and not set(sub.get("aliases", ())) & set(words):
                missing.append(f"{stem}: {prefix} {key}")
    assert not missing, sorted(missing)[:20]


def test_every_runner_is_named_as_it_is_written():
    table = load_table()
    runners = [prefix for _, prefix, t in TABLES if t.get("runner")]
    assert {"npx", "npm exec", "uv run", "poetry run", "bundle exec"} <= set(runners)
    for runner in runners:
        argv = [*runner.split(" "), "some-command", "--flag"]
        assert table.name(argv) == runner, runner
        assert table.runs_command(argv, table.walk(argv)[0]), runner


def test_flag_aliases_map_option_spellings_to_option_spellings():
    seen = 0
    for stem, prefix, table in TABLES:
        for spelling, canonical in table.get("flag-aliases", {}).items():
            seen += 1
            targets = canonical if isinstance(canonical, list) else [canonical]
            assert spelling.startswith("-") and all(t.startswith("-") for t in targets), (stem, prefix, spelling)
        if "flag-aliases" in table:
            assert load_table().flag_aliases(prefix) == table["flag-aliases"], prefix
    assert seen >= 30
    assert load_table().flag_aliases("chown") == {"--recursive": "-R"}  # an alias shares its tool's table
    assert load_table().flag_aliases("frobnicate") is None


# --- a value never becomes a word of a name ---------------------------------------------------


@pytest.mark.parametrize(
    "line,name",
    [
        # option values: known to the data, separate or attached
        ("kubectl -n prod get pods", "kubectl get pods"),
        ("kubectl -nprod get pods", "kubectl get pods"),
        ("kubectl --namespace=prod get pods", "kubectl get pods"),
        ("git -C /srv/repo log --oneline", "git log"),
        ("brew bundle --file path/to/Brewfile", "brew bundle"),
        ("az logout --username alias@example.com", "az logout"),
        # a closed list: a word it does not list is a value
        ("git reflog feature-x", "git reflog"),
        ("bun a zod", "bun a"),
        ("dotnet new console", "dotnet new"),
        ("helm get values web", "helm get values"),
        # under a closed list, an unlisted word after an option that may take a value is its value
        ("resolvectl --legend no --type MX query example.com", "resolvectl query"),
        # where the data leaves a name word open, value-shaped words never fill it
        ("bun run path/to/file.ts", "bun run"),
        ("npm run ./scripts/x.js", "npm run"),
        ("npm run https://example.com/x", "npm run"),
        ("npm run alice@example.com", "npm run"),
        ("npm run 8080", "npm run"),
        ("npm run localhost:8080", "npm run"),
        ("npm run build.prod", "npm run"),
        ("npm run INFO", "npm run"),
        ("npm run build:prod", "npm run build:prod"),
        # tools with no subcommands
        ("cal year", "cal"),
        ("apropos regex", "apropos"),
        ("pgrep nginx", "pgrep"),
        ("id alice", "id"),
        ("make build", "make"),
        # runners: what they run is a value
        ("npx prettier --check .", "npx"),
        ("pipx run pycowsay moo", "pipx run"),
        ("uvx ruff check", "uvx"),
        # a toolchain before the subcommand
        ("cargo +nightly build --release", "cargo build"),
        # a tool the data does not know: one word, right after the tool, shaped like a subcommand
        ("frobnicate deploy --now", "frobnicate deploy"),
        ("frobnicate -o out deploy", "frobnicate"),
        ("frobnicate --region eu-west-1 deploy", "frobnicate"),
        ("frobnicate eu-west-1.example.com", "frobnicate"),
        ("frobnicate alice@example.com", "frobnicate"),
        ("frobnicate 10.0.0.1:22", "frobnicate"),
        ("frobnicate Deploy", "frobnicate"),
        ("frobnicate deploy now", "frobnicate deploy"),
        # wrappers: named through the ones that run the command as it is, not the others
        ("sudo -u ann nice -n 5 apt-get install jq", "apt-get install"),
        ("watch -n 5 df -h", "watch"),
        ("strace -f ./bin/app", "strace"),
        ("sudo chroot /srv/rootfs /bin/bash", "chroot"),
    ],
)
def test_values_never_join_a_name(line, name):
    assert names(line)[0] == name


@pytest.mark.parametrize(
    "line,expected",
    [
        # a runner's always-answer names what it runs, never `poetry run *`, which would run anything
        ("poetry run pytest -x", ("poetry run pytest *",)),
        ("npx prettier --check .", ("npx prettier *",)),
        ("bundle exec rspec", ("bundle exec rspec *",)),
        ("npx frobnicate --now", ("npx frobnicate --now",)),  # a tool the data does not know
        # a value where a name word goes: `bun run *` would run every script
        ("bun run src/index.ts", ("bun run src/index.ts",)),
        # a closed list ends the name: the rest are values the rule leaves open
        ("pip install requests", ("pip install *",)),
        ("systemctl restart nginx", ("systemctl restart *",)),
    ],
)
def test_suggestions_never_stand_for_more_than_the_name_says(line, expected):
    assert suggestions(line) == expected
