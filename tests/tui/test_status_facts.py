"""The status line shows only facts (issue 25): no drift flag for the app's own writes,
and a finished edit leaves no "editing" behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea
from tui_helpers import TERMINAL, make_app, records, select, until

from bench.generate import generate
from noma_tui.app import WorkbenchApp
from noma_tui.panes.status_bar import StatusBar
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen

APPLIES = 50


@pytest.mark.long(55)
async def test_fifty_applies_at_5k_never_flag_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.noma"
    path.write_text(generate(5000), encoding="utf-8")
    flagged: list[str] = []  # every moment the status bar showed drift, and what it said
    real = StatusBar.watch_drift

    def watch_drift(self: StatusBar, drift: bool) -> None:
        if drift:
            flagged.append(self.render().plain)
        real(self, drift)

    monkeypatch.setattr(StatusBar, "watch_drift", watch_drift)
    app = make_app(tmp_path, document=path, single_file=True)
    async with app.run_test(size=TERMINAL) as pilot:
        assert isinstance(app, WorkbenchApp)
        await until(pilot, lambda: app.loaded is not None, "loaded", limit=120)
        await until(pilot, lambda: not app.main.doc_tree.filling, "the tree", limit=120)
        loaded = app.loaded
        assert loaded is not None
        # A claim in the middle of the document.
        ident = next(
            b.id
            for b in loaded.blocks[len(loaded.blocks) // 2 :]
            if getattr(b, "name", "") == "claim"
        )
        assert ident
        status = app.main.status
        for n in range(APPLIES):
            await select(pilot, ident)
            count = len(records(path))
            await pilot.press("e")
            await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
            app.screen.query_one("#source", TextArea).text = f"Apply number {n}."
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
            await pilot.press("ctrl+s")
            await until(pilot, lambda c=count: len(records(path)) == c + 1, "the record")
            await until(pilot, lambda: app.screen is app.main and not app.sessions, "back")
            assert not status.drift and not status.editing, status.render().plain
        assert records(path)[-1]["patch_result"] == "applied"
    assert flagged == []
