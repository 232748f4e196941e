"""Keys typed in one burst in the flow pane land where they were aimed: the keys after
``n`` pick from the flows it lists and fill the form that follows, and a key after a run
write acts on the run as that write left it (not "Still working", not dropped)."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import burst, flow_pane, make_app, ready, until

NARROW = (100, 30)
SHEET = "https://docs.google.com/spreadsheets/d/x"


async def test_n_enter_and_the_inputs_in_one_burst_start_the_run(demo: Path) -> None:
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = await flow_pane(pilot)
        # The picker's first flow is flow_lead_import, whose form asks for sheet_url.
        burst(app, ["n", "enter", *SHEET, "ctrl+s"])
        await until(pilot, lambda: bool(pane.runs) and not pane.busy and app.gate.idle, "run")
        assert app.screen is app.main
        assert [r.flow_id for r in pane.runs] == ["flow_lead_import"]
        assert pane.last_status.startswith("Started "), pane.last_status


async def test_keys_after_a_start_act_on_the_started_run(demo: Path) -> None:
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = await flow_pane(pilot)
        # flow_weekly_review (second) takes no inputs; `a` takes its first step pending →
        # in progress, then `b` blocks it: each key on the state the one before left.
        burst(app, ["n", "down", "enter", "a", "b"])
        await until(pilot, lambda: bool(pane.runs) and not pane.busy and app.gate.idle, "run")
        assert pane.run is not None and pane.run.flow_id == "flow_weekly_review"
        assert pane.run.step_states[0].status == "blocked", pane.last_status
