"""After an apply the transcript pane grows by the records the engine's outcome holds: the
transcript file is read when the document opens, not again after each edit of ours."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea
from tui_helpers import MEMO, TERMINAL, ready, records, select, until

from core.workspace import Workspace
from noma_tui.app import WorkbenchApp
from noma_tui.config import WorkbenchConfig
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen
from noma_tui.transcript_view import TranscriptSnapshot, extend, load_transcript


async def test_an_apply_appends_its_records_without_reading_the_transcript(demo: Path) -> None:
    path = demo / MEMO
    reads: list[Path] = []

    def counting(doc: Path) -> TranscriptSnapshot:
        reads.append(doc)
        return load_transcript(doc)

    workspace = Workspace.open(demo)
    config = WorkbenchConfig.from_workspace(workspace, watch=False, cursor_blink=False)
    app = WorkbenchApp(workspace, config=config, read_transcript=counting)
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot)
        opened = len(reads)
        before = len(records(path))
        for text in ("Appended once.", "Appended twice."):
            await select(pilot, "note-method")
            await pilot.press("e")
            await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
            app.screen.query_one("#source", TextArea).text = text
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
            await pilot.press("ctrl+s")
            await until(pilot, lambda: app.screen is app.main and not app.sessions, "applied")
        await app.workers.wait_for_complete()
        on_disk = records(path)
        assert len(on_disk) == before + 2
        assert len(reads) == opened  # no read after either apply
        snapshot = app.transcript
        assert snapshot is not None and snapshot.report is not None and snapshot.report.ok
        assert [row.record for row in snapshot.rows[-2:]] == on_disk[-2:]
        assert (
            app.main.transcript.rows_shown[-1].raw
            == path.with_name(path.name + ".patches").read_bytes().splitlines(keepends=True)[-1]
        )
        # What was appended is what a full read finds, row for row.
        whole = load_transcript(path)
        assert [r.raw for r in whole.rows] == [r.raw for r in snapshot.rows]
        assert whole.report is not None and whole.report.chain_tip == snapshot.report.chain_tip


def test_records_that_do_not_follow_on_are_read_whole(demo: Path) -> None:
    snapshot = load_transcript(demo / MEMO)
    assert snapshot.rows
    stray = dict(snapshot.rows[-1].record or {}, prev_entry_sha256="0" * 64)
    assert extend(snapshot, [stray]) is None
    assert extend(snapshot, []) is not None
