"""Helpers for the app tests: an app with the watcher, cursor blink and idle collection off
and the theme pinned, and waits that poll app state (never a fixed sleep, never a wall-clock
assert).

A module of its own (not ``conftest``) so test files can import it by a unique name."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from core.workspace import Workspace
from noma_tui.app import WorkbenchApp
from noma_tui.config import WorkbenchConfig
from noma_tui.demo import ensure_demo_copy
from noma_tui.panes.flow import FlowFrontierPane

TERMINAL = (120, 34)
MEMO = "research-memo.noma"
ADR = "decision-record.noma"
SPEC = "pricing-spec.noma"


def copy_demo(tmp_path: Path) -> Path:
    """A writable copy of the shipped demo workspace (same bytes every time), made and
    trusted the way the product makes its own demo copy."""
    return ensure_demo_copy(tmp_path / "workspace")


def make_app(
    root: Path,
    *,
    document: Path | None = None,
    watch: bool = False,
    theme: str = "noma-dark",
    keymap: dict[str, str] | None = None,
    single_file: bool = False,
) -> WorkbenchApp:
    workspace = Workspace.open(root)
    config = WorkbenchConfig.from_workspace(workspace, theme=theme, watch=watch, cursor_blink=False)
    if keymap is not None:
        config.keymap = keymap
    app = WorkbenchApp(workspace, document=document, config=config, single_file=single_file)
    # No idle collection: in a test worker its first, full pass walks the worker's whole heap
    # (every test module and earlier app, ~1M objects: ~0.5 s), not an app's. The collector
    # is tested on its own (`test_gc_policy`), with a delay of its own.
    app.collector.delay = None
    return app


async def until(pilot: Pilot[Any], condition: Callable[[], bool], what: str, limit: float = 30):
    """Poll ``condition`` between event-loop turns; ``limit`` only guards against a hang."""
    waited = 0.0
    while not condition():
        if waited >= limit:
            raise AssertionError(f"gave up waiting for: {what}")
        await pilot.pause(0.02)
        waited += 0.02


async def ready(pilot: Pilot[Any], name: str = MEMO) -> WorkbenchApp:
    """Wait until ``name`` is shown with its transcript and the file list."""
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    await until(
        pilot,
        lambda: (
            app.loaded is not None
            and app.loaded.name == name
            and app.loaded.checked
            and app.transcript is not None
            and app.transcript.path.name == name + ".patches"
            and bool(app.documents)
        ),
        f"{name} loaded",
    )
    # The transcript has scrolled to its last record (a modal pushed later shows the
    # main screen as it was then, so snapshots need this settled first).
    await until(pilot, lambda: not app.main.transcript.following, "the transcript at its end")
    await pilot.pause()
    return app


async def flow_pane(pilot: Pilot[Any]) -> FlowFrontierPane:
    """Key 5 focuses the flow pane; returns it once its calls are done (flows, runs)."""
    app = pilot.app
    pane = app.screen.query_one(FlowFrontierPane)
    await pilot.press("5")
    await app.workers.wait_for_complete()
    return pane


async def select(pilot: Pilot[Any], ident: str) -> int:
    app = pilot.app
    assert isinstance(app, WorkbenchApp) and app.loaded is not None
    block = app.loaded.block_of_id(ident)
    assert block is not None, ident
    app.main.doc_tree.reveal(block)
    app.main.doc_tree.focus()
    await until(
        pilot,
        lambda: app.main.selected() == block and app.main.block_view.block == block,
        f"{ident} selected and shown",
    )
    return block


def records(path: Path) -> list[dict[str, Any]]:
    """The transcript's complete records. Polled while the app may be appending one: a
    read can see part of a write in flight (one ``write`` of a record that crosses a page
    is not atomic for a reader), so a final line without its newline is not read yet."""
    transcript = Path(str(path) + ".patches")
    if not transcript.exists():
        return []
    text = transcript.read_text("utf-8")
    complete = text[: text.rfind("\n") + 1]
    return [json.loads(line) for line in complete.splitlines()]


def burst(app: WorkbenchApp, keys: str | list[str]) -> None:
    """Send ``keys`` the way a fast typist, an unbracketed paste or ``tmux send-keys`` does:
    every key queued at once, no turn of the event loop in between (`Pilot.press` waits
    for idle after each key, which hides ordering bugs)."""
    from textual import events
    from textual.keys import _character_to_key

    for key in keys:
        char = key if len(key) == 1 else None
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        app.post_message(events.Key(name, char))


def paste(app: WorkbenchApp, text: str) -> None:
    """A bracketed paste, as a terminal delivers it."""
    from textual import events

    app.post_message(events.Paste(text))


class ProofLog:
    """What the writer was shown and what was written, for the burst properties.

    Records every proof drawn (its post sha256, and how many proofs were on the stack) and
    every proof confirmed for writing (with how many proofs had been drawn by then). A
    burst's timing decides whether a key lands in a proof or is dropped while one is being
    prepared, so a proof may be drawn and then left unapplied; what may never happen is a
    write other than the proof on screen when the writer confirmed it.
    """

    def __init__(self, app: WorkbenchApp) -> None:
        from noma_tui.screens.proof import ProofScreen

        self.shown: list[str] = []
        self.stacked: list[int] = []
        self.confirmed: list[tuple[str, int]] = []
        real_push = app.push_screen

        def push(screen: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(screen, ProofScreen):
                self.shown.append(screen.proof.outcome.post_sha256)
                self.stacked.append(sum(isinstance(s, ProofScreen) for s in app.screen_stack) + 1)
            return real_push(screen, *args, **kwargs)

        app.push_screen = push  # type: ignore[method-assign]
        pipeline = app.pipeline
        real_apply = pipeline._apply

        def apply(pending: Any) -> None:  # the confirmed proof's worker
            screen = pending.proof_screen
            assert screen is not None, "a write with no proof confirmed"
            self.confirmed.append((screen.proof.outcome.post_sha256, len(self.shown)))
            real_apply(pending)

        pipeline._apply = apply  # type: ignore[method-assign]

    def check(self, path: Path, original: str, earlier_records: int) -> None:
        """One proof at a time; each write is the proof last drawn when it was confirmed;
        the file is the last write, or untouched."""
        from core.noma.files import read_source

        assert all(n == 1 for n in self.stacked), self.stacked
        for sha, drawn in self.confirmed:
            assert drawn and self.shown[drawn - 1] == sha, (self.shown, self.confirmed)
        written = [
            r["post_sha256"]
            for r in records(path)[earlier_records:]
            if r["patch_result"] == "applied"
        ]
        confirmed = iter(sha for sha, _drawn in self.confirmed)
        assert all(sha in confirmed for sha in written), (written, self.confirmed)  # in order
        assert read_source(path).sha256 == (written[-1] if written else original)
