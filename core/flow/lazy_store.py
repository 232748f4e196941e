"""A run store that is only created when something is written: for a surface that merely
opens a folder (the app), which must leave no state dir behind.

`FlowContext.open(workspace, lazy=True)` puts a `LazyRunStore` in the context while the
workspace has no run store yet: reads see an empty store held in memory (no file is made
anywhere: not in the folder, not in a temp dir), and the
context's actor is not keyed (no key file is made; an empty store has nothing for it to
see). `FlowContext.settled` swaps in the real context as soon as the database exists
(another process made it) or a write the gates allow is about to happen. With the gates
off every write is refused before the store is touched, so nothing appears.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..workspace import STATE_DIR, Workspace
from .store import DB_NAME, RunStore, Tx
from .store_pg import store_url


def has_run_store(workspace: Workspace) -> bool:
    """True where opening the real store writes nothing new: its SQLite database exists,
    or a PostgreSQL store is configured (a bad URL counts too: opening it reports it)."""
    if (workspace.root / STATE_DIR / DB_NAME).is_file():
        return True
    try:
        return store_url(workspace.section("store").get("url")) is not None
    except Exception:  # a bad URL: FlowContext.open reports it with its own error
        return True


class LazyRunStore:
    """A `RunStore` stand-in that creates the workspace's database on first write."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._real: RunStore | None = None
        self._empty: RunStore | None = None
        # Keeps the in-memory empty store alive while worker threads open and release theirs.
        self._anchor: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @property
    def on_disk(self) -> bool:
        """True once the workspace has a run database (ours or another caller's)."""
        return (self.workspace.root / STATE_DIR / DB_NAME).is_file()

    def _current(self, *, writing: bool) -> RunStore:
        with self._lock:
            if self._real is None and (writing or self.on_disk):
                self._real = RunStore.open(self.workspace.state_dir)
            if self._real is not None:
                return self._real
            if self._empty is None:
                uri = f"file:noma-no-runs-{secrets.token_hex(8)}?mode=memory&cache=shared"
                self._anchor = sqlite3.connect(uri, uri=True, check_same_thread=False)
                self._empty = RunStore(Path(uri))
            return self._empty

    @contextmanager
    def write(self) -> Iterator[Tx]:
        """Only reached when a caller skipped `FlowContext.settled` (its actor is not keyed
        yet): the database is still created, so nothing is lost, but the caller is a bug."""
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
            if self._anchor is not None:
                self._anchor.close()
                self._anchor = None
