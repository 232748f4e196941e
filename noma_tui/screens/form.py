"""Small edits as a few labelled inputs: attribute, rename, heading, comment, move.

Each action describes its fields and a `build` function that turns the typed values into
ops (raising `ValueError` with a message for input that cannot make an op at all). Enter
moves to the next field and submits from the last one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from textual.app import ComposeResult
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label

from ..session import EditSession
from .edit_base import EditScreen

Build = Callable[[dict[str, str]], list[dict[str, Any]]]


@dataclass(slots=True)
class Field:
    name: str
    label: str
    value: str = ""
    placeholder: str = ""
    suggestions: Sequence[str] = field(default_factory=tuple)


class FormScreen(EditScreen):
    HINT = "enter next field / preview · ctrl+s preview & apply · esc cancel"

    def __init__(
        self,
        session: EditSession,
        title: str,
        fields: list[Field],
        build: Build,
        *,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__(session, title)
        self.fields = fields
        self.build = build
        self.cursor_blink = cursor_blink

    def compose_fields(self) -> ComposeResult:
        for f in self.fields:
            yield Label(f.label, classes="field-label")
            suggester = (
                SuggestFromList(f.suggestions, case_sensitive=True) if f.suggestions else None
            )
            box = Input(
                f.value,
                placeholder=f.placeholder,
                id=f"field-{f.name}",
                suggester=suggester,
                select_on_focus=False,
            )
            box.cursor_blink = self.cursor_blink
            yield box

    def on_mount(self) -> None:
        super().on_mount()
        self.query(Input).first().focus()

    def values(self) -> dict[str, str]:
        return {f.name: self.query_one(f"#field-{f.name}", Input).value for f in self.fields}

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        inputs = list(self.query(Input))
        index = inputs.index(event.input)
        if index + 1 < len(inputs):
            inputs[index + 1].focus()
        else:
            self.action_submit()

    def build_ops(self) -> list[dict[str, Any]] | None:
        try:
            return self.build(self.values())
        except ValueError as exc:
            self.notify(str(exc), title="invalid_op", severity="error")
            return None
