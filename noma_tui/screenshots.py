"""Render the real app to SVG screenshots for the README: ``python -m noma_tui.screenshots``.

Each shot runs the app headless at 120x34 on a fresh copy of the demo workspace (so the
shipped demo is never touched), drives it with the same keys a person would press, waits
for its workers, and exports the screen. Files land in ``screenshots/`` at the repo root
(or the folder given as the first argument).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import TextArea

from core.workspace import Workspace

from .app import WorkbenchApp
from .config import WorkbenchConfig
from .demo import ensure_demo_copy
from .messages import DiskChanged
from .screens.proof import ProofScreen
from .screens.source_editor import SourceEditorScreen

SIZE = (120, 34)
OUT = Path(__file__).resolve().parent.parent / "screenshots"
MEMO = "research-memo.noma"
Steps = Callable[[Pilot[Any], Path], Awaitable[None]]


async def _until(pilot: Pilot[Any], condition: Callable[[], bool], limit: float = 30) -> None:
    waited = 0.0
    while not condition():
        if waited > limit:
            raise TimeoutError("the app did not reach the state for the screenshot")
        await pilot.pause(0.02)
        waited += 0.02


async def _ready(pilot: Pilot[Any]) -> WorkbenchApp:
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    await _until(pilot, lambda: app.loaded is not None and app.transcript is not None)
    return app


async def _select(app: WorkbenchApp, pilot: Pilot[Any], ident: str) -> None:
    assert app.loaded is not None
    block = app.loaded.block_of_id(ident)
    assert block is not None
    app.main.doc_tree.reveal(block)
    app.main.doc_tree.focus()
    await pilot.pause()


async def main_screen(pilot: Pilot[Any], root: Path) -> None:
    app = await _ready(pilot)
    await _select(app, pilot, "warm-cache-p95")


async def _open_editor(pilot: Pilot[Any]) -> WorkbenchApp:
    app = await _ready(pilot)
    await _select(app, pilot, "note-method")
    await pilot.press("e")
    await _until(pilot, lambda: isinstance(app.screen, SourceEditorScreen))
    return app


async def proof_preview(pilot: Pilot[Any], root: Path) -> None:
    app = await _ready(pilot)
    await _select(app, pilot, "small-tenant-noise")
    await pilot.press("n")
    await pilot.pause()
    await pilot.press("down", "enter")  # an ::evidence block for the selected claim
    await _until(pilot, lambda: isinstance(app.screen, SourceEditorScreen))
    area = app.screen.query_one("#source", TextArea)
    area.text = area.text.replace(
        "What was measured or observed, and where.",
        "Small tenants, 40 runs per arm: p95 within 3 ms of baseline.",
    )
    await pilot.press("ctrl+s")
    await _until(pilot, lambda: isinstance(app.screen, ProofScreen))


async def drift_warning(pilot: Pilot[Any], root: Path) -> None:
    app = await _open_editor(pilot)
    path = root / MEMO
    text = path.read_text("utf-8").replace(
        '::risk{id="risk-stale-prices" severity="high"}',
        '::risk{id="risk-stale-prices" severity="high" owner="pricing-team"}',
    )
    path.write_text(text, encoding="utf-8")  # "another editor" saves the file
    app.post_message(DiskChanged({path.resolve()}, False))  # what the watcher reports
    await _until(pilot, lambda: app.drift)


async def flow_pane(pilot: Pilot[Any], root: Path) -> None:
    from .panes.flow import FlowFrontierPane
    from .screens.picker import PickerScreen

    app = await _ready(pilot)
    pane = app.main.query_one(FlowFrontierPane)
    await pilot.press("5")
    await app.workers.wait_for_complete()
    await pilot.press("n")
    await _until(pilot, lambda: isinstance(app.screen, PickerScreen))
    await pilot.press("down", "enter")
    await _until(pilot, lambda: bool(pane.runs) and not pane.busy)
    for _ in range(2):  # in progress, then done without evidence: refused, in one line
        await pilot.press("a")
        await _until(pilot, lambda: not pane.busy)
        await app.workers.wait_for_complete()


async def undo(pilot: Pilot[Any], root: Path) -> None:
    app = await _open_editor(pilot)
    app.screen.query_one("#source", TextArea).text = "Numbers from staging only."
    await pilot.press("ctrl+s")
    await _until(pilot, lambda: isinstance(app.screen, ProofScreen))
    count = len(app.transcript.rows) if app.transcript else 0
    await pilot.press("ctrl+s")
    await _until(pilot, lambda: app.transcript is not None and len(app.transcript.rows) > count)
    await _until(pilot, lambda: app.screen is app.main and not app.sessions)
    await app.workers.wait_for_complete()
    await pilot.press("u")  # the revert, as a proof
    await _until(pilot, lambda: isinstance(app.screen, ProofScreen))


async def conflict_view(pilot: Pilot[Any], root: Path) -> None:
    from .screens.conflict import ConflictScreen

    app = await _ready(pilot)
    await _select(app, pilot, "ev-loadtest-march")
    await pilot.press("e")
    await _until(pilot, lambda: isinstance(app.screen, SourceEditorScreen))
    area = app.screen.query_one("#source", TextArea)
    first, second = area.text.split("\n")
    area.text = first.replace("12 runs", "twelve runs") + "\n" + second.replace("18", "17")
    path = root / MEMO
    path.write_text(
        path.read_text("utf-8").replace("spread 18 ms", "spread 19 ms"), encoding="utf-8"
    )
    await pilot.press("ctrl+s")
    await _until(pilot, lambda: isinstance(app.screen, ConflictScreen))


async def search(pilot: Pilot[Any], root: Path) -> None:
    app = await _ready(pilot)
    await pilot.press("1", "slash", *"staging")
    await _until(pilot, lambda: app.main.doc_tree.filter_text == "staging")
    await pilot.press("enter")


SHOTS: dict[str, tuple[str, Steps]] = {
    "main-screen": ("noma-dark", main_screen),
    "main-screen-light": ("noma-light", main_screen),
    "proof-preview": ("noma-dark", proof_preview),
    "drift-warning": ("noma-dark", drift_warning),
    "flow-pane": ("noma-dark", flow_pane),
    "undo": ("noma-dark", undo),
    "conflict-view": ("noma-dark", conflict_view),
    "search": ("noma-dark", search),
}


async def render(name: str, theme: str, steps: Steps, out: Path) -> Path:
    # The demo copy is trusted as the product trusts its own copy, in a config dir of this
    # run only (the user's trusted folders never collect these temp dirs).
    saved = os.environ.get("XDG_CONFIG_HOME")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
        try:
            root = ensure_demo_copy(Path(tmp) / "demo")
            workspace = Workspace.open(root)
            config = WorkbenchConfig.from_workspace(
                workspace, theme=theme, watch=False, cursor_blink=False
            )
            app = WorkbenchApp(workspace, config=config)
            async with app.run_test(size=SIZE) as pilot:
                await steps(pilot, root)
                await app.workers.wait_for_complete()
                await pilot.pause()
                svg = app.export_screenshot(title=f"Noma Workbench · {name}")
        finally:
            if saved is None:
                os.environ.pop("XDG_CONFIG_HOME", None)
            else:
                os.environ["XDG_CONFIG_HOME"] = saved
    target = out / f"{name}.svg"
    target.write_text(svg, encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else OUT
    out.mkdir(parents=True, exist_ok=True)
    for name, (theme, steps) in SHOTS.items():
        print(asyncio.run(render(name, theme, steps, out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
