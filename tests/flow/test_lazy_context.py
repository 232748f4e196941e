"""`FlowContext.open(workspace, lazy=True)`: the one way a surface opens a workspace it
only looks at. Nothing is written until a run write the gates allow (or until another
process made the store), and then the context is the one `FlowContext.open` makes."""

from __future__ import annotations

from pathlib import Path

from core.flow import FlowRefusal, list_runs, start_run
from core.flow.context import UNKEYED, FlowContext
from core.flow.lazy_store import LazyRunStore
from core.flow.store import DB_NAME
from core.workspace import STATE_DIR, Workspace

from .conftest import ACTOR, make_workspace, started


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_a_lazy_context_reads_an_empty_store_and_writes_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", writes=True)
    before = files(root)
    ctx = FlowContext.open(Workspace.open(root), lazy=True)
    try:
        assert ctx.is_lazy and isinstance(ctx.store, LazyRunStore)
        assert ctx.actor.hash == UNKEYED and ctx.actor_key == b""
        assert list_runs(ctx, {})["runs"] == []
        assert ctx.settled(write=False) is ctx  # a read keeps it lazy
        assert ctx.catalog.find("flow_weekly_review", "1.0.0") is not None
    finally:
        ctx.close()
    assert files(root) == before
    assert not (root / STATE_DIR).exists()


def test_with_the_gates_off_even_a_write_leaves_the_folder_alone(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", writes=False)
    before = files(root)
    ctx = FlowContext.open(Workspace.open(root), lazy=True)
    try:
        ctx = ctx.settled(write=True)
        assert ctx.is_lazy
        refused = start_run(ctx, {"flow_id": "flow_weekly_review", "flow_version": "1.0.0"})
        assert isinstance(refused, FlowRefusal)
        assert refused.code == "FLOW_RUN_WRITES_DISABLED"
    finally:
        ctx.close()
    assert files(root) == before


def test_the_first_allowed_write_swaps_in_the_real_keyed_context(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", writes=True)
    lazy = FlowContext.open(Workspace.open(root), lazy=True)
    real = lazy.settled(write=True)
    try:
        assert real is not lazy and not real.is_lazy
        assert (root / STATE_DIR / DB_NAME).is_file()
        assert (root / STATE_DIR / "actor.key").is_file()
        assert real.actor_key and real.actor.hash != UNKEYED
        assert real.lanes == lazy.lanes
        # The same actor as a context opened directly: records made either way match.
        direct = FlowContext.open(Workspace.open(root))
        try:
            assert real.actor == direct.actor
        finally:
            direct.close()
        run = started(real)
        assert [r["run_id"] for r in list_runs(real, {})["runs"]] == [run["run_id"]]
    finally:
        real.close()


def test_a_store_made_by_another_process_is_seen_and_then_used(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", writes=True, actor=ACTOR)
    lazy = FlowContext.open(Workspace.open(root), lazy=True)
    other = FlowContext.open(Workspace.open(root))  # e.g. `noma flow start` meanwhile
    try:
        run = started(other)
        real = lazy.settled(write=False)  # before every call, as the pane does
        assert real is not lazy and not real.is_lazy
        assert [r["run_id"] for r in list_runs(real, {})["runs"]] == [run["run_id"]]
        real.close()
    finally:
        other.close()


def test_a_workspace_with_a_store_opens_the_real_context_at_once(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", writes=True)
    FlowContext.open(Workspace.open(root)).close()
    ctx = FlowContext.open(Workspace.open(root), lazy=True)
    try:
        assert not ctx.is_lazy and ctx.actor_key
        assert ctx.settled(write=True) is ctx
    finally:
        ctx.close()
