"""Attack: files written beside a document are planted as symlinks out of the folder.

A clone ships ``doc.html -> ~/.bashrc`` (or ``doc.md``, or ``doc.noma`` itself): ``noma
export --out``, ``render --out``, ``fmt --inplace``, ``replay --out`` and the app's export
used to resolve the link and write its target. Every one of them now writes through the
boundary and refuses the link (``symlink_refused``) without touching its target.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from trust_testlib import run_noma, transcript_records

from core.noma.boundary import BoundaryError
from core.noma.storage import atomic_write

DOC = '# Memo\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n'
MESSY = '#   Memo\n\n\n::claim{id="c1"   confidence=0.5}\nThe claim.\n::\n'
EDIT = {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9}
VICTIM = b"alias ls='ls --color'\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    path = home / ".bashrc"
    path.write_bytes(VICTIM)
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    root.mkdir()
    (root / "doc.noma").write_text(DOC)
    return root


@pytest.mark.parametrize(
    ("command", "out"),
    [
        ("export --to html", "doc.html"),
        ("export --to markdown", "doc.md"),
        ("render --to llm", "doc.llm.txt"),
        ("render --to json", "doc.json"),
    ],
)
def test_export_and_render_refuse_a_planted_out_symlink(
    work: Path, victim: Path, command: str, out: str
) -> None:
    (work / out).symlink_to(victim)
    verb, *options = command.split()
    result = run_noma(verb, "doc.noma", *options, "--out", out, cwd=work)
    assert result.returncode == 2
    assert "symlink_refused" in result.stderr
    assert victim.read_bytes() == VICTIM
    assert (work / out).is_symlink()


def test_fmt_inplace_refuses_a_document_that_is_a_symlink(work: Path, victim: Path) -> None:
    victim.write_text(MESSY)
    (work / "linked.noma").symlink_to(victim)
    result = run_noma("fmt", "--inplace", "linked.noma", cwd=work)
    assert result.returncode == 2 and "symlink_refused" in result.stderr
    assert victim.read_text() == MESSY


def test_replay_out_refuses_a_planted_symlink(work: Path, victim: Path) -> None:
    base = (work / "doc.noma").read_bytes()
    (work / "base.noma").write_bytes(base)
    assert (
        run_noma("patch", "doc.noma", "--inplace", "--op", json.dumps(EDIT), cwd=work).returncode
        == 0
    )
    (work / "replayed.noma").symlink_to(victim)
    result = run_noma(
        "replay", "doc.noma.patches", "--base", "base.noma", "--out", "replayed.noma", cwd=work
    )
    assert result.returncode == 2 and "symlink_refused" in result.stderr
    assert victim.read_bytes() == VICTIM


def test_atomic_write_refuses_a_symlink_and_a_directory(work: Path, victim: Path) -> None:
    (work / "doc.html").symlink_to(victim)
    with pytest.raises(BoundaryError) as caught:
        atomic_write(work / "doc.html", b"<p>hi</p>")
    assert caught.value.code == "symlink_refused"
    (work / "doc.md").mkdir()
    with pytest.raises(BoundaryError) as caught:
        atomic_write(work / "doc.md", b"hi")
    assert caught.value.code == "not_regular_file"
    assert victim.read_bytes() == VICTIM
    assert sorted(p.name for p in work.iterdir()) == ["doc.html", "doc.md", "doc.noma"]


def test_new_document_in_a_symlinked_folder_is_refused(work: Path, tmp_path: Path) -> None:
    from noma_tui.newdoc import NewDocumentError, create_document

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (work / "sub").symlink_to(elsewhere)
    with pytest.raises(NewDocumentError):
        create_document(work, "sub/new.noma", DOC)
    assert list(elsewhere.iterdir()) == []


# -- issue 29 item 2: `transcript verify` settles what any patch would settle -------------


def test_verify_settles_a_first_edit_killed_right_after_the_rename(work: Path) -> None:
    doc = work / "doc.noma"
    killed = run_noma(
        "patch",
        "doc.noma",
        "--inplace",
        "--op",
        json.dumps(EDIT),
        cwd=work,
        env={"NOMA_FAULT_POINT": "renamed"},
    )
    assert killed.returncode == -signal.SIGKILL
    assert not Path(f"{doc}.patches").exists()
    assert (work / ".doc.noma.pending").exists()
    result = run_noma("transcript", "verify", f"{doc}.patches", "--json", cwd=work)
    body = json.loads(result.stdout)
    assert result.returncode == 0, result.stderr
    assert body["ok"] is True and body["lines"] == 1
    assert body["recovery"]["completed"] is True
    assert "completed an interrupted edit" in body["recovered"]
    assert not (work / ".doc.noma.pending").exists()
    assert [r["op"] for r in transcript_records(doc)] == [EDIT]


def test_verify_json_always_prints_even_on_a_fault(work: Path) -> None:
    result = run_noma("transcript", "verify", "missing.noma.patches", "--json", cwd=work)
    assert result.returncode == 2
    body = json.loads(result.stdout)
    assert body["ok"] is False and body["code"] == "io_error"


def test_verify_reports_a_planted_transcript_symlink_with_its_code(
    work: Path, victim: Path
) -> None:
    (work / "doc.noma.patches").symlink_to(victim)
    result = run_noma("transcript", "verify", "doc.noma.patches", "--json", cwd=work)
    body = json.loads(result.stdout)
    assert result.returncode == 2 and body["code"] == "symlink_refused"
    assert victim.read_bytes() == VICTIM
