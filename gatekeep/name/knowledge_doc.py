"""docs/knowledge.md's "What gatekeep knows" section, rendered from tools/*.toml.

`python -m gatekeep.name.knowledge_doc` prints it; `--write` puts it between the markers in docs/knowledge.md;
tests/test_docs_knowledge.py checks that the page holds what render() returns. The data is
compiled first (compile_tools), so a table gatekeep would refuse is refused here too; the text
then follows each file's own order.
"""

from __future__ import annotations

import os
import sys

import tomllib

from gatekeep.core import resources
from gatekeep.name.knowledge import SCHEMA, compile_tools

START, END = "<!-- knowledge:start -->", "<!-- knowledge:end -->"
DOC = os.path.join(os.path.dirname(resources.PACKAGE_DIR), "docs", "knowledge.md")
CAP = 12  # items in one list before "and N more"
ALTERNATIVES = 4  # options or operands shown for one form before "/…"


def render() -> str:
    directory = resources.data_dir("tools")
    names = sorted(name for name in os.listdir(directory) if name.endswith(".toml"))
    sources = []
    for name in names:
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            sources.append((name, f.read()))
    compile_tools(sources)  # refuses what gatekeep would refuse
    out = [
        (
            "_Generated from `tools/*.toml` by `python -m gatekeep.name.knowledge_doc`"
            " and checked by `tests/test_docs_knowledge.py`._"
        )
    ]
    out += ["", "## The schema", "", "A tool's table, and each subcommand's (a table inside it), may say:", ""]
    out += [f"- `{key}`: {text}" for key, text in SCHEMA.items()]
    out += ["", "## Tools, by file"]
    for name, text in sources:
        out += ["", f"### {_title(name, text)}", ""]
        plain, named = [], []
        for tool, table in tomllib.loads(text).items():
            line = _tool_line(tool, table)
            if line:
                out.append(line)
            else:
                (named if _names_only(table) else plain).append(f"`{tool}`")
        if plain:
            out += ["", "Also knows the options of: " + ", ".join(plain) + "."]
        if named:
            out += ["", "Knows only how to name (nothing they do is known, so never read-only): " + ", ".join(named) + "."]
    return "\n".join(out) + "\n"


NAMING = frozenset({"arity", "subcommands", "runner", "name-examples", "flag-aliases", "value-options", "aliases"})


def _names_only(table: dict) -> bool:
    """Whether the table and its subcommands' say only how the tool is named (naming, arity.py)."""
    return all(_names_only(v) if isinstance(v, dict) and k != "flag-aliases" else k in NAMING for k, v in table.items())


