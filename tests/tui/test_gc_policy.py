"""Full garbage collections wait for an idle moment (`noma_tui.gc_policy`): after a new
version is shown and nothing follows, one collection runs and the survivors are frozen;
the app leaves nothing frozen when it exits."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from tui_helpers import make_app, ready, until


@pytest.mark.long(12)
async def test_idle_collection_freezes_survivors_and_exit_unfreezes(demo: Path) -> None:
    app = make_app(demo)
    app.collector.delay = 0.05
    async with app.run_test() as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.collector.collections >= 1, "the idle collection")
        assert app.collector.timer is None
        assert gc.get_freeze_count() > 1000, "the loaded document's objects are frozen"
        before = app.collector.collections
        app.collector.touched()
        app.collector.touched()  # a burst of versions: one collection after the last
        await until(pilot, lambda: app.collector.collections > before, "the next collection")
        await pilot.pause(0.2)
        assert app.collector.collections == before + 1
    assert gc.get_freeze_count() == 0


def test_a_frozen_cycle_is_collected_at_the_next_full_idle_collection() -> None:
    """Idle collections between the full ones walk only unfrozen objects (cheap at any
    document size); a cycle frozen while alive goes at the next full one."""
    import weakref

    from noma_tui.gc_policy import FULL_EVERY, IdleCollector

    class Cell:
        pass

    a, b = Cell(), Cell()
    a.other, b.other = b, a  # type: ignore[attr-defined]
    probe = weakref.ref(a)
    collector = IdleCollector.__new__(IdleCollector)
    collector.timer = None
    collector.collections = 0
    try:
        collector.collect()  # full: freezes the cycle while it is alive
        del a, b
        gc.collect()
        assert probe() is not None, "frozen: ordinary collections skip it"
        for _ in range(FULL_EVERY - 1):
            collector.collect()
            assert probe() is not None, "frozen: idle collections between full ones skip it"
        collector.collect()  # full: unfreezes first, so the cycle goes
        assert probe() is None
    finally:
        gc.unfreeze()


def test_without_a_delay_nothing_is_scheduled() -> None:
    """``delay=None`` (what the app tests set): a new version never schedules a collection."""
    from noma_tui.gc_policy import IdleCollector

    class NoTimers:
        def set_timer(self, *_args: object, **_kwargs: object) -> None:
            raise AssertionError("a collection was scheduled")

    collector = IdleCollector(NoTimers(), delay=None)  # type: ignore[arg-type]
    collector.touched()
    collector.touched()
    assert collector.timer is None and collector.collections == 0
