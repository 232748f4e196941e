"""The block view: the selected block's source, highlighted, with its span and hash.

The hash is the one the engine checks for ``baseHash`` (§3.4), so what a writer copies
from here is what an agent would send. Long blocks (a level-1 section spans the whole
document) are cut at `MAX_LINES`; the span line says how much is hidden.

It draws through Textual's line API (a `ScrollView` that renders only the visible rows)
instead of a `Static`, because every cursor move in the tree redraws it: replacing a
Static's content re-runs the screen layout, which on a big document made a cursor move
cost over 100 ms.
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from core.noma.api import Directive, Section

from ..document import ROOT, LoadedDocument
from ..highlight import highlight_lines
from ..styles import SEVERITY_GLYPH, Themed
from ..visible import HINT, marked, plain
from .scrollbars import ThumbFollowsScroll

MAX_LINES = 300


class BlockView(Themed, ThumbFollowsScroll, ScrollView, can_focus=True):
    """Shows one block; focusable so it can be scrolled by keyboard."""

    DEFAULT_CSS = """
    BlockView { overflow: auto auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.loaded: LoadedDocument | None = None
        self.block: int | None = None
        self._texts: list[Text] = []
        self._strips: dict[int, Strip] = {}

    def show(self, loaded: LoadedDocument | None, block: int | None) -> None:
        self.loaded = loaded
        self.block = block
        self.redraw()

    def show_version(self, loaded: LoadedDocument, block: int | None, changed: bool) -> None:
        """A new version of the shown document. The same block, unchanged (its text, span
        and badge): nothing to draw. Changed: redrawn where the reader had scrolled to."""
        if block == self.block and not changed:
            self.loaded = loaded
            return
        prev = self.loaded
        same_block = (
            block == self.block
            and prev is not None
            and (block is None or block == ROOT or prev.blocks[block].id == loaded.blocks[block].id)
        )
        keep = self.scroll_offset if same_block else None
        self.show(loaded, block)
        if keep is not None:
            self.scroll_to(keep.x, keep.y, animate=False, immediate=True)

    @property
    def lines(self) -> list[str]:
        """The plain text shown, one string per row (for tests and copy)."""
        return [t.plain for t in self._texts]

    def restyle(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        loaded, block = self.loaded, self.block
        texts: list[Text] = []
        if loaded is None or block is None:
            texts.append(Text("No block selected.", style=self.palette.muted))
        elif block == ROOT:
            texts.extend(self._document_meta(loaded))
            texts.append(Text())
            texts.extend(self._source(loaded, 1, len(loaded.lines)))
        else:
            node = loaded.blocks[block]
            texts.extend(self._block_meta(loaded, block))
            texts.append(Text())
            texts.extend(self._source(loaded, node.line, min(node.end_line, len(loaded.lines))))
        self._texts = texts
        self._strips = {}
        width = max((t.cell_len for t in texts), default=0)
        self._set_virtual_size(Size(width, len(texts)))
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def _set_virtual_size(self, size: Size) -> None:
        """Change the scrollable size without a screen layout when the scrollbars stay as
        they are (the usual case when moving between blocks of similar size)."""
        region = self.scrollable_content_region
        same_bars = (size.height > region.height) == self.show_vertical_scrollbar and (
            size.width > region.width
        ) == self.show_horizontal_scrollbar
        if same_bars and self.is_mounted:
            self.set_reactive(BlockView.virtual_size, size)
            self._scroll_update(size)  # scrollbar thumbs only (textual 8.2 internals)
        else:
            self.virtual_size = size

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        style = self.rich_style
        if index >= len(self._texts):
            return Strip.blank(width, style)
        strip = self._strips.get(index)
        if strip is None:
            text = self._texts[index]
            segments = list(text.render(self.app.console, end=""))
            strip = Strip(segments, text.cell_len)
            self._strips[index] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, style).apply_style(style)

    def _document_meta(self, loaded: LoadedDocument) -> list[Text]:
        p = self.palette
        first = Text()
        first.append(loaded.name, style="bold")
        first.append(f"  {len(loaded.lines)} lines · {len(loaded.blocks)} blocks", p.muted)
        second = Text("sha256 ", p.muted)
        second.append(loaded.sha256[:16] + "…")
        out = [first, second]
        out.extend(self._file_notes(loaded))
        if loaded.recovered:
            out.append(Text("recovered: the parser needed recovery, spans are hints", p.warning))
        return out

    def _file_notes(self, loaded: LoadedDocument) -> list[Text]:
        p = self.palette
        out = []
        if loaded.read_only:
            out.append(Text("read-only: the file is not writable, so no edit applies", p.warning))
        bad = loaded.source.invalid_utf8_at
        if bad is not None:
            out.append(Text(f"line {bad[0]}, column {bad[1]}: {HINT}", p.error))
        return out

    def _block_meta(self, loaded: LoadedDocument, block: int) -> list[Text]:
        p = self.palette
        node = loaded.blocks[block]
        first = Text()
        if isinstance(node, Directive):
            first.append(f"::{plain(node.name)}", p.fence)
            first.append(f" {plain(node.id)}" if node.id else " (no id: not patchable)")
        elif isinstance(node, Section):
            first.append("#" * node.level + " " + plain(node.title), p.heading)
            if node.id:
                first.append(f"  #{plain(node.id)}", p.muted)
        if node.aliases:
            first.append(f"  aka {plain(', '.join(node.aliases))}", p.muted)
        second = Text(f"lines {node.line}–{node.end_line}", p.muted)
        digest = loaded.block_hash(block)
        if digest:
            second.append("  hash ", p.muted)
            second.append(digest[:16] + "…")
        badge = loaded.badges.get(block)
        if badge is not None:
            glyph = SEVERITY_GLYPH[badge.severity]
            second.append(f"  {glyph}{badge.count} diagnostic(s)", p.severity(badge.severity))
        out = [first, second]
        out.extend(self._file_notes(loaded))
        if loaded.recovered:
            out.append(Text("span is a hint: the document needed recovery", p.warning))
        return out

    def _source(self, loaded: LoadedDocument, first: int, last: int) -> list[Text]:
        p = self.palette
        shown_last = min(last, first + MAX_LINES - 1)
        # Markers before highlighting: the line is never drawn raw (see `marked`).
        raw = [plain(loaded.lines.get(n).expandtabs(4)) for n in range(first, shown_last + 1)]
        width = len(str(shown_last))
        rows: list[Text] = []
        for number, line in zip(range(first, shown_last + 1), highlight_lines(raw, p), strict=True):
            row = Text(f"{number:>{width}} ", style=p.muted, no_wrap=True)
            row.append_text(marked(line, p.error))
            rows.append(row)
        if shown_last < last:
            rows.append(Text(f"… {last - shown_last} more line(s) to line {last}", p.muted))
        return rows
