"""``noma fmt``: rewrite a document in its normal form (``render --to noma``), safely.

Formatting is a whole-file rewrite, not a patch op, so it is held to a stricter rule than
a patch: the formatted text must parse back to the same tree (`structure`: same blocks,
ids, aliases, attributes and text) or nothing is written. The rewrite is atomic (temp file,
fsync, rename) under the same directory lock the patch engine takes, so it never races a
patch.

A document with a transcript (``FILE.patches``) is refused unless forced: every record's
``post_sha256`` describes the file's bytes, and replaying the transcript from its base
reproduces the old bytes, not the formatted ones. After a forced rewrite the chain is
broken at that point (the next record's ``pre_sha256`` will not match the last
``post_sha256``), which the caller is told.
"""

from __future__ import annotations

import gc
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .boundary import place
from .commit import temp_name
from .parser import parse_source
from .render import render_noma, structure
from .source import Source, decode, encode

TRANSCRIPT_SUFFIX = ".patches"


class FormatError(Exception):
    """The document cannot be formatted without changing what it means; nothing written."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(slots=True)
class Formatted:
    """One document's formatting result."""

    original: bytes
    formatted: bytes

    @property
    def changed(self) -> bool:
        return self.original != self.formatted


def format_source(source: Source) -> Formatted:
    """The normal form of ``source``; raises `FormatError` if it would change the tree."""
    doc = parse_source(source)
    if source.invalid_utf8_at is not None:
        line, column = source.invalid_utf8_at
        raise FormatError(
            "invalid_utf8",
            f"the file is not valid UTF-8 (line {line}, column {column}); fix the encoding "
            "before formatting",
        )
    if doc.recovered:
        first = next(n for n in doc.notes if n.severity == "error")
        raise FormatError(
            "needs_recovery",
            f"line {first.line}: {first.message} The parser had to guess this document's "
            "structure; fix the errors `noma check` reports before formatting, so the guess "
            "is not written in",
        )
    text = render_noma(doc)
    again = parse_source(decode(encode(text)))
    enabled = gc.isenabled()
    gc.disable()  # two trees of plain dicts, no cycles: GC passes would only cost time
    try:
        before, after = structure(doc), structure(again)
    finally:
        if enabled:
            gc.enable()
    if before != after:
        where = _first_difference(before, after, "document")
        raise FormatError(
            "not_roundtrip",
            f"the normal form would not parse to the same document ({where}); nothing "
            "written. The renderer cannot say this document as written; leave it as is",
        )
    return Formatted(source.raw, encode(text))


def _first_difference(a: Any, b: Any, path: str) -> str:
    """A readable pointer to where two `structure` trees first differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if a.get(key) != b.get(key):
                label = a.get("id") or a.get("type") or path
                return _first_difference(a.get(key), b.get(key), f"{label}.{key}")
        return path
    if isinstance(a, list) and isinstance(b, list):
        for k, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return _first_difference(x, y, f"{path}[{k}]")
        return f"{path} (length {len(a)} vs {len(b)})"
    return f"{path}: {a!r} would become {b!r}"


def transcript_of(path: Path) -> Path | None:
    """The document's ``.patches`` transcript when it exists and holds records."""
    candidate = path.with_name(path.name + TRANSCRIPT_SUFFIX)
    try:
        return candidate if candidate.stat().st_size > 0 else None
    except OSError:
        return None


def format_in_place(path: Path, *, force: bool = False) -> Formatted:
    """Rewrite ``path`` in normal form, atomically, under the document lock.

    Raises `FormatError` (nothing written) when the tree would change, or when the
    document has a transcript and ``force`` is false; OSError for I/O faults.
    """
    with place(path) as where, where.folder.locked():
        # Through the boundary: a document that is a symlink is refused, not rewritten
        # (and not read: what is read is what would be written back).
        raw = where.folder.read_bytes(where.name)
        if raw is None:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        source = decode(raw)
        result = format_source(source)
        if not result.changed:
            return result
        transcript = transcript_of(path)
        if transcript is not None and not force:
            raise FormatError(
                "has_transcript",
                f"{path.name} has a patch transcript ({transcript.name}); a whole-file "
                "rewrite is not a patch op, so the transcript's last post_sha256 would no "
                "longer match the file and replay from its base would not reach it. Pass "
                "--force to rewrite anyway (the chain breaks at this point)",
            )
        where.folder.atomic_write(where.name, result.formatted, temp_name(where.name))
        return result


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
