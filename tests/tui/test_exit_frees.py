"""An app that has exited keeps no document alive in its process.

Textual caches a `DataTable` method with ``functools.lru_cache`` (keyed by the table
itself), so the last tables drawn outlive their app; a table that still pointed at the
version it showed kept that whole tree alive (measured in the app bench: ~400,000 objects
of a 20,000-section document pinned after the second run, walked by every later full
collection). Tests, the bench and anything that embeds the app open many in one process.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from tui_helpers import copy_demo, make_app, ready

from noma_tui.document import LoadedDocument
from noma_tui.panes.diagnostics import DiagnosticsPane
from noma_tui.panes.transcript import TranscriptPane
from noma_tui.transcript_view import TranscriptSnapshot

SIZE = (120, 34)


async def _open_and_close(root: Path) -> Path:
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.loaded is not None
        return app.loaded.path


async def _panes_after_exit(root: Path) -> tuple[DiagnosticsPane, TranscriptPane]:
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        panes = app.main.diagnostics, app.main.transcript
        assert panes[0].loaded is not None and panes[1].snapshot is not None
    return panes


def test_an_exited_app_keeps_no_loaded_document(tmp_path: Path) -> None:
    # In an event loop of its own, as a program runs the app: the test runner's loop keeps
    # its worker threads (and Textual's print capture on them, which names the app) and
    # its context (the app is the context's active app) until the test ends.
    path = asyncio.run(_open_and_close(copy_demo(tmp_path)))
    for _ in range(3):
        gc.collect()
    alive = [o for o in gc.get_objects() if type(o) is LoadedDocument and o.path == path]
    assert alive == []
    transcripts = [
        o
        for o in gc.get_objects()
        if type(o) is TranscriptSnapshot and o.path.parent == path.parent
    ]
    assert transcripts == []
    # Which tables Textual's cache keeps depends on what was drawn last; the whole check
    # above can pass by luck. This one cannot: every table pane let go of what it showed.
    diagnostics, transcript = asyncio.run(_panes_after_exit(copy_demo(tmp_path / "again")))
    assert diagnostics.loaded is None
    assert transcript.snapshot is None and transcript.rows_shown == []
