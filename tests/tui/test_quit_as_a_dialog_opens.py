"""The app quits cleanly in the moment a dialog opens.

Textual still sends ``Mount`` to a screen removed while it composed; each dialog's
``on_mount`` focused a widget that was never mounted, and the app ended with NoMatches
(seen under load: a test left its app as the body editor was opening). Here the app is
told to quit in the very call that pushes the dialog, for every dialog a key opens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_typeahead import OPENERS
from tui_helpers import TERMINAL, make_app, ready, select, until

from noma_tui.screens.once import DismissOnce


@pytest.mark.parametrize(("block", "key"), OPENERS, ids=[key for _block, key in OPENERS])
async def test_quitting_as_a_dialog_opens_is_clean(demo: Path, block: str, key: str) -> None:
    app = make_app(demo)
    pushed: list[type[Any]] = []
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot)
        await select(pilot, block)
        real = app.push_screen

        def push(screen: Any, *args: Any, **kwargs: Any) -> Any:
            out = real(screen, *args, **kwargs)
            if isinstance(screen, DismissOnce):
                pushed.append(type(screen))
                app.exit()  # before the dialog has composed
            return out

        app.push_screen = push  # type: ignore[method-assign]
        await pilot.press(key)
        await until(pilot, lambda: not app.is_running, "the app to quit")
    assert pushed, "a dialog opened"
    assert app.return_code == 0


def test_a_mount_during_the_shutdown_sets_up_nothing() -> None:
    """Under load the shutdown found a record dialog part-mounted (its title there, its
    text area not): `composed` skips a Mount handler once the app has stopped running or
    the screen has left the stack, whatever widgets it holds."""
    from types import SimpleNamespace

    from noma_tui.screens.mounted import composed

    calls: list[str] = []

    @composed
    def on_mount(screen: Any) -> None:
        calls.append(screen.name)

    def screen(name: str, running: bool, stacked: bool) -> Any:
        app = SimpleNamespace(is_running=running, screen_stack=[])
        node = SimpleNamespace(name=name, app=app, children=["a widget"])
        if stacked:
            app.screen_stack.append(node)
        return node

    on_mount(screen("shown", True, True))
    on_mount(screen("shutting down", False, True))
    on_mount(screen("popped", True, False))
    assert calls == ["shown"]
