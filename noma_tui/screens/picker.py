"""Pick one item from a short list: a directive template, an attribute to remove, a flow
to start, a skip reason. An optional detail line explains the choice (e.g. a step's
"when not to run")."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from ..keys import bindings
from ..visible import block_text, line_text
from .once import DismissOnce


class PickerScreen(DismissOnce[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [*bindings("picker.cancel", "picker.down", "picker.up")]

    def __init__(self, title: str, choices: list[tuple[str, str]], detail: str = "") -> None:
        """``choices`` are (value, label) pairs."""
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog picker-dialog"):
            yield Static(line_text(self.title_text), classes="dialog-title")
            if self.detail:
                yield Static(block_text(self.detail), id="picker-detail", classes="picker-detail")
            yield OptionList(
                *[Option(line_text(label), id=value) for value, label in self.choices],
                id="choices",
            )
            yield Static("enter choose · esc cancel", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        options = self.query_one("#choices", OptionList)
        options.focus()
        options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_move(self, direction: str) -> None:
        options = self.query_one("#choices", OptionList)
        if direction == "down":
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    def action_cancel(self) -> None:
        self.dismiss(None)
