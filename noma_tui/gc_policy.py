"""Garbage collection off the edit path.

With a 5,000-section document open the app holds ~300,000 tracked objects (the document
versions, their indexes, the tree's nodes). Python's full collection walks all of them:
~200 ms on this machine class, and it falls wherever allocation counts say, often in
the middle of drawing a proof or refreshing panes (measured: seven full collections,
1.5 s, in one bench session). Most of those objects are immutable trees that only
reference counting ever frees; walking them finds nothing.

So the app collects when it is idle: a short while after a new version is shown (or the
tree is rebuilt) with no further one, it collects and then freezes the survivors
(`gc.freeze`), so later collections skip them. Frozen objects are still freed by
reference counting; only cyclic garbage among them (closed screens, mostly) waits for a
full collection, which unfreezes everything first. A full one walks every object (~200 ms
in the app at 5,000 sections, growing with the document; a key typed meanwhile waits), so
only the first idle collection and every `FULL_EVERY`-th after it is full; the others walk
only what was made since the last freeze (the engine shares a version's unchanged nodes).
On exit everything is unfrozen again. While it owns the frozen set it tells the engine so
(`core.noma.nodes.own_freezing`): a parse then neither unfreezes it nor counts it
(counting walks every frozen object: ~35 ms per parse, however small, with a
5,000-section document open).
"""

from __future__ import annotations

import gc
from typing import Any

from textual.app import App
from textual.timer import Timer

from core.noma.api import own_freezing

IDLE_SECONDS = 1.5
FULL_EVERY = 8


class IdleCollector:
    """Schedules the idle collection for one app (`touched` after each new version)."""

    def __init__(self, app: App[Any], *, delay: float | None = IDLE_SECONDS) -> None:
        self.app = app
        # None: never collect on idle (the app tests set it, see ``tui_helpers.make_app``).
        self.delay = delay
        self.timer: Timer | None = None
        self.collections = 0  # idle collections run (tests read it; every FULL_EVERY-th is full)

    def touched(self) -> None:
        """A new version was shown: collect once things have been quiet for a while."""
        if self.delay is None:
            return
        if self.timer is not None:
            self.timer.reset()
            return
        self.timer = self.app.set_timer(self.delay, self.collect)

    def collect(self) -> None:
        self.timer = None
        own_freezing(True)  # a parse must not unfreeze (nor count) what this freezes
        if self.collections % FULL_EVERY == 0:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.collections += 1

    def close(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None
        gc.unfreeze()
        own_freezing(False)
