"""Safe text entry: keys land in the field that had focus when they were typed, however
fast they arrive; applying is an explicit key; Esc never silently drops typed text.

Bursts are posted without a turn of the event loop between keys (`tui_helpers.burst`), as
a paste or ``tmux send-keys`` delivers them; every test asserts the bytes on disk.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TextArea
from tui_helpers import MEMO, TERMINAL, burst, make_app, paste, ready, records, select, until

from noma_tui.screens.confirm import ConfirmScreen
from noma_tui.screens.form import FormScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen

CLAIM = '::claim{id="small-tenant-noise" confidence=0.55}'


async def test_attribute_burst_lands_in_the_right_fields(demo: Path) -> None:
    path = demo / MEMO
    before = len(records(path))
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        burst(app, ["a"])
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        # Clear the name, type a new one, Enter, clear the value, type it, preview: one burst.
        burst(app, ["ctrl+u", *"owner", "enter", "ctrl+u", *'"pricing-team"', "ctrl+s"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        burst(app, ["ctrl+s"])
        await until(pilot, lambda: len(records(path)) == before + 1, "the record")
    text = path.read_text("utf-8")
    assert '::claim{id="small-tenant-noise" confidence=0.55 owner="pricing-team"}' in text
    record = records(path)[-1]
    assert record["op"]["key"] == "owner" and record["op"]["value"] == "pricing-team"


async def test_attribute_burst_with_tab_and_existing_name(demo: Path) -> None:
    """Tab moves like Enter; naming an existing attribute loads its value in the same
    burst, and what is typed after it replaces the loaded text, not the name."""
    path = demo / MEMO
    before = len(records(path))
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "ev-loadtest-march")
        burst(app, ["a"])
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        burst(app, ["ctrl+u", *"source", "tab", "ctrl+u", *'"lab"', "enter"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == before + 1, "the record")
    assert 'source="lab"' in path.read_text("utf-8")
    assert records(path)[-1]["op"]["key"] == "source"


async def test_choosing_another_attribute_loads_its_value(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "ev-loadtest-march")
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        form = app.screen
        key, value = form.query_one("#field-key", Input), form.query_one("#field-value", Input)
        assert (key.value, value.value) == ("for", "warm-cache-p95")
        await pilot.press("ctrl+u", *"source", "enter")
        await until(pilot, lambda: value.value != "warm-cache-p95", "the value to follow")
        assert value.value == "loadtest-2025-03"
        loaded_source = value.value
        await pilot.press("shift+tab", "ctrl+u", *"owner", "enter")
        await until(pilot, lambda: value.value == "", "a new name to clear the value")
        # A value the user typed is theirs: changing the name again keeps it.
        await pilot.press(*'"me"', "shift+tab", "ctrl+u", *"source", "tab")
        await pilot.pause()
        assert value.value == '"me"' and loaded_source != '"me"'


async def test_single_enter_in_the_reason_writes_nothing(demo: Path) -> None:
    path = demo / MEMO
    before = len(records(path))
    original = path.read_bytes()
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        await pilot.press("a", "enter", "ctrl+u", *"0.7", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        burst(app, [*"why", "enter"])
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ProofScreen)
        assert app.screen.query_one("#reason", Input).value == "why"
        assert len(records(path)) == before and path.read_bytes() == original
        await pilot.press("ctrl+s")  # the explicit key applies, with the typed reason
        await until(pilot, lambda: len(records(path)) == before + 1, "the record")
    assert records(path)[-1]["reason"] == "why"
    assert b"confidence=0.7}" in path.read_bytes()


async def test_escape_with_typed_text_asks_first(demo: Path) -> None:
    path = demo / MEMO
    original = path.read_bytes()
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        editor = app.screen
        burst(app, [*" More.", "escape"])
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")
        await until(pilot, lambda: app.screen is editor, "back in the editor")
        assert editor.query_one("#source", TextArea).text.startswith(" More.")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await until(pilot, lambda: app.screen is app.main, "the editor closed")
        # Without typed text Esc closes at once.
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main, "closed without asking")
        assert not app.sessions
    assert path.read_bytes() == original


async def test_escape_in_a_form_with_typed_text_asks_first(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        burst(app, [*"-x", "escape"])
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("escape")  # Esc on the question keeps the text
        await pilot.pause()
        assert isinstance(app.screen, FormScreen)
        assert app.screen.query_one("#field-to", Input).value == "small-tenant-noise-x"


async def test_pasted_body_is_written_exactly(demo: Path) -> None:
    path = demo / MEMO
    before = len(records(path))
    pasted = 'First line with *emphasis*.\n\n- one\n- two "quoted"\n'
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        burst(app, ["ctrl+a"])  # select all: the paste replaces the body
        await pilot.pause()
        app.screen.query_one("#source", TextArea).select_all()
        paste(app, pasted)
        burst(app, ["ctrl+s"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == before + 1, "the record")
    assert '::note{id="note-method"}\n' + pasted + "::\n" in path.read_text("utf-8")


async def test_pasted_attribute_value_is_written_exactly(demo: Path) -> None:
    path = demo / MEMO
    before = len(records(path))
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        burst(app, ["a"])
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        burst(app, ["ctrl+u"])
        paste(app, "reviewer")
        burst(app, ["enter", "ctrl+u"])
        paste(app, '"Ana María"\nsecond line dropped')
        burst(app, ["ctrl+s"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == before + 1, "the record")
    assert 'confidence=0.55 reviewer="Ana María"}' in path.read_text("utf-8")


async def test_focus_keys_in_a_burst_move_focus_before_the_next_key(demo: Path) -> None:
    """'5n' typed at once starts a flow run (the flow pane's n), never adds a block
    (the tree's n); '/need' filters for "need" and opens nothing."""
    from noma_tui.screens.picker import PickerScreen

    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "claims")
        await app.workers.wait_for_complete()
        burst(app, ["5", "n"])
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "a picker")
        assert app.screen.title_text.startswith("Start a run")  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.press("1")
        burst(app, [*"/need"])
        await until(pilot, lambda: app.main.filter_bar.value == "need", "the filter text")
        await pilot.pause()
        assert app.screen is app.main
        burst(app, [*"5/1"])  # digits and / are text while the filter bar has focus
        await until(pilot, lambda: app.main.filter_bar.value == "need5/1", "more text")
        assert app.focused is app.main.filter_bar


async def test_end_goes_to_the_end_of_the_logical_line(demo: Path) -> None:
    async with make_app(demo).run_test(size=(80, 24)) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        area = app.screen.query_one(TextArea)
        long_line = " ".join(["wrapped"] * 40)  # wider than the screen: soft-wrapped
        area.text = long_line + "\nsecond line"
        area.cursor_location = (0, 0)
        await pilot.pause()
        assert area.wrapped_document.height > 2  # the first line really is wrapped
        await pilot.press("end")
        assert area.cursor_location == (0, len(long_line))
        await pilot.press(*"!")
        assert area.document.get_line(0).endswith("wrapped!")
