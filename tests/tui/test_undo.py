"""Undo / redo as recorded edits: u (and ctrl+z) reverts this actor's latest edit in the
document through a proof, recorded with parent_op_id = the reverted record and a reason
that says revert; U redoes; the transcript record's "Revert this edit" reverts any record
whose block still matches; a block changed since is refused with sha_mismatch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from notify_record import record_notes
from textual.pilot import Pilot
from textual.widgets import TextArea
from tui_helpers import MEMO, TERMINAL, make_app, ready, records, select, until

from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
from noma_tui.app import WorkbenchApp
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.record import RecordScreen
from noma_tui.screens.source_editor import SourceEditorScreen


async def apply_proof(pilot: Pilot[Any], path: Path, count: int) -> None:
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
    await pilot.press("ctrl+s")
    await until(pilot, lambda: len(records(path)) == count, "the record")
    await until(pilot, lambda: app.screen is app.main and not app.sessions, "back")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def edit_note(pilot: Pilot[Any], path: Path, text: str) -> None:
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    await select(pilot, "note-method")
    await pilot.press("e")
    await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
    app.screen.query_one("#source", TextArea).text = text
    await pilot.press("ctrl+s")
    await apply_proof(pilot, path, len(records(path)) + 1)


async def test_undo_then_redo_are_recorded_reverts(demo: Path) -> None:
    path = demo / MEMO
    original = path.read_bytes()
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await edit_note(pilot, path, "Edited once.")
        edited = path.read_bytes()
        edit = records(path)[-1]
        count = len(records(path))
        await pilot.press("u")
        await apply_proof(pilot, path, count + 1)
        assert path.read_bytes() == original
        undo = records(path)[-1]
        assert undo["parent_op_id"] == edit["op_id"]
        assert undo["reason"].startswith("revert")
        assert undo["op"]["op"] == "replace_block" and undo["actor"]["kind"] == "human"
        assert app.undo_target() is not None and app.undo_target() != edit  # older ones
        await pilot.press("U")
        await apply_proof(pilot, path, count + 2)
        assert path.read_bytes() == edited
        redo = records(path)[-1]
        assert redo["parent_op_id"] == undo["op_id"] and redo["reason"].startswith("redo")
        assert app.redo_target() is None  # nothing left to redo
        await pilot.press("ctrl+z")  # undo the redo
        await apply_proof(pilot, path, count + 3)
        assert path.read_bytes() == original


async def test_undo_of_a_block_changed_since_is_refused(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await edit_note(pilot, path, "Mine.")
        # An agent changes the same block afterwards.
        outcome = patch_file(
            path,
            PatchRequest(
                ops=[{"op": "replace_body", "id": "note-method", "content": "Theirs."}],
                actor=Actor("agent", "bot"),
            ),
        )
        assert outcome.ok
        app.reload()
        await until(
            pilot,
            lambda: app.loaded is not None and app.loaded.sha256 == outcome.post_sha256,
            "reload",
        )
        await app.workers.wait_for_complete()
        before = path.read_bytes()
        count = len(records(path))
        notes = record_notes(app)
        await pilot.press("u")
        note = await notes.next_after(pilot, 0, "the refusal")
        await app.workers.wait_for_complete()
        assert note.title == "sha_mismatch" and "changed after this edit" in note.message
        assert not isinstance(app.screen, ProofScreen)
    assert path.read_bytes() == before and len(records(path)) == count


async def test_revert_this_edit_from_the_transcript_record(demo: Path) -> None:
    path = demo / MEMO
    original = path.read_bytes()
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await edit_note(pilot, path, "To be reverted from the transcript.")
        count = len(records(path))
        await pilot.press("4")
        await pilot.press("end", "enter")  # the newest record
        await until(pilot, lambda: isinstance(app.screen, RecordScreen), "the record")
        await pilot.press("R")
        await apply_proof(pilot, path, count + 1)
    assert path.read_bytes() == original
    assert records(path)[-1]["parent_op_id"] == records(path)[-2]["op_id"]


async def test_undo_of_an_edit_before_this_session_says_why(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        record = next(
            r.record
            for r in app.transcript.rows
            if r.record and r.record["patch_result"] == "applied"
        )
        notes = record_notes(app)
        app.revert(record)
        note = await notes.next_after(pilot, 0, "the message")
        assert note.title == "revert_pre_state_unknown"
