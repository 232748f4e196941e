"""Undecodable bytes and terminal controls made visible, in the app's rich text.

`core.noma.source.decode` keeps bytes that are not UTF-8 as lone surrogates
(``surrogateescape``: byte 0xFF becomes U+DCFF) so a write can restore them exactly. A
terminal would print those as ``\\udcff`` or garbage; the panes show each as a marked
``⟨FF⟩`` instead, and the block view says where the first one is and what to do.

A character a terminal *acts on* (ESC, C1 controls, BEL, CR, NUL, bidi overrides: the
workspace is untrusted, see `core.noma.visible`) is shown the same way, by code point:
``⟨U+001B⟩``. Every pane, dialog, title and notification passes document-derived text
through `plain` (a `str`) or `marked` (a `rich.text.Text`, the markers styled).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from core.noma.api import BYTE_MARKER, MARKERS, visible, visible_line

MARKER = BYTE_MARKER
HINT = (
    "invalid UTF-8 bytes are shown as ⟨XX⟩ (the byte in hex); the engine refuses edits to "
    "this file (invalid_utf8) until they are fixed in another editor"
)


# ``plain(text)``: ``text`` on one line, every escaped byte and terminal control shown as
# a marker. The core function itself (not a wrapper): tree labels call it ~4 times a row.
plain = visible_line


def marked(text: Text, style: Style | str) -> Text:
    """``text`` (made from `plain` text) with its markers in ``style``, other spans kept;
    ``text`` itself when it has none.

    The markers are made before the `Text` is: Rich drops BEL, BS, VT, FF and CR when it
    builds a `Text`, which would hide them (and shift every span after them)."""
    if "⟨" not in text.plain:
        return text
    out = text.copy()
    for match in MARKERS.finditer(out.plain):
        out.stylize(style, match.start(), match.end())
    return out


def line_text(text: str, style: Style | str = "") -> Text:
    """A one-line title or label from untrusted text: never markup, controls as markers."""
    return Text(visible_line(text), style=style)


def block_text(text: str, style: Style | str = "") -> Text:
    """Several lines of untrusted text (a dialog's detail): newlines and tabs kept."""
    return Text(visible(text), style=style)
