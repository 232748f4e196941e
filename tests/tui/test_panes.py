"""What the panes show and where selecting things leads."""

from __future__ import annotations

from pathlib import Path

import pytest
from notify_record import record_notes
from tui_helpers import MEMO, TERMINAL, make_app, ready, select, until

from noma_tui.screens.record import RecordScreen


async def test_tree_shows_ids_names_badges_and_aliases(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        tree = app.main.doc_tree
        summary = await select(pilot, "summary")
        assert tree._block_nodes[summary].label.plain == "Summary  #summary  aka tl-dr"  # type: ignore[union-attr]
        claim = await select(pilot, "small-tenant-noise")
        label = tree._block_nodes[claim].label.plain  # type: ignore[union-attr]
        assert label == "▲1 ::claim small-tenant-noise"
        view = app.main.block_view
        assert view.lines[0] == "::claim small-tenant-noise"
        assert view.lines[1].startswith("lines 25–27  hash ")
        assert app.loaded is not None
        digest = app.loaded.block_hash(claim)
        assert digest is not None and digest[:16] in view.lines[1]
        assert view.lines[3] == '25 ::claim{id="small-tenant-noise" confidence=0.55}'


async def test_selecting_a_diagnostic_jumps_to_its_block(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await pilot.press("3")
        table = app.main.diagnostics
        assert app.focused is table
        assert table.row_count == 2
        await pilot.press("down", "enter")  # risk-without-owner
        assert app.loaded is not None
        target = app.loaded.block_of_id("risk-stale-prices")
        await until(pilot, lambda: app.main.selected() == target, "the jump")
        assert app.focused is app.main.doc_tree


async def test_selecting_a_transcript_line_shows_the_whole_record(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        pane = app.main.transcript
        assert pane.row_count == 6
        assert [r.drift for r in pane.rows_shown] == [False, False, False, True, False, False]
        assert pane.rows_shown[-1].result == "rejected sha_mismatch"
        await pilot.press("4")
        await pilot.press("enter")  # the cursor follows the end of the log
        await until(pilot, lambda: isinstance(app.screen, RecordScreen), "the record")
        text = app.screen.query_one("#record-json").text  # type: ignore[attr-defined]
        assert '"patch_result": "rejected"' in text and '"baseHash": "0123456789abcdef"' in text
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main, "back")


async def test_go_to_id_accepts_an_alias(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"tl-dr", "enter")
        assert app.loaded is not None
        target = app.loaded.block_of_id("summary")
        await until(pilot, lambda: app.main.selected() == target, "the alias resolved")


async def test_copy_shows_the_id_and_block_hash(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        block = await select(pilot, "note-method")
        notes = record_notes(app)
        await pilot.press("y")
        assert app.loaded is not None
        expected = f"note-method {app.loaded.block_hash(block)}"
        await notes.wait(pilot, lambda ns: any(n.message == expected for n in ns), "the copy")


async def test_footer_offers_only_the_actions_that_fit(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        main = app.main
        await select(pilot, "claims")  # a heading section
        assert main.check_action("edit_heading", ()) is True
        assert main.check_action("edit_body", ()) is False
        assert main.check_action("edit_table", ()) is False
        await select(pilot, "warm-cache-p95")
        assert main.check_action("edit_body", ()) is True
        assert main.check_action("edit_heading", ()) is False
        await pilot.press("t")  # not a table: nothing opens
        await pilot.pause()
        assert app.screen is main


async def test_readable_without_colour(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        assert app.no_color
        shot = app.export_screenshot()
        for word in ("▲&#160;warn", "DRIFT", "rejected&#160;sha_mism", "▲2"):
            assert word in shot, word
    assert (demo / MEMO).exists()
