"""Dialogs repaint what changed, and what a terminal shows is what a fresh frame would be.

A focus move in a dialog used to repaint the whole screen, dimmed screens beneath
included (`noma_tui.screens.dialog`); the proof was drawn over the dimmed main screen, its
every frame blending each cell beneath. Both are gone; these tests hold the speed-up to
its promise: every frame is checked against the screen drawn whole, in a terminal
emulator (`terminal.Terminal`), so a widget left unpainted would show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from terminal import Terminal
from textual._compositor import LayoutUpdate
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input
from tui_helpers import TERMINAL, make_app, ready, select, until

from noma_tui.app import WorkbenchApp
from noma_tui.screens.form import FormScreen
from noma_tui.screens.proof import ProofScreen


class WholeFrames:
    """Counts the frames drawn whole (not just the changed cells), per top screen type."""

    def __init__(self, app: WorkbenchApp) -> None:
        self.seen: list[type[Screen[Any]]] = []
        display = app._display

        def spy(screen: Screen[Any], renderable: Any) -> None:
            display(screen, renderable)
            if isinstance(renderable, LayoutUpdate):
                self.seen.append(type(screen))

        app._display = spy  # type: ignore[method-assign]


async def open_form(pilot: Pilot[Any], app: WorkbenchApp) -> FormScreen:
    await select(pilot, "small-tenant-noise")
    await pilot.press("a")
    await until(pilot, lambda: isinstance(app.screen, FormScreen), "the attribute form")
    form = app.screen
    assert isinstance(form, FormScreen)
    await until(pilot, lambda: isinstance(form.focused, Input), "a field focused")
    await pilot.pause()
    return form


async def test_a_focus_move_in_a_dialog_repaints_the_fields_not_the_screen(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        form = await open_form(pilot, app)
        terminal = Terminal(app)
        whole = WholeFrames(app)
        focused = [form.focused]
        for key in ("tab", "tab", "shift+tab", "shift+tab"):
            before = terminal.frames
            await pilot.press(key)
            await until(pilot, lambda b=before: terminal.frames > b, f"a frame after {key}")
            await pilot.pause()
            focused.append(form.focused)
            assert terminal.shown() == terminal.fresh(), f"after {key}"
        assert len(set(focused)) > 1, "the focus moved"
        assert whole.seen == []


async def test_asking_for_the_proof_repaints_no_whole_editor(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        form = await open_form(pilot, app)
        form.query_one("#field-value", Input).value = "0.7"
        whole = WholeFrames(app)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        assert FormScreen not in whole.seen  # the fields let go of the focus cell by cell
        assert form.focused is None


async def test_the_proof_stands_alone_and_is_drawn_whole(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        beneath = Terminal(app)
        main_text = Terminal.text(beneath.shown())
        assert "Noma Workbench" in main_text.splitlines()[0]  # the header, above any dialog
        form = await open_form(pilot, app)
        form.query_one("#field-value", Input).value = "0.7"
        terminal = Terminal(app)
        await pilot.press("ctrl+s")
        await until(
            pilot,
            lambda: isinstance(app.screen, ProofScreen) and app.screen.is_mounted,
            "the proof",
        )
        await until(pilot, lambda: app.screen.focused is not None, "the reason focused")
        await pilot.pause()
        shown = terminal.shown()
        assert shown == terminal.fresh()
        text = Terminal.text(shown)
        assert "Proof" in text and "confidence" in text
        # Nothing of the screens beneath shows through: the proof is all there is to read.
        assert "Noma Workbench" not in text
        assert form.HINT not in text  # nor of the editor beneath it
