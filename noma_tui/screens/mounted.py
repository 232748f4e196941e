"""Mount handlers that run only on a screen whose widgets were mounted.

Textual still sends ``Mount`` to a screen that was removed while it was composing (the
app quitting in the moment a dialog opens): compose mounted none of its widgets, and a
handler that focused one raised ``NoMatches``, so the app's last act was a traceback.
A handler wrapped in `composed` does nothing on such a screen; there is nothing on it to
set up, and it is never shown.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from textual.screen import Screen

S = TypeVar("S", bound="Screen[Any]")


def composed(handler: Callable[[S], None]) -> Callable[[S], None]:
    """Run ``handler`` (an ``on_mount``) only if the screen holds its widgets."""

    @functools.wraps(handler)
    def wrapper(screen: S) -> None:
        if screen.children:
            handler(screen)

    return wrapper
