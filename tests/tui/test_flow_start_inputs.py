"""The app's start form: declared types shown, bad inputs refused in place with the
handler's own check (`core.flow.run_inputs`), focus kept in the form, and keys typed after a
refusal reach the field, never the flow pane's commands."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input
from tui_helpers import flow_pane, make_app, ready, until

from noma_tui.screens.form import InputFormScreen
from noma_tui.screens.picker import PickerScreen

NARROW = (100, 30)


def error_text(form: InputFormScreen) -> str:
    return str(form.query_one("#form-error").render())


async def test_start_form_refuses_bad_inputs_in_place_and_keeps_the_keys(demo: Path) -> None:
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = await flow_pane(pilot)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the flow picker")
        await pilot.press("enter")  # flow_lead_import, the first
        await until(pilot, lambda: isinstance(app.screen, InputFormScreen), "the inputs form")
        form = app.screen
        assert isinstance(form, InputFormScreen)
        labels = " ".join(str(label.render()) for label in form.query(".field-label"))
        assert "sheet_url (url, required)" in labels  # the declared type is shown
        box = form.query_one(Input)

        await pilot.press("enter")  # empty: refused in place
        await until(pilot, lambda: "sheet_url is required (url)" in error_text(form), "error")
        assert app.screen is form and app.focused is box
        # Keys typed now belong to the field: "n" (new run), "a" (advance), "5" are text.
        await pilot.press(*"n5a", "ctrl+s")
        await until(pilot, lambda: "must be an http or https URL" in error_text(form), "type")
        assert app.screen is form and app.focused is box and box.value == "n5a"
        assert pane.runs == [] and not isinstance(app.screen, PickerScreen)

        box.value = ""
        await pilot.press(*"https://docs.google.com/spreadsheets/d/x", "ctrl+s")
        await until(pilot, lambda: bool(pane.runs) and not pane.busy, "the run")
        assert app.screen is app.main
        assert pane.run is not None and pane.run.flow_id == "flow_lead_import"
        assert len(pane.runs) == 1
