"""docs/knowledge.md's "What gatekeep knows" section is gatekeep/name/knowledge_doc.py's rendering of tools/*.toml."""

from __future__ import annotations

import pytest

from gatekeep.name import knowledge_doc


def test_the_docs_section_is_the_rendered_data():
    shown = knowledge_doc.between_markers()
    assert shown is not None, f"docs/knowledge.md lacks the {knowledge_doc.START} … {knowledge_doc.END} markers"
    assert shown == knowledge_doc.render(), (
        "docs/knowledge.md's 'What gatekeep knows' section is out of date with tools/*.toml: "
        "run `python -m gatekeep.name.knowledge_doc --write` to refresh it"
    )


def test_render_is_deterministic():
    assert knowledge_doc.render() == knowledge_doc.render()


def test_write_replaces_only_the_text_between_the_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\nbefore\n{knowledge_doc.START}\nstale\n{knowledge_doc.END}\nafter\n", encoding="utf-8")
    knowledge_doc.write(str(readme))
    assert readme.read_text(encoding="utf-8") == (
        f"# x\n\nbefore\n{knowledge_doc.START}\n{knowledge_doc.render()}{knowledge_doc.END}\nafter\n"
    )
    assert knowledge_doc.between_markers(str(readme)) == knowledge_doc.render()


def test_write_refuses_a_readme_without_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# x\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="markers"):
        knowledge_doc.write(str(readme))
    assert readme.read_text(encoding="utf-8") == "# x\n"
