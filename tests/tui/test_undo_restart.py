"""Undo survives a restart (issue 25): the undo journal in the user's state dir keeps the
way back to the versions before this app's edits; it is verified against the transcript
record hashes, and a block changed since is the usual coded refusal."""

from __future__ import annotations

import os
from pathlib import Path

from notify_record import record_notes
from test_undo import apply_proof, edit_note
from tui_helpers import MEMO, TERMINAL, make_app, ready, records, until

from core.noma.patch.pipeline import Actor, PatchRequest, patch_file
from core.user_dirs import state_home
from noma_tui.screens.proof import ProofScreen
from noma_tui.undo_journal import UndoJournal, sha256_text, step_between


async def test_undo_after_a_restart_restores(demo: Path) -> None:
    path = demo / MEMO
    original = path.read_bytes()
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await edit_note(pilot, path, "Edited before the restart.")
        await app.workers.wait_for_complete()
    journal = UndoJournal(path)
    assert journal.path.is_relative_to(state_home()) and not journal.path.is_relative_to(demo)
    assert os.stat(journal.path).st_mode & 0o077 == 0
    edit = records(path)[-1]
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        assert app.undo_target() == edit
        count = len(records(path))
        await pilot.press("u")
        await apply_proof(pilot, path, count + 1)
        assert records(path)[-1]["parent_op_id"] == edit["op_id"]
        await app.workers.wait_for_complete()
    assert path.read_bytes() == original
    # Restarted again: the revert is known as one by data, so U redoes it.
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        assert app.redo_target() == records(path)[-1]


async def test_undo_after_a_restart_of_a_block_changed_since_is_refused(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await edit_note(pilot, path, "Mine, before the restart.")
        await app.workers.wait_for_complete()
    async with make_app(demo, watch=False).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
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
        before, count = path.read_bytes(), len(records(path))
        notes = record_notes(app)
        await pilot.press("u")
        note = await notes.next_after(pilot, 0, "the refusal")
        await app.workers.wait_for_complete()
        assert note.title == "sha_mismatch"
        assert not isinstance(app.screen, ProofScreen)
    assert path.read_bytes() == before and len(records(path)) == count


def test_a_tampered_journal_rebuilds_nothing(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    journal = UndoJournal(doc, tmp_path / "state")
    v1, v2, v3 = "a\nb\nc\n", "a\nB\nc\n", "a\nB\nC\n"
    journal.add(step_between(v1, v2, op_id="op-1", kind="edit"))
    journal.add(step_between(v2, v3, op_id="op-2", kind="revert"))
    assert journal.version(sha256_text(v1), v3) == v1
    assert journal.kinds() == {"op-1": "edit", "op-2": "revert"}
    assert journal.version(sha256_text(v1), "something else") is None
    lines = journal.path.read_text("utf-8").splitlines()
    forged = lines[0].replace('"text": "b', '"text": "X')
    journal.path.write_text("\n".join([forged, "not json", "[1]", lines[1]]) + "\n", "utf-8")
    assert journal.version(sha256_text(v1), v3) is None  # the forged step does not verify
    assert journal.version(sha256_text(v2), v3) == v2  # the honest one still does


def test_the_journal_stays_bounded(tmp_path: Path) -> None:
    from noma_tui import undo_journal

    journal = UndoJournal(tmp_path / "d.noma", tmp_path / "state")
    text = "x"
    for n in range(undo_journal.MAX_ENTRIES + 20):
        new = f"{text}{n}"
        journal.add(step_between(text, new))
        text = new
    assert len(journal.steps()) == undo_journal.MAX_ENTRIES
