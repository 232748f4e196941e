"""Heading slugs (noma-interop §5): deterministic, so the same title always gets the same id."""

from __future__ import annotations

import re
import string
import unicodedata

_DROP = re.compile(r"[^a-z0-9\s-]")
_COLLAPSE = re.compile(r"[\s-]+")
_WORD = re.compile(r"[^\W_]+")  # runs of Unicode letters and digits
# The ASCII characters `_DROP` removes from a lower-cased ASCII title (whitespace, letters,
# digits and ``-`` stay), as a `str.translate` table.
_DROP_ASCII = {
    ord(ch): None
    for ch in map(chr, range(128))
    if not (ch.isspace() or ch in string.ascii_lowercase or ch in string.digits or ch == "-")
}


def slugify(title: str) -> str:
    """Lower-case, NFKD, strip marks, keep ``[a-z0-9]``, join words with ``-``.

    Titles with no ASCII letters or digits (CJK, Cyrillic, Greek) keep their own letters
    instead of ending up with no id (the reference drops them; we do the better thing).

    An ASCII title (nearly every one) takes a path without regular expressions, one
    translate and one split: a 5,000-section document has 5,000 titles. ``str.split()``
    splits on exactly the characters ``\\s`` matches, so the result is the same.
    """
    lowered = title.lower()
    if lowered.isascii():
        slug = "-".join(lowered.translate(_DROP_ASCII).replace("-", " ").split())
    else:
        folded = "".join(
            ch for ch in unicodedata.normalize("NFKD", lowered) if not unicodedata.combining(ch)
        )
        slug = _COLLAPSE.sub("-", _DROP.sub("", folded)).strip("-")
    if slug:
        return slug
    return "-".join(_WORD.findall(lowered))
