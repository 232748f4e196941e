"""Snapshots (pytest-textual-snapshot) of the screens people look at most.

Fixed terminal size, pinned theme, cursor blink and the watcher off, workers awaited
before the shot. The demo data is fixed (its transcript times are part of the shipped
files), no absolute path is rendered, and the flow engine's clock and ids are pinned.
The screens people look at most are shot at 80x24, 100x30 and 200x55, in both themes
where colours carry meaning (diff and severity colours).

Regenerate with ``pytest tests/tui --snapshot-update`` and review the SVGs.

Shots are deterministic: a pane's scrollbar thumb follows its offset whichever of scroll
and layout comes first (``noma_tui/panes/scrollbars.py``; it was one cell off in about one
run in five), so a shot that differs from its snapshot is a real change, never retried.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea
from tui_helpers import TERMINAL, make_app, ready, select, until

from core.flow import ids as flow_ids
from noma_tui.messages import DiskChanged
from noma_tui.panes.flow import FlowFrontierPane
from noma_tui.screens.conflict import ConflictScreen
from noma_tui.screens.help import HelpScreen
from noma_tui.screens.picker import PickerScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen


@pytest.fixture(autouse=True)
def fixed_flow_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ids and times in the flow pane are the same on every run."""
    counter = itertools.count(1)
    lock = threading.Lock()

    def token(nbytes: int = 10) -> str:
        with lock:
            return f"{next(counter):0{nbytes * 2}d}"

    monkeypatch.setattr(flow_ids, "new_token", token)
    monkeypatch.setattr(flow_ids, "now", lambda: datetime(2026, 6, 20, 12, 0, tzinfo=UTC))


SIZES = [(80, 24), (100, 30), (200, 55)]
SIZE_IDS = ["80x24", "100x30", "200x55"]


async def settle(pilot: Pilot[Any]) -> None:
    app = pilot.app
    flow = app.main.query(FlowFrontierPane)
    for _ in range(200):  # flow handler calls may start more calls (a result, a reload)
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not flow or not flow.first().busy:
            break
    # The transcript follows its end like a log; DataTable scrolls to the cursor only
    # after its sizes settle on a later refresh, so wait for that before the shot.
    transcript = app.main.transcript if app.main.is_mounted else None
    if transcript is not None and transcript.row_count and not transcript.filter_text:

        def at_end() -> bool:
            room = transcript.scrollable_content_region.height
            fits = transcript.virtual_size.height <= room
            return not transcript.following and (
                fits or transcript.scroll_offset.y >= transcript.max_scroll_y
            )

        await until(pilot, at_end, "the transcript at its end")
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def main_screen_with_a_claim(pilot: Pilot[Any]) -> None:
    await ready(pilot)
    await select(pilot, "warm-cache-p95")
    await settle(pilot)


async def open_body_editor(pilot: Pilot[Any]) -> SourceEditorScreen:
    app = await ready(pilot)
    await select(pilot, "note-method")
    await pilot.press("e")
    await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
    screen = app.screen
    assert isinstance(screen, SourceEditorScreen)
    return screen


@pytest.mark.parametrize("theme", ["noma-dark", "noma-light"])
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_main_screen(snap_compare: Any, demo: Path, size: tuple[int, int], theme: str) -> None:
    app = make_app(demo, theme=theme)
    assert snap_compare(app, terminal_size=size, run_before=main_screen_with_a_claim)


async def flow_pane_with_a_refusal(pilot: Pilot[Any]) -> None:
    app = await ready(pilot)
    pane = app.main.query_one(FlowFrontierPane)
    await pilot.press("5")
    await settle(pilot)
    await pilot.press("n")
    await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the flow picker")
    await pilot.press("down", "enter")
    await until(pilot, lambda: bool(pane.runs) and not pane.busy, "the run")
    await settle(pilot)
    for _ in range(2):  # in progress, then done without evidence: refused
        await pilot.press("a")
        await settle(pilot)
    await until(pilot, lambda: pane.last_status.startswith("✗"), "the refusal")
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_flow_pane(snap_compare: Any, demo: Path, size: tuple[int, int]) -> None:
    app = make_app(demo)
    assert snap_compare(app, terminal_size=size, run_before=flow_pane_with_a_refusal)


