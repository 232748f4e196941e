"""Read files inside a directory without ever leaving it.

Checking a path and then opening it races with whoever can change the tree (swap a
directory for a symlink between the two), and ``O_NOFOLLOW`` guards only the last
component. So paths are opened one component at a time relative to the previous
directory's fd, with ``O_NOFOLLOW`` at every step: a symlink anywhere fails, a hardlink
(which could point at any file on the same filesystem) is refused, and only regular files
are read.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from core.skills_runtime.manifest import check_relative_path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
SKIP_DIRS = frozenset({"__pycache__", ".git"})


class UnsafePath(ValueError):
    """The path escapes the directory, crosses a symlink, or is not a plain file."""


def read_contained(root: Path, relpath: str, max_bytes: int) -> tuple[bytes, int]:
    """Return up to ``max_bytes`` of ``root/relpath`` and the file's full size."""
    try:
        check_relative_path(relpath)
    except ValueError as exc:
        raise UnsafePath(str(exc)) from exc
    parts = relpath.split("/")
    try:
        dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise UnsafePath(f"skill directory is not readable: {exc.strerror}") from exc
    try:
        for part in parts[:-1]:
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as exc:
                raise UnsafePath(_why(relpath, exc)) from exc
            os.close(dir_fd)
            dir_fd = next_fd
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise UnsafePath(_why(relpath, exc)) from exc
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{relpath!r} is not a regular file")
        if st.st_nlink > 1:
            raise UnsafePath(f"{relpath!r} is a hard link; hard links are not served")
        chunks: list[bytes] = []
        remaining = max_bytes
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), st.st_size
    finally:
        os.close(fd)


def _why(relpath: str, exc: OSError) -> str:
    if exc.errno in (40, 20):  # ELOOP, ENOTDIR: a symlink or a file where a dir should be
        return f"{relpath!r} crosses a symlink or is not inside the skill directory"
    if exc.errno == 2:
        return f"no file {relpath!r} in the skill directory"
    return f"cannot open {relpath!r}: {exc.strerror}"


def list_files(root: Path, limit: int = 500) -> list[str]:
    """Relative paths of the regular files under ``root`` (symlinks are neither followed
    nor listed), sorted, at most ``limit``."""
    found: list[str] = []

    def walk(directory: Path, prefix: str) -> Iterator[str]:
        with contextlib.suppress(OSError), os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
            for entry in entries:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        yield from walk(Path(entry.path), f"{prefix}{entry.name}/")
                elif entry.is_file(follow_symlinks=False):
                    yield f"{prefix}{entry.name}"

    for rel in walk(root, ""):
        found.append(rel)
        if len(found) >= limit:
            break
    return found
