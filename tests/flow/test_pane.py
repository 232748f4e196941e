"""The frontier pane, driven by keyboard in a small test app: a whole manual run (with a
refusal shown by its code, evidence from the open document's transcript, a skip with a
reason, a human approval, submit to review) and a whole automatable run (consent, dry run,
execute). Snapshots pin the terminal size, the theme, ids and the clock."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import DataTable, Footer

from core.flow import FlowContext, get_run, list_runs
from core.flow.backend import LocalFlowBackend
from core.flow.lanes import ProviderLane
from core.workspace import Workspace
from noma_tui.panes.flow import FlowFrontierPane

from .conftest import FakeLane, make_workspace


def local_context(pane: FlowFrontierPane) -> FlowContext:
    """The pane's local store (a workspace without ``[hub] url``), for reading it back."""
    assert isinstance(pane.backend, LocalFlowBackend)
    return pane.backend.ctx


OP_ID = "7f3a9c1e-2b4d-4e8f-9a6b-1c2d3e4f5a6b"
POST = "9" * 64
SIZE = (110, 30)


@pytest.fixture(autouse=True)
def fake_lane(monkeypatch: pytest.MonkeyPatch) -> FakeLane:
    lane = FakeLane()
    monkeypatch.setattr(
        "core.flow.context.default_lanes",
        lambda root: {"local_default": lane, "cloud_premium": ProviderLane("cloud_premium")},
    )
    return lane


class PaneApp(App[None]):
    """Just the pane and a footer, as the real app mounts it."""

    CSS = "Screen { layout: vertical; }"

    def __init__(self, root: Path, document: Path | None = None) -> None:
        super().__init__()
        self.root = root
        self.document = document

    def compose(self) -> ComposeResult:
        yield FlowFrontierPane(Workspace.open(self.root))
        yield Footer()

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        pane = self.query_one(FlowFrontierPane)
        pane.set_open_document(self.document)
        pane.query_one("#flow-steps").focus()

    @property
    def pane(self) -> FlowFrontierPane:
        return self.query_one(FlowFrontierPane)


def workspace_with_document(tmp_path: Path, **config: Any) -> tuple[Path, Path]:
    root = make_workspace(tmp_path / "ws", **config)
    doc = root / "thesis.noma"
    doc.write_text("# Thesis\n\nBody.\n", encoding="utf-8")
    record = {"op_id": OP_ID, "post_sha256": POST, "pre_sha256": "0" * 64}
    (root / "thesis.noma.patches").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return root, doc


def states(app: PaneApp) -> list[str]:
    assert app.pane.run is not None
    return [s.status for s in app.pane.run.step_states]


async def settle(pilot: Pilot[None]) -> None:
    """Every handler call finished and shown (a result may start another call: reload)."""
    app = pilot.app
    assert isinstance(app, PaneApp)
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not app.pane.busy:
            break
    await pilot.wait_for_scheduled_animations()


async def press(pilot: Pilot[None], *keys: str) -> None:
    """Press keys one by one, letting each handler call (a thread worker) finish."""
    await settle(pilot)  # the first load of the runs, too
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


async def drive_manual_run(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PaneApp)
    await press(pilot, "n", "down", "enter")  # start: flows are listed by id
    await pilot.pause()
    assert app.pane.run.flow_id == "flow_weekly_review"
    await press(pilot, "a")  # step 1 -> in progress
    await press(pilot, "a")  # -> done, but no proof yet
    await pilot.pause()
    assert app.pane.last_status.startswith("✗ FLOW_VERIFICATION_UNSATISFIED (403)")
    await press(pilot, "e", "enter")  # the open document's latest transcript op_id
    await pilot.pause()
    assert app.pane.run.step_states[0].evidence_ref == OP_ID
    await press(pilot, "a")  # done, verified
    await press(pilot, "s", "down", "down", "enter")  # step 2: skip, "blocked_dependency"
    await pilot.pause()
    assert states(app) == ["done", "skipped", "pending"]
    await press(pilot, "e", "down", "enter")  # step 3: the document's post_sha256
    await press(pilot, "a", "a")  # in progress, then done without approval
    await pilot.pause()
    assert app.pane.last_status.startswith("✗ FLOW_VERIFICATION_UNSATISFIED")


