"""The additive MCP tools (Annex B.8's v1.1 directions): patch_block_list, transcript_read
and describe_capabilities, through the functions and over stdio."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "noma"))
from trust_testlib import mcp_calls, record_validator, schema_errors

from core.mcp.document_tools import describe_capabilities, patch_block_list, transcript_read
from core.mcp.tools import SystemFault, ToolContext

DOC = '# Memo\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n'
OPS = [
    {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.8},
    {"op": "rename_id", "from": "c1", "to": "c2"},
    {"op": "replace_body", "id": "c2", "content": "Sharper."},
]


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(DOC)
    return path


def records(doc: Path) -> list[dict]:
    path = Path(str(doc) + ".patches")
    return [json.loads(x) for x in path.read_text().split("\n") if x] if path.exists() else []


def test_patch_block_list_applies_all_with_chained_records(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    out = patch_block_list(ctx, str(doc), OPS, actor={"kind": "agent", "name": "a"})
    assert out["ok"] is True and len(out["transcript_entries"]) == 3
    text = doc.read_text()
    assert 'id="c2" confidence=0.8' in text and "Sharper." in text
    recs = records(doc)
    assert [r["patch_result"] for r in recs] == ["applied"] * 3
    assert recs[1]["parent_op_id"] == recs[0]["op_id"]
    assert recs[2]["parent_op_id"] == recs[1]["op_id"]
    assert recs == out["transcript_entries"]
    validator = record_validator()
    assert all(schema_errors(validator, r) == [] for r in recs)


def test_patch_block_list_is_all_or_nothing(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    bad = [OPS[0], {"op": "delete_block", "id": "ghost"}, OPS[2]]
    out = patch_block_list(ctx, str(doc), bad)
    assert out["ok"] is False and out["code"] == "target_missing" and out["failed_index"] == 1
    assert doc.read_text() == DOC
    recs = records(doc)
    assert [r["patch_result"] for r in recs] == ["rejected", "rejected"]
    assert any(d["code"] == "op_list_aborted" for d in recs[0]["diagnostics"])
    assert recs[1]["parent_op_id"] == recs[0]["op_id"]
    # Off the wire schema: refused before anything runs, each attempted op recorded.
    out = patch_block_list(ctx, str(doc), [OPS[0], {"op": "delete_block"}])
    assert out["code"] == "invalid_op" and out["failed_index"] == 1 and len(records(doc)) == 4
    assert patch_block_list(ctx, str(doc), [])["code"] == "invalid_op"  # nothing attempted
    assert len(records(doc)) == 4
    assert patch_block_list(ctx, str(doc), "nope")["code"] == "invalid_op"
    assert len(records(doc)) == 5 and doc.read_text() == DOC


def test_transcript_read_pages_and_filters(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    assert transcript_read(ctx, str(doc))["entries"] == []
    patch_block_list(ctx, str(doc), OPS, actor={"kind": "agent", "name": "ann"})
    patch_block_list(ctx, str(doc), [{"op": "delete_block", "id": "ghost"}])
    every = transcript_read(ctx, str(doc))
    assert every["total"] == 4 and every["next_offset"] is None
    assert [e["line"] for e in every["entries"]] == [1, 2, 3, 4]
    page = transcript_read(ctx, str(doc), offset=1, limit=2)
    assert [e["line"] for e in page["entries"]] == [2, 3] and page["next_offset"] == 3
    assert transcript_read(ctx, str(doc), actor="ann")["total"] == 3
    assert transcript_read(ctx, str(doc), actor_kind="agent")["total"] == 4
    assert transcript_read(ctx, str(doc), op="rename_id")["total"] == 1
    assert transcript_read(ctx, str(doc), result="rejected")["total"] == 1
    first_ts = every["entries"][0]["record"]["ts"]
    assert transcript_read(ctx, str(doc), since=first_ts)["total"] == 4
    assert transcript_read(ctx, str(doc), until=first_ts)["total"] == 0
    assert transcript_read(ctx, str(doc), since="2999-01-01T00:00:00Z")["total"] == 0
    for bad in ({"limit": 0}, {"offset": -1}, {"result": "maybe"}, {"since": "yesterday"}):
        assert transcript_read(ctx, str(doc), **bad)["code"] == "invalid_argument"  # type: ignore[arg-type]
    # A damaged line is reported, never skipped silently.
    with open(str(doc) + ".patches", "a") as fh:
        fh.write("not json\n")
    assert transcript_read(ctx, str(doc))["problems"][0]["line"] == 5


def test_describe_capabilities_with_and_without_a_sidecar(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    op = {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9}
    bare = describe_capabilities(ctx, str(doc), op)
    assert bare["exists"] is False and bare["grants"] == {}
    assert bare["advisories"] and "advisory" in bare["advisories"][0]
    Path(str(doc) + ".capabilities.yml").write_text(
        "nomaAgent:\n  version: 1\n  profile: research\n  blocks:\n"
        "    claim:\n      ops: [update_attribute]\n  validation:\n    required: true\n"
    )
    granted = describe_capabilities(ctx, str(doc), op)
    assert granted["valid"] is True and granted["grants"] == {"claim": ["update_attribute"]}
    assert granted["profile"] == "research" and granted["validation_required"] is True
    assert granted["advisories"] == []
    denied = describe_capabilities(ctx, str(doc), {"op": "delete_block", "id": "c1"})
    assert len(denied["advisories"]) == 1
    with pytest.raises(SystemFault):
        describe_capabilities(ctx, "/etc/hostname")
    Path(str(doc) + ".capabilities.yml").write_text("nomaAgent:\n  version: 2\n")
    broken = describe_capabilities(ctx, str(doc))
    assert broken["valid"] is False and broken["problems"] and broken["version"] is None
    # Every body matches the field table, and together they cover every row.
    from test_field_table import check_response, load_table

    ops_for = describe_capabilities(ctx, str(doc), id="c1")
    assert "update_attribute" in ops_for["applicable_ops"]
    assert "update_heading" not in ops_for["applicable_ops"]
    ghost = describe_capabilities(ctx, str(doc), id="ghost")
    assert ghost["ok"] is False and ghost["code"] == "target_missing"
    seen: set[str] = set()
    for body in (bare, granted, denied, broken, ops_for, ghost):
        seen |= check_response("describe_capabilities", body)
    assert seen == set(load_table()["describe_capabilities output"])


def test_the_additive_tools_over_stdio_match_the_field_table(doc: Path) -> None:
    from test_field_table import check_response, load_table

    calls = [
        ("patch_block_list", {"file": str(doc), "ops": OPS[:2]}),
        ("transcript_read", {"file": str(doc), "limit": 1}),
        ("describe_capabilities", {"file": str(doc)}),
        ("transcript_read", {"file": str(doc.parent / "book.noma.yml")}),
        ("patch_block_list", {"file": str(doc), "ops": [{"op": "delete_block", "id": "x"}]}),
        ("transcript_read", {"file": str(doc), "result": "maybe"}),
        (
            "describe_capabilities",
            {"file": str(doc), "op": {"op": "delete_block", "id": "c2"}},
        ),
    ]
    # A damaged line and another writer's record whose summary does not derive from its
    # diagnostics (a warning), then the list's two records.
    sha = hashlib.sha256(doc.read_bytes()).hexdigest()
    foreign = {
        "protocol_version": "1.0",
        "tool_version": "0.17.0",
        "op_id": "0b5c3a52-3f43-4f5e-9d0c-1f2e3d4c5b6a",
        "ts": "2026-05-11T14:32:00.000Z",
        "actor": {"kind": "agent", "name": "ref"},
        "doc_uri": doc.as_uri(),
        "pre_sha256": sha,
        "post_sha256": sha,
        "pre_sha": sha[:8],
        "post_sha": sha[:8],
        "op": {"op": "delete_block", "id": "ghost"},
        "patch_result": "rejected",
        "pre_validation": "warn",
        "post_validation": "ok",
        "diagnostics": [
            {"phase": "pre", "severity": "error", "code": "target_missing", "message": "x"}
        ],
    }
    Path(str(doc) + ".patches").write_text("garbage\n" + json.dumps(foreign) + "\n")
    results = mcp_calls(doc.parent, calls)
    listed, page, caps, book = results[:4]
    seen: dict[str, set[str]] = {}
    for (tool, _args), (is_error, body) in zip(calls, results, strict=True):
        if not is_error:
            seen.setdefault(tool, set()).update(check_response(tool, body))
    tables = load_table()
    for tool in ("patch_block_list", "transcript_read"):
        paths = seen[tool]
        unseen = set(tables[f"{tool} output"]) - paths
        assert not unseen, f"{tool}: rows never seen: {sorted(unseen)}"
    assert listed[0] is False and listed[1]["ok"] is True
    assert page[1]["total"] == 3 and page[1]["next_offset"] == 1
    assert page[1]["entries"][0]["warnings"]
    assert page[1]["problems"] == [{"line": 1, "problem": page[1]["problems"][0]["problem"]}]
    assert page[1]["entries"][0]["record"]["tool_version"] == "0.17.0"
    assert caps[1]["exists"] is False and "advisory" in caps[1]["note"]
    assert book[0] is True and book[1]["code"] == "unsupported_op"
