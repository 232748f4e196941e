"""Values cannot become structure: whatever an op writes reads back as the same single value,
or the op is refused with ``invalid_content`` and no byte of the document changes.

The two attacks that broke the first version (a ``resolved_at`` that closes its opener and
injects ``::evil``, an ``update_attribute`` value with a newline) are replayed through the
real CLI and the real MCP server; the rest state one rule each at the engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from trust_testlib import mcp_calls, record_validator, run_noma, schema_errors, transcript_records

from core.noma.parser import parse
from core.noma.patch import PatchError, apply_ops_to_text
from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
from core.noma.patch.refused import PLACEHOLDER_OP, RAW_OP_FIELD

DOC = """# Doc

::comment{id="c1" parent="doc"}
hello
::

::claim{id="k1" confidence=0.5}
text
::

::table{id="t1"}
| a | b |
| --- | --- |
| 1 | 2 |
::

::dataset{id="d1"}
- [x, 1]
- [y, 2]
::
"""

INJECT_RESOLVED_AT = {
    "op": "resolve_comment",
    "id": "c1",
    "resolved_at": '"}\n::evil{id="e"}\n::\n',
}
INJECT_VALUE = {"op": "update_attribute", "id": "k1", "key": "a", "value": "a\nb"}
ATTACKS = [INJECT_RESOLVED_AT, INJECT_VALUE]


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "doc.noma"
    path.write_text(DOC)
    return path


def refused(op: dict[str, Any], text: str = DOC) -> PatchError:
    with pytest.raises(PatchError) as caught:
        apply_ops_to_text(text, [op])
    return caught.value


@pytest.mark.parametrize("attack", ATTACKS, ids=["resolved_at", "update_attribute"])
@pytest.mark.parametrize("strict", [False, True])
def test_attack_over_the_cli_is_refused_and_writes_no_byte(
    doc: Path, attack: dict[str, Any], strict: bool
) -> None:
    before = doc.read_bytes()
    args = ["patch", str(doc), "--inplace", "--json", "--op", json.dumps(attack)]
    result = run_noma(*args, *(["--strict"] if strict else []), cwd=doc.parent)
    assert result.returncode == 1, result.stderr
    body = json.loads(result.stdout)
    assert body["ok"] is False and body["code"] == "invalid_content"
    assert "line" in body["error"]
    assert doc.read_bytes() == before
    assert "evil" not in [n.id for n, _ in parse(doc.read_text()).walk()]
    # The refusal is audited, and its record is schema-valid.
    recs = transcript_records(doc)
    assert [r["patch_result"] for r in recs] == ["rejected"]
    assert schema_errors(record_validator(), recs[0]) == []


def test_attacks_over_mcp_are_refused_and_write_no_byte(doc: Path) -> None:
    before = doc.read_bytes()
    results = mcp_calls(
        doc.parent,
        [("patch_block", {"file": str(doc), "op": attack}) for attack in ATTACKS],
    )
    for is_error, body in results:
        assert is_error is False  # a user error is in-band, not a system fault (§B.6)
        assert body["ok"] is False and body["code"] == "invalid_content"
    assert doc.read_bytes() == before
    validator = record_validator()
    recs = transcript_records(doc)
    assert len(recs) == 2
    assert all(schema_errors(validator, r) == [] for r in recs)


@pytest.mark.parametrize(
    "value",
    ["a\rb", "a\u2028b", "a\x85b", "a\x00b", "tab\x1bescape", "a\x0bb"],
    ids=["cr", "ls", "nel", "nul", "esc", "vt"],
)
def test_attribute_values_with_line_breaks_or_controls_are_refused(value: str) -> None:
    err = refused({"op": "update_attribute", "id": "k1", "key": "a", "value": value})
    assert err.code == "invalid_content"


def test_attribute_value_with_both_quote_kinds_is_refused() -> None:
    err = refused({"op": "update_attribute", "id": "k1", "key": "a", "value": 'it\'s "x"'})
    assert err.code == "invalid_content" and "both quote kinds" in err.message


@pytest.mark.parametrize(
    "value", ["}", "{x}", 'say "hi"', "it's", "a b", "", "ünï", 42, 0.25, True, False, 1e20]
)
def test_writable_attribute_values_read_back_as_written(value: Any) -> None:
    out = apply_ops_to_text(
        DOC, [{"op": "update_attribute", "id": "k1", "key": "a", "value": value}]
    )
    node = next(n for n, _ in parse(out).walk() if n.id == "k1")
    raw = node.raw_attrs["a"]  # type: ignore[attr-defined]
    if isinstance(value, str):
        assert raw == value
    elif value is True:
        assert node.attrs["a"] is True  # type: ignore[attr-defined]
    else:
        assert node.attrs["a"] == value  # type: ignore[attr-defined]


def test_review_op_attributes_cannot_carry_a_newline() -> None:
    op = {"op": "add_comment", "id": "c2", "target": "k1", "content": "hi", "author": "a\n::x"}
    assert refused(op).code == "invalid_content"
    note = {"op": "add_footnote", "id": "f1", "target": "k1", "content": "n", "label": "1\n2"}
    assert refused(note).code == "invalid_content"
    cr = {
        "op": "add_change_request",
        "id": "r1",
        "target": "k1",
        "action": "insert",
        "text": "x\ny",
    }
    assert refused(cr).code == "invalid_content"


def test_comment_body_that_would_close_its_block_is_refused() -> None:
    op = {"op": "add_comment", "id": "c2", "target": "k1", "content": 'ok\n::\n::evil{id="e"}'}
    assert refused(op).code == "invalid_content"


def test_comment_body_with_an_unclosed_fence_is_refused() -> None:
    # An open fence would swallow the comment's closer and every block after it.
    op = {"op": "add_comment", "id": "c2", "target": "k1", "content": "```\ncode"}
    assert refused(op).code == "invalid_content"


@pytest.mark.parametrize("content", ["line\n::", "a\n```", '::other{id="o"}\nx\n::'])
def test_replace_body_that_would_close_the_block_or_open_a_sibling_is_refused(content: str) -> None:
    err = refused({"op": "replace_body", "id": "k1", "content": content})
    assert err.code == "invalid_content"


def test_replace_body_may_hold_deeper_child_blocks() -> None:
    out = apply_ops_to_text(
        DOC, [{"op": "replace_body", "id": "k1", "content": ':::note{id="n1"}\nx\n:::'}]
    )
    assert "n1" in [n.id for n, _ in parse(out).walk()]


@pytest.mark.parametrize("title", ["two\nlines", "a\rb", "a\x00b"])
def test_heading_titles_that_would_not_read_back_are_refused(title: str) -> None:
    assert refused({"op": "update_heading", "id": "doc", "title": title}).code == "invalid_content"


def test_a_title_holding_an_attribute_group_stays_text_and_the_id_stays() -> None:
    out = apply_ops_to_text(
        DOC, [{"op": "update_heading", "id": "doc", "title": 'New {id="evil"}'}]
    )
    heading = parse(out).children[0]
    assert heading.id == "doc" and heading.title == 'New {id="evil"}'  # type: ignore[attr-defined]


def test_table_and_dataset_cells_cannot_carry_a_newline() -> None:
    cell = {"op": "update_table_cell", "id": "t1", "row": 0, "column": 0, "value": "1\n| x | y |"}
    assert refused(cell).code == "invalid_content"
    header = {"op": "update_table_header_cell", "id": "t1", "column": 0, "value": "a\n::"}
    assert refused(header).code == "invalid_content"
    ds = {"op": "update_dataset_cell", "id": "d1", "row": 0, "column": 0, "value": "z\n::"}
    assert refused(ds).code == "invalid_content"
    row = {"op": "insert_dataset_row", "id": "d1", "row": 0, "cells": ["a\nb", "1"]}
    assert refused(row).code == "invalid_content"


def test_a_rejected_op_writes_no_byte_through_the_pipeline(doc: Path) -> None:
    before = doc.read_bytes()
    outcome = patch_file(doc, PatchRequest(ops=[INJECT_RESOLVED_AT], actor=Actor("agent", "x")))
    assert not outcome.ok and outcome.code == "invalid_content" and not outcome.written
    assert doc.read_bytes() == before


@pytest.mark.parametrize(
    "op",
    [
        {"op": "update_attribute", "id": "k1", "key": "a", "value": "\ud800"},
        {"op": "update_attribute", "id": "k1", "key": "a", "value": float("nan")},
        {"op": "update_attribute", "id": "k1", "key": "a b", "value": "x"},
        {"op": "update_attribute", "id": "bad id", "key": "a", "value": "x"},
        {"op": "replace_body", "id": "k1", "content": "\udcff"},
        {"op": "add_block", "parent": "doc", "content": "::x\n::", "position": -1},
    ],
    ids=["surrogate", "nan", "key-space", "id-space", "lone-surrogate-body", "negative"],
)
def test_ops_off_the_wire_schema_are_invalid_op_recorded_as_the_placeholder(
    doc: Path, op: dict[str, Any]
) -> None:
    before = doc.read_bytes()
    outcome = patch_file(doc, PatchRequest(ops=[op], actor=Actor("agent", "x")))
    assert outcome.code == "invalid_op" and len(outcome.records) == 1
    assert doc.read_bytes() == before
    (rec,) = transcript_records(doc)
    assert rec["op"] == PLACEHOLDER_OP and rec["patch_result"] == "rejected"
    assert schema_errors(record_validator(), rec) == []


def test_update_attribute_null_is_recorded_as_the_remove_attribute_it_means(doc: Path) -> None:
    outcome = patch_file(
        doc,
        PatchRequest(
            ops=[{"op": "update_attribute", "id": "k1", "key": "confidence", "value": None}]
        ),
    )
    assert outcome.ok and outcome.written
    assert "confidence" not in doc.read_text().split("::claim")[1].split("\n")[0]
    rec = transcript_records(doc)[-1]
    assert rec["op"] == {"op": "remove_attribute", "id": "k1", "key": "confidence"}
    assert schema_errors(record_validator(), rec) == []


def test_update_attribute_on_the_id_key_keeps_its_spec_code_with_a_record(doc: Path) -> None:
    outcome = patch_file(
        doc, PatchRequest(ops=[{"op": "update_attribute", "id": "k1", "key": "id", "value": "z"}])
    )
    assert outcome.code == "id_attribute_protected"
    (rec,) = transcript_records(doc)
    assert rec["op"] == PLACEHOLDER_OP
    assert [d["code"] for d in rec["diagnostics"] if RAW_OP_FIELD in d] == [
        "id_attribute_protected"
    ]
