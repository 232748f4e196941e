"""The workbench's edit loop on large documents (issue 14, the app half of item 7).

Headless (`App.run_test`, 120x34), on generated documents of 1,000 and 5,000 sections:

* ``outside edit``: from writing the file to the frame in which the document tree (the
  row's badge), the diagnostics and the block view show the change. The watcher's
  debounce (400 ms, an OS-level wait) is left out: the bench posts the same
  `DiskChanged` message the watcher posts, right after the write. The edit toggles the
  ``owner`` of the selected ``::risk`` block, so a diagnostic appears or disappears each
  time;
* ``outside +/- line (top)``: the same for an outside edit that adds a line to the first
  ``::risk`` body (removed again the next time): every block after it moves by a line;
* ``outside +/- section``: the same for an outside edit that adds a section near the top
  (removed again the next time): a change of structure, so the tree is rebuilt;
* ``proof shown``: an attribute edit (``a`` on a ``::claim``, a new confidence typed in
  the form), from the ctrl+s that asks for the proof to the frame that draws the proof;
* ``applied``: from the ctrl+s on the proof to the frame in which the main screen shows
  the new version (tree, diagnostics and block view all on it);
* ``body +/- line (top)``: the same two for a body edit (``e``) of the first ``::risk`` that
  adds a line (removes it the next time): every block after it moves by one line;
* ``open``: from opening the workspace to the first frame that draws the tree with the
  document's rows (the cursor on them: the tree takes keys), and to the first frame with
  every row of the expanded parents (a document with one top heading has it expanded);
* ``peak RSS``: ``ru_maxrss`` of a child process that opened the document in the app
  and filled the tree.

A "frame" is a call of the app's ``_display`` (where a terminal would get the bytes)
after the condition holds; it is checked inside that call, so no frame is missed between
two polls. Keys go through the driver like a terminal's. Each measured action starts from
an idle app, as a person's next key finds it: the app's idle garbage collection
(`noma_tui.gc_policy`, its delay cut to 0.2 s here) has run. Medians per size.

Run: ``./dev bench app [--sections 1000,5000] [--runs N] [--edits N] [--no-rss]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.widgets import Input, TextArea

from bench.generate import generate
from core.workspace import Workspace
from noma_tui.app import WorkbenchApp
from noma_tui.config import WorkbenchConfig
from noma_tui.messages import DiskChanged
from noma_tui.screens.form import FormScreen
from noma_tui.screens.main import MainScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen

SIZE = (120, 34)
IDLE = 0.2  # the app's idle-collection delay in the bench (1.5 s in use)
RISK = '::risk{id="risk-0" owner="team-0" severity="'
RISK_NO_OWNER = '::risk{id="risk-0" severity="'


async def _wait(condition: Callable[[], bool], what: str, limit: float = 120.0) -> None:
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > limit:
            raise TimeoutError(f"the app did not get there: {what}")
        await asyncio.sleep(0.001)


class Frames:
    """Records the time of the first frame drawn while a condition holds."""

    def __init__(self, app: WorkbenchApp) -> None:
        self.condition: Callable[[Any], bool] | None = None
        self.at: float | None = None
        display = app._display

        def spy(screen: Any, renderable: Any) -> None:
            display(screen, renderable)
            condition = self.condition
            armed = renderable is not None and condition is not None and self.at is None
            if armed and condition is not None and condition(screen):
                self.at = time.perf_counter()

        app._display = spy  # type: ignore[method-assign]

    def arm(self, condition: Callable[[Any], bool]) -> None:
        self.at = None
        self.condition = condition

    async def drawn(self, what: str) -> float:
        await _wait(lambda: self.at is not None, what)
        assert self.at is not None
        return self.at


def _on_version(app: WorkbenchApp, sha: Callable[[str], bool]) -> Callable[[Any], bool]:
    def shown(screen: Any) -> bool:
        main = app.main
        loaded = app.loaded
        return (
            isinstance(screen, MainScreen)
            and loaded is not None
            and sha(loaded.sha256)
            and main.doc_tree.loaded is loaded
            and main.diagnostics.loaded is loaded
            and main.block_view.loaded is loaded
        )

    return shown


async def _idle(app: WorkbenchApp) -> None:
    """Let the app settle as it does between a person's edits: its idle collection
    (`noma_tui.gc_policy`, delay shortened for the bench) has run."""
    collector = getattr(app, "collector", None)  # absent before issue 14: nothing to wait for
    if collector is not None:
        await _wait(lambda: collector.timer is None, "the idle collection")


async def _select(app: WorkbenchApp, ident: str) -> None:
    loaded = app.loaded
    assert loaded is not None
    block = loaded.block_of_id(ident)
    assert block is not None, ident
    app.main.doc_tree.reveal(block)
    app.main.doc_tree.focus()
    await _wait(lambda: app.main.block_view.block == block, f"{ident} selected")


def _tree_shown(app: WorkbenchApp, *, whole: bool) -> Callable[[Any], bool]:
    """The main screen's tree drawn with the document's rows in it (``whole``: every row
    of the expanded parents added)."""

    def shown(screen: Any) -> bool:
        tree = app.main.doc_tree if isinstance(screen, MainScreen) else None
        if tree is None or tree.loaded is None or len(tree.root.children) == 0:
            return False
        return not tree.filling if whole else True

    return shown


async def one_run(path: Path, edits: int, sections: int, run: int = 0) -> dict[str, list[float]]:
    started = time.perf_counter()
    workspace = Workspace.open(path.parent)
    config = WorkbenchConfig(watch=False, cursor_blink=False)
    app = WorkbenchApp(workspace, document=path, config=config, single_file=True)
    opening = Frames(app)
    opening.arm(_tree_shown(app, whole=False))
    out: dict[str, list[float]] = {
        "usable": [],
        "full": [],
        "outside": [],
        "moved": [],
        "structure": [],
        "proof": [],
        "applied": [],
        "body proof": [],
        "body applied": [],
    }
    if hasattr(app, "collector"):
        app.collector.delay = IDLE
    async with app.run_test(size=SIZE) as pilot:
        out["usable"].append(await opening.drawn("the first rows of the tree") - started)
        opening.arm(_tree_shown(app, whole=True))
        out["full"].append(await opening.drawn("the whole tree") - started)
        frames = Frames(app)
        await _wait(
            lambda: app.loaded is not None and app.loaded.checked and app.transcript is not None,
            "loaded and checked",
        )
        await _wait(lambda: not app.main.doc_tree.filling, "tree filled")
        driver = app._driver
        assert driver is not None

        # -- outside edits: an attribute (a diagnostic comes and goes), a line added to
        #    the first risk's body (every block after it moves by one line), a section
        #    added near the top (a change of structure); each undone the next time -------
        await _select(app, "risk-0")
        line = "A second line of the body.\n"
        body = "The effect may not hold for larger tenants.\n"
        section = "## Added outside\n\nWritten by another editor.\n\n"
        anchor = "## Finding 3: "
        series: dict[str, tuple[str, str]] = {
            "outside": (RISK, RISK_NO_OWNER),
            "moved": (body, body + line),
            "structure": (anchor, section + anchor),
        }
        for key, (one, other) in series.items():
            for _ in range(edits):
                await pilot.pause()
                text = path.read_text("utf-8")
                new = text.replace(other, one, 1) if other in text else text.replace(one, other, 1)
                target = hashlib.sha256(new.encode("utf-8")).hexdigest()
                await _idle(app)
                frames.arm(_on_version(app, lambda s, t=target: s == t))  # type: ignore[misc]
                t0 = time.perf_counter()
                path.write_text(new, encoding="utf-8")
                app.post_message(DiskChanged({path.resolve()}, False))
                out[key].append(await frames.drawn(f"{key} edit shown") - t0)
        await _wait(lambda: not app.main.doc_tree.filling, "tree filled again")

        # -- proof and apply of an attribute edit ---------------------------------------
        for i in range(edits):
            await _select(app, f"claim-{(i * 37 + 5) % sections}")
            await pilot.pause()
            driver.send_message(events.Key("a", "a"))
            await _wait(lambda: isinstance(app.screen, FormScreen), "the attribute form")
            await pilot.pause()
            form = app.screen
            form.query_one("#field-key", Input).value = "confidence"
            # a value no earlier run set (a noop would draw nothing new)
            form.query_one("#field-value", Input).value = f"0.{101 + run * edits + i}"
            await _proof_and_apply(app, pilot, frames, out["proof"], out["applied"])

        # -- proof and apply of a body edit that adds (then removes) a line of the first
        #    risk: every block after it moves by one line --------------------------------
        for _ in range(edits):
            await _select(app, "risk-0")
            await pilot.pause()
            driver.send_message(events.Key("e", "e"))
            await _wait(lambda: isinstance(app.screen, SourceEditorScreen), "the body editor")
            await pilot.pause()
            area = app.screen.query_one("#source", TextArea)
            lines = area.text.split("\n")
            area.text = "\n".join(lines[:1] if len(lines) > 1 else [*lines, "A second line."])
            await _proof_and_apply(app, pilot, frames, out["body proof"], out["body applied"])
    return out


async def _proof_and_apply(
    app: WorkbenchApp, pilot: Any, frames: Frames, proof: list[float], applied: list[float]
) -> None:
    """From an editor holding a change: time ctrl+s to the proof drawn, then the confirming
    ctrl+s to the main screen showing the new version; each from an idle app."""
    driver = app._driver
    assert driver is not None and app.loaded is not None
    await pilot.pause()
    pre = app.loaded.sha256
    await _idle(app)
    frames.arm(lambda screen: isinstance(screen, ProofScreen) and screen.is_mounted)
    t0 = time.perf_counter()
    driver.send_message(events.Key("ctrl+s", None))
    proof.append(await frames.drawn("the proof") - t0)
    await pilot.pause()
    await _idle(app)
    frames.arm(_on_version(app, lambda s, p=pre: s != p))  # type: ignore[misc]
    t0 = time.perf_counter()
    driver.send_message(events.Key("ctrl+s", None))
    applied.append(await frames.drawn("the applied edit") - t0)
    await _wait(lambda: not app.sessions, "the edit closed")


def peak_rss_mb(path: Path) -> float:
    """Peak RSS of a fresh process that opened ``path`` in the app (tree filled).

    Read from the child's own ``VmHWM`` where there is one (Linux): ``ru_maxrss`` of a
    child counts its parent's RSS at the fork (Linux carries the old high-water mark over
    the exec), so after the bench's own runs it reported ~280 MB for a ~120 MB app."""
    code = (
        "import asyncio, json, resource, sys\n"
        "from bench.app_bench import _open_and_fill\n"
        "asyncio.run(_open_and_fill(sys.argv[1]))\n"
        "kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            kib = int(line.split()[1])\n"
        "except OSError:\n"
        "    pass\n"
        "print(json.dumps(kib))\n"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1])) / 1024


