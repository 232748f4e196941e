"""A screen's breakpoint classes, added before its widgets are styled.

Textual adds a screen's breakpoint classes (``-narrow``, ``-short``, …) at its first
``Resize``, after every widget of the screen has been styled; the class change then
restyles the whole screen once more. Added in ``compose``, from the app's size and with the
breakpoints the resize will use (the screen's own, else the app's), they are already there
when the widgets are styled, and the first resize finds nothing to change. A later resize
still moves them.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen


def add_size_classes(screen: Screen[Any]) -> None:
    """Add the classes the first resize would add; call it first thing in ``compose``."""
    app = screen.app
    width, height = app.size
    horizontal = screen.HORIZONTAL_BREAKPOINTS
    vertical = screen.VERTICAL_BREAKPOINTS
    for size, breakpoints in (
        (width, app.HORIZONTAL_BREAKPOINTS if horizontal is None else horizontal),
        (height, app.VERTICAL_BREAKPOINTS if vertical is None else vertical),
    ):
        screen.add_class(*screen._get_breakpoint_classes(size, breakpoints or []), update=False)
