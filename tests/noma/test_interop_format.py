"""The format behaviours the reference shows where the spec is silent (issue 13, Build 4):
namespaced directive names, JSON dataset bodies in any array layout, blank lines kept by
delete/move inside a directive parent, and the render normal form of aliases and stray
backslash-quotes. Each has a case that triggers it and one that does not."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.noma.ids import index
from core.noma.nodes import Directive
from core.noma.parser import parse
from core.noma.patch import apply_ops_to_text
from core.noma.render import render_noma
from core.noma.validate import validate

# -- namespaced directive names ------------------------------------------------------

NS = (
    "# Doc\n\n"
    '::acme::widget{id="widget-1" reviewed-by="kim" aliases="w1"}\n'
    "Body.\n"
    "::\n\n"
    "See [[widget-1]] and [[w1]].\n"
)


def test_namespaced_directive_is_a_directive_with_id_alias_and_unknown_attributes() -> None:
    doc = parse(NS)
    widget = next(n for n, _ in doc.walk() if isinstance(n, Directive))
    assert widget.name == "acme::widget" and widget.id == "widget-1"
    assert widget.attrs["reviewed-by"] == "kim"
    assert (widget.line, widget.end_line) == (3, 5)
    idx = index(doc)
    assert idx.canonical == ["doc", "widget-1"] and idx.alias_owner == {"w1": "widget-1"}
    assert validate(doc) == []  # the links resolve; unknown attributes pass through (§1.3)


def test_namespaced_directive_is_patchable_and_renders_back() -> None:
    out = apply_ops_to_text(
        NS, [{"op": "update_attribute", "id": "widget-1", "key": "status", "value": "ok"}]
    )
    assert '::acme::widget{id="widget-1" reviewed-by="kim" aliases="w1" status="ok"}' in out
    assert render_noma(parse(NS)) == NS


def test_a_lone_name_or_a_trailing_double_colon_is_not_namespaced() -> None:
    plain = parse('::note{id="n"}\nx\n::\n')
    assert [n.name for n, _ in plain.walk() if isinstance(n, Directive)] == ["note"]
    text = parse("::acme::\nx\n")  # no name after the second "::": not an opener
    assert not any(isinstance(n, Directive) for n, _ in text.walk())


# -- blank lines on delete_block / move_block inside a directive parent ---------------

PARENTS = (
    '::section{id="p"}\n'
    ':::claim{id="a"}\nA.\n:::\n\n'
    ':::claim{id="b"}\nB.\n:::\n'
    "::\n\n"
    '::section{id="q"}\n::\n'
)


def test_deleting_a_directive_parents_first_child_keeps_the_blank_line_after_it() -> None:
    out = apply_ops_to_text(PARENTS, [{"op": "delete_block", "id": "a"}])
    assert out.startswith('::section{id="p"}\n\n:::claim{id="b"}\n')


def test_moving_a_directive_parents_first_child_keeps_the_blank_line_after_it() -> None:
    out = apply_ops_to_text(PARENTS, [{"op": "move_block", "id": "a", "parent": "q"}])
    assert out.startswith('::section{id="p"}\n\n:::claim{id="b"}\n')
    assert out.endswith('::section{id="q"}\n:::claim{id="a"}\nA.\n:::\n::\n')


def test_deleting_a_later_child_or_the_files_first_block_leaves_no_stray_blank() -> None:
    out = apply_ops_to_text(PARENTS, [{"op": "delete_block", "id": "b"}])
    assert out.startswith('::section{id="p"}\n:::claim{id="a"}\nA.\n:::\n::\n')
    first = '::claim{id="a"}\nA.\n::\n\n# H\n'
    assert apply_ops_to_text(first, [{"op": "delete_block", "id": "a"}]) == "# H\n"
    # Under a heading section the block after the heading is tidied as before.
    section = '# H\n\n::claim{id="a"}\nA.\n::\n\nText.\n'
    assert apply_ops_to_text(section, [{"op": "delete_block", "id": "a"}]) == "# H\n\nText.\n"


# -- render normal form ----------------------------------------------------------------


def test_render_writes_aliases_comma_separated() -> None:
    src = '# Memo {aliases="a, b c"}\n\n::note{id="n" aliases="x  y,z"}\nBody.\n::\n'
    out = render_noma(parse(src))
    assert '# Memo {aliases="a,b,c"}' in out and '::note{id="n" aliases="x,y,z"}' in out
    assert index(parse(out)).alias_owner == index(parse(src)).alias_owner
    tidy = '# Memo {aliases="a,b"}\n'
    assert render_noma(parse(tidy)) == tidy  # already normal: unchanged


def test_a_stray_backslash_quote_ends_the_value_and_leaves_bare_flags() -> None:
    src = '::note{id="n" title="say \\"hi\\" now" k=1}\nBody.\n::\n'
    note = next(n for n, _ in parse(src).walk() if isinstance(n, Directive))
    assert note.attrs == {"id": "n", "title": "say \\", "hi": True, "now": True, "k": 1}
    out = render_noma(parse(src))
    assert out.startswith('::note{id="n" title="say \\" hi now k=1}\n')
    assert render_noma(parse(out)) == out  # stable
    clean = '::note{id="n" title="say hi"}\nBody.\n::\n'
    assert next(n for n, _ in parse(clean).walk() if isinstance(n, Directive)).attrs == {
        "id": "n",
        "title": "say hi",
    }


# -- ::dataset JSON bodies in any array layout -----------------------------------------


def ds(body: str) -> str:
    return '::dataset{id="j"}\n' + body + "\n::\n"


def one(doc: str, op: str, **fields: object) -> str:
    return apply_ops_to_text(doc, [{"op": op, "id": "j", **fields}])


def test_json_array_on_one_line_is_editable_by_every_dataset_op() -> None:
    doc = ds('[["a", 1], ["b", 2]]')
    assert one(doc, "update_dataset_cell", row=1, column=1, value="5") == ds('[["a", 1], ["b",5]]')
    assert one(doc, "insert_dataset_row", row=2, cells=["c", "3"]) == ds(
        '[["a", 1], ["b", 2], ["c",3]]'
    )
    assert one(doc, "insert_dataset_row", row=0, cells=["z", "0"]) == ds(
        '[["z",0], ["a", 1], ["b", 2]]'
    )
    assert one(doc, "delete_dataset_row", row=0) == ds('[["b", 2]]')
    assert one(doc, "delete_dataset_row", row=1) == ds('[["a", 1]]')
    assert one(doc, "insert_dataset_column", column=1, header="x", cells=["9", "8"]) == ds(
        '[["a",9,1], ["b",8,2]]'
    )
    assert one(doc, "delete_dataset_column", column=0) == ds("[[1], [2]]")


def test_json_brackets_sharing_lines_with_rows() -> None:
    doc = ds('[["a", 1],\n ["b", 2]]')
    assert one(doc, "update_dataset_cell", row=0, column=0, value="q") == ds(
        '[["q",1],\n ["b", 2]]'
    )
    # A new row takes the body's own separator: a line break and the indentation.
    assert one(doc, "insert_dataset_row", row=2, cells=["c", "3"]) == ds(
        '[["a", 1],\n ["b", 2],\n ["c",3]]'
    )
    assert one(doc, "delete_dataset_row", row=1) == ds('[["a", 1]]')
    empty = ds("[]")
    assert one(empty, "insert_dataset_row", row=0, cells=["a"]) == ds(
        '[\n  ["a"]\n]'
    )  # an empty one-line array grows one row per line, as before


def test_rewritten_records_keep_their_spacing_style() -> None:
    spaced = ds('[{ "a": 1, "b": 2 }, { "a": 3, "b": 4 }]')
    assert one(spaced, "update_dataset_cell", row=0, column="b", value="7") == ds(
        '[{ "a": 1, "b": 7 }, { "a": 3, "b": 4 }]'
    )
    assert one(spaced, "insert_dataset_row", row=2, cells=["5", "6"]) == ds(
        '[{ "a": 1, "b": 2 }, { "a": 3, "b": 4 }, { "a": 5, "b": 6 }]'
    )
    compact = ds('[{"a":1},\n{"a":2}\n]')
    assert one(compact, "update_dataset_cell", row=1, column="a", value="9") == ds(
        '[{"a":1},\n{"a":9}\n]'
    )
    # One record per line, spaced: the touched line stays spaced, the other is untouched.
    lines = ds('[\n  { "a": 1, "b": 2 },\n  {"a":3,"b":4}\n]')
    out = one(lines, "update_dataset_cell", row=0, column="a", value="0")
    assert out == ds('[\n  { "a": 0, "b": 2 },\n  {"a":3,"b":4}\n]')
    out = one(lines, "update_dataset_cell", row=1, column="a", value="0")
    assert out == ds('[\n  { "a": 1, "b": 2 },\n  {"a":0,"b":4}\n]')


def test_inline_json_edits_parse_back_to_the_same_rows() -> None:
    doc = ds('[{ "k": "a", "n": 1 }, { "k": "b", "n": 2 }]')
    out = one(doc, "insert_dataset_column", column=1, header="x", cells=["9", "8"])
    body = out.split("\n")[1]
    assert json.loads(body) == [{"k": "a", "x": 9, "n": 1}, {"k": "b", "x": 8, "n": 2}]


def _cell(text: str) -> object:
    return int(text) if text.isdigit() else text


@given(
    rows=st.lists(
        st.lists(st.sampled_from(["a", "bb", "7", "12"]), min_size=2, max_size=2),
        min_size=1,
        max_size=4,
    ),
    seps=st.lists(st.sampled_from([", ", ",", ",\n ", " ,  "]), min_size=3, max_size=3),
    head=st.sampled_from(["[", "[ ", "[\n  "]),
    tail=st.sampled_from(["]", " ]", "\n]"]),
    edit=st.sampled_from(["update", "insert", "delete", "insert_col", "delete_col"]),
    where=st.integers(0, 5),
    text=st.sampled_from(["z", "42"]),
)
@settings(max_examples=150, deadline=None, database=None)
def test_inline_json_edits_match_the_same_edit_on_the_rows(
    rows: list[list[str]],
    seps: list[str],
    head: str,
    tail: str,
    edit: str,
    where: int,
    text: str,
) -> None:
    """Any layout, any op: the body still parses, to exactly the rows the op means."""
    values = [[_cell(c) for c in row] for row in rows]
    body = head
    for i, row in enumerate(values):
        body += (seps[i % 3] if i else "") + json.dumps(row)
    body += tail
    expected = [list(r) for r in values]
    row = min(where, len(values) - 1)
    if edit == "update":
        op = {"op": "update_dataset_cell", "row": row, "column": 1, "value": text}
        expected[row][1] = _cell(text)
    elif edit == "insert":
        at = min(where, len(values))
        op = {"op": "insert_dataset_row", "row": at, "cells": [text, text]}
        expected.insert(at, [_cell(text), _cell(text)])
    elif edit == "delete":
        op = {"op": "delete_dataset_row", "row": row}
        expected.pop(row)
    elif edit == "insert_col":
        op = {"op": "insert_dataset_column", "column": 1, "header": "h", "cells": [text]}
        expected = [[r[0], _cell(text) if i == 0 else "", r[1]] for i, r in enumerate(expected)]
    else:
        op = {"op": "delete_dataset_column", "column": 0}
        expected = [r[1:] for r in expected]
    out = apply_ops_to_text(ds(body), [{**op, "id": "j"}])
    inner = out[len('::dataset{id="j"}\n') : -len("\n::\n")]
    assert json.loads(inner) == expected, (body, op, inner)
