"""Heading slugs (noma-interop §5): deterministic, so the same title always gets the same id."""

from __future__ import annotations

import re
import unicodedata

_DROP = re.compile(r"[^a-z0-9\s-]")
_COLLAPSE = re.compile(r"[\s-]+")
_WORD = re.compile(r"[^\W_]+")  # runs of Unicode letters and digits


def slugify(title: str) -> str:
    """Lower-case, NFKD, strip marks, keep ``[a-z0-9]``, join words with ``-``.

    Titles with no ASCII letters or digits (CJK, Cyrillic, Greek) keep their own letters
    instead of ending up with no id (the reference drops them; we do the better thing).
    """
    lowered = title.lower()
    if lowered.isascii():
        folded = lowered
    else:
        folded = "".join(
            ch for ch in unicodedata.normalize("NFKD", lowered) if not unicodedata.combining(ch)
        )
    slug = _COLLAPSE.sub("-", _DROP.sub("", folded)).strip("-")
    if slug:
        return slug
    return "-".join(_WORD.findall(lowered))
