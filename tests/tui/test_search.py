"""Search and filters: / filters the document tree by id, alias, title or text (matches
highlighted, Esc clears); the transcript by actor, op and result; the diagnostics by text
and (S) by severity; j/k move in every list."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input
from tui_helpers import TERMINAL, make_app, ready, until

from noma_tui.screens.picker import PickerScreen


def tree_ids(app) -> list[str]:  # type: ignore[no-untyped-def]
    loaded = app.loaded
    return [loaded.blocks[b].id for b in app.main.doc_tree._block_nodes]


async def test_slash_filters_the_tree_and_esc_clears(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        tree = app.main.doc_tree
        everything = len(app.loaded.blocks)
        await pilot.press("1", "slash", *"staging")
        await until(pilot, lambda: tree.filter_text == "staging", "the filter")
        # Text matches (two blocks mention the staging fleet) plus their ancestors.
        shown = tree_ids(app)
        assert "ev-loadtest-march" in shown and "note-method" in shown
        assert "risk-stale-prices" not in shown
        assert tree.matches and all(app.loaded.blocks[b].id in shown for b in tree.matches)
        label = tree._block_nodes[tree.matches[0]].label
        assert any(span.style == "reverse" for span in label.spans) or "staging" not in (
            label.plain.lower()
        )
        assert "match" in str(tree.border_subtitle)
        await pilot.press("enter")  # keep the filter, back in the tree
        await pilot.pause()
        assert app.focused is tree and tree.filter_text == "staging"
        assert app.main.selected() == tree.matches[0]
        await pilot.press("escape")
        await pilot.pause()
        assert tree.filter_text == "" and len(app.main.doc_tree._block_nodes) <= everything
        await pilot.press("slash", *"tl-dr", "enter")  # an alias
        await until(pilot, lambda: tree.filter_text == "tl-dr", "alias filter")
        assert [app.loaded.blocks[b].id for b in tree.matches] == ["summary"]
        await pilot.press("slash", *"Risks", "enter")  # a title
        await until(pilot, lambda: tree.filter_text == "Risks", "title filter")
        assert "risks" in [app.loaded.blocks[b].id for b in tree.matches]


async def test_transcript_filters_by_actor_op_and_result(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        pane = app.main.transcript
        total = pane.row_count
        await pilot.press("4", "slash", *"agent", "enter")
        await until(pilot, lambda: pane.filter_text == "agent", "the filter")
        assert 0 < pane.row_count < total
        assert all(row.actor.startswith("agent") for row in pane.shown_rows)
        await pilot.press("slash", "ctrl+u", *"rejected", "enter")
        await until(pilot, lambda: pane.filter_text == "rejected", "by result")
        assert [row.result.split()[0] for row in pane.shown_rows] == ["rejected"]
        await pilot.press("slash", "ctrl+u", *"add_comment", "enter")
        await until(pilot, lambda: pane.filter_text == "add_comment", "by op")
        assert [row.op.split()[0] for row in pane.shown_rows] == ["add_comment"]
        await pilot.press("escape")
        await pilot.pause()
        assert pane.row_count == total


async def test_diagnostics_filter_by_severity_and_text(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        pane = app.main.diagnostics
        total = pane.row_count
        assert total == 2  # two warnings in the demo memo
        await pilot.press("3", "S")  # errors only: none
        await pilot.pause()
        assert pane.severity == "error" and pane.row_count == 0
        await pilot.press("S")
        await pilot.pause()
        assert pane.severity == "warning" and pane.row_count == 2
        await pilot.press("S", "S")  # info, then all
        await pilot.pause()
        assert pane.severity is None and pane.row_count == total
        await pilot.press("slash", *"owner", "enter")
        await until(pilot, lambda: pane.filter_text == "owner", "the filter")
        assert pane.row_count == 1


async def test_j_and_k_move_in_every_list(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        tree = app.main.doc_tree
        await pilot.press("1")
        start = tree.cursor_line
        await pilot.press("j", "j")
        assert tree.cursor_line == start + 2
        await pilot.press("k")
        assert tree.cursor_line == start + 1
        transcript = app.main.transcript
        await pilot.press("4")
        row = transcript.cursor_row
        await pilot.press("k")
        assert transcript.cursor_row == row - 1
        await pilot.press("j")
        assert transcript.cursor_row == row
        await pilot.press("1", "n")  # a picker (templates): j/k move there too
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the picker")
        await pilot.press("j")
        from textual.widgets import OptionList

        assert app.screen.query_one(OptionList).highlighted == 1


async def test_the_filter_field_keeps_the_cursor_blink_setting(demo: Path) -> None:
    """With ``cursor_blink = false`` the filter's cursor stays drawn: it used to blink
    anyway, so a screenshot taken half a second after the last key missed it."""
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        field = app.main.query_one("#filter", Input)
        assert field.cursor_blink is False
        await pilot.press("1", "slash", *"staging")
        await until(pilot, lambda: app.main.doc_tree.filter_text == "staging", "the filter")
        assert app.focused is field
        await pilot.pause(0.7)  # longer than one blink (0.5 s): a blinking cursor is off now
        assert field._cursor_visible


async def test_a_filter_caught_half_typed_is_shown_as_text(demo: Path) -> None:
    # "[/" is where a filter typed a key at a time stands before its "]": markup escaping
    # left it as it was and the markup parser refused it, which stopped the app.
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        for pane in (app.main.doc_tree, app.main.diagnostics):
            pane.set_filter("[/")
            await pilot.pause()
            subtitle = pane._border_subtitle
            assert subtitle is not None and subtitle.plain.startswith("/[/ · ")
