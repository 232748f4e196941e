"""Document-derived text made safe to show on a terminal.

A workspace is untrusted (architecture: "The workspace is untrusted input"): a heading, an
id, an attribute value, a flow title or a transcript reason may hold characters a terminal
*acts on* instead of drawing — ESC starting an OSC 52 clipboard write or an OSC 0 title
change, the 8-bit CSI U+009B, BEL, backspace and CR overwrite tricks, NUL, or the bidi
overrides and isolates of "Trojan Source" that reorder what the reader sees. Every path
that prints such text to a terminal (the CLI's text output, every pane and dialog of the
app) passes it through `visible` first; JSON output does not (its escaping is exact).

The visible form follows the marker the app already uses for bytes that are not UTF-8
(``⟨FF⟩``: the byte in hex): a character a terminal would act on becomes ``⟨U+001B⟩``
(its code point). The ``U+`` keeps the two apart: ``⟨9B⟩`` is the undecodable byte 0x9B,
``⟨U+009B⟩`` the character U+009B. Both kinds are mapped here, so one call makes any
document-derived string printable.

Mapped: C0 controls (U+0000–U+001F) except, in multi-line text, ``\\n``, ``\\t`` and a
``\\r`` directly before ``\\n``; DEL; C1 controls (U+0080–U+009F); the bidi embeddings,
overrides and isolates (U+202A–U+202E, U+2066–U+2069); lone surrogates (undecodable bytes
U+DC80–U+DCFF as ``⟨XX⟩``, any other as ``⟨U+D800⟩``). Everything else is kept: text with
none of these comes back as the very same object (the fast path: one C-level scan).
"""

from __future__ import annotations

import re

BYTE_MARKER = "⟨{:02X}⟩"
CHAR_MARKER = "⟨U+{:04X}⟩"

_ACTIVE = "\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_LINE_ACTIVE = re.compile(f"[{_ACTIVE}]")
_TEXT_ACTIVE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                          "\ud800-\udfff]|\r(?!\n)")  # fmt: skip
# Marker text a user could meet in a field (see `has_markers`).
MARKERS = re.compile(r"⟨(?:U\+[0-9A-F]{4}|[89A-F][0-9A-F])⟩")


def _marker(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return BYTE_MARKER.format(code - 0xDC00)
    return CHAR_MARKER.format(code)


def visible(text: str, *, single_line: bool = False) -> str:
    """``text`` with every character a terminal may act on shown as a marker.

    ``single_line`` also maps ``\\n``, ``\\t`` and every ``\\r`` — for a label, a cell, a
    title, a status line or one field of a CLI line, where a newline would forge a line.
    """
    if single_line:
        if text.isprintable():  # no Cc, Cf (bidi), Cs, Zl, Zp: the common case, in C
            return text
        return _LINE_ACTIVE.sub(_marker, text)
    if _TEXT_ACTIVE.search(text) is None:
        return text
    return _TEXT_ACTIVE.sub(_marker, text)


def visible_line(text: str) -> str:
    """`visible` for a single-line context (a label, a title, one field of a line)."""
    return visible(text, single_line=True)


def is_visible(text: str, *, single_line: bool = False) -> bool:
    """True when `visible` would return ``text`` unchanged."""
    return visible(text, single_line=single_line) == text


def has_markers(text: str) -> bool:
    """Whether ``text`` holds marker text (``⟨U+001B⟩``, ``⟨FF⟩``): a field that showed a
    mapped value and was then edited still holds them, and must not be taken as typed."""
    return MARKERS.search(text) is not None
