"""Workbench responsiveness on the 5,000-section benchmark document.

Measures, with `App.run_test` (headless, 120x34), over several runs:

* time-to-tree: from creating the app to the first frame in which the document tree
  draws the document's rows (parse and validation run in a worker thread; the tree is
  filled lazily);
* time-to-full-tree: until the 5,000 top sections are all in the tree (chunked adds);
* cursor move: one key press in the tree until the block view has drawn the new block
  (key handling, the highlight message, the block view update and the next frame);
* expand: opening one section's children.

Prints medians. Run: ``python -m bench.tui_bench [--sections N] [--runs N] [--moves N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from textual import events

from bench.generate import generate
from core.workspace import Workspace
from noma_tui.app import WorkbenchApp
from noma_tui.config import WorkbenchConfig

SIZE = (120, 34)


async def _wait(condition, limit: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > limit:
            raise TimeoutError("the app did not get there")
        await asyncio.sleep(0.001)


async def one_run(path: Path, moves: int) -> dict[str, list[float]]:
    workspace = Workspace.open(path.parent)
    config = WorkbenchConfig(watch=False, cursor_blink=False)
    started = time.perf_counter()
    app = WorkbenchApp(workspace, document=path, config=config, single_file=True)
    out: dict[str, list[float]] = {"tree": [], "full": [], "move": [], "expand": []}
    async with app.run_test(size=SIZE) as pilot:
        tree = app.main.doc_tree
        painted: list[float] = []
        render_lines = tree.render_lines

        def spy(crop):  # type: ignore[no-untyped-def]
            strips = render_lines(crop)
            if not painted and tree.loaded is not None and tree.root.children:
                # first frame with document rows (re-armed before the expand measurement)
                painted.append(time.perf_counter())  # the first frame with document rows
            return strips

        tree.render_lines = spy  # type: ignore[method-assign]
        await _wait(lambda: bool(painted))
        out["tree"].append(painted[0] - started)
        await _wait(lambda: not tree.filling)
        out["full"].append(time.perf_counter() - started)
        tree.focus()
        await pilot.press("down", "down")  # onto the first finding section
        view = app.main.block_view
        shown: list[int | None] = [None]
        view_render_line = view.render_line

        def view_spy(y):  # type: ignore[no-untyped-def]
            shown[0] = view.block  # the block whose rows were just drawn
            return view_render_line(y)

        view.render_line = view_spy  # type: ignore[method-assign]
        driver = app._driver
        assert driver is not None
        for _ in range(moves):
            await pilot.pause()
            target = tree.cursor_line + 1
            t0 = time.perf_counter()
            # Delivered like a terminal key (not `pilot.press`, which adds ~40 ms of its
            # own idle-waiting per key): through the driver into the app's queue.
            driver.send_message(events.Key("down", None))
            await _wait(lambda t=target: tree.cursor_line == t)  # type: ignore[misc]
            block = tree.cursor_block()
            await _wait(lambda b=block: shown[0] == b)  # type: ignore[misc]
            out["move"].append(time.perf_counter() - t0)
        node = tree.cursor_node
        if node is not None and node.allow_expand and not node.is_expanded:
            await pilot.pause()
            painted.clear()
            t0 = time.perf_counter()
            driver.send_message(events.Key("space", " "))
            await _wait(lambda: bool(node.children) and bool(painted))
            out["expand"].append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tui_bench", description=__doc__)
    parser.add_argument("--sections", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--moves", type=int, default=40)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.noma"
        text = generate(args.sections)
        path.write_text(text, encoding="utf-8")
        lines = text.count("\n") + 1
        print(f"document: {args.sections} sections, {lines} lines, {len(text) / 1e6:.1f} MB")
        totals: dict[str, list[float]] = {"tree": [], "full": [], "move": [], "expand": []}
        for _ in range(args.runs):
            result = asyncio.run(one_run(path, args.moves))
            for key, values in result.items():
                totals[key].extend(values)
    labels = {
        "tree": "time-to-tree",
        "full": "time-to-full-tree",
        "move": "cursor move",
        "expand": "expand a section",
    }
    for key, label in labels.items():
        values = totals[key]
        if not values:
            continue
        median = statistics.median(values)
        worst = max(values)
        p95 = statistics.quantiles(values, n=20)[-1] if len(values) >= 20 else worst
        unit, scale = ("s", 1.0) if key in ("tree", "full") else ("ms", 1000.0)
        print(
            f"{label:<18} median {median * scale:8.3f} {unit}   p95 {p95 * scale:8.3f} {unit}"
            f"   max {worst * scale:8.3f} {unit}   (n={len(values)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
