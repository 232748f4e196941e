"""Keys land in the widget that had focus when they were typed, however fast they arrive.

Textual forwards each key to the focused widget's own message queue and moves on; a widget's
``focus()`` only takes effect on a later turn of the app's queue. So a burst (a fast typist,
a paste without bracketed paste, ``tmux send-keys``) of ``owner`` Enter ``"x"`` would land
``"x"`` in the first field before the focus moved, and a ``ctrl+s`` in the same burst would
read the fields before their queued keys were applied.

There is a third trap: a widget's own bindings (Backspace, ctrl+u, arrows in an `Input`
or `TextArea`) run only when the key has bubbled back up to the app, after the printable
keys sent behind it were already inserted. `OrderedInput` and `OrderedTextArea` run their
own bindings in place, in order.

Three rules fix all of it, and every editor follows them:

- moving between fields is a *priority* binding whose action changes focus synchronously
  (`Screen.set_focus`), so every key after it is forwarded to the new field;
- text fields are `OrderedInput` / `OrderedTextArea`;
- anything that reads what was typed (apply, cancel, leaving a field) runs as a callback
  queued behind the keys already sent to the focused widget (`after_typed`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from textual import events
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, TextArea


def after_typed(screen: Screen[Any], callback: Callable[[], object]) -> None:
    """Run ``callback`` once the focused widget has handled every key sent to it so far."""
    target: Widget = screen.focused or screen
    if not target.call_later(callback):  # the widget is closing: nothing is queued there
        screen.call_later(callback)


def move_focus(
    screen: Screen[Any],
    to: Widget,
    left: Callable[[Widget], Awaitable[None] | None] | None = None,
) -> None:
    """Focus ``to`` now; then, in ``to``'s queue before any key typed after this one, call
    ``left(previous)`` once the previous widget has applied every key it was sent."""
    previous = screen.focused
    screen.set_focus(to)
    if previous is None or previous is to or left is None:
        return
    drained = asyncio.Event()
    if not previous.call_later(drained.set):
        drained.set()

    async def settle() -> None:
        await drained.wait()
        result = left(previous)
        if result is not None:
            await result

    to.call_later(settle)


async def _own_binding_first(widget: Widget, event: events.Key) -> bool:
    """Run ``widget``'s own binding for this key now; True if there was one.

    Reads `Widget._bindings` (pinned by tests/tui/test_textual_pins.py)."""
    bindings = widget._bindings.key_to_bindings.get(event.key)
    if not bindings:
        return False
    event.stop()
    event.prevent_default()
    await widget.run_action(bindings[0].action)
    return True


class OrderedInput(Input):
    """An `Input` whose editing keys apply in the order they were typed."""

    async def _on_key(self, event: events.Key) -> None:
        if not await _own_binding_first(self, event):
            await super()._on_key(event)


class OrderedOptionList(OptionList):
    """An `OptionList` whose moving keys (arrows, Home, End, pages) apply in the order they
    were typed, before a choice queued behind them reads the highlight."""

    async def _on_key(self, event: events.Key) -> None:
        if not await _own_binding_first(self, event):
            await super()._on_key(event)


class OrderedTextArea(TextArea):
    """A `TextArea` whose editing keys apply in the order they were typed.

    End goes to the end of the logical line (the line of the source), not of the wrapped
    screen row: with soft wrap on, a writer appending to a long paragraph must land at
    its end, wherever the terminal happens to wrap it."""

    def get_cursor_line_end_location(self) -> tuple[int, int]:
        row, _column = self.cursor_location
        return row, len(self.document.get_line(row))

    async def _on_key(self, event: events.Key) -> None:
        if not await _own_binding_first(self, event):
            await super()._on_key(event)
