"""docs/commands.md documents every command and option of `gatekeep --help`; README.md stays a front page;
every relative link in README.md and docs/*.md leads somewhere.

Only click and gatekeep.cli are imported, so the package's inner layout does not matter here.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import click
import pytest

from gatekeep.cli import cli

REPO = Path(__file__).resolve().parent.parent
COMMANDS_DOC = REPO / "docs" / "commands.md"
README = REPO / "README.md"
README_MAX_LINES = 200


def _all_commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _all_commands(command, (*path, name))


def _spellings(command: click.Command) -> list[str]:
    """Every spelling of every option of `command` (`-n`, `-f`, `--follow`…), but not the automatic --help."""
    out = []
    for param in command.params:
        if isinstance(param, click.Option) and "--help" not in param.opts:
            out += [*param.opts, *param.secondary_opts]
    return out


def sections(text: str) -> dict[str, str]:
    """Each `## ` heading of a Markdown text and the text under it, up to the next `## ` heading
    (`### ` headings stay inside). Fenced code blocks are not read as headings."""
    found: dict[str, str] = {}
    heading, body, fenced = None, [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            if heading is not None:
                found[heading] = "\n".join(body)
            heading, body = line[3:].strip(), []
        elif heading is not None:
            body.append(line)
    if heading is not None:
        found[heading] = "\n".join(body)
    return found


def names_option(section: str, spelling: str) -> bool:
    """The section names `spelling` as a word of its own: `-n` is not found inside `--no-prompt`."""
    return re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", section) is not None


COMMANDS = [(("gatekeep",), cli)] + [(("gatekeep", *path), command) for path, command in _all_commands(cli)]


def test_the_walk_finds_the_commands_and_options_this_test_is_about():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"gatekeep", "gatekeep check", "gatekeep rules add", "gatekeep audit tail"} <= names
    tail = {" ".join(path): command for path, command in COMMANDS}["gatekeep audit tail"]
    assert {"-n", "-f", "--follow", "--json", "--outcome"} <= set(_spellings(tail))
    assert "--help" not in _spellings(tail)


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(path) for path, _ in COMMANDS])
def test_every_command_and_option_is_in_the_reference(path, command):
    heading = " ".join(path)
    doc = sections(COMMANDS_DOC.read_text(encoding="utf-8"))
    assert heading in doc, f"docs/commands.md has no section `## {heading}`"
    missing = [spelling for spelling in _spellings(command) if not names_option(doc[heading], spelling)]
    assert not missing, f"`## {heading}` in docs/commands.md does not name {', '.join(missing)}"


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(path) for path, _ in COMMANDS])
def test_every_command_has_help(path, command):
    assert command.help and len(command.help) > 20


def test_the_reference_documents_no_command_that_does_not_exist():
    commands = {" ".join(path) for path, _ in COMMANDS}
    documented = {
        heading for heading in sections(COMMANDS_DOC.read_text(encoding="utf-8")) if heading.startswith("gatekeep")
    }
    assert documented <= commands, f"docs/commands.md documents {sorted(documented - commands)}, which gatekeep lacks"


def test_a_missing_option_or_section_is_found():
    """The checks above fail for real: a section without one option, and a text without the section."""
    text = "## gatekeep audit tail\n\n- `-n N`, `-f`, `--follow`, `--json`\n\n## gatekeep audit stats\n\n`--outcome`\n"
    tail = sections(text)["gatekeep audit tail"]
    assert not names_option(tail, "--outcome")  # only in the next section
    assert names_option(tail, "-n") and names_option(tail, "--follow")
    assert not names_option("`--no-prompt`", "-n")
    assert "gatekeep audit" not in sections(text)


def test_the_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES, (
        f"README.md is over {README_MAX_LINES} lines: move detail to docs/"
    )
    assert "../shared" not in text


def test_the_docs_have_an_index_that_links_every_page():
    index = REPO / "docs" / "README.md"
    assert index.exists(), "docs/README.md (the index) is missing"
    linked = {target.partition("#")[0] for target in _links(index)}
    pages = {page.name for page in (REPO / "docs").glob("*.md")} - {"README.md"}
    assert pages <= linked, f"docs/README.md does not link {sorted(pages - linked)}"


def _markdown_files() -> list[Path]:
    return [README, *sorted((REPO / "docs").glob("*.md"))]


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _links(path: Path) -> list[str]:
    """The targets of the Markdown links in `path`, outside code blocks and code spans."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    anchors, seen = set(), {}
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE):
        anchor = _anchor(heading)
        count = seen.get(anchor, 0)
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
        seen[anchor] = count + 1
    return anchors


def test_anchors_are_made_as_github_makes_them():
    assert _anchor("Work that cannot be recovered (`loss:`)") == "work-that-cannot-be-recovered-loss"
    assert _anchor("gatekeep audit tail") == "gatekeep-audit-tail"
    assert _anchor("Who answers a prompt (`approve:`)") == "who-answers-a-prompt-approve"


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(path):
    broken = []
    for target in _links(path):
        if re.match(r"[a-z][a-z+.-]*:", target):  # https:, mailto:
            continue
        assert "../shared" not in target, f"{path.name} links to {target}, outside the project"
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target} (no such heading)")
        elif REPO not in linked.parents and linked != REPO:
            broken.append(f"{target} (outside the project)")
    assert not broken, f"{path.relative_to(REPO)}: broken links: {broken}"
