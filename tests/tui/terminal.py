"""What the app's frames leave on a real terminal, for tests of partial repaints.

In a headless run Textual renders frames but writes them nowhere. `Terminal` takes each
frame where the app would write it (`App._display`), turns it into the escape sequences a
terminal receives (the same `render_segments` call the app makes when it has a terminal)
and feeds them to a VT100 emulator (pyte). `fresh` draws the current screen whole, into an
empty emulator. A repaint that skips a widget whose look changed leaves the two different:
a test compares them cell by cell (character, colours, attributes).
"""

from __future__ import annotations

from typing import Any

import pyte
from textual.app import App
from textual.screen import Screen

Cell = tuple[str, str, str, bool, bool, bool, bool]


def _cells(screen: Any) -> list[list[Cell]]:
    return [
        [
            (c.data, c.fg, c.bg, c.bold, c.italics, c.underscore, c.reverse)
            for c in (screen.buffer[y][x] for x in range(screen.columns))
        ]
        for y in range(screen.lines)
    ]


class Terminal:
    """The screen a terminal would show after every frame the app has drawn since."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        width, height = app.size
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.Stream(self.screen)
        self.frames = 0
        display = app._display

        def written(screen: Screen[Any], renderable: Any) -> None:
            display(screen, renderable)
            # What `App._display` writes to a terminal, under the same conditions.
            if renderable is None or app._batch_count or screen is not app.screen:
                return
            self.stream.feed(renderable.render_segments(app.console))
            self.frames += 1

        app._display = written  # type: ignore[method-assign]
        # Start from a whole frame, as a terminal does after the app's first one.
        self.stream.feed(self._whole())

    def _whole(self) -> str:
        app = self.app
        compositor = app.screen._compositor
        update = compositor.render_update(full=True, screen_stack=app._background_screens)
        assert update is not None
        text: str = update.render_segments(app.console)
        return text

    def shown(self) -> list[list[Cell]]:
        """Every cell as the frames so far left it."""
        return _cells(self.screen)

    def fresh(self) -> list[list[Cell]]:
        """Every cell of the current screen drawn whole, into an empty terminal."""
        width, height = self.app.size
        screen = pyte.Screen(width, height)
        pyte.Stream(screen).feed(self._whole())
        return _cells(screen)

    @staticmethod
    def text(cells: list[list[Cell]]) -> str:
        return "\n".join("".join(c[0] for c in row) for row in cells)