def _title(name: str, text: str) -> str:
    """The file's first comment line, up to its first colon or full stop (`Containers and clusters`)."""
    first = next((line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")), "")
    for stop in (": ", ". "):
        first = first.split(stop, 1)[0]
    return first.rstrip(".") or name


def _tool_line(tool: str, table: dict) -> str | None:
    reads, loses, secrets, runs, trees = [], [], [], [], []
    for words, form in _forms(tool, table):
        path = " ".join(words[1:]) or tool
        if form.get("read-only") is True or _list(form, "read-only-if"):
            reads.append(_read_only(path, form))
        if _text(form, "loss"):
            alternatives = _list(form, "loss-options") + _list(form, "loss-operands")
            loses.append(_form(path, alternatives, _checks(words, form, "loss-checks")))
        if _list(form, "removes-with"):
            loses.append(_form(path, _list(form, "removes-with")) + " (trees, judged against the working tree)")
        if _text(form, "secret") or _list(form, "secret-operands"):
            secrets.append(_form(path, _list(form, "secret-options") + _list(form, "secret-operands")))
        if form.get("reads-trees") is True or _list(form, "reads-trees-with"):
            trees.append(_form(path, _list(form, "reads-trees-with")))
        runs += _runs(words, path, form)
    parts = []
    if reads:
        parts.append("only reads: " + _capped(reads))
    if loses:
        parts.append(f"loses work (class {_loss_class(table, tool)}): " + _capped(loses))
    if secrets:
        parts.append("reads secrets: " + _capped(secrets))
    if trees:
        parts.append("reads directories whole: " + _capped(trees))
    if runs:
        parts.append("runs code: " + _capped(runs))
    if not parts:
        return None
    aliases = table.get("aliases", [])
    named = f"**{tool}**" + (f" ({_capped(aliases)})" if aliases else "")
    return f"- {named} — " + "; ".join(parts)


def _forms(tool: str, table: dict, words: tuple = ()):
    """Every (sub)table in data order, with the words that lead to it."""
    words += (tool,)
    yield words, table
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _forms(key, value, words)


def _read_only(path: str, form: dict) -> str:
    if form.get("read-only") is not True:
        return _form(path, _list(form, "read-only-if"))
    unless = _list(form, "state-options") + _list(form, "write-options")
    limit = form.get("max-operands")
    if type(limit) is not int:
        shown = f"`{path}`"
    else:
        shown = f"`{path}` with no operand" if limit == 0 else f"`{path}` with up to {limit} operand{'s' * (limit > 1)}"
        if _list(form, "read-only-if"):
            shown += " (or with " + _slashed(_list(form, "read-only-if")) + ")"
    if _text(form, "write-operands"):
        unless.append("an output operand")
    if unless:
        shown += " unless given " + _slashed(unless)
    return shown


def _runs(words: tuple, path: str, form: dict) -> list[str]:
    items = []
    if _text(form, "runs"):
        items.append(f"`{path}`")
    code = list(dict.fromkeys(_list(form, "code-options") + _list(form, "script-options")))
    if code:
        items.append(_form(path, code))
    if form.get("script-operands") is True and not _text(form, "runs"):
        items.append(f"`{path}` with its operands")
    if _list(form, "code-modules"):
        items.append(_form(f"{path} -m", _list(form, "code-modules")))
    if _list(form, "program-options"):
        items.append(_form(path, _list(form, "program-options")) + " from a pipe")
    operand, fed = form.get("program-operand") is True, form.get("stdin-program") is True
    if operand and fed:
        items.append(f"`{path}` with a program from a pipe or its input")
    elif operand:
        items.append(f"`{path}` with a program from a pipe")
    elif fed:
        items.append(f"`{path}` fed on its input")
    if _list(form, "config-options") and _list(form, "code-keys"):
        keys = _slashed(_list(form, "code-keys"))
        items.append(f"`{path}` with {_slashed(_list(form, 'config-options'))} setting {keys}")
    checks = _checks(words, form, "checks")
    if checks:
        items.append(f"`{path}`{checks}")
    return items


def _form(path: str, alternatives: list[str], checks: str = "") -> str:
    """`reset --hard` for one alternative, `reset` with `--hard`/`--merge` for more."""
    if len(alternatives) == 1:
        return f"`{path} {alternatives[0]}`{checks}"
    if alternatives:
        return f"`{path}` with {_slashed(alternatives)}{checks}"
    return f"`{path}`{checks}"


def _slashed(items: list[str]) -> str:
    shown = [item if item.startswith("an ") else f"`{item}`" for item in items[:ALTERNATIVES]]
    return "/".join(shown) + ("/…" if len(items) > ALTERNATIVES else "")


def _checks(words, form: dict, key: str) -> str:
    """The checks as a few words: `git-push-refspec` at `git push` is "refspec"."""
    names = _list(form, key)
    if not names:
        return ""
    shown = []
    for name in names:
        for n in range(len(words), 0, -1):
            prefix = "-".join(words[:n]) + "-"
            if name.startswith(prefix):
                name = name[len(prefix) :]
                break
        shown.append(name.replace("-", " "))
    joined = ", ".join(shown)
    prefix = " or" if key == "loss-checks" and (_list(form, "loss-options") or _list(form, "loss-operands")) else ""
    return f"{prefix} by check ({joined})"


def _list(form: dict, key: str) -> list[str]:
    value = form.get(key, [])
    return list(value) if isinstance(value, list) else []


def _text(form: dict, key: str) -> str | None:
    value = form.get(key)  # a subcommand may share a key's name (`gh pr checks`): a table, not data
    return value if isinstance(value, str) else None


def _loss_class(table: dict, tool: str) -> str:
    classes = [_text(form, "loss-class") for _, form in _forms(tool, table) if _text(form, "loss-class")]
    return "/".join(dict.fromkeys(classes)) or "unset"


def _capped(items: list[str]) -> str:
    if len(items) > CAP:
        return ", ".join(items[:CAP]) + f" and {len(items) - CAP} more"
    return ", ".join(items)


def write(path: str = DOC) -> None:
    """Put render() between the markers in docs/knowledge.md."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        sys.exit(f"{path} not found: --write works in a checkout of gatekeep")
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"{path} has no {START} … {END} markers: add them where the section goes")
    updated = text[: start + len(START)] + "\n" + render() + text[end:]
    if updated != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(updated)


def between_markers(path: str = DOC) -> str | None:
    """The text between the markers in docs/knowledge.md, without the newline after the start marker."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        return None
    return text[start + len(START) : end].removeprefix("\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    elif sys.argv[1:]:
        sys.exit("usage: python -m gatekeep.name.knowledge_doc [--write]")
    else:
        sys.stdout.write(render())
