"""A yes/no question before something is lost (unsaved text, a block reload)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from ..footer import Footer
from ..keys import bindings
from ..visible import block_text, line_text
from .mounted import composed
from .once import DismissOnce


class ConfirmScreen(DismissOnce[bool]):
    """Dismisses True on ``y`` / the danger button, False on ``n`` / Esc. The safe answer
    has the focus, so a stray Enter keeps the text."""

    BINDINGS: ClassVar[list[BindingType]] = [*bindings("confirm.yes", "confirm.no")]

    def __init__(
        self, question: str, detail: str = "", *, yes: str = "Discard", no: str = "Keep editing"
    ) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog confirm-dialog"):
            yield Static(line_text(self.question), classes="dialog-title")
            if self.detail:
                yield Static(block_text(self.detail), id="confirm-detail")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes} (y)", id="yes", variant="error")
                yield Button(f"{self.no} (n)", id="no", variant="primary")
        yield Footer()

    @composed
    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
