"""The flow context as the app opens it: nothing is written until something is written on
purpose.

`core.flow.context.FlowContext.open` creates ``.noma-workbench/runs.sqlite3`` at once, so
merely opening a folder in the app would leave a state dir in it, gates on or off. Here the
store is a `LazyRunStore`: reads see an empty store in a private temp dir until the real
database exists, and the first write (a run started with the gates on) creates it. With
the gates off every write is refused before the store is touched, so nothing appears.
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
from core.flow.posture import Posture, workspace_actor
from core.flow.store import DB_NAME, RunStore, Tx
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


def open_flow_context(workspace: Workspace) -> flow_context.FlowContext:
    """What `FlowContext.open` builds, with a `LazyRunStore` (lanes looked up at call time
    through the context module, as tests replace them there)."""
    posture = Posture.from_workspace(workspace)
    return flow_context.FlowContext(
        store=cast(RunStore, LazyRunStore(workspace)),
        catalog=FlowCatalog(workspace.flows_dir),
        posture=posture,
        actor=workspace_actor(workspace, posture.policy),
        lanes=flow_context.default_lanes(workspace.root),
        root=workspace.root,
    )
