"""``render --to noma``: the normalised form (noma-interop "Round-trip") and the round-trip
property parse(render(parse(x))) == parse(x)."""

from __future__ import annotations

import json

import pytest

from core.noma import parse
from core.noma.nodes import Document, Table
from core.noma.render import render_json, render_noma, structure


def rt(text: str) -> str:
    return render_noma(parse(text))


def test_suffixed_implicit_ids_are_written_explicitly() -> None:
    assert rt("## Changes\n\n## Changes\n") == '## Changes\n\n## Changes {id="changes-2"}\n'


def test_explicit_id_equal_to_natural_slug_is_dropped() -> None:
    assert rt('# Risks {id="risks" aliases="r"}\n') == '# Risks {aliases="r"}\n'


def test_attribute_quoting_is_normalised() -> None:
    assert (
        rt("::x{a='one' b=two c=true d=false e=3}\n::\n")
        == '::x{a="one" b="two" c d=false e=3}\n::\n'
    )


def test_fence_colons_follow_depth() -> None:
    text = '::::section{id="s"}\n:::::claim{id="c"}\nx\n:::::\n::::\n'
    assert rt(text) == '::section{id="s"}\n:::claim{id="c"}\nx\n:::\n::\n'


def test_lists_and_quotes_are_normalised() -> None:
    assert (
        rt("* a\n* b\n\n3. x\n7. y\n\n>q\n>\n>  r\n") == "- a\n- b\n\n1. x\n2. y\n\n> q\n>\n>  r\n"
    )


def test_a_quote_line_of_blanks_keeps_its_blanks() -> None:
    # Only an empty quote line is written as a bare ``>``; a line holding a tab or spaces
    # is content, and dropping it changed the tree (found by the round-trip property).
    assert rt("> \t\n>  \n>\n") == "> \t\n>  \n>\n"


def test_table_is_padded_with_alignment_rows() -> None:
    text = "| Name | Score |\n|:-----|------:|\n| Alice | 92 |\n"
    assert rt(text) == "| Name  | Score |\n| :---- | ----: |\n| Alice | 92    |\n"


def test_table_rows_of_other_widths_are_padded_or_cut_to_the_header() -> None:
    # The parser makes rectangular tables; a tree built otherwise still renders one grid.
    table = Table(1, 4, header=["Name", "S", "Note"], align=["center", "left"], rows=[])
    table.rows = [["Alice", "92"], ["Bob", "7", "fine", "extra"]]
    assert render_noma(Document(1, 4, children=[table])) == (
        "| Name  | S    | Note |\n| :---: | :--- | ---- |\n"
        "| Alice | 92   |      |\n| Bob   | 7    | fine |\n"
    )


def test_an_id_dropped_inside_a_directive_is_kept_when_it_would_not_read_back() -> None:
    text = '::box\n# Inner {id="inner"}\n::\n\n# Inner {id="inner"}\n'
    out = rt(text)
    assert out == '::box\n# Inner {id="inner"}\n::\n\n# Inner {id="inner"}\n'
    assert rt('::box\n# Inner {id="inner"}\n::\n') == "::box\n# Inner\n::\n"


def test_paragraph_text_is_kept_byte_for_byte() -> None:
    assert rt("line with two spaces  \nnext\n") == "line with two spaces  \nnext\n"


def test_bom_is_kept_and_final_newline_added() -> None:
    assert rt("\ufeff# A") == "\ufeff# A\n"


def test_empty_document_renders_empty() -> None:
    assert rt("") == ""


def test_leading_thematic_break_does_not_turn_into_frontmatter() -> None:
    text = "***\ntext\n\n***\n"
    assert structure(parse(rt(text))) == structure(parse(text))


SAMPLES = [
    "---\ntitle: T\naliases: [a]\n---\n\n# Title\n\nPara [[x]].\n",
    '# A\n\n::claim{id="c" confidence=0.9}\nbody\n\n- a\n  b\n::\n\n## B\n\n```py\n::x\n```\n',
    '::section{id="s"}\n## Inner\n\ntext\n:::note{id="n"}\n> q\n:::\n::\n',
    "| a | b |\n| :-: | --- |\n| `x|y` | 2 |\n\n1. one\n2. two\n",
    '# Dup\n# Dup\n# Dup {id="k"}\n',
    "text\n---\n> quote\n",
    "> \t\n> a\n>   \n",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_roundtrip_is_structurally_equal(text: str) -> None:
    once = rt(text)
    assert structure(parse(once)) == structure(parse(text))
    assert rt(once) == once  # the normal form is a fixed point


def test_render_json_is_the_ast() -> None:
    data = json.loads(render_json(parse('# A\n\n::claim{id="c"}\nx\n::\n')))
    assert data["type"] == "document"
    section = data["children"][0]
    assert section["id"] == "a" and section["children"][0]["name"] == "claim"
    assert section["children"][0]["pos"] == {"line": 3, "column": 1}
