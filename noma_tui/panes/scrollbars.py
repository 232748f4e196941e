"""Scrollbar thumbs that show where a pane is scrolled, whenever the bar appears.

Textual (8.2) moves a thumb only while its bar is shown (`Widget.watch_scroll_y`), and a
bar that the layout shows later keeps the position it was created with. DataTable and Tree
scroll to their cursor with ``force=True``, which works while the bar is still hidden: after
rows are added, the cursor's scroll can run after the table has its new virtual size but
before the layout that shows the bar. The content then ends scrolled while the thumb stays
at the top, and which of the two comes first depends on timing (a snapshot one cell off
about one run in five). Every scrollable pane mixes this in, so the thumb follows the
offset in either order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import DataTable

if TYPE_CHECKING:
    from textual.widget import Widget

    _Scrollable = Widget
else:
    _Scrollable = object


class ThumbFollowsScroll(_Scrollable):
    """Mixin (before the Textual widget class): a bar that appears shows the current offset."""

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        if shown:
            self.vertical_scrollbar.position = self.scroll_y

    def watch_show_horizontal_scrollbar(self, shown: bool) -> None:
        if shown:
            self.horizontal_scrollbar.position = self.scroll_x


class PaneTable(ThumbFollowsScroll, DataTable[Any]):
    """A DataTable for a pane that needs no subclass of its own (the flow pane's tables)."""
