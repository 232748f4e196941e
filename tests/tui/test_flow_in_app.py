"""The flow pane inside the app: found by key 5, its actions in F1 and the palette, the
document's edit keys inactive while it has focus, validated forms, only declared skip
reasons, and wide enough to read at 100 columns."""

from __future__ import annotations

from pathlib import Path

from notify_record import record_notes
from textual.widgets import DataTable, Input, OptionList
from tui_helpers import MEMO, flow_pane, make_app, ready, records, select, until

from core.flow.enums import SKIP_REASON_LABELS
from noma_tui.keys import FLOW_ACTIONS
from noma_tui.panes.flow import FlowFrontierPane
from noma_tui.screens.form import InputFormScreen
from noma_tui.screens.help import HelpScreen, help_table
from noma_tui.screens.message import MessageScreen
from noma_tui.screens.picker import PickerScreen
from noma_tui.screens.proof import ProofScreen

NARROW = (100, 30)


async def start_weekly_review(pilot, pane: FlowFrontierPane) -> None:  # type: ignore[no-untyped-def]
    app = pilot.app
    await flow_pane(pilot)
    await pilot.press("n")
    await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the flow picker")
    await pilot.press("down", "enter")
    await until(pilot, lambda: bool(pane.runs) and not pane.busy, "the run")


async def test_key_5_focuses_the_flow_pane_and_widens_it(demo: Path) -> None:
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        narrow = pane.size.width
        await pilot.press("5")
        await pilot.pause()
        assert app.focused is pane.query_one("#flow-steps", DataTable)
        await pilot.pause()
        assert pane.size.width >= 60 > narrow  # statuses and the detail read whole
        await pilot.press("1")
        await pilot.pause()
        assert pane.size.width == narrow


async def test_document_edit_keys_are_inactive_in_the_flow_pane(demo: Path) -> None:
    path = demo / MEMO
    before = len(records(path))
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        await pilot.press("5")
        await pilot.pause()
        notes = record_notes(app)
        await pilot.press("d", "y", "h", "m", "t")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert app.screen is app.main  # no "Delete block?" proof, no editor
        assert not isinstance(app.screen, ProofScreen)
        assert "Copied id and block hash" not in notes.titles()  # y did not copy the block id
        assert app.main.check_action("delete_block", ()) is False
        assert "flow pane" in app.main.why_not("delete_block")
        await pilot.press("1")
        await pilot.pause()
        assert app.main.check_action("delete_block", ()) is True
    assert len(records(path)) == before


async def test_skip_offers_the_three_canonical_reasons(demo: Path) -> None:
    """Steps declare no skip reasons of their own (issue 12): every step offers policy,
    not_applicable and blocked_dependency, with the step's when_not_to_run as the hint."""
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        await start_weekly_review(pilot, pane)
        assert pane.run is not None and pane.run.flow_id == "flow_weekly_review"
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the skip picker")
        options = app.screen.query_one(OptionList)
        offered = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert (
            offered
            == list(SKIP_REASON_LABELS)
            == ["policy", "not_applicable", "blocked_dependency"]
        )
        assert pane.bundle is not None
        hint = str(app.screen.query_one("#picker-detail").render())
        assert "When not to run" in hint


async def test_review_form_validates_before_calling_the_handler(demo: Path) -> None:
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        await start_weekly_review(pilot, pane)
        status = pane.last_status
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, InputFormScreen), "the form")
        await pilot.press("enter")  # empty intent
        await pilot.pause()
        assert isinstance(app.screen, InputFormScreen)  # still open, with the reason
        error = str(app.screen.query_one("#form-error").render())
        assert "cannot be empty" in error
        assert pane.last_status == status  # the handler was never called
        await pilot.press(*"   ", "enter")  # blank is empty too
        await pilot.pause()
        assert isinstance(app.screen, InputFormScreen)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is not app.main, "the discard question")
        await pilot.press("y")
        await until(pilot, lambda: app.screen is app.main, "closed")


