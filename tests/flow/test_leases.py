"""Issue 29, item 1: a hub killed during an automatable execution never leaves the step
stuck. The process is really killed (SIGKILL, no cleanup, no rollback handler) at each
step of an execution, on SQLite and on PostgreSQL; then the same consent is retried.

The rule under test (`core.flow.leases`): once the lease has run out, the execution is
settled in its own transaction, failed ``interrupted`` and charged its reservation; the
retry proceeds on what is left of the consent or is refused for the real reason.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.flow import FlowRefusal, execute_automatable, get_run
from core.flow.consent import list_consents
from core.flow.execute import LEASE_GRACE_SECONDS
from core.flow.store import StoredExecution

from .conftest import REPO, consent_for, open_ctx, started

pytestmark = pytest.mark.usefixtures("both_stores")

STEP = "flow_lead_import#1"

# The "hub" that dies: the handler family in a child process, killed with SIGKILL at one
# point of an execution. Its clock is the tests' pinned clock (2026-06-20T12:00:00Z).
CHILD = r"""
import os, signal, sys
from datetime import UTC, datetime
sys.path.insert(0, os.getcwd())
from core.flow import execute, execute_automatable, ids
from core.flow.store import Tx
from tests.flow.conftest import FakeLane, open_ctx

root, point, rid, cid, most = sys.argv[1:6]
execute.MAX_EXECUTION_UNITS = int(most)  # what one execution may reserve at most
ids.now = lambda: datetime(2026, 6, 20, 12, 0, 0, tzinfo=UTC)

def die(*_a, **_k):
    os.kill(os.getpid(), signal.SIGKILL)

def after(owner, name):
    original = getattr(owner, name)
    def wrapped(*a, **k):
        out = original(*a, **k)
        die()
        return out
    setattr(owner, name, wrapped)

lane = FakeLane()
if point == "begin":      # inside the reservation transaction, before its commit
    after(Tx, "insert_execution")
elif point == "lane":     # the reservation committed; the lane is running
    lane.run = die
elif point == "settle":   # inside the settling transaction, before its commit
    after(Tx, "finish_execution")
elif point == "settled":  # everything committed, the answer never sent
    after(execute, "_settle")
