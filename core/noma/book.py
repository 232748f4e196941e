"""Book manifests (``*.noma.yml``): an ordered list of chapter files, parsed in book mode.

Book mode is a parse-time concept only (§2.3): chapters get scoped ids for discovery, but
patches always address a chapter file with its unscoped ids, and a manifest is never a
patch target.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from .files import DocumentIOError, chapter_slug, read_document
from .frontmatter import load_yaml
from .nodes import Document


class BookError(Exception):
    """The manifest is missing, unreadable, or not ``chapters: [path, ...]``."""


def load_book(manifest: Path) -> list[tuple[Path, Document]]:
    try:
        data = load_yaml(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError) as exc:
        raise BookError(f"{manifest}: cannot read book manifest ({exc})") from exc
    chapters = data.get("chapters") if isinstance(data, dict) else None
    if not isinstance(chapters, list) or not chapters:
        raise BookError(f"{manifest}: a book manifest needs a non-empty 'chapters:' list")
    root = manifest.parent.resolve()
    out = []
    for entry in chapters:
        rel = entry.get("file") if isinstance(entry, dict) else entry
        if not isinstance(rel, str):
            raise BookError(f"{manifest}: chapter entries are paths, got {entry!r}")
        path = (root / rel).resolve()
        if not path.is_relative_to(root):
            raise BookError(f"{manifest}: chapter {rel!r} is outside the book's folder")
        try:
            _source, doc = read_document(path, chapter=chapter_slug(path))
        except DocumentIOError as exc:
            raise BookError(str(exc)) from exc
        out.append((path, doc))
    return out
