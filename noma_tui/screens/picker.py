"""Pick one item from a short list: a directive template, an attribute to remove, a flow
to start, a skip reason. An optional detail line explains the choice (e.g. a step's
"when not to run")."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..footer import Footer
from ..keyorder import OrderedOptionList, after_typed
from ..keys import bindings
from ..typeahead import answer_after_typed
from ..visible import block_text, line_text
from .mounted import composed
from .once import DismissOnce


class PickerScreen(DismissOnce[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        *bindings("picker.choose", "picker.cancel", "picker.down", "picker.up")
    ]

    _choosing = False

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
            yield OrderedOptionList(
                *[Option(line_text(label), id=value) for value, label in self.choices],
                id="choices",
            )
            yield Static("enter choose · esc cancel", classes="dialog-hint")
        yield Footer()

    @composed
    def on_mount(self) -> None:
        options = self.query_one("#choices", OptionList)
        options.focus()
        options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # a click (Enter is the screen's own binding, `action_choose`)
        self._choose(lambda: event.option.id)

    def action_choose(self) -> None:
        """Enter, run when it is dispatched (a priority binding): the keys typed after it
        wait for what the choice opens, and the highlight is read once the moves typed
        before it have been applied."""
        options = self.query_one("#choices", OptionList)
        self._choose(lambda: o.id if (o := options.highlighted_option) else None)

    def _choose(self, value: Callable[[], str | None]) -> None:
        if not self.can_dismiss() or self._choosing:
            return
        self._choosing = True
        answer_after_typed(self, value)

    def action_move(self, direction: str) -> None:
        """j / k, queued behind the keys already sent to the list (a priority binding runs
        at once, an arrow key waits its turn there)."""
        options = self.query_one("#choices", OptionList)
        if direction == "down":
            after_typed(self, options.action_cursor_down)
        else:
            after_typed(self, options.action_cursor_up)

    def action_cancel(self) -> None:
        self.dismiss(None)
