"""The base of every dialog: a modal whose focus changes repaint only what they change.

Textual declares `Screen.focused` as a reactive that repaints the whole screen. On a modal
that is a full render of the dimmed screens beneath as well, each of their cells blended
into the dim. It was paid every time the focus moved: at every Tab, and as an editor
takes the focus from its fields when the writer asks for the proof (about two thirds of
the UI thread's work before the proof, on a 1,000-section document, competing with the
proof's worker for the GIL). The widgets that gain or lose focus restyle and repaint
themselves (their ``:focus`` rules), so the whole screen's repaint showed nothing new.
"""

from __future__ import annotations

from typing import Generic

from textual.reactive import Reactive
from textual.screen import ModalScreen, ScreenResultType
from textual.widget import Widget


class Dialog(ModalScreen[ScreenResultType], Generic[ScreenResultType]):
    """A modal screen; its `focused` repaints nothing by itself."""

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
