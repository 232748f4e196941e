"""Every editing action, driven by keys end to end: editor -> proof -> apply.

Each test asserts the document bytes (exactly what the engine makes of the recorded op,
and the visible change) and the new transcript record (a human actor, the op, the
document hash the edit was prepared against and the block precondition).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable, Input, TextArea
from tui_helpers import ADR, MEMO, SPEC, TERMINAL, make_app, ready, records, select, until

from core.noma.files import read_source
from core.noma.patch.catalog import TARGET_FIELD
from core.noma.patch.engine import apply_ops_to_text
from noma_tui.app import WorkbenchApp
from noma_tui.screens.edit_base import EditScreen
from noma_tui.screens.form import FormScreen
from noma_tui.screens.main import MainScreen
from noma_tui.screens.picker import PickerScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen
from noma_tui.screens.table_grid import TableGridScreen
from tests.noma.trust_testlib import record_validator, schema_errors


async def preview_and_apply(pilot: Pilot[Any], path: Path, *, key: str = "ctrl+s") -> None:
    """From an open editor: show the proof, apply it, wait for the new record and reload."""
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    before = len(records(path))
    if isinstance(app.screen, EditScreen):
        await pilot.press("ctrl+s")
    await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
    await pilot.press(key)
    await until(pilot, lambda: len(records(path)) == before + 1, "a new transcript record")
    sha = read_source(path).sha256
    await until(
        pilot,
        lambda: app.loaded is not None and app.loaded.sha256 == sha and not app.sessions,
        "the panes to show the new version",
    )


def check_record(path: Path, before_text: str, op: str, ident: str) -> dict[str, Any]:
    """The last record is this human edit, applied, and replays to the bytes on disk."""
    record = records(path)[-1]
    assert record["actor"] == {"kind": "human", "name": "ana"}
    assert record["op"]["op"] == op
    assert record["patch_result"] == "applied"
    assert record["pre_sha256"] == read_source_text_sha(before_text)
    assert record["base_sha256"] == record["pre_sha256"]  # no drift: nothing else changed
    assert len(record["op"]["baseHash"]) == 64  # the block precondition (§3.4)
    assert record["op"][TARGET_FIELD[op]] == ident  # the block the precondition is on
    after = path.read_text("utf-8")
    assert apply_ops_to_text(before_text, [record["op"]]) == after
    assert record["post_sha256"] == read_source(path).sha256
    validator = record_validator()  # every line the app writes is a schema-valid record
    assert all(schema_errors(validator, r) == [] for r in records(path))
    return record


def read_source_text_sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def test_edit_body_sends_replace_body(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        area = app.screen.query_one("#source", TextArea)
        assert area.text == (
            "All numbers come from the staging fleet; production sampling starts next sprint."
        )
        area.text = ""
        await pilot.press(*"Numbers come from staging.")
        await preview_and_apply(pilot, path)
    after = path.read_text("utf-8")
    assert '::note{id="note-method"}\nNumbers come from staging.\n::\n' in after
    check_record(path, before, "replace_body", "note-method")


async def test_edit_source_sends_replace_block(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "risk-stale-prices")
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        area = app.screen.query_one("#source", TextArea)
        assert area.text.startswith('::risk{id="risk-stale-prices" severity="high"}')
        area.text = area.text.replace('severity="high"', 'severity="high" owner="pricing-team"')
        await preview_and_apply(pilot, path)
    assert '::risk{id="risk-stale-prices" severity="high" owner="pricing-team"}' in (
        path.read_text("utf-8")
    )
    check_record(path, before, "replace_block", "risk-stale-prices")


async def test_set_attribute_sends_update_attribute(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        key = app.screen.query_one("#field-key", Input)
        assert key.value == "confidence"
        await pilot.press("enter")  # to the value field
        value = app.screen.query_one("#field-value", Input)
        assert value.value == "0.55"
        value.value = ""
        await pilot.press(*"0.6")
        await preview_and_apply(pilot, path)
    assert '::claim{id="small-tenant-noise" confidence=0.6}' in path.read_text("utf-8")
    record = check_record(path, before, "update_attribute", "small-tenant-noise")
    assert record["op"]["value"] == 0.6


async def test_remove_attribute_sends_remove_attribute(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "ev-loadtest-march")
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the picker")
        await pilot.press("down", "enter")  # for, then source
        await preview_and_apply(pilot, path)
    assert '::evidence{id="ev-loadtest-march" for="warm-cache-p95"}' in path.read_text("utf-8")
    record = check_record(path, before, "remove_attribute", "ev-loadtest-march")
    assert record["op"]["key"] == "source"


async def test_rename_id_retargets_references(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "warm-cache-p95")
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        app.screen.query_one("#field-to", Input).value = ""
        await pilot.press(*"cache-p95", "enter")
        await preview_and_apply(pilot, path)
        assert app.loaded is not None and app.main.selected() == app.loaded.block_of_id("cache-p95")
    after = path.read_text("utf-8")
    assert '::claim{id="cache-p95"' in after
    assert 'for="cache-p95"' in after and "[[cache-p95]]" in after
    assert "warm-cache-p95" not in after
    record = check_record(path, before, "rename_id", "warm-cache-p95")
    assert record["op"]["to"] == "cache-p95"


async def test_edit_heading_sends_update_heading_and_keeps_the_id(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "risks")
        await pilot.press("h")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        app.screen.query_one("#field-title", Input).value = ""
        await pilot.press(*"Risks and mitigations", "enter")
        await preview_and_apply(pilot, path)
    assert '## Risks and mitigations {id="risks"}' in path.read_text("utf-8")
    check_record(path, before, "update_heading", "risks")


async def test_add_block_from_template_links_evidence_to_the_claim(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the templates")
        await pilot.press("down", "enter")  # claim, then evidence
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        area = app.screen.query_one("#source", TextArea)
        assert area.text.startswith('::evidence{id="ev-1" for="small-tenant-noise"}')
        area.text = area.text.replace(
            "What was measured or observed, and where.", "Small tenants: 40 runs, no change."
        )
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        proof = app.screen.proof  # type: ignore[attr-defined]
        assert [d.code for d in proof.disappeared] == ["claim-without-evidence"]
        await preview_and_apply(pilot, path)
        assert app.loaded is not None and app.main.selected() == app.loaded.block_of_id("ev-1")
    after = path.read_text("utf-8")
    assert (
        '::claim{id="small-tenant-noise" confidence=0.55}\n'
        "For tenants below 1k orders per day the difference is within run-to-run noise.\n"
        "::\n\n"
        '::evidence{id="ev-1" for="small-tenant-noise"}\n'
        "Small tenants: 40 runs, no change.\n"
        "::\n"
    ) in after
    record = check_record(path, before, "add_block", "claims")
    assert record["op"]["parent"] == "claims" and record["op"]["position"] == 2


async def test_delete_block_asks_first(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "cev-cold-start")
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the confirmation")
        assert app.screen.has_class("-danger")
        await pilot.press("enter")  # Enter in the reason deletes nothing
        assert isinstance(app.screen, ProofScreen)
        await pilot.press("escape")  # Cancel keeps the block
        await until(pilot, lambda: app.screen is app.main, "back to the main screen")
        assert path.read_text("utf-8") == before and len(records(path)) == 6
        await pilot.press("d")
        await preview_and_apply(pilot, path, key="ctrl+s")
    assert "cev-cold-start" not in path.read_text("utf-8")
    check_record(path, before, "delete_block", "cev-cold-start")


async def test_move_block_under_another_parent(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        await pilot.press(*"risks", "enter", "0", "enter")
        await preview_and_apply(pilot, path)
        assert app.loaded is not None
        moved = app.loaded.block_of_id("note-method")
        assert moved is not None
        assert app.loaded.parents[moved] == app.loaded.block_of_id("risks")
    after = path.read_text("utf-8")
    assert after.index('::note{id="note-method"}') < after.index('::risk{id="risk-stale-prices"')
    check_record(path, before, "move_block", "note-method")


async def test_add_comment_as_the_workspace_actor(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "risk-stale-prices")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        await pilot.press(*"Who owns this?", "enter", "enter")
        await preview_and_apply(pilot, path)
    assert (
        '::comment{id="cm-1" parent="risk-stale-prices" author="ana"}\nWho owns this?\n::'
        in path.read_text("utf-8")
    )
    record = check_record(path, before, "add_comment", "risk-stale-prices")
    assert record["op"]["target"] == "risk-stale-prices"


async def test_resolve_comment_after_switching_documents(demo: Path) -> None:
    path = demo / ADR
    before = path.read_text("utf-8")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await pilot.press("f")  # the file list: decision-record.noma is first
        await pilot.press("home", "enter")
        await ready(pilot, ADR)
        await select(pilot, "cm-oncall")
        await pilot.press("x")
        await preview_and_apply(pilot, path)
        assert app.main.check_action("resolve_comment", ()) is False  # resolved now
    assert (
        '::comment{id="cm-oncall" parent="risk-redis-sla" author="li" status="resolved" '
        'resolved_by="ana"}' in path.read_text("utf-8")
    )
    check_record(path, before, "resolve_comment", "cm-oncall")


async def test_table_grid_edits_a_body_cell_and_a_header_cell(demo: Path) -> None:
    path = demo / SPEC
    original = path.read_text("utf-8")
    async with make_app(demo, document=path).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot, SPEC)
        assert records(path) == []
        await select(pilot, "price-tiers")
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TableGridScreen), "the grid")
        grid = app.screen.query_one("#grid", DataTable)
        assert grid.row_count == 4  # header + 3 rows
        await pilot.press("down", "down", "right", "right", "enter")  # Growth, price column
        box = app.screen.query_one("#cell-value", Input)
        assert box.value == "0.030"
        box.value = ""
        await pilot.press(*"0.028", "enter")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == 1, "the first record")
        await until(pilot, lambda: "saved" in str(grid_label(app)).lower(), "the grid to re-read")
        middle = path.read_text("utf-8")
        assert "| Growth | 10,000 | 0.028 |" in middle
        first = records(path)[0]
        assert first["op"]["op"] == "update_table_cell"
        assert (first["op"]["row"], first["op"]["column"]) == (1, 2)
        assert apply_ops_to_text(original, [first["op"]]) == middle

        grid = app.screen.query_one("#grid", DataTable)
        grid.move_cursor(row=0, column=2)
        await pilot.press("enter")
        box = app.screen.query_one("#cell-value", Input)
        box.value = ""
        await pilot.press(*"Per extra order", "enter")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == 2, "the second record")
    after = path.read_text("utf-8")
    second = records(path)[1]
    assert second["op"]["op"] == "update_table_header_cell"
    assert second["actor"]["kind"] == "human"
    assert second["base_sha256"] == first["post_sha256"]  # the grid re-based after its edit
    assert "| Tier | Included orders | Per extra order |" in after
    assert apply_ops_to_text(middle, [second["op"]]) == after


def grid_label(app: WorkbenchApp) -> object:
    from textual.widgets import Label

    return app.screen.query_one("#cell-label", Label).render()


def _held(monkeypatch: Any, name: str, delay: float = 30.0) -> Any:
    """Make the edit pipeline's ``name`` (build_proof, patch_file) wait on the returned event
    (at most ``delay`` s) before it runs: what happens on screen meanwhile is testable."""
    import threading

    import noma_tui.edit_pipeline as app_module

    real = getattr(app_module, name)
    gate = threading.Event()

    def held(*args: Any, **kwargs: Any) -> Any:
        gate.wait(delay)
        return real(*args, **kwargs)

    monkeypatch.setattr(app_module, name, held)
    return gate


async def _attribute_proof(
    pilot: Pilot[Any],
    app: WorkbenchApp,
    value: str,
    while_building: Callable[[], Awaitable[None]] | None = None,
) -> ProofScreen:
    """Set small-tenant-noise's confidence to ``value`` in the form and ask for the proof;
    returns the proof screen once it is drawn. ``while_building`` runs between the request
    and the proof (with the build held, what the screen shows meanwhile)."""
    await select(pilot, "small-tenant-noise")
    await pilot.press("a")
    await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
    await pilot.press("enter")
    app.screen.query_one("#field-value", Input).value = value
    await pilot.press("ctrl+s")
    if while_building is not None:
        await while_building()
    await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
    proof = app.screen
    assert isinstance(proof, ProofScreen)
    await until(pilot, lambda: bool(proof.query("#proof-summary")), "the proof drawn")
    return proof


async def _applying(pilot: Pilot[Any], app: WorkbenchApp, value: str) -> ProofScreen:
    """`_attribute_proof`, confirmed: returns the proof once the write is under way."""
    proof = await _attribute_proof(pilot, app, value)
    await pilot.press("ctrl+s")
    await until(pilot, lambda: proof.applying, "the write under way")
    return proof


async def _watch_status_during_proof(
    demo: Path, monkeypatch: Any, delay: float, hold_until: str | None = None
) -> list[str]:
    """Ask for a proof built ``delay`` s late (or, with ``hold_until``, held until that
    status message has been shown: a slow proof with no timing guess) and collect every
    status message the app showed until the proof screen is up."""
    gate = _held(monkeypatch, "build_proof", delay)
    seen: list[str] = []
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        status = app.main.status

        def changed(message: str) -> None:
            seen.append(message)

        app.watch(status, "message", changed, init=False)  # every change, however brief

        async def held() -> None:
            if hold_until is not None:
                await until(pilot, lambda: hold_until in seen, f"the status {hold_until!r}")
                gate.set()

        await _attribute_proof(pilot, app, "0.7", held)
        gate.set()
        seen.append(status.message)
        await pilot.press("escape")  # back out before the app closes
        await until(pilot, lambda: not isinstance(app.screen, ProofScreen), "the proof closed")
    return seen


async def test_a_slow_proof_says_it_is_coming(demo: Path, monkeypatch: Any) -> None:
    # The build waits until the hint has shown (at most 30 s): slow however loaded the
    # machine, and the test fails if the hint never comes.
    seen = await _watch_status_during_proof(demo, monkeypatch, 30.0, "preparing the proof…")
    assert "preparing the proof…" in seen
    assert seen[-1] == ""  # gone once the proof is up


async def test_a_quick_proof_repaints_no_status_on_the_way(demo: Path, monkeypatch: Any) -> None:
    # The status bar under the modal form is not touched: repainting it took the GIL
    # from the proof's worker (issue 14, "proof shown"). The hint's delay is stretched so
    # a slow test machine cannot reach it.
    monkeypatch.setattr("noma_tui.edit_pipeline.PROOF_HINT_DELAY", 60.0)
    seen = await _watch_status_during_proof(demo, monkeypatch, 0.0)
    assert "preparing the proof…" not in seen


async def test_the_proof_stays_up_while_the_edit_is_written(demo: Path, monkeypatch: Any) -> None:
    from textual.widgets import Button

    path = demo / MEMO
    gate = _held(monkeypatch, "patch_file")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        proof = await _applying(pilot, app, "0.83")
        assert str(proof.query_one("#apply", Button).label) == "Applying…"
        await pilot.press("escape")  # a write in flight is not taken back
        await pilot.pause(0.1)
        assert app.screen is proof and "confidence=0.83" not in path.read_text("utf-8")
        gate.set()
        await until(
            pilot,
            lambda: not app.sessions and isinstance(app.screen, MainScreen),
            "the proof and the form closed together",
        )
        assert app.loaded is not None and app.loaded.sha256 == read_source(path).sha256
    assert '::claim{id="small-tenant-noise" confidence=0.83}' in path.read_text("utf-8")


async def test_a_failed_write_closes_the_proof(demo: Path, monkeypatch: Any) -> None:
    from core.noma.files import DocumentIOError

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise DocumentIOError("disk on fire")

    monkeypatch.setattr("noma_tui.edit_pipeline.patch_file", broken)
    path = demo / MEMO
    before = path.read_bytes()
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        proof = await _attribute_proof(pilot, app, "0.83")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, ProofScreen), "the proof closed")
        assert not proof.is_attached
    assert path.read_bytes() == before


async def test_a_screen_opened_while_applying_leaves_the_proof_to_close_after_it(
    demo: Path, monkeypatch: Any
) -> None:
    from noma_tui.screens.help import HelpScreen

    gate = _held(monkeypatch, "patch_file")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        proof = await _applying(pilot, app, "0.83")
        app.push_screen(HelpScreen({}))
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "help on top")
        gate.set()
        await until(pilot, lambda: proof._then is not None, "the outcome, waiting under help")
        assert proof.is_attached and isinstance(app.screen, HelpScreen)
        assert app.sessions  # the form is still open beneath: nothing was closed out of turn
        app.screen.dismiss(None)
        await until(
            pilot,
            lambda: (
                not app.sessions and isinstance(app.screen, MainScreen) and not proof.is_attached
            ),
            "the proof and the form closed after help",
        )
        assert not proof.is_attached
