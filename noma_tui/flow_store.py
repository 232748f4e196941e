"""The flow context as the app opens it: nothing is written until something is written on
purpose.

`core.flow.context.FlowContext.open` creates ``.noma-workbench/runs.sqlite3`` and the
workspace's ``actor.key`` at once, so merely opening a folder in the app would leave a state
dir in it, gates on or off. Here, while the workspace has no run store yet, the context is
a *lazy* one: its store is a `LazyRunStore` (reads see an empty store in a private temp
dir) and its actor is not yet keyed (no key file is created; an empty store has nothing for
the actor to see). `settled` swaps it for the real `FlowContext.open` as soon as the
database exists (another process made it) or a write is about to happen with run writes
enabled (the first run started). With the gates off every write is refused before the
store is touched, so nothing appears. A workspace that already has its database, or a
configured PostgreSQL store, is opened as `FlowContext.open` does at once.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from core.flow import context as flow_context
from core.flow.catalog import FlowCatalog
from core.flow.posture import Actor, Posture
from core.flow.store import DB_NAME, RunStore, Tx
from core.flow.store_pg import store_url
from core.workspace import STATE_DIR, Workspace


class LazyRunStore:
    """A `RunStore` stand-in that creates the workspace's database on first write."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._real: RunStore | None = None
        self._empty: RunStore | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._lock = threading.Lock()

    @property
    def on_disk(self) -> bool:
        """True once the workspace has a run database (ours or another caller's)."""
        return (self._workspace.root / STATE_DIR / DB_NAME).is_file()

    def _current(self, *, writing: bool) -> RunStore:
        with self._lock:
            if self._real is None and (writing or self.on_disk):
                self._real = RunStore.open(self._workspace.state_dir)
            if self._real is not None:
                return self._real
            if self._empty is None:
                self._scratch = tempfile.TemporaryDirectory(prefix="noma-no-runs-")
                self._empty = RunStore.open(Path(self._scratch.name))
            return self._empty

    @contextmanager
    def write(self) -> Iterator[Tx]:
        """Only reached when a caller skipped `settled` (its actor is not keyed yet): the
        database is still created, so nothing is lost, but the caller is a bug."""
        with self._current(writing=True).write() as tx:
            yield tx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._current(writing=False), name)

    def close(self) -> None:
        with self._lock:
            for store in (self._real, self._empty):
                if store is not None:
                    store.close()
            self._real = self._empty = None
            if self._scratch is not None:
                self._scratch.cleanup()
                self._scratch = None


def _has_store(workspace: Workspace) -> bool:
    if (workspace.root / STATE_DIR / DB_NAME).is_file():
        return True
    try:
        return store_url(workspace.section("store").get("url")) is not None
    except Exception:  # a bad URL: FlowContext.open reports it with its own error
        return True


def is_lazy(ctx: object) -> bool:
    """True for a context `open_flow_context` made without touching the workspace."""
    return isinstance(ctx, flow_context.FlowContext) and isinstance(ctx.store, LazyRunStore)


def open_flow_context(workspace: Workspace) -> flow_context.FlowContext:
    """`FlowContext.open` where the workspace has a run store; else a lazy context that
    writes nothing (lanes looked up at call time through the context module, as tests
    replace them there)."""
    if _has_store(workspace):
        return flow_context.FlowContext.open(workspace)
    posture = Posture.from_workspace(workspace)
    return flow_context.FlowContext(
        store=cast(RunStore, LazyRunStore(workspace)),
        catalog=FlowCatalog(workspace.flows_dir),
        posture=posture,
        # Not keyed yet (no key file is made on open): the empty store has nothing to show.
        actor=Actor("unkeyed", frozenset(posture.policy.scopes)),
        lanes=flow_context.default_lanes(workspace.root),
        root=workspace.root,
    )


def settled(
    ctx: flow_context.FlowContext, workspace: Workspace, *, write: bool
) -> flow_context.FlowContext:
    """``ctx``, or the real context in its place once the workspace has a store or this
    call is a write that the gates allow (the caller closes nothing: the lazy one is closed
    here). A context that is not lazy is returned as it is."""
    if not is_lazy(ctx):
        return ctx
    if _has_store(workspace) or (write and ctx.posture.gates.run_writes_enabled):
        real = flow_context.FlowContext.open(workspace)
        ctx.close()
        return real
    return ctx
