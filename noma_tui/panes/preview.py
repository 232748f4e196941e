"""The preview pane: the selected block rendered (`noma_tui.preview`), beside its source.
Hidden until ``p``; it only renders while shown, so moving through a big tree costs
nothing when it is off."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..document import LoadedDocument
from ..preview import render_block
from ..styles import Themed
from .scrollbars import ThumbFollowsScroll


class PreviewPane(Themed, ThumbFollowsScroll, VerticalScroll):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-hidden")
        self.loaded: LoadedDocument | None = None
        self.block: int | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="preview-body")

    @property
    def shown(self) -> bool:
        return not self.has_class("-hidden")

    def toggle(self) -> bool:
        self.toggle_class("-hidden")
        self.redraw()
        return self.shown

    def show(self, loaded: LoadedDocument | None, block: int | None) -> None:
        self.loaded, self.block = loaded, block
        if self.shown:
            self.redraw()

    def show_version(self, loaded: LoadedDocument, block: int | None, changed: bool) -> None:
        """A new version: re-rendered only when the shown block changed."""
        if block == self.block and not changed:
            self.loaded = loaded
            return
        self.show(loaded, block)

    def restyle(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        if self.shown:
            body = self.query_one("#preview-body", Static)
            body.update(render_block(self.loaded, self.block, self.palette))
            self.scroll_home(animate=False)