async def finish_manual_run(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PaneApp)
    await press(pilot, "v")  # the human approves the evidence
    await pilot.pause()
    assert app.pane.run.status == "done"
    await press(pilot, "r", *"Weekly review outcome", "enter")
    await pilot.pause()
    assert app.pane.last_status.startswith("Proposal prop_")


async def test_pane_drives_a_whole_manual_run_by_keyboard(tmp_path, clock, pinned_ids):
    root, doc = workspace_with_document(tmp_path)
    app = PaneApp(root, doc)
    async with app.run_test(size=SIZE) as pilot:
        await drive_manual_run(pilot)
        await finish_manual_run(pilot)
        run = app.pane.run
        assert run.step_states[2].to_json() == {
            "step_id": "flow_weekly_review#3",
            "status": "done",
            "evidence_ref": POST,
            "verified": True,
        }
        ctx = local_context(app.pane)
        assert get_run(ctx, {"run_id": run.run_id})["run"] == run.to_json()
        proposals = ctx.store.connection().execute("SELECT kind, status FROM proposals").fetchall()
        assert [tuple(p) for p in proposals] == [("flow_run_outcome", "pending")]


async def drive_automatable_run(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PaneApp)
    await press(pilot, "n", "enter")  # flow_lead_import sorts first
    await pilot.pause()
    await pilot.press(*"https://example.org/sheet")  # its sheet_url input, in one burst
    await press(pilot, "enter")
    assert app.pane.run.flow_id == "flow_lead_import"
    await press(pilot, "x")  # no consent held yet
    await settle(pilot)
    assert app.pane.last_status.startswith("✗ FLOW_EXECUTION_CONSENT_REQUIRED (403)")
    await press(pilot, "c", "enter", "enter")  # default cap and ttl
    await pilot.pause()
    assert app.pane.last_status.startswith("Consent held for run_")
    await press(pilot, "X")  # dry run: gates only, nothing runs
    await settle(pilot)
    assert app.pane.last_status.startswith("Dry run: every gate passes")
    await press(pilot, "x")
    await settle(pilot)
    assert app.pane.last_status == "Execution completed: 3 units on local_default"
    assert states(app) == ["done", "pending", "pending"]
    await press(pilot, "x")  # step 2 is automatable but human_review: never auto-verified
    await settle(pilot)
    assert states(app) == ["done", "in_progress", "pending"]


async def test_pane_drives_a_whole_automatable_run_by_keyboard(
    tmp_path, clock, pinned_ids, fake_lane
):
    root, doc = workspace_with_document(tmp_path)
    app = PaneApp(root, doc)
    async with app.run_test(size=SIZE) as pilot:
        await drive_automatable_run(pilot)
        await press(pilot, "v")
        await pilot.pause()
        assert states(app) == ["done", "done", "pending"]
        await press(pilot, "x")  # step 3 is agent_assisted
        await settle(pilot)
        assert app.pane.last_status.startswith("✗ FLOW_STEP_NOT_AUTOMATABLE (400)")
        await press(pilot, "a", "e", "down", "enter", "a")  # manual path, with a hash pointer
        await pilot.pause()
        assert app.pane.run.status == "done"
    assert len(fake_lane.calls) == 2
    # the lane got the value typed at start for `flow.inputs.sheet_url`, not the reference
    assert dict(fake_lane.calls[0].inputs) == {"sheet_url": "https://example.org/sheet"}


