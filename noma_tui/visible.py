"""Undecodable bytes made visible.

`core.noma.source.decode` keeps bytes that are not UTF-8 as lone surrogates
(``surrogateescape``: byte 0xFF becomes U+DCFF) so a write can restore them exactly. A
terminal would print those as ``\\udcff`` or garbage; the panes show each as a marked
``⟨FF⟩`` instead, and the block view says where the first one is and what to do.
"""

from __future__ import annotations

import itertools
import re

from rich.style import Style
from rich.text import Text

_ESCAPED = re.compile("[\udc80-\udcff]")
MARKER = "⟨{:02X}⟩"
HINT = (
    "invalid UTF-8 bytes are shown as ⟨XX⟩ (the byte in hex); the engine refuses edits to "
    "this file (invalid_utf8) until they are fixed in another editor"
)


def has_escapes(text: str) -> bool:
    return _ESCAPED.search(text) is not None


def plain(text: str) -> str:
    """``text`` with every escaped byte replaced by its marker."""
    return _ESCAPED.sub(lambda m: MARKER.format(ord(m.group()) - 0xDC00), text)


def marked(text: Text, style: Style | str) -> Text:
    """A copy of ``text`` whose escaped bytes are markers in ``style`` (other spans kept)."""
    if not has_escapes(text.plain):
        return text
    out = Text(no_wrap=text.no_wrap, overflow=text.overflow, end=text.end)
    for segment_text, segment_style in _pieces(text):
        last = 0
        for match in _ESCAPED.finditer(segment_text):
            out.append(segment_text[last : match.start()], segment_style)
            out.append(MARKER.format(ord(match.group()) - 0xDC00), style)
            last = match.end()
        out.append(segment_text[last:], segment_style)
    return out


def _pieces(text: Text) -> list[tuple[str, Style | str | None]]:
    """``text`` split at its span boundaries, each piece with the style applied there."""
    plain_text = text.plain
    cuts = sorted(
        {0, len(plain_text), *(s.start for s in text.spans), *(s.end for s in text.spans)}
    )
    out: list[tuple[str, Style | str | None]] = []
    for start, end in itertools.pairwise(cuts):
        styles = [s.style for s in text.spans if s.start <= start and s.end >= end]
        style: Style | str | None = styles[-1] if styles else (text.style or None)
        out.append((plain_text[start:end], style))
    return out
