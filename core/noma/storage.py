"""Crash-safe file writes and cross-process locking for documents and their transcripts.

A write goes to a temp file in the same directory, is fsynced, then renamed over the
target: a crash leaves the old file or the new one, never half of each. Patches on one
directory are serialised with ``flock`` on the directory itself, so two processes can
never both read the same state and overwrite each other (no lock files are left behind).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from collections.abc import Iterator
from pathlib import Path


def real_path(path: str | Path) -> Path:
    """Follow symlinks so a write replaces the document, not the link to it."""
    return Path(os.path.realpath(path))


@contextlib.contextmanager
def document_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on the document's directory for one read-modify-write."""
    directory = real_path(path).parent
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def atomic_write(path: str | Path, data: bytes) -> None:
    target = real_path(path)
    directory = target.parent
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    tmp = directory / f".{target.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
