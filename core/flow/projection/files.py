"""Writing projections into a workspace, through the file boundary (`core.noma.boundary`).

A projection path below the workspace root is reached one folder at a time without
following a symlink (missing folders are made); the file itself must be absent or a
regular file. What is there already decides what happens: nothing, or an unedited
projection (any version) is replaced; the same bytes are left untouched; a hand-edited
or foreign file is kept and the write refused with ``FLOW_PROJECTION_DRIFT`` unless the
user forces it. Nothing is ever written under ``flows/``: canonical bundles live there,
and a projection must never be read back as one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ...noma.boundary import BoundaryError, Folder, place, relative_parts
from ..errors import Problem, Refused
from .stamp import inspect

# The folders the harnesses write into (`harness.default_path`), searched by `--check`.
HARNESS_FOLDERS = (".cursor/rules", "docs/runbooks", ".flow-projections")
SKILLS_FOLDER = ".cursor/skills"

WriteAction = Literal["created", "replaced", "unchanged", "forced"]
FLOWS_DIR = "flows"


@dataclass(frozen=True, slots=True)
class Written:
    path: Path
    action: WriteAction


def _folder(root: Path, parts: tuple[str, ...], create: bool) -> Folder:
    """``root/parts`` (made where missing when ``create``), every component opened without
    following a link."""
    folder = Folder.open(root)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=folder.fd)
            folder = folder.child(part)
    except BaseException:
        folder.close()
        raise
    return folder


def open_target(root: Path, target: str | Path, *, create: bool = True) -> tuple[Folder, str]:
    """The folder and name ``target`` (relative to ``root``, or absolute) is written to.

    Inside the root: walked from the root, never through a symlink, never under
    ``flows/``. Outside it (``--out`` to a path the user typed): its folder is trusted as
    typed, as for an export."""
    path = Path(target)
    absolute = path if path.is_absolute() else root / path
    try:
        parts = relative_parts(root, absolute)
    except BoundaryError:
        parts = ()
    if parts:
        if parts[0] == FLOWS_DIR:
            problem = Problem("out", "never under flows/ (the canonical bundles live there)")
            raise Refused("BAD_REQUEST", (problem,))
        folder = _folder(root, parts[:-1], create)
        try:
            folder.check_file(parts[-1])
        except BaseException:
            folder.close()
            raise
        return folder, parts[-1]
    where = place(absolute)
    return where.folder, where.name


def write_projection(root: Path, target: str | Path, data: bytes, *, force: bool) -> Written:
    folder, name = open_target(root, target)
    with folder, folder.locked():
        existing = folder.read_bytes(name)
        if existing == data:
            return Written(folder.path / name, "unchanged")
        action: WriteAction = "created" if existing is None else "replaced"
        if existing is not None:
            seen = inspect(existing)
            if seen.foreign or seen.drift:
                if not force:
                    raise Refused("FLOW_PROJECTION_DRIFT")
                action = "forced"
        folder.atomic_write(name, data, f".{name}.{secrets.token_hex(6)}.tmp")
        return Written(folder.path / name, action)


def read_projection(root: Path, target: str | Path) -> bytes | None:
    """The file's bytes through the boundary (None when absent)."""
    try:
        folder, name = open_target(root, target, create=False)
    except FileNotFoundError:
        return None
    with folder:
        return folder.read_bytes(name)


def stamped_files(root: Path) -> list[tuple[str, bytes]]:
    """Every file in the harnesses' folders that carries a projection stamp, as
    ``(root-relative path, bytes)``. Walked through the boundary: a symlink (a folder or a
    file) is skipped, never followed."""
    out: list[tuple[str, bytes]] = []
    for folder_path in HARNESS_FOLDERS:
        out += _stamped_in(root, tuple(folder_path.split("/")), None)
    skills = _open_existing(root, tuple(SKILLS_FOLDER.split("/")))
    if skills is not None:
        with skills:
            names = sorted(skills.names())
        for name in names:
            out += _stamped_in(root, (*SKILLS_FOLDER.split("/"), name), "SKILL.md")
    return out


def _open_existing(root: Path, parts: tuple[str, ...]) -> Folder | None:
    try:
        return _folder(root, parts, create=False)
    except (FileNotFoundError, BoundaryError):
        return None


def _stamped_in(root: Path, parts: tuple[str, ...], only: str | None) -> list[tuple[str, bytes]]:
    folder = _open_existing(root, parts)
    if folder is None:
        return []
    out = []
    with folder:
        for name in sorted(folder.names()):
            if (only is not None and name != only) or name.startswith("."):
                continue
            try:
                data = folder.read_bytes(name)
            except BoundaryError:  # a symlink, a folder, a FIFO: not a projection of ours
                continue
            if data is not None and not inspect(data).foreign:
                out.append(("/".join((*parts, name)), data))
    return out