async def test_consent_form_checks_numbers(demo: Path) -> None:
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        await start_weekly_review(pilot, pane)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, InputFormScreen), "the form")
        form = app.screen
        form.query_one("#field-cap", Input).value = "lots"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "whole number" in str(form.query_one("#form-error").render())
        form.query_one("#field-cap", Input).value = "5"
        form.query_one("#field-ttl", Input).value = "0"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "more than 0" in str(form.query_one("#form-error").render())
        form.query_one("#field-ttl", Input).value = "60"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: pane.last_status.startswith("Consent held"), "the consent")


async def test_a_refusal_is_one_line_with_the_whole_message_behind_o(demo: Path) -> None:
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        await start_weekly_review(pilot, pane)
        await pilot.press("a")
        await until(pilot, lambda: not pane.busy, "advance")
        await pilot.press("a")  # done without evidence: refused
        await until(pilot, lambda: pane.last_status.startswith("✗"), "the refusal")
        assert pane.query_one("#flow-status").size.height == 1
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, MessageScreen), "the message")
        assert app.screen.body.startswith("✗ FLOW_VERIFICATION_UNSATISFIED (403)")


async def test_every_flow_action_is_in_help_and_palette(demo: Path) -> None:
    table = help_table({})
    rows = [str(cell) for column in table.columns for cell in column._cells]
    assert "Flow runs" in rows
    for spec in FLOW_ACTIONS:
        assert spec.help in rows and spec.id in rows
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        titles = {c.title for c in app.get_system_commands(app.main)}
        assert {spec.help for spec in FLOW_ACTIONS} <= titles
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")


async def test_a_flow_action_from_the_palette_focuses_the_pane_and_runs(demo: Path) -> None:
    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        await app.workers.wait_for_complete()
        command = next(
            c for c in app.get_system_commands(app.main) if c.title.startswith("Start a run")
        )
        command.callback()
        # Mounted, not only pushed: leaving while the picker composes tore it down under its
        # own on_mount (NoMatches '#choices', about once in a loaded full-suite run).
        await until(
            pilot,
            lambda: isinstance(app.screen, PickerScreen) and isinstance(app.focused, OptionList),
            "the flow picker",
        )
        assert pane.query_one("#flow-steps") is app.main.focused


async def test_consent_badge_follows_a_revoke_and_f5(demo: Path) -> None:
    from textual.widgets import Static

    async with make_app(demo).run_test(size=NARROW) as pilot:
        app = await ready(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        header = pane.query_one("#flow-run", Static)
        await start_weekly_review(pilot, pane)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, InputFormScreen), "the form")
        app.screen.query_one("#field-ttl", Input).value = "600"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "consent held" in str(header.render()), "the badge")
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the consents")
        await pilot.press("enter")
        await until(pilot, lambda: pane.last_status.startswith("Consent revoked"), "revoked")
        await until(pilot, lambda: "consent held" not in str(header.render()), "badge gone")
        await until(pilot, lambda: not pane.busy, "idle")
        await pilot.press("f5")
        await until(pilot, lambda: not pane.busy, "reloaded")
        await app.workers.wait_for_complete()
        assert "consent held" not in str(header.render()) and not pane.consents


def test_refusals_name_the_key_or_setting_that_fixes_them() -> None:
    from core.flow import FlowRefusal
    from noma_tui.panes.flow import refusal_line

    approval = refusal_line(FlowRefusal("FLOW_HUMAN_APPROVAL_REQUIRED"))
    assert "press v to approve" in approval
    writes = refusal_line(FlowRefusal("FLOW_RUN_WRITES_DISABLED"))
    assert "[gates] run_writes_enabled = true in noma-workbench.toml" in writes
    assert "press c" in refusal_line(FlowRefusal("FLOW_EXECUTION_CONSENT_REQUIRED"))


async def test_gates_off_say_which_setting_turns_them_on(tmp_path: Path) -> None:
    (tmp_path / "a.noma").write_text("# A {#a}\n\nText.\n", encoding="utf-8")
    async with make_app(tmp_path).run_test(size=(160, 40)) as pilot:
        app = await ready(pilot, "a.noma")
        pane = app.main.query_one(FlowFrontierPane)
        assert "writes off" in pane.header_text
        await until(pilot, lambda: pane.last_status.startswith("Writes off"), "the hint")
        assert "[gates] run_writes_enabled = true in noma-workbench.toml" in pane.last_status
        assert "automatable_execution_enabled" in pane.last_detail
