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
from ..typeahead import answer_after_typed
from ..visible import line_text, plain
from .mounted import composed
from .once import DismissOnce


class PromptScreen(DismissOnce[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [*bindings("prompt.go", "prompt.cancel")]
    _going = False

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

    @composed
    def on_mount(self) -> None:
        self.query_one("#answer", Input).focus()

    def action_go(self) -> None:
        """Enter, run when it is dispatched (a priority binding): the keys typed after it
        wait for what the answer opens (the block it selects gets them), and the field is
        read once the keys typed before it are in."""
        if not self.can_dismiss() or self._going:
            return
        self._going = True
        box = self.query_one("#answer", Input)

        def typed() -> str | None:
            text = box.value.strip()
            return self.real.get(text, text) or None

        answer_after_typed(self, typed)

    def action_cancel(self) -> None:
        self.dismiss(None)