ctx = open_ctx(root, lane)
execute_automatable(ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid})
print("not killed")
"""


def kill_during(root: Path, point: str, rid: str, cid: str, most: int = 3000) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), point, rid, cid, str(most)],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)


def post(rid: str, cid: str) -> dict[str, Any]:
    return {"run_id": rid, "step_id": STEP, "consent_id": cid}


def execution_row(ctx: Any, rid: str) -> StoredExecution:
    with ctx.store.read() as tx:
        rows = tx.executions_for_run(rid)
    assert len(rows) == 1, rows
    return rows[0]


def consent_units(ctx: Any, rid: str) -> tuple[int, int]:
    listed = list_consents(ctx, {"run_id": rid})
    assert not isinstance(listed, FlowRefusal), listed
    consent = listed["consents"][0]
    return consent["cost_consumed_units"], consent["cost_reserved_units"]


def lease_seconds(budget: int) -> int:
    return -(-budget * 100 // 1000) + LEASE_GRACE_SECONDS


@pytest.mark.parametrize("point", ["lane", "settle"])
def test_killed_mid_execution_the_same_consent_gets_the_real_reason(
    point: str, clock: Any, workspace: Path, lane: Any
) -> None:
    """The issue's case: cap 10, killed while the row is running; from the lease's end
    on, the row is failed, the consent charged, the retry told COST_CAPPED (the cap is
    spent), and a new consent moves the step."""
    ctx = open_ctx(workspace, lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=10)
        kill_during(workspace, point, rid, cid)
        assert execution_row(ctx, rid).status == "running"
        waiting = execute_automatable(ctx, post(rid, cid))  # lease still running
        assert waiting["execution"]["step_id"] == STEP
        assert waiting["execution"]["status"] == "running" and "in_flight" not in waiting
        listed = get_run(ctx, {"run_id": rid})["executions"]
        assert [e["status"] for e in listed] == ["running"]
        clock.advance(lease_seconds(10) + 1)
        retry = execute_automatable(ctx, post(rid, cid))
        assert isinstance(retry, FlowRefusal) and retry.code == "FLOW_EXECUTION_COST_CAPPED"
        dead = execution_row(ctx, rid)  # the refusal did not roll the settlement back
        assert (dead.status, dead.failure, dead.cost_units) == ("failed", "interrupted", 10)
        assert consent_units(ctx, rid) == (10, 0)
        shown = get_run(ctx, {"run_id": rid})["executions"]
        assert [(e["status"], e["failure"]) for e in shown] == [("failed", "interrupted")]
        fresh = execute_automatable(ctx, post(rid, consent_for(ctx, rid, cap=10)))
        assert fresh["execution"]["status"] == "completed"
        assert fresh["run"]["step_states"][0]["status"] == "done"
    finally:
        ctx.close()


@pytest.mark.parametrize("point", ["lane", "settle"])
def test_killed_mid_execution_a_consent_with_units_left_proceeds(
    point: str, clock: Any, workspace: Path, lane: Any
) -> None:
    ctx = open_ctx(workspace, lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=100)
        kill_during(workspace, point, rid, cid, most=20)  # reserves 20 of the cap's 100
        clock.advance(lease_seconds(20) + 1)
        retry = execute_automatable(ctx, post(rid, cid))
        assert retry["execution"]["status"] == "completed"
        assert retry["run"]["step_states"][0]["status"] == "done"
        assert consent_units(ctx, rid) == (20 + lane.cost, 0)
        shown = get_run(ctx, {"run_id": rid})["executions"]
        assert [(e["status"], e["failure"]) for e in shown] == [
            ("failed", "interrupted"),
            ("completed", None),
        ]
    finally:
        ctx.close()


def test_killed_before_the_reservation_committed_leaves_nothing(
    clock: Any, workspace: Path, lane: Any
) -> None:
    ctx = open_ctx(workspace, lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=10)
        kill_during(workspace, "begin", rid, cid)
        with ctx.store.read() as tx:
            assert tx.executions_for_run(rid) == []
        assert consent_units(ctx, rid) == (0, 0)
        done = execute_automatable(ctx, post(rid, cid))
        assert done["execution"]["status"] == "completed"
        assert consent_units(ctx, rid) == (lane.cost, 0)
    finally:
        ctx.close()


def test_killed_after_settling_the_retry_replays_the_one_execution(
    clock: Any, workspace: Path, lane: Any
) -> None:
    ctx = open_ctx(workspace, lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=10)
        kill_during(workspace, "settled", rid, cid)
        first = execution_row(ctx, rid)
        assert first.status == "completed"
        again = execute_automatable(ctx, post(rid, cid))
        assert again["execution"]["execution_id"] == first.execution_id
        assert consent_units(ctx, rid) == (lane.cost, 0)
        assert lane.calls == []  # nothing ran twice
    finally:
        ctx.close()


def test_an_expired_lease_is_settled_even_when_the_retry_is_refused(ctx: Any, clock: Any) -> None:
    """In-process form of the issue (no kill): the settlement used to share the refused
    request's transaction and was rolled back with it, for good."""
    from core.flow.consent import consent_key

    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid, cap=10)
    with ctx.store.write() as tx:
        assert tx.reserve_units(consent_key(cid), 10)
        tx.insert_execution(
            StoredExecution(
                "fexec_dead", rid, STEP, consent_key(cid), "running", "local_default", 10, 0,
                None, None, "2026-06-20T12:00:00Z", "2026-06-20T12:02:01Z", None,
            )
        )  # fmt: skip
    clock.advance(151)
    for _ in range(3):
        retry = execute_automatable(ctx, post(rid, cid))
        assert isinstance(retry, FlowRefusal) and retry.code == "FLOW_EXECUTION_COST_CAPPED"
    dead = execution_row(ctx, rid)
    assert (dead.status, dead.failure, dead.cost_units) == ("failed", "interrupted", 10)
    assert consent_units(ctx, rid) == (10, 0)
