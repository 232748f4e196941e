"""Every transcript line any surface writes validates against ``transcript.schema.json``:
applied, noop and rejected records, from the CLI, the MCP server and the engine the app
uses (the app's own edits are checked in ``tests/tui/test_editing.py``), and the
transcripts the product ships in its demo workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trust_testlib import mcp_calls, record_validator, run_noma, schema_errors, transcript_records

from tests.conftest import REPO

DOC = '# Memo\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n'
APPLIED = {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9}
NOOP = {"op": "remove_attribute", "id": "c1", "key": "absent"}
REJECTED = {"op": "delete_block", "id": "nope"}
LIST_ABORT = [APPLIED, REJECTED]  # op_list_aborted + the failing op
SCHEMA_INVALID = {"op": "update_attribute", "id": "c1", "key": "k", "value": [1]}


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(DOC)
    return path


def assert_all_valid(doc: Path, results: list[str]) -> None:
    recs = transcript_records(doc)
    assert [r["patch_result"] for r in recs] == results
    validator = record_validator()
    for rec in recs:
        assert schema_errors(validator, rec) == [], rec
        assert isinstance(rec["elapsed_ms"], int)  # typed clients read an integer


def test_cli_records_of_every_kind_validate(doc: Path) -> None:
    for op in (APPLIED, NOOP, REJECTED, LIST_ABORT, SCHEMA_INVALID):
        run_noma("patch", str(doc), "--inplace", "--op", json.dumps(op), cwd=doc.parent)
    run_noma(
        "patch",
        str(doc),
        "--inplace",
        "--strict",
        "--expected-sha",
        "00000000",
        "--op",
        json.dumps(APPLIED),
        cwd=doc.parent,
    )
    # The schema-invalid op is recorded too (§5.1), as the placeholder op with its raw text.
    assert_all_valid(
        doc, ["applied", "noop", "rejected", "rejected", "rejected", "rejected", "rejected"]
    )


def test_mcp_records_of_every_kind_validate(doc: Path) -> None:
    calls = [("patch_block", {"file": str(doc), "op": op}) for op in (APPLIED, NOOP, REJECTED)]
    calls.append(("patch_block", {"file": str(doc), "op": SCHEMA_INVALID}))
    results = mcp_calls(doc.parent, calls)
    assert results[-1][1]["code"] == "invalid_op"
    assert_all_valid(doc, ["applied", "noop", "rejected", "rejected"])


def test_the_shipped_demo_transcripts_validate() -> None:
    validator = record_validator()
    files = sorted((REPO / "noma_tui" / "demo_workspace").glob("*.patches"))
    assert files
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            assert schema_errors(validator, json.loads(line)) == [], path.name
