"""Mount handlers that run only on a screen that is still to be shown.

Textual still sends ``Mount`` to a screen that was removed while it was composing: when
the app quits in the moment a dialog opens, the screen is pruned in the middle of its
compose and gets its ``Mount`` during the shutdown, with none or only some of its widgets
mounted. A handler that focused one raised ``NoMatches``, so the app's last act was a
traceback. A handler wrapped in `composed` does nothing once the app has stopped running
or the screen has left the screen stack: there is nothing on it to set up, and it is
never shown.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from textual.screen import Screen

S = TypeVar("S", bound="Screen[Any]")


def composed(handler: Callable[[S], None]) -> Callable[[S], None]:
    """Run ``handler`` (an ``on_mount``) only while the screen can still be shown."""

    @functools.wraps(handler)
    def wrapper(screen: S) -> None:
        app = screen.app
        if app.is_running and screen in app.screen_stack and screen.children:
            handler(screen)

    return wrapper
