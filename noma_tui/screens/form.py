"""Small edits as a few labelled inputs: attribute, rename, heading, comment, move.

Each action describes its fields and a `build` function that turns the typed values into
ops (raising `ValueError` with a message for input that cannot make an op at all). Enter
and Tab move to the next field (shift+Tab back); Enter in the last field, or ctrl+s
anywhere, previews. Moving between fields is a priority binding that moves focus at once,
so keys typed faster than the screen redraws still land in the field they were typed for
(`noma_tui.keyorder`).

A field may ``load`` others from its value: choosing another attribute name loads that
attribute's current value, unless the user already typed a value of their own.

A value from the document may hold characters a terminal acts on (ESC, C1, bidi
controls). An input shows them as markers (``⟨U+001B⟩``, `noma_tui.visible`), never raw;
a field left as shown gives back the real value, byte for byte. A field the user changed
that still holds marker text is refused (`MARKER_TYPED`): the markers stand for
characters the input cannot show, so the edit would silently replace them with the
marker's letters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from core.noma.api import has_markers

from ..footer import Footer
from ..keyorder import OrderedInput, after_typed, move_focus
from ..keys import bindings
from ..session import EditSession
from ..typeahead import decide_after_typed
from ..visible import line_text, plain
from .edit_base import EditScreen
from .mounted import composed
from .once import DismissOnce

Build = Callable[[dict[str, str]], list[dict[str, Any]]]
Loads = Callable[[str], dict[str, str]]


MARKER_TYPED = (
    "'{label}' holds ⟨…⟩ marker text: the markers stand for characters a terminal acts on "
    "(or bytes that are not UTF-8), which an input cannot hold. Clear the field and type the "
    "whole value, or edit the block source in another editor."
)


class Shown:
    """What each input shows for a value, and the real value behind it."""

    def __init__(self) -> None:
        self.real: dict[str, tuple[str, str]] = {}  # field -> (shown, real)

    def show(self, name: str, value: str) -> str:
        shown = plain(value)
        self.real[name] = (shown, value)
        return shown

    def value(self, name: str, typed: str) -> str:
        """The real value when ``typed`` is what was shown; else what was typed."""
        shown, real = self.real.get(name, (typed, typed))
        return real if typed == shown else typed

    def check(self, name: str, label: str, typed: str) -> None:
        shown, _real = self.real.get(name, (None, None))
        if typed != shown and has_markers(typed):
            raise ValueError(MARKER_TYPED.format(label=plain(label)))


@dataclass(slots=True)
class Field:
    name: str
    label: str
    value: str = ""
    placeholder: str = ""
    suggestions: Sequence[str] = field(default_factory=tuple)
    loads: Loads | None = None  # this field's value -> new values for other fields


FIELD_BINDINGS: list[BindingType] = [*bindings("form.next", "form.tab", "form.back")]


class FormScreen(EditScreen):
    HINT = "enter/tab next field · enter in the last field or ctrl+s: preview · esc cancel"
    BINDINGS: ClassVar[list[BindingType]] = FIELD_BINDINGS

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
        self.shown = Shown()
        # What the form itself last put in each field; a field whose text differs was
        # typed by the user and is never overwritten by a `loads`.
        self.auto: dict[str, str] = {f.name: self.shown.show(f.name, f.value) for f in fields}

    def compose_fields(self) -> ComposeResult:
        for f in self.fields:
            yield Label(line_text(f.label), classes="field-label")
            names = [plain(s) for s in f.suggestions]
            suggester = SuggestFromList(names, case_sensitive=True) if names else None
            box = OrderedInput(
                self.auto[f.name],
                placeholder=f.placeholder,
                id=f"field-{f.name}",
                suggester=suggester,
                select_on_focus=False,
            )
            box.cursor_blink = self.cursor_blink
            yield box

    @composed
    def on_mount(self) -> None:
        super().on_mount()
        self.set_focus(self.inputs()[0])

    def inputs(self) -> list[Input]:
        return list(self.query(Input))

    def box(self, name: str) -> Input:
        return self.query_one(f"#field-{name}", Input)

    def values(self) -> dict[str, str]:
        """The real values: a field left as shown gives back the document's exact value."""
        return {f.name: self.shown.value(f.name, self.box(f.name).value) for f in self.fields}

    def dirty(self) -> bool:
        return any(self.box(f.name).value != self.auto[f.name] for f in self.fields)

    # -- moving between fields ---------------------------------------------------------

    def _step(self, delta: int, *, submit_at_end: bool) -> None:
        if not self.fields_live:
            return  # the proof is asked for: the fields are no longer the writer's
        inputs = self.inputs()
        focused = self.focused
        if not isinstance(focused, Input) or focused not in inputs:
            if inputs:
                move_focus(self, inputs[0])
            return
        index = inputs.index(focused) + delta
        if index >= len(inputs):
            if submit_at_end:
                self.action_submit()
                return
            index = 0
        move_focus(self, inputs[index % len(inputs)], self._left)

    def action_next_field(self, submit_at_end: bool = True) -> None:
        self._step(1, submit_at_end=submit_at_end)

    def action_previous_field(self) -> None:
        self._step(-1, submit_at_end=False)

    async def _left(self, widget: Widget) -> None:
        """``widget`` has every key typed into it: let it load the fields it drives."""
        self._load_from(widget)

    def _load_from(self, widget: Widget) -> None:
        spec = next((f for f in self.fields if widget.id == f"field-{f.name}"), None)
        if spec is None or spec.loads is None:
            return
        for name, value in spec.loads(self.values()[spec.name]).items():
            box = self.box(name)
            if box.value != self.auto.get(name, ""):
                continue  # the user typed this one: theirs, never overwritten
            shown = self.shown.show(name, value)
            if box.value != shown:
                box.value = shown
                box.cursor_position = len(shown)
            self.auto[name] = shown

    def on_input_changed(self, event: Input.Changed) -> None:
        # A click or a suggestion can change the driving field without leaving it; load
        # as long as the user is not typing in a driven field right now.
        spec = next((f for f in self.fields if event.input.id == f"field-{f.name}"), None)
        if spec is None or spec.loads is None:
            return
        driven = set(spec.loads(self.shown.value(spec.name, event.value)))
        if self.focused is None or self.focused.id not in {f"field-{n}" for n in driven}:
            self._load_from(event.input)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()  # Enter is the screen's (action_next_field); nothing else submits

    def build_ops(self) -> list[dict[str, Any]] | None:
        try:
            for f in self.fields:
                self.shown.check(f.name, f.label, self.box(f.name).value)
            return self.build(self.values())
        except ValueError as exc:
            self.notify(str(exc), title="invalid_op", severity="error")
            return None


