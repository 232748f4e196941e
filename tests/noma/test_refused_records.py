"""Every attempted op has a transcript record (§5.1, B.6), rejections of every kind included.

An op the wire schema cannot describe is recorded as the placeholder op with the request as
received kept, bounded and printable, on its failing diagnostic (docs/transcript-extensions.md).
The records validate against ``transcript.schema.json``, the chain verifies and replay skips
them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trust_testlib import mcp_calls, record_validator, run_noma, schema_errors, transcript_records

from core.mcp.document_tools import patch_block_list
from core.mcp.tools import ToolContext, patch_block
from core.noma.patch.limits import MAX_LIST_OPS
from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
from core.noma.patch.refused import (
    MAX_RAW_CHARS,
    PLACEHOLDER_OP,
    RAW_ACTOR_FIELD,
    RAW_OP_FIELD,
    raw_text,
)
from core.noma.replay import replay
from core.noma.transcript import audit
from core.noma.visible import is_visible

DOC = '# Memo {id="memo"}\n\n::claim{id="c1" confidence=0.5}\nText.\n::\n'

# One call per refusal code: engine refusals and wire-schema refusals alike.
SEVEN = [
    ({"op": "delete_block", "id": "ghost"}, {}, "target_missing"),
    ({"op": "explode", "id": "c1"}, {}, "unsupported_op"),
    (
        {"op": "update_attribute", "id": "c1", "key": "id", "value": "z"},
        {},
        "id_attribute_protected",
    ),
    ({"op": "delete_block"}, {}, "invalid_op"),
    ({"op": "rename_id", "from": "c1", "to": "memo"}, {}, "id_conflict"),
    ({"op": "delete_block", "id": "c1"}, {"expected_sha": "00000000"}, "sha_mismatch"),
    ({"op": "replace_body", "id": "c1", "content": "x" * ((1 << 20) + 1)}, {}, "invalid_content"),
]


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(DOC)
    return path


def patches(doc: Path) -> Path:
    return Path(str(doc) + ".patches")


def raw_of(record: dict[str, Any]) -> str | None:
    marked = [d[RAW_OP_FIELD] for d in record["diagnostics"] if RAW_OP_FIELD in d]
    assert len(marked) <= 1
    return marked[0] if marked else None


def assert_verifies(doc: Path) -> None:
    result = run_noma("transcript", "verify", str(patches(doc)), "--json", cwd=doc.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["ok"] is True


def test_seven_refused_mcp_calls_append_seven_valid_records(doc: Path) -> None:
    calls = [("patch_block", {"file": str(doc), "op": op, **extra}) for op, extra, _ in SEVEN]
    results = mcp_calls(doc.parent, calls)
    assert [body["code"] for _is_error, body in results] == [code for *_, code in SEVEN]
    assert all(is_error is False for is_error, _ in results)
    assert doc.read_text() == DOC
    recs = transcript_records(doc)
    assert len(recs) == 7 and {r["patch_result"] for r in recs} == {"rejected"}
    validator = record_validator()
    for rec in recs:
        assert schema_errors(validator, rec) == [], rec
    # Each record names its own refusal; the three the schema cannot carry hold the raw op.
    for rec, (op, _extra, code) in zip(recs, SEVEN, strict=True):
        assert code in [d["code"] for d in rec["diagnostics"]]
        if code in ("unsupported_op", "id_attribute_protected", "invalid_op", "invalid_content"):
            assert rec["op"] == PLACEHOLDER_OP
            assert raw_of(rec) is not None and raw_of(rec).startswith('{"op":')  # type: ignore[union-attr]
        else:
            assert rec["op"] == op and raw_of(rec) is None
    assert len(raw_of(recs[6]) or "") == MAX_RAW_CHARS  # the 1 MiB body is cut
    assert_verifies(doc)
    base = doc.parent / "base.noma"
    base.write_text(DOC)
    result = run_noma(
        "replay", str(patches(doc)), "--base", str(base), "--out", str(doc.parent / "r.noma"),
        cwd=doc.parent,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (doc.parent / "r.noma").read_text() == DOC


def test_a_list_refused_at_the_wire_records_each_attempted_op(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    good = {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9}
    out = patch_block_list(ctx, str(doc), [good, good, {"op": "nope"}, good])
    assert out["code"] == "unsupported_op" and out["failed_index"] == 2
    recs = transcript_records(doc)
    assert recs == out["transcript_entries"] and len(recs) == 3  # the 4th was never attempted
    assert [r["op"] for r in recs] == [good, good, PLACEHOLDER_OP]
    assert [d["code"] for d in recs[0]["diagnostics"] if d["phase"] == "pre"] == [
        "claim-without-evidence",
        "op_list_aborted",
    ]
    assert (
        recs[1]["parent_op_id"] == recs[0]["op_id"] and recs[2]["parent_op_id"] == recs[1]["op_id"]
    )
    assert doc.read_text() == DOC and audit(patches(doc)).ok


def test_a_list_over_the_cap_is_one_attempt_with_one_record(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    out = patch_block_list(ctx, str(doc), [{"op": "delete_block", "id": "c1"}] * (MAX_LIST_OPS + 1))
    assert out["code"] == "invalid_op"
    (rec,) = transcript_records(doc)
    assert rec["op"] == PLACEHOLDER_OP and len(raw_of(rec) or "") == MAX_RAW_CHARS
    assert doc.read_text() == DOC


def test_an_actor_that_is_not_one_is_refused_with_a_record(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    op = {"op": "delete_block", "id": "c1"}
    out = patch_block(ctx, str(doc), op, actor={"kind": "robot", "name": "\x1b]0;pwn\x07"})
    assert out["code"] == "invalid_op" and doc.read_text() == DOC
    (rec,) = transcript_records(doc)
    assert rec["actor"] == {"kind": "agent", "name": "unknown"} and rec["op"] == op
    (marked,) = [d for d in rec["diagnostics"] if RAW_ACTOR_FIELD in d]
    assert "robot" in marked[RAW_ACTOR_FIELD] and is_visible(
        marked[RAW_ACTOR_FIELD], single_line=True
    )
    assert schema_errors(record_validator(), rec) == []


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


HOSTILE: list[Any] = [
    {"op": "x" * (3 << 20)},
    {"op": "replace_body", "id": "c1", "content": _deep(50_000)},
    {"op": "update_attribute", "id": "c1", "key": "k", "value": float("nan")},
    {"op": "add_block", "parent": "memo", "content": {1, 2}, "when": b"\x00\xff", 3: object()},
    {"op": "\x1b]52;c;cGF5bG9hZA==\x07\x9b2J\u202eevil\ud800", "id": "c1"},
    {"op": "delete_block", "id": "c1", "extra": "\x1b[2J" * 10_000},
    "not an op at all",
    [[[[]]]],
    None,
]


@pytest.mark.parametrize("op", HOSTILE, ids=lambda _: "hostile")
def test_hostile_raw_ops_are_bounded_printable_and_valid(doc: Path, op: Any) -> None:
    outcome = patch_file(doc, PatchRequest(ops=[op], actor=Actor("agent", "a")))
    assert not outcome.ok and outcome.code in ("invalid_op", "unsupported_op", "invalid_content")
    assert len(outcome.error or "") <= MAX_RAW_CHARS
    (rec,) = transcript_records(doc)
    raw = raw_of(rec)
    assert rec["op"] == PLACEHOLDER_OP and raw is not None
    assert len(raw) <= MAX_RAW_CHARS and is_visible(raw, single_line=True)
    assert patches(doc).stat().st_size < 4 * MAX_RAW_CHARS + 8192
    assert schema_errors(record_validator(), rec) == []
    assert doc.read_text() == DOC and audit(patches(doc)).ok


def test_raw_text_bounds() -> None:
    assert raw_text({"op": "x", "n": [1, 2.5, None, True]}) == '{"op":"x","n":[1,2.5,null,true]}'
    assert "<nested too deeply>" in raw_text(_deep(100))
    assert raw_text(float("inf")) == "<inf: not JSON>"
    assert raw_text(10**5000) == "<a very long integer>"
    cut = raw_text(["y" * 10_000] * 10_000, limit=100)
    assert len(cut) == 100 and cut.endswith("…")
    assert raw_text({"k": "\x1b"}) == '{"k":"\\u001b"}'  # JSON escapes C0 itself
    assert raw_text("\u202e\x9b") == '"⟨U+202E⟩⟨U+009B⟩"'


def test_cli_patch_records_a_schema_refused_op(doc: Path) -> None:
    op = json.dumps({"op": "update_attribute", "id": "c1", "key": "id", "value": "z"})
    result = run_noma("patch", str(doc), "--inplace", "--op", op, cwd=doc.parent)
    assert result.returncode == 1 and "id_attribute_protected" in result.stderr
    (rec,) = transcript_records(doc)
    assert rec["op"] == PLACEHOLDER_OP and json.loads(raw_of(rec) or "")["key"] == "id"
    assert_verifies(doc)


def test_a_request_refused_before_a_document_has_no_transcript(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    ghost = doc.parent / "ghost.noma"
    results = mcp_calls(
        doc.parent, [("patch_block", {"file": str(ghost), "op": {"op": "explode"}})]
    )
    assert results[0][0] is True
    assert not patches(ghost).exists() and not patches(doc).exists()
    assert ctx.root == doc.parent.resolve()


VALID_OPS = [
    {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.7},
    {"op": "update_attribute", "id": "c1", "key": "note", "value": "n"},
    {"op": "replace_body", "id": "c1", "content": "Other text.\n"},
    {"op": "update_heading", "id": "memo", "title": "Memo"},
]
GHOST = {"op": "delete_block", "id": "ghost"}
INVALID_OPS: list[Any] = [
    {"op": "explode"},
    {"op": "update_attribute", "id": "c1", "key": "id", "value": "q"},
    {"op": "delete_block"},
    GHOST,
    {"op": "replace_body", "id": "c1", "content": "x", "bogus": 1},
    7,
]


def _attempted(ops: list[Any]) -> int:
    """How many ops of a list were attempted: the wire check refuses at the first op off the
    schema before anything runs; else the engine stops at the first that fails (the ghost);
    else all of them."""
    wire = [i for i, op in enumerate(ops) if op in INVALID_OPS and op is not GHOST]
    if wire:
        return wire[0] + 1
    engine = [i for i, op in enumerate(ops) if op is GHOST]
    return engine[0] + 1 if engine else len(ops)


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.lists(st.sampled_from(VALID_OPS + INVALID_OPS), min_size=1, max_size=4),
        min_size=1,
        max_size=6,
    )
)
def test_any_sequence_of_requests_records_every_attempt(
    tmp_path_factory: pytest.TempPathFactory, requests: list[list[Any]]
) -> None:
    folder = tmp_path_factory.mktemp("prop")
    doc = folder / "memo.noma"
    doc.write_text(DOC)
    attempts = 0
    for ops in requests:
        patch_file(doc, PatchRequest(ops=list(ops), actor=Actor("agent", "p")))
        attempts += _attempted(ops)
    recs = transcript_records(doc)
    assert len(recs) == attempts
    report = audit(patches(doc))
    assert report.ok, report.problems
    validator = record_validator()
    assert all(schema_errors(validator, r) == [] for r in recs)
    result = replay(patches(doc), DOC.encode())
    assert result.final_sha256 == hashlib.sha256(doc.read_bytes()).hexdigest()
