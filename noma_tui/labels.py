"""Tree labels: what one block looks like in the document tree.

A section shows its title and canonical id; a directive its name and canonical id; a
badge in front counts the diagnostics on that block (glyph + number, so it reads without
colour); aliases follow, dimmed, as secondary names. Building a label is pure, so the tree
can compare labels and call `TreeNode.set_label` only for the ones that changed.
"""

from __future__ import annotations

from rich.text import Text

from core.noma.nodes import Directive, Node, Section

from .document import Badge, LoadedDocument
from .styles import SEVERITY_GLYPH, Styles
from .visible import plain

MAX_TITLE = 60


def block_label(node: Node, badge: Badge | None, palette: Styles, duplicate: bool) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if badge is not None:
        glyph = SEVERITY_GLYPH[badge.severity]
        text.append(f"{glyph}{badge.count} ", palette.severity(badge.severity))
    if isinstance(node, Section):
        title = node.title if len(node.title) <= MAX_TITLE else node.title[: MAX_TITLE - 1] + "…"
        text.append(plain(title) or "(untitled)", palette.heading)
        if node.id:
            text.append(f"  #{plain(node.id)}", palette.muted)
    elif isinstance(node, Directive):
        text.append(f"::{plain(node.name)}", palette.fence)
        if node.id:
            text.append(f" {plain(node.id)}")
        else:
            text.append(" (no id)", palette.muted)
    if duplicate:
        text.append(" duplicate id", palette.error)
    if node.aliases:
        text.append(f"  aka {plain(', '.join(node.aliases))}", palette.muted)
    return text


def label_for(loaded: LoadedDocument, block: int, palette: Styles) -> Text:
    node = loaded.blocks[block]
    duplicate = node.id is not None and node.id in loaded.duplicate_ids
    return block_label(node, loaded.badges.get(block), palette, duplicate)


def root_label(loaded: LoadedDocument, palette: Styles) -> Text:
    text = Text(plain(loaded.name), style="bold", no_wrap=True)
    errors, warnings = loaded.count("error"), loaded.count("warning")
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
