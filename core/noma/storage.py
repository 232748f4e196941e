"""Crash-safe file writes and cross-process locking for documents and their transcripts.

A write goes to a temp file in the same directory, is fsynced, then renamed over the
target: a crash leaves the old file or the new one, never half of each. Patches on one
directory are serialised with ``flock`` on the directory itself, so two processes can
never both read the same state and overwrite each other (no lock files are left behind).

Both go through the file boundary (`core.noma.boundary`): the directory is opened once and
the file is named relative to it, so a symlink planted at the target is refused, never
followed (it used to be resolved, which let a cloned ``doc.html -> ~/.bashrc`` redirect an
export).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from .boundary import Folder, create_file, write_file


@contextlib.contextmanager
def document_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on the document's directory for one read-modify-write."""
    with Folder.open(Path(path).parent) as folder, folder.locked():
        yield


def atomic_write(path: str | Path, data: bytes, root: str | Path | None = None) -> None:
    """Replace or create ``path`` with ``data`` (temp file, fsync, rename, fsync dir); a
    symlink or non-file at ``path`` is refused (`core.noma.boundary.BoundaryError`)."""
    write_file(path, data, root)


def atomic_create(path: str | Path, data: bytes, root: str | Path | None = None) -> None:
    """Create ``path`` with ``data``, never replacing a file (temp file, fsync, hard link,
    fsync dir): `FileExistsError` if the name is taken, a symlink there is refused
    (`core.noma.boundary.BoundaryError`)."""
    create_file(path, data, root)
