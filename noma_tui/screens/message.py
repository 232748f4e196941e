"""A message in full: what a one-line status (a flow refusal, an error) had to cut."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from ..footer import Footer
from ..keys import bindings
from ..visible import block_text, line_text
from .mounted import composed
from .once import DismissOnce


class MessageScreen(DismissOnce[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*bindings("message.close")]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog message-dialog"):
            yield Static(line_text(self.title_text), classes="dialog-title")
            with VerticalScroll(id="message-scroll"):
                yield Static(block_text(self.body), id="message-body")
            yield Static("esc close", classes="dialog-hint")
        yield Footer()

    @composed
    def on_mount(self) -> None:
        self.query_one("#message-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)
