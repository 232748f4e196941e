"""Tier 6 — performance as bounded work, never wall time: store statements (and SQLite VM
steps) per advance / evidence / execute / consent mint / start stay constant as the store
grows from 10 to 10,000 runs; gate checks are O(steps), not O(runs) or O(steps^2).
Wall-clock p95 figures live in ``bench/flow_bench.py``."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from core.flow import (
    FlowContext,
    advance_step,
    execute_automatable,
    get_run,
    mint_consent,
    record_evidence,
    start_run,
)
from core.flow.frontier import frontier_index, require_frontier, run_status, step_index

from .conftest import GATE_MATRIX, bundle, make_workspace, open_ctx, started, step, with_posture


def seed_runs(ctx: FlowContext, count: int, flow_id: str = "flow_weekly_review") -> str:
    """Fill the store with ``count`` other runs (several actors, flows) in one transaction."""
    template = started(ctx, flow_id)
    with ctx.store.write() as tx:
        sha = tx.execute("SELECT flow_sha256 FROM runs LIMIT 1").fetchone()[0]
        for i in range(count - 1):
            record = {
                **template,
                "run_id": f"run_seed_{i:06d}",
                "etag": "r1",
                "started": f"2026-01-{1 + i % 28:02d}T00:00:00Z",
            }
            tx.insert_run(record, sha, f"{i % 7:064x}")
    return str(template["run_id"])


class Work:
    """Statements and SQLite VM steps spent inside a block."""

    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.statements: list[str] = []
        self.vm_steps = 0

    def __enter__(self) -> Work:
        def tick() -> int:
            self.vm_steps += 1
            return 0

        self.ctx.store.set_trace(self.statements.append)
        self.ctx.store.connection().set_progress_handler(tick, 10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.ctx.store.set_trace(None)
        self.ctx.store.connection().set_progress_handler(None, 0)


def measure(ctx: FlowContext, fn: Callable[[], Any]) -> Work:
    with Work(ctx) as work:
        result = fn()
    assert isinstance(result, dict), result
    return work


def shapes(work: Work) -> list[str]:
    """Statements with their bound values blanked: the same work whatever the ids are."""
    return [re.sub(r"'(?:[^']|'')*'|\b\d+\b", "?", s) for s in work.statements]


def workload(ctx: FlowContext) -> dict[str, Work]:
    """One of each write on a fresh run, measured."""
    man = started(ctx)
    rid = man["run_id"]
    auto = started(ctx, "flow_lead_import")["run_id"]
    out = {
        "start": measure(
            ctx, lambda: start_run(ctx, {"flow_id": "flow_weekly_review", "flow_version": "1.0.0"})
        ),
        "get": measure(ctx, lambda: get_run(ctx, {"run_id": rid})),
        "advance": measure(
            ctx,
            lambda: advance_step(
                ctx, {"run_id": rid, "step_id": "flow_weekly_review#1", "to_status": "in_progress"}
            ),
        ),
        "evidence": measure(
            ctx,
            lambda: record_evidence(
                ctx,
                {
                    "run_id": rid,
                    "step_id": "flow_weekly_review#1",
                    "evidence_ref": "op_1",
                    "pointer_kind": "artifact",
                },
            ),
        ),
        "done": measure(
            ctx,
            lambda: advance_step(
                ctx, {"run_id": rid, "step_id": "flow_weekly_review#1", "to_status": "done"}
            ),
        ),
    }
    consent: dict[str, Any] = {}

    def mint() -> Any:
        consent["r"] = mint_consent(
            ctx, {"run_id": auto, "allowed_lanes": ["local_default"], "cost_cap_units": 50}
        )
        return consent["r"]

    out["consent"] = measure(ctx, mint)
    cid = consent["r"]["consent"]["consent_id"]
    out["execute"] = measure(
        ctx,
        lambda: execute_automatable(
            ctx, {"run_id": auto, "step_id": "flow_lead_import#1", "consent_id": cid}
        ),
    )
    return out


@pytest.fixture
def sized(tmp_path, clock) -> Iterator[Callable[[int], dict[str, Work]]]:
    opened: list[FlowContext] = []

    def make(count: int) -> dict[str, Work]:
        ctx = open_ctx(make_workspace(tmp_path / f"ws{count}"))
        opened.append(ctx)
        seed_runs(ctx, count)
        workload(ctx)  # warm: snapshot caches, statement caches
        return workload(ctx)

    yield make
    for ctx in opened:
        ctx.close()


def test_store_statements_per_write_are_constant_from_10_to_10000_runs(sized):
    small, large = sized(10), sized(10_000)
    for name in small:
        assert shapes(small[name]) == shapes(large[name]), name
    assert len(small["advance"].statements) <= 5  # BEGIN, SELECT run, UPDATE run, COMMIT (+0)
    # BEGIN, SELECT run, SELECT its executions (to show a crashed one as such), COMMIT
    assert len(small["get"].statements) == 4


def test_sqlite_work_per_write_does_not_grow_with_runs(sized):
    small, large = sized(10), sized(10_000)
    for name in small:
        # B-tree lookups grow with log(n) at most: allow a small constant, never O(n)
        assert large[name].vm_steps <= small[name].vm_steps * 1.5 + 20, name


def test_hot_queries_search_an_index_never_scan(ctx):
    conn = ctx.store.connection()
    hot = [
        ("SELECT record FROM runs WHERE run_id = ?", ("run_x",)),
        ("SELECT * FROM consents WHERE consent_key = ?", ("k",)),
        (
            "SELECT * FROM executions WHERE run_id = ? AND step_id = ? AND consent_key = ? "
            "AND status IN ('running', 'completed')",
            ("r", "s", "k"),
        ),
        (
            "SELECT * FROM executions WHERE run_id = ? AND status = 'running' AND lease_until < ?",
            ("r", "t"),
        ),
        (
            "SELECT * FROM executions WHERE run_id = ? AND step_id = ? AND status = 'running'",
            ("r", "s"),
        ),
        ("SELECT * FROM consents WHERE run_id = ? ORDER BY expires_at", ("r",)),
        (
            "SELECT * FROM executions WHERE run_id = ? ORDER BY started_at, execution_id",
            ("r",),
        ),
        (
            "SELECT r.record FROM runs r WHERE r.scope IN ('personal') AND (r.scope != 'personal' "
            "OR r.actor_hash = ?) ORDER BY r.started DESC, r.run_id DESC LIMIT 51",
            ("a",),
        ),
    ]
    for sql, params in hot:
        plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
        assert "SEARCH" in plan or "USING INDEX" in plan, (sql, plan)
        assert "TEMP B-TREE" not in plan, (sql, plan)


@pytest.mark.parametrize(("writes", "automatable"), GATE_MATRIX)
def test_gated_off_handlers_cost_nothing_at_any_size(sized, tmp_path, writes, automatable):
    for count in (10, 10_000):
        ctx = open_ctx(make_workspace(tmp_path / f"g{count}"))
        try:
            own = seed_runs(ctx, count, "flow_lead_import")
            gated = with_posture(ctx, writes=writes, automatable=automatable)
            with Work(ctx) as work:
                start_run(gated, {"flow_id": "flow_weekly_review", "flow_version": "1.0.0"})
                mint_consent(
                    gated, {"run_id": own, "allowed_lanes": ["local_default"], "cost_cap_units": 5}
                )
            # start: BEGIN, snapshot, run, COMMIT; mint: BEGIN, SELECT run, INSERT, COMMIT
            expected = (4 if writes else 0) + (4 if writes and automatable else 0)
            assert len(work.statements) == expected
        finally:
            ctx.close()


# ---------------------------------------------------------------- gate checks O(steps)


class CountingList(list):  # type: ignore[type-arg]
    """A list that counts how many elements are read (by index or iteration)."""

    reads = 0

    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        CountingList.reads += len(value) if isinstance(key, slice) else 1
        return value

    def __iter__(self) -> Iterator[Any]:
        for item in super().__iter__():
            CountingList.reads += 1
            yield item


def gate_reads(steps: int, frontier: int) -> int:
    states = CountingList(
        {"step_id": f"flow_x#{i + 1}", "status": "done" if i < frontier else "pending"}
        for i in range(steps)
    )
    CountingList.reads = 0
    index = step_index(f"flow_x#{frontier + 1}", "flow_x", len(states))
    require_frontier(states, index)
    assert frontier_index(states) == frontier
    run_status(states)
    return CountingList.reads


@pytest.mark.parametrize("steps", [10, 100, 1_000, 10_000])
def test_gate_checks_read_each_step_a_bounded_number_of_times(steps):
    worst = gate_reads(steps, steps - 1)  # the frontier is the last step: the longest walk
    assert worst <= 3 * steps + 3


def test_gate_checks_grow_linearly_not_quadratically():
    r1, r10 = gate_reads(1_000, 999), gate_reads(10_000, 9_999)
    assert 9 <= r10 / r1 <= 11


def python_lines(fn: Callable[[], Any]) -> int:
    """Python line events while ``fn`` runs: a deterministic measure of interpreter work."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def advance_lines(tmp_path: Any, steps: int, runs: int) -> int:
    f = "flow_wide"
    data = bundle(f, [step(f, i, evidence_required=False) for i in range(1, steps + 1)])
    ctx = open_ctx(make_workspace(tmp_path / f"w{steps}-{runs}", [data]))
    try:
        seed_runs(ctx, runs, f)
        rid = started(ctx, f)["run_id"]
        last = f"{f}#{steps}"
        with ctx.store.write() as tx:  # put the frontier on the last step
            stored = tx.load_run(rid)
            states = [{**s, "status": "done"} for s in stored.record["step_states"][:-1]]
            states.append(stored.record["step_states"][-1])
            tx.update_run(stored, {**stored.record, "step_states": states})
        advance_step(ctx, {"run_id": rid, "step_id": last, "to_status": "in_progress"})
        return python_lines(
            lambda: advance_step(ctx, {"run_id": rid, "step_id": last, "to_status": "blocked"})
        )
    finally:
        ctx.close()


def test_advance_work_is_linear_in_steps_and_flat_in_runs(tmp_path, clock):
    by_runs = [advance_lines(tmp_path, 50, n) for n in (10, 3_000)]
    assert by_runs[0] == by_runs[1]
    l100, l1000 = advance_lines(tmp_path, 100, 10), advance_lines(tmp_path, 1_000, 10)
    assert l1000 <= 11 * l100  # linear at worst (the frontier walk); never quadratic