async def conflict_view(pilot: Pilot[Any]) -> None:
    app = await ready(pilot)
    path = app.doc_path
    assert path is not None
    await select(pilot, "ev-loadtest-march")
    await pilot.press("e")
    await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
    area = app.screen.query_one("#source", TextArea)
    first, second = area.text.split("\n")
    area.text = first.replace("12 runs", "twelve runs") + "\n" + second.replace("18", "17")
    path.write_text(
        path.read_text("utf-8").replace("(run-to-run spread 18 ms)", "(run-to-run spread 19 ms)"),
        "utf-8",
    )
    await pilot.press("ctrl+s")
    await until(pilot, lambda: isinstance(app.screen, ConflictScreen), "the conflict")
    await settle(pilot)


@pytest.mark.parametrize(
    ("size", "theme"),
    [*[(s, "noma-dark") for s in SIZES], ((100, 30), "noma-light")],
    ids=[*SIZE_IDS, "100x30-light"],
)
def test_conflict_view(snap_compare: Any, demo: Path, size: tuple[int, int], theme: str) -> None:
    assert snap_compare(make_app(demo, theme=theme), terminal_size=size, run_before=conflict_view)


async def search(pilot: Pilot[Any]) -> None:
    app = await ready(pilot)
    await pilot.press("1", "slash", *"staging")
    await until(pilot, lambda: app.main.doc_tree.filter_text == "staging", "the filter")
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_search(snap_compare: Any, demo: Path, size: tuple[int, int]) -> None:
    assert snap_compare(make_app(demo), terminal_size=size, run_before=search)


async def preview(pilot: Pilot[Any]) -> None:
    await ready(pilot)
    await select(pilot, "summary")
    await pilot.press("p")
    await settle(pilot)


@pytest.mark.parametrize(
    ("size", "theme"),
    [*[(s, "noma-dark") for s in SIZES], ((100, 30), "noma-light")],
    ids=[*SIZE_IDS, "100x30-light"],
)
def test_preview(snap_compare: Any, demo: Path, size: tuple[int, int], theme: str) -> None:
    assert snap_compare(make_app(demo, theme=theme), terminal_size=size, run_before=preview)


def test_proof_preview(snap_compare: Any, demo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        editor = await open_body_editor(pilot)
        editor.query_one(
            "#source", TextArea
        ).text = "All numbers come from the staging fleet.\nProduction sampling started in May."
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(pilot.app.screen, ProofScreen), "the proof")
        await settle(pilot)

    app = make_app(demo)
    assert snap_compare(app, terminal_size=TERMINAL, run_before=run_before)


def test_drift_warning(snap_compare: Any, demo: Path) -> None:
    path = demo / "research-memo.noma"

    async def run_before(pilot: Pilot[Any]) -> None:
        editor = await open_body_editor(pilot)
        text = path.read_text("utf-8").replace(
            '::risk{id="risk-stale-prices" severity="high"}',
            '::risk{id="risk-stale-prices" severity="high" owner="ops"}',
        )
        path.write_text(text, encoding="utf-8")
        # What the watcher posts when it sees the write (the watcher is off in snapshots).
        pilot.app.post_message(DiskChanged({path.resolve()}, False))
        await until(pilot, lambda: editor.has_class("-drift"), "the drift flag")
        status = pilot.app.main.status
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        # The status bar shows the new version and its drift (the shot is of both).
        await until(pilot, lambda: status.drift and status.sha == sha, "the status bar's drift")
        await settle(pilot)

    app = make_app(demo)
    assert snap_compare(app, terminal_size=TERMINAL, run_before=run_before)


def test_help_screen(snap_compare: Any, demo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await ready(pilot)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), "the help")
        await settle(pilot)

    app = make_app(demo)
    assert snap_compare(app, terminal_size=TERMINAL, run_before=run_before)
