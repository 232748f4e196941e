"""Write-ahead audit: a crash at any step of the write path leaves, once the document is next
touched, either the old document with no record of the op or the new document with its
record; replay reproduces the file; no temp or pending file remains.

Every step of the write path is a named fault point (`core.noma.faults.POINTS`). A real
crash is a SIGKILL of a `noma patch` process at that point (no cleanup code runs); the
``raise`` variant fails in-process (cleanup code does run). "Next touch" is each surface
that settles a document: another patch, ``noma transcript verify``, and the app opening
the document (`core.noma.commit.touch`).
"""

from __future__ import annotations

import hashlib
import json
import signal
from pathlib import Path

import pytest
from trust_testlib import record_validator, run_noma, schema_errors, transcript_records

from core.noma.commit import pending_path, touch
from core.noma.faults import ENV, POINTS, InjectedFault
from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
from core.noma.replay import replay
from core.noma.transcript import audit

DOC = (
    '# Memo\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n\n'
    '::evidence{id="e1" for="c1"}\nSeen.\n::\n'
)
OP = {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9}
SECOND = {"op": "update_attribute", "id": "e1", "key": "weight", "value": 2}
BAD = {"op": "delete_block", "id": "nope"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".pending")))


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(DOC)
    # One earlier applied edit, so the chain and replay have history to keep intact.
    outcome = patch_file(path, PatchRequest(ops=[SECOND], actor=Actor("agent", "setup")))
    assert outcome.ok and outcome.written
    return path


def assert_settled(doc: Path, base: bytes, old: bytes, op: dict[str, object]) -> str:
    """Old-with-no-record or new-with-its-record; replay matches; nothing left behind.
    Returns which of the two it is."""
    data = doc.read_bytes()
    recs = transcript_records(doc)
    ours = [r for r in recs if r["op"] == op]
    assert leftovers(doc.parent) == []
    report = audit(Path(str(doc) + ".patches"))
    assert report.problems == [], report.problems
    assert all(schema_errors(record_validator(), r) == [] for r in recs)
    if data == old:
        assert ours == [], "the old document must have no record of the op"
        state = "old"
    else:
        assert len(ours) == 1, f"the new document needs exactly one record, found {len(ours)}"
        assert ours[0]["patch_result"] == "applied"
        assert ours[0]["post_sha256"] == sha(data)
        state = "new"
    assert recs[-1]["post_sha256"] == sha(data), "the chain tip is the document"
    result = replay(Path(str(doc) + ".patches"), base)
    assert result.final_sha256 == sha(data) and result.matches
    return state


def kill_at(doc: Path, point: str, op: dict[str, object]) -> None:
    result = run_noma(
        "patch",
        str(doc),
        "--inplace",
        "--actor",
        "agent:crash",
        "--op",
        json.dumps(op),
        cwd=doc.parent,
        env={ENV: point},
    )
    assert result.returncode == -signal.SIGKILL, (point, result.returncode, result.stderr)


@pytest.mark.parametrize("point", POINTS)
def test_sigkill_at_each_step_then_transcript_verify(doc: Path, point: str) -> None:
    base = DOC.encode()
    old = doc.read_bytes()
    kill_at(doc, point, OP)
    verify = run_noma("transcript", "verify", str(doc) + ".patches", "--json", cwd=doc.parent)
    body = json.loads(verify.stdout)
    assert verify.returncode == 0, body
    assert body["chain_intact"] and body["document_matches_chain"]
    state = assert_settled(doc, base, old, OP)
    # Before the rename the edit is dropped; from the rename on it is kept with its record.
    renamed_from = POINTS.index("renamed")
    assert state == ("new" if POINTS.index(point) >= renamed_from else "old")


