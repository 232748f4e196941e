"""Wire compatibility with the reference's typed clients (issue 13, Build 1 and 2):
the top-level ``base_hash`` precondition, the 1 MiB content cap, and hash tolerance for a
heading section hashed without its trailing blank lines."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from trust_testlib import mcp_calls, record_validator, run_noma, schema_errors

from core.noma.patch import apply_ops_to_text
from core.noma.patch.errors import PatchError
from core.noma.patch.limits import MAX_CONTENT_BYTES
from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
from core.noma.patch.refused import PLACEHOLDER_OP
from core.noma.patch.text import SourceLines
from core.noma.transcript import transcript_path

DOC = '# Memo\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n\n## Next\n\nText.\n'


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(DOC)
    return path


def claim_hash(text: str = DOC) -> str:
    return SourceLines(text).block_hash(3, 5)


def records(doc: Path) -> list[dict]:
    path = transcript_path(doc)
    return [json.loads(x) for x in path.read_text().split("\n") if x] if path.exists() else []


def req(*ops: dict, **kw: object) -> PatchRequest:
    return PatchRequest(ops=list(ops), actor=Actor("agent", "t"), **kw)  # type: ignore[arg-type]


EDIT = {"op": "replace_body", "id": "c1", "content": "New text."}


# -- top-level base_hash ---------------------------------------------------------------


def test_stale_top_level_base_hash_is_refused_and_writes_zero_bytes(doc: Path) -> None:
    before = doc.read_bytes()
    out = patch_file(doc, req(EDIT, base_hash="deadbeefdead"))
    assert not out.ok and out.code == "sha_mismatch"
    assert doc.read_bytes() == before
    [rec] = records(doc)
    assert rec["patch_result"] == "rejected" and rec["op"] == EDIT
    assert schema_errors(record_validator(), rec) == []


def test_fresh_top_level_base_hash_applies(doc: Path) -> None:
    out = patch_file(doc, req(EDIT, base_hash=claim_hash()[:8].upper()))
    assert out.ok and "New text." in doc.read_text()


def test_both_preconditions_must_hold(doc: Path) -> None:
    before = doc.read_bytes()
    fresh = claim_hash()[:12]
    stale_op = {**EDIT, "baseHash": "deadbeefdead"}
    assert patch_file(doc, req(stale_op, base_hash=fresh)).code == "sha_mismatch"
    assert patch_file(doc, req({**EDIT, "baseHash": fresh}, base_hash="0badc0de")).code == (
        "sha_mismatch"
    )
    assert doc.read_bytes() == before
    assert patch_file(doc, req({**EDIT, "baseHash": fresh}, base_hash=fresh)).ok


def test_malformed_base_hash_is_invalid_op(doc: Path) -> None:
    before = doc.read_bytes()
    for bad in ("xyz", "abc", "a" * 65):
        out = patch_file(doc, req(EDIT, base_hash=bad))
        assert not out.ok and out.code == "invalid_op"
    assert doc.read_bytes() == before


def test_base_hash_applies_to_the_first_op_of_a_list(doc: Path) -> None:
    second = {"op": "update_heading", "id": "next", "title": "Later"}
    out = patch_file(doc, req(EDIT, second, base_hash=claim_hash()[:8]))
    assert out.ok and "## Later" in doc.read_text()


def test_cli_base_hash(doc: Path) -> None:
    before = doc.read_bytes()
    result = run_noma(
        "patch",
        str(doc),
        "--op",
        json.dumps(EDIT),
        "--base-hash",
        "deadbeef",
        "--inplace",
        cwd=doc.parent,
    )
    assert result.returncode == 1 and "sha_mismatch" in result.stderr
    assert doc.read_bytes() == before


# -- hash tolerance --------------------------------------------------------------------


def test_section_hash_without_trailing_blank_lines_matches() -> None:
    text = "# Memo\n\nIntro.\n\n\n# Next\n\nText.\n"
    lines = SourceLines(text)
    span = lines.block_hash(1, 5)  # §6.3: through the blank lines before the next heading
    trimmed = lines.block_hash(1, 3)  # the reference's tools: without trailing blank lines
    assert span != trimmed
    op = {"op": "update_heading", "id": "memo", "title": "Memo 2"}
    for prefix in (span[:8], trimmed[:8], trimmed.upper()):
        assert "# Memo 2" in apply_ops_to_text(text, [{**op, "baseHash": prefix}])
    # A hash of some other range still fails.
    other = lines.block_hash(1, 4)
    with pytest.raises(PatchError) as exc:
        apply_ops_to_text(text, [{**op, "baseHash": other[:8]}])
    assert exc.value.code == "sha_mismatch"


def test_read_doc_keeps_reporting_the_span_hash(tmp_path: Path) -> None:
    from core.mcp.tools import ToolContext, read_doc

    text = "# Memo\n\nIntro.\n\n# Next\n"
    (tmp_path / "a.noma").write_text(text)
    blocks = read_doc(ToolContext(tmp_path), str(tmp_path / "a.noma"))["blocks"]
    memo = next(b for b in blocks if b.get("id") == "memo")
    assert memo["lines"] == [1, 4] and memo["hash"] == SourceLines(text).block_hash(1, 4)


# -- the content cap -------------------------------------------------------------------


BIG = "x" * (MAX_CONTENT_BYTES + 1)


@pytest.mark.parametrize(
    "op",
    [
        {"op": "replace_body", "id": "c1", "content": BIG},
        {"op": "update_attribute", "id": "c1", "key": "note", "value": BIG},
        {"op": "update_heading", "id": "memo", "title": BIG},
        # Multi-byte: fewer characters than the cap, more bytes.
        {"op": "replace_body", "id": "c1", "content": "€" * (MAX_CONTENT_BYTES // 3 + 1)},
        # Many small strings: each under the cap, the op over it.
        {
            "op": "add_comment",
            "id": "cm",
            "target": "c1",
            "content": "y" * (MAX_CONTENT_BYTES - 10),
            "author": "z" * 70_000,
        },
    ],
    ids=["content", "value", "title", "multibyte", "sum"],
)
def test_oversized_op_is_refused_with_a_bounded_record(doc: Path, op: dict) -> None:
    before = doc.read_bytes()
    out = patch_file(doc, req(op))
    assert not out.ok and out.code == "invalid_content" and out.error == "content_too_large"
    assert doc.read_bytes() == before
    (rec,) = records(doc)  # attempted, so recorded (§5.1), as bounded text only
    assert rec["op"] == PLACEHOLDER_OP and len(json.dumps(rec, ensure_ascii=False)) < 10_000


def test_oversized_reason_and_request_are_refused(doc: Path) -> None:
    out = patch_file(doc, req(EDIT, reason=BIG))
    assert out.code == "invalid_content" and out.error == "content_too_large"
    chunk = {"op": "replace_body", "id": "c1", "content": "z" * (MAX_CONTENT_BYTES - 100)}
    out = patch_file(doc, req(*[chunk] * 9))  # each op fits, the request (9 MiB) does not
    assert out.code == "invalid_content" and out.error == "content_too_large"
    recs = records(doc)
    assert len(recs) == 10 and doc.read_text() == DOC
    assert all(r["patch_result"] == "rejected" and r["op"] == PLACEHOLDER_OP for r in recs)
    assert all(len(json.dumps(r)) < 20_000 for r in recs)  # the reason is cut, ops are text


def test_content_of_exactly_one_mib_is_accepted(doc: Path) -> None:
    body = "w" * MAX_CONTENT_BYTES
    out = patch_file(doc, req({"op": "replace_body", "id": "c1", "content": body}))
    assert out.ok, out.error
    assert body in doc.read_text()


def test_mcp_base_hash_and_content_cap(doc: Path) -> None:
    before = doc.read_bytes()
    calls = [
        ("patch_block", {"file": str(doc), "op": EDIT, "base_hash": "deadbeefdead"}),
        ("patch_block", {"file": str(doc), "op": {**EDIT, "content": BIG}}),
        ("patch_block", {"file": str(doc), "op": EDIT, "base_hash": claim_hash()[:10]}),
    ]
    stale, big, fresh = mcp_calls(doc.parent, calls)
    assert stale == (False, {"ok": False, "error": stale[1]["error"], "code": "sha_mismatch"})
    assert big == (False, {"ok": False, "error": "content_too_large", "code": "invalid_content"})
    assert fresh[0] is False and fresh[1]["ok"] is True
    recs = records(doc)
    assert [r["patch_result"] for r in recs] == ["rejected", "rejected", "applied"]
    assert all(len(json.dumps(r)) < 10_000 for r in recs)  # no giant record
    assert hashlib.sha256(before).hexdigest() == recs[2]["pre_sha256"]
