"""Typed ops (issue 13, Build 6): the pydantic union means what patch-op.schema.json means,
on every corpus op and on generated invalid ops; one rule says which ops apply to which
block (`applicable_ops`), for the CLI, MCP and the app."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from trust_testlib import op_validator, run_noma

from core.noma.parser import parse
from core.noma.patch.applicable import applicable_ops
from core.noma.patch.catalog import check_op
from core.noma.patch.errors import PatchError
from core.noma.patch.models import MODELS, parse_op, patch_op_adapter
from tests.conftest import shared_dir


def model_accepts(op: Any) -> bool:
    try:
        parse_op(op)
    except ValidationError:
        return False
    return True


def schema_accepts(validator: Any, op: Any) -> bool:
    return not list(validator.iter_errors(op))


def corpus_ops() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    root = shared_dir("conformance")
    for path in sorted(root.glob("*/*/patch.json")):
        payload = json.loads(path.read_text())
        out += payload if isinstance(payload, list) else [payload]
    return out


def test_every_corpus_op_is_judged_the_same_by_model_and_schema() -> None:
    validator = op_validator()
    ops = corpus_ops()
    assert len(ops) >= 34
    verdicts = [(model_accepts(op), schema_accepts(validator, op)) for op in ops]
    assert all(a == b for a, b in verdicts), [
        op for op, (a, b) in zip(ops, verdicts, strict=True) if a != b
    ]
    # Round trip: a corpus op's model gives back the same wire dict.
    for op in ops:
        if model_accepts(op):
            assert parse_op(op).wire() == op


def test_the_union_covers_the_schemas_op_names() -> None:
    schema = json.loads((shared_dir("schemas") / "patch-op.schema.json").read_text())
    names = {alt["properties"]["op"]["const"] for alt in schema["oneOf"]}
    assert names == set(MODELS)
    generated = patch_op_adapter().json_schema(by_alias=True)
    assert set(generated["discriminator"]["mapping"]) == names


JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    # Integral floats (1.0) are left out: JSON Schema counts them as integers, a typed
    # client (and this union, strict) does not. Non-finite numbers are not JSON.
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    st.sampled_from(["", "x", "c1", "1bad", "bad id", "id", "deadbeef", "insert", "a:b"]),
    st.lists(st.sampled_from(["a", "", 1]), max_size=2),
    st.dictionaries(st.sampled_from(["a"]), st.integers(), max_size=1),
)
FIELDS = [
    "op", "id", "parent", "content", "position", "key", "value", "from", "to", "title",
    "target", "author", "row", "column", "cells", "header", "action", "text", "label",
    "baseHash", "extra", "reply_to", "resolved_by",
]  # fmt: skip


@st.composite
def mutated_ops(draw: st.DrawFn) -> dict[str, Any]:
    """A corpus op with fields dropped, retyped, or added, or its name changed."""
    op = dict(draw(st.sampled_from(corpus_ops())))
    for _ in range(draw(st.sampled_from([0, 1, 1, 2, 3]))):
        action = draw(st.sampled_from(["drop", "set", "set", "rename"]))
        if action == "drop" and len(op) > 1:
            op.pop(draw(st.sampled_from(sorted(op))))
        elif action == "set":
            op[draw(st.sampled_from(FIELDS))] = draw(JSON_VALUES)
        else:
            op["op"] = draw(st.sampled_from(sorted(MODELS)))
    return op


@pytest.mark.parametrize("which", [20261122, 7])
def test_generated_ops_are_judged_the_same_by_model_and_schema(which: int) -> None:
    validator = op_validator()
    seen = {"valid": 0, "invalid": 0}

    @settings(max_examples=400, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
    @seed(which)
    @given(mutated_ops())
    def prop(op: dict[str, Any]) -> None:
        verdict = schema_accepts(validator, op)
        seen["valid" if verdict else "invalid"] += 1
        assert model_accepts(op) == verdict, op

    prop()
    assert seen["valid"] > 20 and seen["invalid"] > 100


def test_check_op_maps_refusals_to_codes() -> None:
    cases = {
        "unsupported_op": {"op": "explode", "id": "a"},
        "id_attribute_protected": {"op": "update_attribute", "id": "a", "key": "id", "value": 1},
        "invalid_op": {"op": "add_block", "parent": "p", "content": "x", "positon": 1},
    }
    for code, op in cases.items():
        with pytest.raises(PatchError) as exc:
            check_op(op)
        assert exc.value.code == code
    with pytest.raises(PatchError, match="positon"):
        check_op(cases["invalid_op"])
    # The spec's null value is checked as the remove_attribute it means.
    assert check_op({"op": "update_attribute", "id": "a", "key": "k", "value": None})
    with pytest.raises(PatchError):
        check_op({"op": "update_attribute", "id": "a", "key": "k", "value": None, "x": 1})


DOC = (
    "# Memo\n\n"
    '::table{id="t"}\n| a |\n| --- |\n| 1 |\n::\n\n'
    '::dataset{id="d"}\nrows:\n  - [1]\n::\n\n'
    '::comment{id="c" status="open"}\nx\n::\n\n'
    "::note\nno id\n::\n\n"
    '::claim{id="dup"}\n::\n\n::claim{id="dup"}\n::\n'
)


def test_applicable_ops_per_block_kind() -> None:
    doc = parse(DOC)
    by_id = {n.id: n for n, _ in doc.walk() if n.id}
    memo = applicable_ops(doc, by_id["memo"])
    assert "update_heading" in memo and "add_block" in memo and "delete_block" not in memo
    table = applicable_ops(doc, by_id["t"])
    assert "update_table_cell" in table and "update_dataset_cell" not in table
    assert "update_heading" not in table and "move_block" in table
    dataset = applicable_ops(doc, by_id["d"])
    assert "insert_dataset_row" in dataset and "insert_table_row" not in dataset
    comment = applicable_ops(doc, by_id["c"])
    assert "resolve_comment" in comment and "remove_attribute" in comment
    assert applicable_ops(doc, by_id["dup"]) == []  # ambiguous id
    anonymous = next(n for n, _ in doc.walk() if getattr(n, "name", None) == "note")
    assert applicable_ops(doc, anonymous) == []


def test_every_applicable_op_is_one_the_engine_would_route_to_that_block() -> None:
    """An op that applies, sent with sensible values, never fails for the block's kind."""
    from core.noma.patch import apply_ops_to_text

    samples: dict[str, dict[str, Any]] = {
        "update_table_cell": {"row": 0, "column": 0, "value": "2"},
        "insert_dataset_row": {"row": 0, "cells": ["2"]},
        "resolve_comment": {},
        "update_heading": {"title": "Memo 2"},
        "remove_attribute": {"key": "status"},
        "add_comment": {"id": "new-cm", "content": "hi"},
    }
    doc = parse(DOC)
    by_id = {n.id: n for n, _ in doc.walk() if n.id and n.id != "dup"}
    for ident, node in by_id.items():
        for name in applicable_ops(doc, node):
            if name not in samples:
                continue
            field = "target" if name == "add_comment" else "id"
            op = {"op": name, field: ident, **samples[name]}
            apply_ops_to_text(DOC, [op])  # raises on a wrong kind of target


def test_cli_ops(tmp_path: Any) -> None:
    path = tmp_path / "d.noma"
    path.write_text(DOC)
    one = run_noma("ops", str(path), "t", cwd=tmp_path)
    assert one.returncode == 0 and "update_table_cell" in json.loads(one.stdout)["ops"]
    every = json.loads(run_noma("ops", str(path), cwd=tmp_path).stdout)
    assert set(every) == {"memo", "t", "d", "c", "dup"}
    missing = run_noma("ops", str(path), "ghost", cwd=tmp_path)
    assert missing.returncode == 1 and "target_missing" in missing.stderr
