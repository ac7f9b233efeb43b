"""The package's layout is its pipeline: no stage imports a later one, and no imports go round in a circle.

Stages, earliest first (each folder's __init__.py says what it does):

    core -> read -> name -> judge -> review -> ask -> record -> contain -> shells -> agents -> commands -> cli -> main -> server

A module may import its own stage or an earlier one, at the top of the file or inside a function
(an import deferred for speed is still a dependency). The modules, folders and their order are
read from the source with ast; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gatekeep"
STAGES = ("core", "read", "name", "judge", "review", "ask", "record", "contain", "shells", "agents", "commands", "cli", "main", "server", "__main__")
# The only modules that talk to a person through click: the command line, not the stages it wires.
CLICK_STAGES = {"commands", "cli", "main"}


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports anywhere in its file (`from gatekeep.x import y`
    counts as gatekeep.x.y when y is a module, else as gatekeep.x)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                found.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source)
    return {module for module in found if module in known and module != name}


def stage_of(name: str) -> str:
    """`gatekeep.judge.decide` is in judge; `gatekeep.cli` is its own; the package itself (its
    version) is core."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "core"


def backward_imports(graph: dict[str, set[str]]) -> list[str]:
    problems = []
    for name, targets in sorted(graph.items()):
        for target in sorted(targets):
            if STAGES.index(stage_of(target)) > STAGES.index(stage_of(name)):
                problems.append(f"{name} ({stage_of(name)}) imports {target}, of the later stage {stage_of(target)}")
    return problems


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import circle once, as the modules on it (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_sits_in_a_known_stage(graph):
    strays = [name for name in graph if stage_of(name) not in STAGES]
    assert not strays, f"place these in a stage folder (and STAGES, in pipeline order): {strays}"


def test_no_stage_imports_a_later_one(graph):
    assert not backward_imports(graph)


def test_there_is_no_import_circle(graph):
    assert not circles(graph)


def test_only_the_command_line_imports_click():
    talking = [
        name
        for name, path in modules().items()
        if stage_of(name) not in CLICK_STAGES
        and any(
            isinstance(node, (ast.Import, ast.ImportFrom))
            and any((getattr(node, "module", None) or alias.name).split(".")[0] == "click" for alias in node.names)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    ]
    assert not talking, f"stages return results; only commands/, cli.py and main.py talk through click: {talking}"


def test_the_stage_folders_are_the_pipeline():
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert folders == set(STAGES) - {"cli", "main", "__main__"}
    for folder in folders:
        init = ast.parse((PACKAGE / folder / "__init__.py").read_text(encoding="utf-8"))
        assert ast.get_docstring(init), f"{folder}/__init__.py says what the stage does"
        # and nothing else: every check imports these, and an import here would cost every line
        assert len(init.body) == 1, f"{folder}/__init__.py holds only its docstring"


# The checks themselves fail on what they are meant to catch.


def test_a_circle_is_found_however_long():
    a, b, c = "gatekeep.read.a", "gatekeep.read.b", "gatekeep.read.c"
    graph = {a: {b}, b: {c}, c: {a}}
    assert circles(graph) == [[a, b, c]]
    assert circles({a: {b}, b: set()}) == []


def test_a_backward_import_is_found():
    assert backward_imports({"gatekeep.read.parse": {"gatekeep.judge.policy"}}) == [
        "gatekeep.read.parse (read) imports gatekeep.judge.policy, of the later stage judge"
    ]
    assert backward_imports({"gatekeep.judge.policy": {"gatekeep.read.parse", "gatekeep"}}) == []


def test_a_deferred_import_counts(tmp_path):
    package = tmp_path / "gatekeep"
    (package / "read").mkdir(parents=True)
    (package / "judge").mkdir()
    for init in (package, package / "read", package / "judge"):
        (init / "__init__.py").write_text("")
    (package / "judge" / "policy.py").write_text("")
    (package / "read" / "parse.py").write_text(
        "def f():\n    from gatekeep.judge import policy\n    from gatekeep.judge.policy import x\n"
    )
    known = modules(package)
    assert imports("gatekeep.read.parse", package / "read" / "parse.py", known) == {"gatekeep.judge.policy"}
