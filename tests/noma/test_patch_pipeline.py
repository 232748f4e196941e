"""Patching files end to end: preconditions, atomic lists on disk, transcripts, replay, audit,
and two processes patching one document."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.noma.patch.pipeline import Actor, DocumentCache, PatchRequest, patch_file
from core.noma.replay import ReplayError, replay
from core.noma.transcript import audit, transcript_path

DOC = (
    "---\nprofile: research\n---\n\n# Memo\n\n"
    '::claim{id="c1" confidence=0.5}\nbody.\n::\n\n'
    '::evidence{id="e1" for="c1"}\nsupport.\n::\n'
)


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(DOC)
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in transcript_path(path).read_text().splitlines()]


def req(*ops: dict, **kw: object) -> PatchRequest:
    return PatchRequest(ops=list(ops), actor=Actor("agent", "test"), **kw)  # type: ignore[arg-type]


def test_applied_op_writes_file_and_one_complete_record(doc: Path) -> None:
    before = doc.read_bytes()
    out = patch_file(
        doc,
        req(
            {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9},
            reason="raise confidence",
        ),
    )
    assert out.ok and out.written
    assert "confidence=0.9" in doc.read_text()
    [rec] = records(doc)
    assert rec["protocol_version"] == "1.0" and rec["patch_result"] == "applied"
    assert rec["pre_sha256"] == sha(before) and rec["post_sha256"] == sha(doc.read_bytes())
    assert rec["pre_sha"] == rec["pre_sha256"][:8] and rec["post_sha"] == rec["post_sha256"][:8]
    assert rec["actor"] == {"kind": "agent", "name": "test"} and rec["reason"] == "raise confidence"
    assert rec["doc_uri"] == doc.resolve().as_uri() and rec["signature"] is None
    assert rec["pre_validation"] == "ok" and rec["post_validation"] == "ok"
    assert rec["elapsed_ms"] >= 0 and "prev_entry_sha256" not in rec


def test_noop_is_recorded_and_file_not_rewritten(doc: Path) -> None:
    mtime = doc.stat().st_mtime_ns
    out = patch_file(doc, req({"op": "remove_attribute", "id": "c1", "key": "absent"}))
    assert out.ok and not out.written and doc.stat().st_mtime_ns == mtime
    [rec] = records(doc)
    assert rec["patch_result"] == "noop" and rec["post_sha256"] == rec["pre_sha256"]


def test_atomic_list_rollback_leaves_the_file_byte_identical(doc: Path) -> None:
    before = doc.read_bytes()
    out = patch_file(
        doc,
        req(
            {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.1},
            {"op": "rename_id", "from": "c1", "to": "c2"},
            {"op": "delete_block", "id": "missing"},
            {"op": "delete_block", "id": "e1"},
        ),
    )
    assert not out.ok and out.code == "target_missing"
    assert doc.read_bytes() == before
    recs = records(doc)
    assert [r["patch_result"] for r in recs] == ["rejected"] * 3  # the 4th op was never attempted
    codes = [[d["code"] for d in r["diagnostics"] if d["severity"] == "error"] for r in recs]
    assert codes == [["op_list_aborted"], ["op_list_aborted"], ["target_missing"]]
    assert all(r["post_sha256"] == r["pre_sha256"] == sha(before) for r in recs)
    assert all(
        r["pre_validation"] == "error" for r in recs
    )  # derivable from the diagnostics (§4.2)


def test_expected_sha_mismatch_rejects_everything(doc: Path) -> None:
    out = patch_file(doc, req({"op": "delete_block", "id": "e1"}, expected_sha="00000000"))
    assert out.code == "sha_mismatch" and "::evidence" in doc.read_text()
    ok = patch_file(
        doc, req({"op": "delete_block", "id": "e1"}, expected_sha=sha(doc.read_bytes())[:8])
    )
    assert ok.ok


def test_base_sha256_drift_warns_and_applies(doc: Path) -> None:
    out = patch_file(doc, req({"op": "delete_block", "id": "e1"}, base_sha256="0" * 64))
    assert out.ok and out.written and out.drift
    [rec] = records(doc)
    drift = [d for d in rec["diagnostics"] if d["code"] == "base_sha_drift"]
    assert drift == [
        {
            "severity": "warning",
            "code": "base_sha_drift",
            "message": drift[0]["message"],
            "phase": "pre",
        }
    ]
    assert rec["base_sha256"] == "0" * 64 and rec["pre_validation"] == "warn"


def test_strict_mode_blocks_documents_with_errors(tmp_path: Path) -> None:
    path = tmp_path / "broken.noma"
    path.write_text('::evidence{id="e" for="ghost"}\nx\n::\n')
    out = patch_file(path, req({"op": "delete_block", "id": "e"}, strict=True))
    assert out.code == "pre_validation_blocked" and "ghost" in path.read_text()
    lenient = patch_file(path, req({"op": "delete_block", "id": "e"}))
    assert lenient.ok and lenient.pre_validation == "error" and lenient.post_validation == "ok"


def test_post_validation_is_informational(doc: Path) -> None:
    out = patch_file(doc, req({"op": "delete_block", "id": "c1"}))
    assert out.ok and out.written and out.post_validation == "error"  # evidence now dangles
    assert any(d.code == "broken-reference" and d.phase == "post" for d in out.post_diagnostics)


def test_book_manifest_is_not_a_patch_target(tmp_path: Path) -> None:
    from core.noma.patch import PatchError

    book = tmp_path / "book.noma.yml"
    book.write_text("chapters: [a.noma]\n")
    with pytest.raises(PatchError) as info:
        patch_file(book, req({"op": "delete_block", "id": "x"}))
    assert info.value.code == "unsupported_op"


def test_records_chain_with_prev_entry_sha256_and_parent_op_id(doc: Path) -> None:
    patch_file(
        doc,
        req(
            {"op": "update_attribute", "id": "c1", "key": "a", "value": 1},
            {"op": "update_attribute", "id": "c1", "key": "b", "value": 2},
        ),
    )
    lines = transcript_path(doc).read_bytes().splitlines(keepends=True)
    recs = [json.loads(line) for line in lines]
    assert recs[1]["prev_entry_sha256"] == sha(lines[0])
    assert recs[1]["parent_op_id"] == recs[0]["op_id"]
    assert recs[0]["post_sha256"] == recs[1]["pre_sha256"]  # per-op hashes chain too


def test_three_op_transcript_replays_to_the_recorded_hash(doc: Path, tmp_path: Path) -> None:
    base = doc.read_bytes()
    patch_file(doc, req({"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.8}))
    patch_file(doc, req({"op": "delete_block", "id": "nope"}))  # rejected: skipped by replay
    patch_file(
        doc,
        req(
            {"op": "rename_id", "from": "c1", "to": "c2"},
            {"op": "add_comment", "id": "cm", "target": "c2", "content": "ok?"},
        ),
    )
    result = replay(transcript_path(doc), base)
    assert result.applied == 3 and result.skipped == 1
    assert result.final_sha256 == records(doc)[-1]["post_sha256"] == sha(doc.read_bytes())
    assert result.data == doc.read_bytes() and result.matches
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "core.cli",
            "replay",
            str(transcript_path(doc)),
            "--base",
            str(_write(tmp_path / "base.noma", base)),
        ],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0 and "matches" in cli.stdout


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_replay_refuses_a_base_that_does_not_match(doc: Path) -> None:
    patch_file(doc, req({"op": "delete_block", "id": "e1"}))
    with pytest.raises(ReplayError, match="base file"):
        replay(transcript_path(doc), b"something else\n")


def test_tampering_with_one_line_is_detected(doc: Path) -> None:
    for value in (0.6, 0.7, 0.8):
        patch_file(
            doc, req({"op": "update_attribute", "id": "c1", "key": "confidence", "value": value})
        )
    path = transcript_path(doc)
    assert audit(path).ok
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"value":0.7', '"value":0.75')
    path.write_text("".join(lines))
    report = audit(path)
    assert not report.ok and report.first_broken_line == 3
    cli = subprocess.run(
        [sys.executable, "-m", "core.cli", "transcript", "verify", str(path)],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 1 and "first broken line: 3" in cli.stdout


def test_tampering_with_hashes_of_the_last_line_is_detected(doc: Path) -> None:
    patch_file(doc, req({"op": "delete_block", "id": "e1"}))
    path = transcript_path(doc)
    rec = json.loads(path.read_text())
    rec["post_sha"] = "ffffffff"
    path.write_text(json.dumps(rec) + "\n")
    assert audit(path).first_broken_line == 1


def test_phase0_records_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.noma.patches"
    path.write_text(
        json.dumps({"v": 1, "op": {"op": "delete_block", "id": "x"}, "sha": "abcd1234"}) + "\n"
    )
    assert "Phase 0" in audit(path).problems[0][1]
    with pytest.raises(ReplayError, match="Phase 0"):
        replay(path, b"")


def test_transcript_write_failure_never_fails_the_patch(doc: Path) -> None:
    transcript_path(doc).mkdir()  # a directory where the file should be: appends fail
    out = patch_file(doc, req({"op": "delete_block", "id": "e1"}))
    assert out.ok and out.written and out.transcript_error
    assert "::evidence" not in doc.read_text()


def test_warm_cache_gives_the_same_records_as_cold(doc: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin.noma"
    twin.write_text(DOC)
    cache = DocumentCache()
    op = {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.7}
    warm = patch_file(doc, req(op), cache=cache)
    warm2 = patch_file(doc, req({"op": "rename_id", "from": "c1", "to": "c9"}), cache=cache)
    cold = patch_file(twin, req(op))
    assert warm.records[0]["post_sha256"] == cold.records[0]["post_sha256"]
    assert warm2.ok and warm2.records[0]["pre_sha256"] == warm.post_sha256


def test_agent_ops_without_a_grant_get_advisories_but_apply(doc: Path) -> None:
    out = patch_file(doc, req({"op": "delete_block", "id": "e1"}))
    assert out.ok and out.written
    assert out.advisories and all(a.startswith("advisory") for a in out.advisories)
    Path(str(doc) + ".capabilities.yml").write_text(
        "nomaAgent:\n  version: 1\n  blocks:\n    claim:\n      ops: [update_attribute]\n"
        "      attrs:\n        confidence: {type: number, min: 0, max: 1}\n"
    )
    granted = patch_file(
        doc, req({"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.4})
    )
    assert granted.ok and granted.advisories == []
    out_of_range = patch_file(
        doc, req({"op": "update_attribute", "id": "c1", "key": "confidence", "value": 3})
    )
    assert out_of_range.ok and any("above the maximum" in a for a in out_of_range.advisories)
    human = patch_file(
        doc, PatchRequest(ops=[{"op": "delete_block", "id": "c1"}], actor=Actor("human", "me"))
    )
    assert human.advisories == []


def test_records_validate_against_the_transcript_schema(doc: Path, schemas_dir: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from referencing import Registry, Resource

    schemas = {p.name: json.loads(p.read_text()) for p in schemas_dir.glob("*.json")}
    registry = (
        Registry()
        .with_resources(
            (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
        )
        .with_resources((name, Resource.from_contents(s)) for name, s in schemas.items())
    )
    validator = jsonschema.Draft202012Validator(
        schemas["transcript.schema.json"],
        registry=registry,
        format_checker=jsonschema.FormatChecker(),
    )
    patch_file(
        doc,
        req(
            {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9},
            reason="r",
            base_sha256="a" * 64,
        ),
    )
    patch_file(
        doc,
        req(
            {"op": "add_comment", "id": "cm", "target": "c1", "content": "?", "author": "me"},
            {"op": "delete_block", "id": "nope"},
        ),
    )
    patch_file(doc, req({"op": "resolve_comment", "id": "ghost"}, expected_sha="12345678"))
    recs = records(doc)
    assert len(recs) == 4
    for rec in recs:
        errors = sorted(validator.iter_errors(rec), key=str)
        assert errors == [], errors[0].message if errors else ""


CONCURRENT = """
import sys
from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
path, key, base = sys.argv[1], sys.argv[2], sys.argv[3]
op = {"op": "update_attribute", "id": "c1", "key": key, "value": 1}
out = patch_file(path, PatchRequest(ops=[op],
                 actor=Actor("agent", key), base_sha256=base))
print(out.ok, out.drift)
"""


def test_concurrent_patches_from_two_processes_never_lose_an_update(doc: Path) -> None:
    base = sha(doc.read_bytes())
    for round_ in range(5):
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", CONCURRENT, str(doc), f"k{round_}{who}", base],
                stdout=subprocess.PIPE,
                text=True,
            )
            for who in "ab"
        ]
        outputs = [p.communicate(timeout=60)[0].split() for p in procs]
        assert all(o[0] == "True" for o in outputs)
        text = doc.read_text()
        assert f"k{round_}a=1" in text and f"k{round_}b=1" in text  # neither write was lost
        base = sha(doc.read_bytes())
        # at most one of the pair read the base both were given; the other saw drift
        assert sum(o[1] == "True" for o in outputs) >= 1
    recs = records(doc)
    assert len(recs) == 10 and audit(transcript_path(doc)).ok
    drifted = [r for r in recs if any(d["code"] == "base_sha_drift" for d in r["diagnostics"])]
    assert len(drifted) >= 5