async def _open_and_fill(path_text: str) -> None:
    path = Path(path_text)
    workspace = Workspace.open(path.parent)
    config = WorkbenchConfig(watch=False, cursor_blink=False)
    app = WorkbenchApp(workspace, document=path, config=config, single_file=True)
    async with app.run_test(size=SIZE) as pilot:
        await _wait(lambda: app.loaded is not None and app.loaded.checked, "loaded and checked")
        await _wait(lambda: not app.main.doc_tree.filling, "tree filled")
        await pilot.pause()


def _line(label: str, values: list[float]) -> str:
    median = statistics.median(values) * 1000
    worst = max(values) * 1000
    return f"  {label:<30} median {median:7.1f} ms   max {worst:7.1f} ms   (n={len(values)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.app_bench", description=__doc__)
    parser.add_argument("--sections", default="1000,5000")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--edits", type=int, default=8)
    parser.add_argument("--no-rss", action="store_true")
    args = parser.parse_args(argv)
    # The app keeps an undo journal (and trust) in the user's state dirs: the bench's own.
    scratch = tempfile.mkdtemp(prefix="noma-app-bench-")
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        os.environ[name] = os.path.join(scratch, name.lower())
    labels = {
        "usable": "open -> tree rows drawn",
        "full": "open -> whole tree drawn",
        "outside": "outside edit -> panes",
        "moved": "outside +/- line (top) -> panes",
        "structure": "outside +/- section -> panes",
        "proof": "proof shown",
        "applied": "edit applied and shown",
        "body proof": "body +/- line (top): proof",
        "body applied": "body +/- line (top): applied",
    }
    for n in (int(s) for s in args.sections.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.noma"
            path.write_text(generate(n), encoding="utf-8")
            totals: dict[str, list[float]] = {k: [] for k in labels}
            for run in range(args.runs):
                # Each run opens the document as a fresh process would: the previous run's
                # app is cyclic garbage (~10^6 objects at 20k sections) that the next open
                # would otherwise collect inside its own timing (~1 s at 20k).
                gc.collect()
                result = asyncio.run(one_run(path, args.edits, n, run))
                for key, values in result.items():
                    totals[key].extend(values)
            print(f"{n} sections ({path.stat().st_size / 1e6:.1f} MB)")
            for key, label in labels.items():
                print(_line(label, totals[key]))
            if not args.no_rss:
                print(f"  {'peak RSS, document open':<30} {peak_rss_mb(path):7.1f} MB")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
