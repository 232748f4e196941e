"""The engine's one atomic create (`core.noma.storage.atomic_create`): a new file whole or
not at all, never over an existing name, never through a symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.noma.boundary import BoundaryError
from core.noma.storage import atomic_create


def test_creates_the_file_and_leaves_no_temp(tmp_path: Path) -> None:
    atomic_create(tmp_path / "a.noma", b"# A\n", root=tmp_path)
    assert (tmp_path / "a.noma").read_bytes() == b"# A\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.noma"]


def test_never_replaces_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "a.noma").write_bytes(b"mine\n")
    with pytest.raises(FileExistsError):
        atomic_create(tmp_path / "a.noma", b"theirs\n", root=tmp_path)
    assert (tmp_path / "a.noma").read_bytes() == b"mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.noma"]


def test_a_planted_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep\n")
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(outside, work / "a.noma")
    with pytest.raises((BoundaryError, FileExistsError)):
        atomic_create(work / "a.noma", b"x\n", root=work)
    assert outside.read_bytes() == b"keep\n"


def test_a_symlinked_folder_under_the_root_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(elsewhere, work / "sub")
    with pytest.raises(BoundaryError):
        atomic_create(work / "sub" / "a.noma", b"x\n", root=work)
    assert list(elsewhere.iterdir()) == []