async def test_pane_shows_the_disabled_gate_code(tmp_path, clock, pinned_ids):
    root, doc = workspace_with_document(tmp_path, writes=False, automatable=False)
    app = PaneApp(root, doc)
    messages: list[Any] = []
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        assert "writes off" in str(app.pane.query_one("#flow-header").render())
        await press(pilot, "n", "down", "enter")  # the manual flow: no inputs to give
        await pilot.pause()
        assert app.pane.last_status == (
            "✗ FLOW_RUN_WRITES_DISABLED (403) run writes are disabled in this workspace"
            " → set [gates] run_writes_enabled = true in noma-workbench.toml (the folder "
            "must be trusted: T), then restart the workbench"
        )
        assert list_runs(local_context(app.pane), {})["runs"] == []
        pane = app.pane
    refused = {id(m): m for m in messages if isinstance(m, FlowFrontierPane.Refused)}
    assert [m.refusal.code for m in refused.values()] == ["FLOW_RUN_WRITES_DISABLED"]
    assert all(m.control is pane for m in refused.values())


async def test_keys_act_on_the_cursor_step_and_refuse_out_of_order(tmp_path, clock, pinned_ids):
    root, doc = workspace_with_document(tmp_path)
    app = PaneApp(root, doc)
    async with app.run_test(size=SIZE) as pilot:
        await press(pilot, "n", "down", "enter")
        await press(pilot, "down", "a")  # the cursor on step 2, not the frontier
        await pilot.pause()
        assert app.pane.last_status.startswith("✗ FLOW_STEP_OUT_OF_ORDER (409)")
        await press(pilot, "up", "b")  # a refusal leaves the cursor; back to the frontier
        await pilot.pause()
        assert app.pane.run.status == "blocked"
        await press(pilot, "b")
        await pilot.pause()
        assert app.pane.run.status == "in_progress"


# -------------------------------------------------------------------------- snapshots


def snapshot_app(tmp_path: Path) -> PaneApp:
    root, doc = workspace_with_document(tmp_path)
    return PaneApp(root, doc)


Runner = Callable[[Pilot[None]], Awaitable[None]]


def test_snapshot_manual_run_with_a_refusal(snap_compare, tmp_path, clock, pinned_ids):
    assert snap_compare(snapshot_app(tmp_path), terminal_size=SIZE, run_before=drive_manual_run)


@pytest.mark.long(13)
def test_snapshot_finished_manual_run(snap_compare, tmp_path, clock, pinned_ids):
    async def run_before(pilot: Pilot[None]) -> None:
        await drive_manual_run(pilot)
        await finish_manual_run(pilot)

    assert snap_compare(snapshot_app(tmp_path), terminal_size=SIZE, run_before=run_before)


def test_snapshot_automatable_run_after_execute(snap_compare, tmp_path, clock, pinned_ids):
    assert snap_compare(
        snapshot_app(tmp_path), terminal_size=SIZE, run_before=drive_automatable_run
    )


def test_snapshot_skip_reason_dialog(snap_compare, tmp_path, clock, pinned_ids):
    async def run_before(pilot: Pilot[None]) -> None:
        await press(pilot, "n", "down", "enter", "s")
        await settle(pilot)

    assert snap_compare(snapshot_app(tmp_path), terminal_size=SIZE, run_before=run_before)


