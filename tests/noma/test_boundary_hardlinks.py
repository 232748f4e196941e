"""Attack: files beside a document planted as hard links to a file outside the folder.

A symlink is refused by ``O_NOFOLLOW``; a hard link is not a link to follow, it *is* the
other file. Where an attacker can make one (a shared drive on one filesystem, an archive
extracted with its links), appending a record to ``notes.noma.patches`` or writing
``.notes.noma.pending`` in place would write into the outside file. Every file the boundary
opens for writing in place must therefore have exactly one name; a document itself is only
ever replaced by rename, which leaves the other name's content alone.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from core.noma.boundary import BoundaryError, Folder
from core.noma.patch.pipeline import Actor, PatchRequest, patch_file

DOC = '# Notes\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n'
OP = {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9}
VICTIM = b"export PATH=/usr/bin\n"


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "home"
    outside.mkdir()
    victim = outside / ".bashrc"
    victim.write_bytes(VICTIM)
    work = tmp_path / "clone"
    work.mkdir()
    doc = work / "notes.noma"
    doc.write_text(DOC)
    return doc, victim


def patch(doc: Path) -> object:
    return patch_file(doc, PatchRequest(ops=[OP], actor=Actor("human", "ana")), root=doc.parent)


@pytest.mark.parametrize("name", ["notes.noma.patches", ".notes.noma.pending"])
def test_a_hard_linked_state_file_is_never_written_through(
    clone: tuple[Path, Path], name: str
) -> None:
    doc, victim = clone
    os.link(victim, doc.parent / name)
    with contextlib.suppress(BoundaryError):
        patch(doc)
    assert victim.read_bytes() == VICTIM


def test_a_hard_linked_document_is_replaced_not_written_through(
    clone: tuple[Path, Path],
) -> None:
    doc, victim = clone
    doc.unlink()
    os.link(victim, doc)
    victim.write_bytes(DOC.encode())  # the shared inode now parses as the document
    patch(doc)
    assert victim.read_bytes() == DOC.encode()


def test_opening_a_file_with_two_names_for_writing_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x")
    os.link(tmp_path / "a", tmp_path / "b")
    with Folder.under(tmp_path, ()) as folder, pytest.raises(BoundaryError) as refused:
        folder.open_file("b", os.O_WRONLY | os.O_APPEND)
    assert refused.value.code == "hard_link_refused"
