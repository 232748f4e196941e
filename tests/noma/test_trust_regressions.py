"""The four faults fuzzing found in the first version, each pinned by the input that showed
it: a traceback on a self-referencing YAML anchor, and three render -> parse round trips
that changed the tree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.noma.parser import parse
from core.noma.render import render_noma, structure


@pytest.mark.parametrize(
    "frontmatter",
    ["a: &a [*a]", "a: &a {b: *a}", "a: !!binary aGVsbG8="],
)
def test_unusable_frontmatter_is_a_recovery_note_never_a_traceback(
    tmp_path: Path, frontmatter: str
) -> None:
    path = tmp_path / "y.noma"
    path.write_text(f"---\n{frontmatter}\n---\n# T\n")
    for args in (["parse", str(path)], ["render", str(path), "--to", "json"]):
        result = subprocess.run(
            [sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=60
        )
        assert "Traceback" not in result.stderr, result.stderr
        json.loads(result.stdout)  # still a whole JSON document
    doc = parse(path.read_bytes())
    assert [n.code for n in doc.notes] == ["frontmatter-invalid-yaml"]
    assert doc.meta == {}


def test_a_yaml_set_becomes_a_sorted_list() -> None:
    assert parse("---\na: !!set {y, x}\n---\n").meta == {"a": ["x", "y"]}


def test_alias_expansion_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    doc = parse("---\n" + "\n".join(lines) + "\n---\n# T\n")
    assert doc.notes and "expands" in doc.notes[0].message


@pytest.mark.parametrize(
    "text",
    [
        "para\r",  # a CR with no LF at the end of the file
        "::\r",  # ... that turned a paragraph into a directive closer
        "text\r more\n",  # a CR inside a line stays text
        '# {""}\n\nbody\n',  # an empty heading title
        "# {}\n",
        "# Use {braces} {}\n",  # a title ending in {...}, kept as text by an empty group
        "| a | b |\n| --- | --- |\n| ` | x |\n",  # a lone backtick in a table cell
        "| a | b |\n| --- | --- |\n| `x|y` | z |\n",  # a real code span keeps its pipe
    ],
)
def test_render_then_parse_keeps_the_tree(text: str) -> None:
    doc = parse(text)
    again = parse(render_noma(doc))
    assert structure(again) == structure(doc)
    assert render_noma(again) == render_noma(doc)  # the normal form is a fixed point


def test_an_empty_heading_title_stays_a_heading() -> None:
    doc = parse('# {""}\n')
    assert doc.children[0].type == "section"
    assert render_noma(doc) == "# {}\n"


def test_a_lone_backtick_is_literal_in_a_table_cell() -> None:
    table = parse("| a | b |\n| --- | --- |\n| ` | x |\n").children[0]
    assert table.rows == [["`", "x"]]  # type: ignore[attr-defined]