@pytest.mark.parametrize("point", POINTS)
def test_sigkill_at_each_step_then_the_next_patch(doc: Path, point: str) -> None:
    base = DOC.encode()
    old = doc.read_bytes()
    kill_at(doc, point, OP)
    follow = {"op": "update_attribute", "id": "c1", "key": "reviewed", "value": True}
    result = run_noma("patch", str(doc), "--inplace", "--op", json.dumps(follow), cwd=doc.parent)
    assert result.returncode == 0, result.stderr
    recs = transcript_records(doc)
    assert [r["op"] for r in recs].count(follow) == 1
    # Settled first, then the follow-up applied on top: replay still reproduces the file.
    assert leftovers(doc.parent) == []
    assert audit(Path(str(doc) + ".patches")).problems == []
    assert replay(Path(str(doc) + ".patches"), base).final_sha256 == sha(doc.read_bytes())
    ours = [r for r in recs if r["op"] == OP]
    assert len(ours) == (1 if POINTS.index(point) >= POINTS.index("renamed") else 0)
    assert old != doc.read_bytes()


@pytest.mark.parametrize("point", ["pending.synced", "tmp.written", "renamed", "append.torn"])
def test_sigkill_then_the_app_opening_the_document(doc: Path, point: str) -> None:
    base = DOC.encode()
    old = doc.read_bytes()
    kill_at(doc, point, OP)
    recovery = touch(doc)  # what the workbench does when it opens a document
    assert recovery is not None
    assert recovery.completed == (POINTS.index(point) >= POINTS.index("renamed"))
    assert_settled(doc, base, old, OP)


@pytest.mark.parametrize("point", POINTS)
def test_an_error_raised_at_each_step_then_the_next_touch(
    doc: Path, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = DOC.encode()
    old = doc.read_bytes()
    monkeypatch.setenv(ENV, f"{point}:raise")
    with pytest.raises(InjectedFault):
        patch_file(doc, PatchRequest(ops=[OP], actor=Actor("agent", "x")))
    monkeypatch.delenv(ENV)
    touch(doc)
    assert_settled(doc, base, old, OP)


@pytest.mark.parametrize("point", ["pending.synced", "append.torn", "appended"])
def test_a_crash_while_recording_a_rejection_leaves_the_record_whole_or_absent(
    doc: Path, point: str
) -> None:
    old = doc.read_bytes()
    kill_at(doc, point, BAD)
    touch(doc)
    assert doc.read_bytes() == old
    recs = transcript_records(doc)  # every line parses: no torn record remains
    assert [r["patch_result"] for r in recs if r["op"] == BAD] in ([], ["rejected"])
    assert audit(Path(str(doc) + ".patches")).problems == []
    assert leftovers(doc.parent) == []


def test_a_torn_pending_file_is_dropped_and_the_document_kept(doc: Path) -> None:
    old = doc.read_bytes()
    pending_path(doc).write_text('{"pending_version": 1, "records": [')
    (doc.parent / f".{doc.name}.0123abcd.tmp").write_text("half a document")
    recovery = touch(doc)
    assert recovery is not None and recovery.discarded and not recovery.completed
    assert doc.read_bytes() == old and leftovers(doc.parent) == []


def test_stray_temp_files_of_other_documents_are_left_alone(doc: Path) -> None:
    other = doc.parent / ".other.noma.0123abcd.tmp"
    other.write_text("not ours")
    touch(doc)
    assert other.exists()


def test_transcript_verify_flags_a_document_edited_outside_the_log(doc: Path) -> None:
    doc.write_text(doc.read_text() + "\nAn edit nobody recorded.\n")
    result = run_noma("transcript", "verify", str(doc) + ".patches", cwd=doc.parent)
    assert result.returncode == 1
    assert "hash chain intact" in result.stdout
    assert "CHANGED OUTSIDE THE LOG" in result.stdout
    as_json = run_noma("transcript", "verify", str(doc) + ".patches", "--json", cwd=doc.parent)
    body = json.loads(as_json.stdout)
    assert body["chain_intact"] is True and body["document_matches_chain"] is False
    assert body["ok"] is False


def test_transcript_verify_flags_a_missing_document(doc: Path) -> None:
    doc.unlink()
    result = run_noma("transcript", "verify", str(doc) + ".patches", "--json", cwd=doc.parent)
    body = json.loads(result.stdout)
    assert result.returncode == 1 and "missing" in body["outside_change"]
