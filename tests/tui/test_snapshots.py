"""Snapshots (pytest-textual-snapshot) of the screens people look at most.

Fixed terminal size, pinned theme, cursor blink and the watcher off, workers awaited
before the shot. The demo data is fixed (its transcript times are part of the shipped
files) and no absolute path is rendered. The flow pane belongs to the Flow issue; here it
is replaced by a fixed stand-in so these pictures change only when this app does.

Regenerate with ``pytest tests/tui --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.pilot import Pilot
from textual.widgets import Static, TextArea
from tui_helpers import TERMINAL, make_app, ready, select, until

from core.workspace import Workspace
from noma_tui.messages import DiskChanged
from noma_tui.screens import main as main_screen
from noma_tui.screens.help import HelpScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen


class FlowPaneStandIn(Vertical):
    """Holds the flow pane's place with fixed content (see the module docstring)."""

    DEFAULT_CSS = "FlowPaneStandIn { height: auto; min-height: 3; }"

    def __init__(self, workspace: Workspace, *, id: str | None = "flow-pane") -> None:
        super().__init__(id=id)

    def compose(self) -> ComposeResult:
        yield Static("Flow runs (Flow issue)")


@pytest.fixture(autouse=True)
def fixed_flow_pane(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(main_screen, "FlowFrontierPane", FlowPaneStandIn)


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.app.workers.wait_for_complete()
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


def test_main_screen_dark(snap_compare: Any, demo: Path) -> None:
    app = make_app(demo, theme="noma-dark")
    assert snap_compare(app, terminal_size=TERMINAL, run_before=main_screen_with_a_claim)


def test_main_screen_light(snap_compare: Any, demo: Path) -> None:
    app = make_app(demo, theme="noma-light")
    assert snap_compare(app, terminal_size=TERMINAL, run_before=main_screen_with_a_claim)


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
