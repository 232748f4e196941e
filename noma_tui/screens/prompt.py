"""A one-line question with completion: "go to id" takes a canonical id or an alias."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.suggester import SuggestFromList
from textual.widgets import Input, Static

from ..footer import Footer
from ..keyorder import OrderedInput
from ..keys import bindings
from ..visible import line_text, plain
from .once import DismissOnce


class PromptScreen(DismissOnce[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [*bindings("prompt.cancel")]

    def __init__(
        self, title: str, suggestions: Sequence[str] = (), *, cursor_blink: bool = True
    ) -> None:
        super().__init__()
        self.title_text = title
        # Suggestions are shown as markers (an id may hold ESC); choosing one gives back
        # the real name.
        self.real = {plain(name): name for name in suggestions}
        self.suggestions = list(self.real)
        self.cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog prompt-dialog"):
            yield Static(line_text(self.title_text), classes="dialog-title")
            box = OrderedInput(
                id="answer",
                suggester=SuggestFromList(self.suggestions, case_sensitive=True)
                if self.suggestions
                else None,
            )
            box.cursor_blink = self.cursor_blink
            yield box
            yield Static("enter go · right accept completion · esc cancel", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#answer", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        answer = event.value.strip()
        self.dismiss(self.real.get(answer, answer) or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
