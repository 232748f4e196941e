"""The app's ``panes_ready`` (`noma_tui.pane_presence`): the answer a query of the main
screen for the panes' ids gives, without running that query for each footer action."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import make_app, ready

from noma_tui.app import PANE_IDS
from noma_tui.pane_presence import panes_present


async def test_panes_ready_follows_the_panes_in_the_dom(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test() as pilot:
        await ready(pilot)
        main = app.main
        assert app.panes_ready
        assert panes_present(main, PANE_IDS)  # from the kept panes this time
        transcript = main.query_one("#transcript")
        await transcript.remove()
        assert len(main.query(PANE_IDS)) == PANE_IDS.count("#") - 1
        assert not panes_present(main, PANE_IDS)
        assert not app.panes_ready
        await main.query_one("#work").mount(type(transcript)(id="transcript"))
        assert panes_present(main, PANE_IDS)  # the new pane is found by the query again
        assert app.panes_ready


async def test_a_pane_whose_container_is_removed_is_not_present(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test() as pilot:
        await ready(pilot)
        main = app.main
        assert panes_present(main, PANE_IDS)
        await main.query_one("#upper").remove()  # holds the tree and the block view
        assert not panes_present(main, PANE_IDS)
        assert not app.panes_ready
