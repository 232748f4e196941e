"""Reading documents from disk for every surface (CLI, MCP, TUI) the same way."""

from __future__ import annotations

from pathlib import Path

from .boundary import BoundaryError, Place
from .nodes import Document
from .parser import parse_source
from .source import Source, decode

BOOK_SUFFIXES = (".noma.yml", ".noma.yaml")


class DocumentIOError(Exception):
    """A system fault reading a document (missing, unreadable, a directory)."""


def is_book_manifest(path: str | Path) -> bool:
    return str(path).endswith(BOOK_SUFFIXES)


def read_source(path: str | Path) -> Source:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError as exc:
        raise DocumentIOError(f"{p}: no such file") from exc
    except IsADirectoryError as exc:
        raise DocumentIOError(f"{p}: is a directory, not a .noma file") from exc
    except PermissionError as exc:
        raise DocumentIOError(f"{p}: permission denied") from exc
    except OSError as exc:
        raise DocumentIOError(f"{p}: {exc.strerror or exc}") from exc
    return decode(raw)


def read_source_at(where: Place, shown: str | Path | None = None) -> Source:
    """The document at a boundary place (`core.noma.boundary`): opened relative to its
    folder, never through a symlink; errors as `read_source` gives them."""
    p = shown if shown is not None else where.path
    try:
        raw = where.folder.read_bytes(where.name)
    except BoundaryError:
        raise
    except PermissionError as exc:
        raise DocumentIOError(f"{p}: permission denied") from exc
    except OSError as exc:
        raise DocumentIOError(f"{p}: {exc.strerror or exc}") from exc
    if raw is None:
        raise DocumentIOError(f"{p}: no such file")
    return decode(raw)


def read_document(path: str | Path, *, chapter: str | None = None) -> tuple[Source, Document]:
    source = read_source(path)
    return source, parse_source(source, chapter=chapter)


def chapter_slug(path: str | Path) -> str:
    """Book mode: a chapter's filename without extension, slugified (§2.2)."""
    from .slug import slugify

    name = Path(path).name
    for suffix in (".noma",):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return slugify(name) or name