Check = Callable[[dict[str, str]], str | None]
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class InputFormScreen(DismissOnce[dict[str, str] | None]):
    """A few labelled inputs that are not a document edit (a flow consent, a review
    intent, an evidence pointer). ``check`` validates the values before the caller ever
    sees them: an error message keeps the form open with the message shown in it.

    Same key rules as `FormScreen`: Enter/Tab move, Enter in the last field or ctrl+s
    submits, Esc cancels (asking first when something was typed)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *FIELD_BINDINGS,
        *bindings("form.submit", "form.cancel"),
    ]

    def __init__(self, title: str, fields: list[Field], check: Check | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields
        self.check = check
        # A field's name may come from a flow bundle (its inputs): one that is not a
        # widget id (spaces, brackets, bidi controls) gets one by position instead.
        self.ids = {
            f.name: f"field-{f.name}" if _ID.fullmatch(f.name) else f"field--{i}"
            for i, f in enumerate(fields)
        }
        self.shown = Shown()
        self.auto: dict[str, str] = {f.name: self.shown.show(f.name, f.value) for f in fields}

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog edit-dialog input-form"):
            yield Static(line_text(self.title_text), classes="dialog-title")
            for f in self.fields:
                yield Label(line_text(f.label), classes="field-label")
                yield OrderedInput(
                    self.auto[f.name], placeholder=plain(f.placeholder), id=self.ids[f.name],
                    select_on_focus=False,
                )  # fmt: skip
            yield Static("", id="form-error", classes="form-error")
            yield Static("enter/tab next · enter in the last field or ctrl+s: submit · "
                         "esc cancel", classes="dialog-hint")  # fmt: skip
        yield Footer()

    @composed
    def on_mount(self) -> None:
        self.set_focus(self.query(Input).first())

    def typed(self) -> dict[str, str]:
        return {f.name: self.query_one(f"#{self.ids[f.name]}", Input).value for f in self.fields}

    def values(self) -> dict[str, str]:
        """The real values (see `Shown`)."""
        return {name: self.shown.value(name, text) for name, text in self.typed().items()}

    def _step(self, delta: int, *, submit_at_end: bool) -> None:
        inputs = list(self.query(Input))
        focused = self.focused
        if not isinstance(focused, Input) or focused not in inputs:
            move_focus(self, inputs[0])
            return
        index = inputs.index(focused) + delta
        if index >= len(inputs) and submit_at_end:
            self.action_submit()
            return
        move_focus(self, inputs[index % len(inputs)])

    def action_next_field(self, submit_at_end: bool = True) -> None:
        self._step(1, submit_at_end=submit_at_end)

    def action_previous_field(self) -> None:
        self._step(-1, submit_at_end=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()

    def action_submit(self) -> None:
        after_typed(self, self._submit_now)

    def _submit_now(self) -> None:
        if not self.is_attached or self.app.screen is not self:
            return
        try:
            for f in self.fields:
                self.shown.check(f.name, f.label, self.typed()[f.name])
        except ValueError as exc:
            self.query_one("#form-error", Static).update(line_text(f"✗ {exc}"))
            return
        values = self.values()
        problem = self.check(values) if self.check is not None else None
        if problem:
            self.query_one("#form-error", Static).update(line_text(f"✗ {problem}"))
            return
        self.dismiss(values)

    def action_cancel(self) -> None:
        decide_after_typed(self, self._cancel_now)  # keys after Esc wait for its outcome

    def _cancel_now(self) -> None:
        if not self.is_attached or self.app.screen is not self:
            return
        if self.typed() == self.auto:
            self.dismiss(None)
            return
        from .confirm import ConfirmScreen

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(ConfirmScreen("Discard what you typed?"), answered)
