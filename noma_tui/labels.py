"""Tree labels: what one block looks like in the document tree.

A section shows its title and canonical id; a directive its name and canonical id; a
badge in front counts the diagnostics on that block (glyph + number, so it reads without
colour); aliases follow, dimmed, as secondary names. Building a label is pure, so the tree
can compare labels and call `TreeNode.set_label` only for the ones that changed.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Span, Text

from core.noma.api import Directive, Node, Section

from .document import Badge, LoadedDocument
from .styles import SEVERITY_GLYPH, Styles
from .visible import plain

MAX_TITLE = 60


def block_label(node: Node, badge: Badge | None, palette: Styles, duplicate: bool) -> Text:
    """One row's label, assembled as a string and its spans in one `Text` (equal to one
    built by `Text.append` per piece, which costs ~4x as much: a 20,000-section document
    builds 20,000 labels when it opens)."""
    pieces: list[tuple[str, Style | None]] = []
    if badge is not None:
        glyph = SEVERITY_GLYPH[badge.severity]
        pieces.append((f"{glyph}{badge.count} ", palette.severity(badge.severity)))
    if isinstance(node, Section):
        title = node.title if len(node.title) <= MAX_TITLE else node.title[: MAX_TITLE - 1] + "…"
        pieces.append((plain(title) or "(untitled)", palette.heading))
        if node.id:
            pieces.append((f"  #{plain(node.id)}", palette.muted))
    elif isinstance(node, Directive):
        pieces.append((f"::{plain(node.name)}", palette.fence))
        if node.id:
            pieces.append((f" {plain(node.id)}", None))
        else:
            pieces.append((" (no id)", palette.muted))
    if duplicate:
        pieces.append((" duplicate id", palette.error))
    if node.aliases:
        pieces.append((f"  aka {plain(', '.join(node.aliases))}", palette.muted))
    spans: list[Span] = []
    at = 0
    for piece, style in pieces:
        end = at + len(piece)
        if style and end > at:
            spans.append(Span(at, end, style))
        at = end
    return Text(
        "".join(piece for piece, _ in pieces), no_wrap=True, overflow="ellipsis", spans=spans
    )


def label_for(loaded: LoadedDocument, block: int, palette: Styles) -> Text:
    node = loaded.blocks[block]
    duplicate = node.id is not None and node.id in loaded.duplicate_ids
    return block_label(node, loaded.badges.get(block), palette, duplicate)


def root_label(loaded: LoadedDocument, palette: Styles) -> Text:
    text = Text(plain(loaded.name), style="bold", no_wrap=True)
    errors, warnings = loaded.count("error"), loaded.count("warning")
    if not loaded.checked:
        text.append("  checking…", palette.muted)
    if errors:
        text.append(f"  {SEVERITY_GLYPH['error']}{errors}", palette.error)
    if warnings:
        text.append(f"  {SEVERITY_GLYPH['warning']}{warnings}", palette.warning)
    if loaded.recovered:
        text.append("  recovered (spans are hints)", palette.warning)
    if loaded.read_only:
        text.append("  read-only", palette.warning)
    if loaded.source.invalid_utf8_at is not None:
        text.append("  invalid bytes ⟨XX⟩", palette.error)
    return text
