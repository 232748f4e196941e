"""Live watching, drift and block conflicts (§3.4).

Writes happen from outside the app (plain file writes, or the engine as an agent would
call it); the tests then wait for app state to change without pressing a key.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from textual.widgets import TextArea
from tui_helpers import MEMO, TERMINAL, make_app, ready, records, select, until

from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
from noma_tui.screens.conflict import ConflictScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen
from tests.noma.trust_testlib import record_validator, schema_errors

RISK = '::risk{id="risk-stale-prices" severity="high"}'
RISK_OWNED = '::risk{id="risk-stale-prices" severity="high" owner="ops"}'
NOTE_BODY = "All numbers come from the staging fleet; production sampling starts next sprint."


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def test_external_write_refreshes_panes_and_flags_drift_without_a_key(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo, watch=True).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await until(pilot, lambda: app.watching, "the watcher")
        risk = await select(pilot, "risk-stale-prices")
        assert app.main.doc_tree._block_nodes[risk].label.plain.startswith("▲1 ")  # type: ignore[union-attr]
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        editor = app.screen
        assert not app.drift and not app.main.status.drift and not editor.has_class("-drift")

        # Another editor gives the risk an owner: the file changes under the open edit.
        changed = path.read_text("utf-8").replace(RISK, RISK_OWNED)
        path.write_text(changed, encoding="utf-8")
        await until(
            pilot,
            lambda: app.loaded is not None and app.loaded.sha256 == sha(changed),
            "the watcher to reload the document",
        )
        await until(
            pilot,
            lambda: app.main.status.drift and editor.has_class("-drift"),
            "the drift flag in the editor and the status bar",
        )
        assert "base_sha_drift" in str(app.main.status.render())
        assert [r.diagnostic.code for r in app.loaded.diagnostics] == ["claim-without-evidence"]
        assert app.main.diagnostics.row_count == 1
        label = app.main.doc_tree._block_nodes[risk].label  # relabelled in place, same node
        assert label.plain.startswith("::risk risk-stale-prices")  # type: ignore[union-attr]

        # An agent patches through the engine: its record shows up in the transcript pane.
        patch_file(
            path,
            PatchRequest(
                ops=[
                    {
                        "op": "update_attribute",
                        "id": "small-tenant-noise",
                        "key": "draft",
                        "value": True,
                    }
                ],
                actor=Actor("agent", "bot"),
            ),
        )
        await until(pilot, lambda: app.main.transcript.row_count == 7, "the appended record")
        assert app.main.transcript.rows_shown[-1].actor == "agent:bot"

        # Applying the open edit now goes through (its block is unchanged) and records drift.
        area = editor.query_one("#source", TextArea)
        area.text = "Staging numbers only."
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == 8, "the edit's record")
        await until(pilot, lambda: not app.sessions and not app.main.status.drift, "edit closed")
    record = records(path)[-1]
    assert record["actor"]["kind"] == "human" and record["patch_result"] == "applied"
    assert "base_sha_drift" in [d["code"] for d in record["diagnostics"]]
    assert record["base_sha256"] != record["pre_sha256"]
    text = path.read_text("utf-8")
    assert RISK_OWNED in text and "Staging numbers only." in text


async def test_block_conflict_take_theirs_starts_from_disk(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        editor = app.screen
        path.write_text(
            path.read_text("utf-8").replace(NOTE_BODY, "Someone else rewrote this note."),
            encoding="utf-8",
        )
        editor.query_one("#source", TextArea).text = "My version of the note."
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen), "the conflict")
        assert app.screen.code == "sha_mismatch"  # type: ignore[attr-defined]
        texts = app.screen.texts  # type: ignore[attr-defined]
        assert texts.mine == "My version of the note."  # shown before anything is dropped
        assert texts.theirs == "Someone else rewrote this note."
        await pilot.press("t")
        await until(
            pilot,
            lambda: editor.query_one("#source", TextArea).text == "Someone else rewrote this note.",
            "the block reloaded into the editor",
        )
        assert not editor.session.drift  # the reload re-based the whole edit
        editor.query_one("#source", TextArea).text = "Merged: someone else rewrote this note."
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == 7, "the record")
    record = records(path)[-1]
    assert record["patch_result"] == "applied"
    assert record["base_sha256"] == record["pre_sha256"]
    assert "Merged: someone else rewrote this note." in path.read_text("utf-8")


async def test_conflict_at_apply_is_recorded_and_keep_editing_overwrites_with_drift(
    demo: Path,
) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        editor = app.screen
        editor.query_one("#source", TextArea).text = "My version of the note."
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        # The block changes while the proof is on screen.
        path.write_text(
            path.read_text("utf-8").replace(NOTE_BODY, "Someone else rewrote this note."),
            encoding="utf-8",
        )
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen), "the conflict")
        rejected = records(path)[-1]
        assert rejected["patch_result"] == "rejected"
        assert "sha_mismatch" in [d["code"] for d in rejected["diagnostics"]]
        validator = record_validator()  # the app's rejected record is schema-valid too
        assert all(schema_errors(validator, r) == [] for r in records(path))
        await pilot.press("m")  # keep mine: straight to the proof, against theirs' hash
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        assert editor.session.drift
        assert editor.query_one("#source", TextArea).text == "My version of the note."
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == 8, "the record")
    assert all(schema_errors(validator, r) == [] for r in records(path))
    record = records(path)[-1]
    assert record["patch_result"] == "applied"
    assert "base_sha_drift" in [d["code"] for d in record["diagnostics"]]
    text = path.read_text("utf-8")
    assert "My version of the note." in text and "Someone else" not in text


async def test_conflict_view_merges_both_changes_and_applies_against_theirs(
    demo: Path,
) -> None:
    """Three-way: base / mine / theirs side by side; the merge keeps both changes where
    they touch different lines and is applied as a patch op against theirs' hash."""
    path = demo / MEMO
    async with make_app(demo).run_test(size=(200, 55)) as pilot:
        app = await ready(pilot)
        await select(pilot, "ev-loadtest-march")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        editor = app.screen
        area = editor.query_one("#source", TextArea)
        first, second = area.text.split("\n")
        area.text = first.replace("12 runs", "twelve runs") + "\n" + second
        theirs_second = second.replace("18 ms", "19 ms")
        path.write_text(path.read_text("utf-8").replace(second, theirs_second), "utf-8")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen), "the conflict")
        screen = app.screen
        assert screen.texts.mergeable  # type: ignore[attr-defined]
        mine_view = str(screen.query_one("#conflict-mine").render())
        assert "twelve runs" in mine_view and "▌" in mine_view
        await pilot.press("e")
        await until(pilot, lambda: app.screen is editor, "back in the editor")
        merged = area.text
        assert "twelve runs" in merged and "19 ms" in merged and "<<<<<<<" not in merged
        count = len(records(path))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == count + 1, "the record")
    record = records(path)[-1]
    assert record["patch_result"] == "applied" and record["op"]["op"] == "replace_body"
    text = path.read_text("utf-8")
    assert "twelve runs" in text and "19 ms" in text


async def test_conflict_back_keeps_the_typed_text(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        editor = app.screen
        editor.query_one("#source", TextArea).text = "Mine, typed."
        path.write_text(path.read_text("utf-8").replace(NOTE_BODY, "Theirs."), "utf-8")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen), "the conflict")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is editor, "back")
        assert editor.query_one("#source", TextArea).text == "Mine, typed."