async def test_pane_lists_problems_in_flows_folder(tmp_path, clock, pinned_ids):
    root, doc = workspace_with_document(tmp_path)
    (root / "flows" / "notes.yaml").write_text("just notes\n", encoding="utf-8")
    app = PaneApp(root, doc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        header = str(app.pane.query_one("#flow-header").render())
        assert "1 flows/ problem(s)" in header
        assert app.pane.last_status.startswith("flows/ problem: notes.yaml: (file): not a bundle")


@pytest.mark.long(10)
async def test_the_demo_workspace_runs_end_to_end_in_the_pane(tmp_path, clock, fake_lane):
    """Both shipped demo flows, by keyboard: the manual one with a skip reason and a human
    approval, the automatable one with its sheet_url given at start."""

    from noma_tui.demo import ensure_demo_copy

    root = ensure_demo_copy(tmp_path / "demo")  # the product's own copy: trusted
    app = PaneApp(root, root / "research-memo.noma")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "problem" not in str(app.pane.query_one("#flow-header").render())
        await press(pilot, "n", "down", "enter")  # flow_weekly_review
        assert app.pane.run.flow_id == "flow_weekly_review"
        await press(pilot, "a", "e", "enter", "a")  # proof from the memo's transcript, done
        await press(pilot, "s", "enter")  # step 2 skipped: "policy"
        assert app.pane.run.step_states[1].skip_reason == "policy"
        steps = app.pane.query_one("#flow-steps", DataTable)
        assert str(steps.get_row_at(1)[4]) == "policy"  # the skip's proof is its reason
        await press(pilot, "e", "down", "enter", "v")  # the sign-off: evidence + approval
        assert app.pane.run.status == "done", app.pane.last_status
        await press(pilot, "n", "enter")  # flow_lead_import asks for its input
        await pilot.press(*"https://docs.google.com/spreadsheets/d/demo-leads")
        await press(pilot, "enter")
        assert app.pane.run.flow_id == "flow_lead_import"
        await press(pilot, "c", "enter", "enter", "x")
        assert app.pane.run.step_states[0].status == "done", app.pane.last_status
    assert dict(fake_lane.calls[0].inputs) == {
        "sheet_url": "https://docs.google.com/spreadsheets/d/demo-leads"
    }


@pytest.mark.long(15)
async def test_pane_reviews_the_outcome_and_revokes_a_consent(tmp_path, clock, pinned_ids):
    root, doc = workspace_with_document(tmp_path)
    app = PaneApp(root, doc)
    async with app.run_test(size=SIZE) as pilot:
        await drive_manual_run(pilot)
        await finish_manual_run(pilot)
        await press(pilot, "P", "enter", "a")  # the pending outcome, shown, then approved
        assert app.pane.last_status.startswith("Proposal prop_") and "approved" in (
            app.pane.last_status
        )
        ctx = local_context(app.pane)
        rows = ctx.store.connection().execute("SELECT kind, status FROM proposals").fetchall()
        assert [tuple(r) for r in rows] == [("flow_run_outcome", "approved")]
        await press(pilot, "P")
        assert app.pane.last_status == "No proposals are pending review."
        await press(pilot, "n", "enter")  # an automatable run (it asks for its input) ...
        await pilot.press(*"https://example.org/sheet")
        await press(pilot, "enter")
        await press(pilot, "c", "enter", "enter")  # ... and a consent for it
        await press(pilot, "C", "enter")  # the one consent: revoke it
        assert app.pane.last_status.startswith("Consent revoked")
        await press(pilot, "x")
        assert app.pane.last_status.startswith("✗ FLOW_EXECUTION_CONSENT_REQUIRED")


async def test_pane_shows_an_interrupted_execution_as_such(tmp_path, clock, pinned_ids):
    """Issue 29: a step whose execution's process died, once its lease ran out, says so
    (before, the step sat ``in_progress`` with nothing to tell why, for good)."""
    from core.flow import FlowContext
    from core.flow.consent import consent_key
    from core.flow.store import StoredExecution

    from .conftest import consent_for, started

    root = make_workspace(tmp_path / "ws")
    ctx = FlowContext.open(Workspace.open(root))
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=10)
        with ctx.store.write() as tx:  # what a hub killed mid-execution leaves behind
            assert tx.reserve_units(consent_key(cid), 10)
            tx.insert_execution(
                StoredExecution(
                    "fexec_dead", rid, "flow_lead_import#1", consent_key(cid), "running",
                    "local_default", 10, 0, None, None, "2026-06-20T12:00:00Z",
                    "2026-06-20T12:02:01Z", None,
                )
            )  # fmt: skip
    finally:
        ctx.close()
    clock.advance(151)
    app = PaneApp(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = str(app.pane.query_one("#flow-detail").render())
        assert "last execution interrupted" in detail and "fexec_dead" in detail, detail
        assert "10 units charged" in detail
