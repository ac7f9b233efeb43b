"""The arity table and names, and the suggestions an "always" answer adds."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import tomllib

from gatekeep import resources
from gatekeep.arity import load_table
from gatekeep.gate import evaluate, read_line
from gatekeep.wrappers import BARE
from tests.conftest import policy_from


def table_entries():
    for path in sorted(Path(resources.data_dir("arity")).glob("*.toml")):
        with path.open("rb") as f:
            data = tomllib.load(f)
        for prefix, entry in data.get("arity", {}).items():
            yield pytest.param(prefix, entry, id=f"{path.stem}:{prefix}")


ENTRIES = list(table_entries())


def test_the_table_has_at_least_450_entries_across_ecosystems():
    assert len(ENTRIES) >= 450
    files = {p.id.split(":")[0] for p in ENTRIES}
    assert {
        "shell",
        "vcs",
        "js",
        "python",
        "rust",
        "go",
        "jvm",
        "dotnet",
        "ruby",
        "php",
        "containers",
        "cloud",
        "infra",
        "databases",
        "packages",
        "system",
    } <= files


@pytest.mark.parametrize("prefix,entry", ENTRIES)
def test_every_example_normalizes_to_its_name(prefix, entry):
    assert set(entry) == {"arity", "example", "name"}
    assert load_table().name(shlex.split(entry["example"])) == entry["name"]


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


def suggestions(line: str, policy_text: str = "") -> tuple[str, ...]:
    return evaluate(line, policy_from(policy_text)).suggestions


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
        ("rm -rf build", ("rm -rf build",)),
        ("curl -fsSL https://x.io/a*b", ("curl -fsSL https://x.io/a\\*b",)),
        # quoted text never becomes a pattern's operator: `npm run x | sh *` would be a pipeline rule
        ("npm run 'x | sh'", ()),
        ("npm run '|' sh", ()),
        ("python 'a | sh'", ()),
        # never for a bare shell or wrapper: for the command inside, or nothing
        ("bash -c 'npm test'", ("npm test *",)),
        ("sudo", ()),
        ("env", ()),
        ("bash", ()),
        ("xargs", ()),
        ("nohup", ()),
        ("timeout 5", ()),
        ("eval $CMD", ()),
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


@pytest.mark.parametrize("wrapper", sorted(BARE))
def test_no_pattern_for_a_bare_wrapper_is_ever_suggested(wrapper):
    for line in (wrapper, f"{wrapper} -x", f"{wrapper} x y"):
        for s in suggestions(line):
            words = s.removesuffix(" *").split()
            assert any(w not in BARE and not w.startswith("-") for w in words), (line, s)
