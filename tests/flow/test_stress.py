"""Tier 4 — stress: 500 concurrent runs; parallel identical execute posts give one execution
and one cost charge; cost_consumed increments atomically; consent expiry holds under load;
separate processes share the store safely."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from core.flow import (
    FlowRefusal,
    advance_step,
    execute_automatable,
    get_run,
    list_runs,
    record_evidence,
    start_run,
)

from .conftest import (
    GATE_MATRIX,
    STARTER_FILES,
    FakeLane,
    bundle,
    consent_for,
    make_workspace,
    open_ctx,
    run_by_hand,
    started,
    starter_dir,
    step,
    with_posture,
)

pytestmark = pytest.mark.usefixtures("both_stores")

REPO = Path(__file__).resolve().parents[2]
WORKERS = 32


def whole_manual_run(ctx: Any) -> dict[str, Any]:
    rid = started(ctx)["run_id"]
    s1, s2, s3 = (f"flow_weekly_review#{i}" for i in (1, 2, 3))
    record_evidence(
        ctx, {"run_id": rid, "step_id": s1, "evidence_ref": f"op_{rid}", "pointer_kind": "artifact"}
    )
    advance_step(ctx, {"run_id": rid, "step_id": s1, "to_status": "done"})
    advance_step(
        ctx, {"run_id": rid, "step_id": s2, "to_status": "skipped", "skip_reason": "not_applicable"}
    )
    record_evidence(
        ctx, {"run_id": rid, "step_id": s3, "evidence_ref": "c" * 64, "pointer_kind": "hash"}
    )
    return advance_step(ctx, {"run_id": rid, "step_id": s3, "to_status": "done", "approve": True})[
        "run"
    ]


def test_500_concurrent_runs_each_finish_intact(ctx, clock):
    with ThreadPoolExecutor(WORKERS) as pool:
        finals = list(pool.map(lambda _: whole_manual_run(ctx), range(500)))
    assert len({r["run_id"] for r in finals}) == 500
    for run in finals:
        assert run["status"] == "done" and run["etag"] == "r6"
        assert [s["status"] for s in run["step_states"]] == ["done", "skipped", "done"]
        assert run["step_states"][0]["evidence_ref"] == f"op_{run['run_id']}"
    seen, cursor = [], None
    while True:
        page = list_runs(ctx, {"limit": 200, **({"cursor": cursor} if cursor else {})})
        seen += [r["run_id"] for r in page["runs"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(r["run_id"] for r in finals)


@pytest.mark.parametrize(("writes", "automatable"), GATE_MATRIX)
def test_concurrent_starts_under_each_gate(ctx, clock, writes, automatable):
    gated = with_posture(ctx, writes=writes, automatable=automatable)

    def go(_: int) -> Any:
        return start_run(gated, {"flow_id": "flow_weekly_review", "flow_version": "1.0.0"})

    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(go, range(100)))
    refused = [r for r in results if isinstance(r, FlowRefusal)]
    assert len(refused) == (0 if writes else 100)
    assert {r.code for r in refused} <= {"FLOW_RUN_WRITES_DISABLED"}
    count = ctx.store.connection().execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert count == (100 if writes else 0)


def consent_row(ctx: Any) -> tuple[int, int]:
    row = (
        ctx.store.connection()
        .execute("SELECT cost_consumed_units, cost_reserved_units FROM consents")
        .fetchone()
    )
    return int(row[0]), int(row[1])


def test_parallel_identical_execute_posts_make_one_execution_and_one_charge(tmp_path, clock):
    lane = FakeLane(cost=7, gate=threading.Event())
    ctx = open_ctx(make_workspace(tmp_path / "ws"), lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid, cap=50)
        post = {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        with ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(execute_automatable, ctx, dict(post)) for _ in range(16)]
            # all but the one running post come back at once with the in-flight execution
            done_early = [f.result(timeout=30) for f in futures if _ready(f)]
            lane.gate.set()
            results = [f.result(timeout=30) for f in futures]
        ids = {r["execution"]["execution_id"] for r in results}
        assert len(ids) == 1 and len(lane.calls) == 1
        assert [r["execution"]["status"] for r in results].count("completed") >= 1
        # in flight: the running execution itself, the same id, status running
        assert all(r["execution"]["status"] == "running" for r in done_early)
        assert all(r["execution"]["status"] in ("running", "completed") for r in results)
        assert consent_row(ctx) == (7, 0)
        again = execute_automatable(ctx, post)  # a re-post after completion: still the same
        assert again["execution"]["execution_id"] in ids and again["execution"]["cost_units"] == 7
        assert consent_row(ctx) == (7, 0) and len(lane.calls) == 1
        rows = ctx.store.connection().execute("SELECT COUNT(*) FROM executions").fetchone()[0]
        assert rows == 1
    finally:
        ctx.close()


def _ready(future: Any) -> bool:
    try:
        future.result(timeout=0.5)
    except TimeoutError:
        return False
    return True


def test_cost_consumed_increments_atomically_across_racing_executors(tmp_path, clock):
    f = "flow_batch"
    refs = [{"kind": "skill_pack", "id": "gdrive.sheets.read"}]
    data = bundle(f, [step(f, i, automatable="automatable", skill_refs=refs) for i in range(1, 21)])
    lane = FakeLane(cost=3)
    ctx = open_ctx(make_workspace(tmp_path / "ws", [data]), lane)
    try:
        rid = started(ctx, f)["run_id"]
        cid = consent_for(ctx, rid, cap=1000)

        def worker() -> None:
            for _ in range(200):
                run = get_run(ctx, {"run_id": rid})["run"]
                pending = [s for s in run["step_states"] if s["status"] != "done"]
                if not pending:
                    return
                execute_automatable(
                    ctx, {"run_id": rid, "step_id": pending[0]["step_id"], "consent_id": cid}
                )

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        run = get_run(ctx, {"run_id": rid})["run"]
        assert run["status"] == "done"
        assert len(lane.calls) == 20
        assert consent_row(ctx) == (60, 0)
        statuses = (
            ctx.store.connection()
            .execute("SELECT status, COUNT(*) FROM executions GROUP BY status")
            .fetchall()
        )
        assert dict((s, n) for s, n in statuses) == {"completed": 20}
    finally:
        ctx.close()


def test_cost_cap_holds_under_parallel_runs_of_one_consent_holder(tmp_path, clock):
    lane = FakeLane(cost=4)
    ctx = open_ctx(make_workspace(tmp_path / "ws"), lane)
    try:
        runs = [started(ctx, "flow_lead_import")["run_id"] for _ in range(40)]
        consents = {rid: consent_for(ctx, rid, cap=5) for rid in runs}

        def go(rid: str) -> list[Any]:
            post = {"run_id": rid, "consent_id": consents[rid]}
            return [
                execute_automatable(ctx, {**post, "step_id": "flow_lead_import#1"}),
                execute_automatable(ctx, {**post, "step_id": "flow_lead_import#2"}),
                execute_automatable(ctx, {**post, "step_id": "flow_lead_import#2"}),
            ]

        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(go, runs))
        for first, capped, refused in results:
            assert first["execution"]["cost_units"] == 4
            # 1 unit left: the run gets that budget, hits it, and the step stays non-done
            assert capped["execution"]["status"] == "cost_capped"
            assert capped["execution"]["cost_units"] == 1
            assert capped["run"]["step_states"][1]["status"] == "in_progress"
            assert isinstance(refused, FlowRefusal)
            assert refused.code == "FLOW_EXECUTION_COST_CAPPED"
        sums = (
            ctx.store.connection()
            .execute(
                "SELECT MAX(cost_consumed_units + cost_reserved_units), SUM(cost_consumed_units) "
                "FROM consents"
            )
            .fetchone()
        )
        assert tuple(sums) == (5, 200)
    finally:
        ctx.close()


def test_consent_expiry_is_enforced_under_load(tmp_path, clock):
    lane = FakeLane(cost=1)
    ctx = open_ctx(make_workspace(tmp_path / "ws"), lane)
    try:
        runs = [started(ctx, "flow_lead_import")["run_id"] for _ in range(100)]
        consents = {rid: consent_for(ctx, rid, cap=10, ttl_seconds=60) for rid in runs}

        def go(rid: str) -> Any:
            return execute_automatable(
                ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": consents[rid]}
            )

        with ThreadPoolExecutor(WORKERS) as pool:
            before = list(pool.map(go, runs[:50]))
        clock.advance(60)
        with ThreadPoolExecutor(WORKERS) as pool:
            after = list(pool.map(go, runs[50:]))
        assert all(r["execution"]["status"] == "completed" for r in before)
        assert {r.code for r in after} == {"FLOW_EXECUTION_CONSENT_REQUIRED"}
        assert len(lane.calls) == 50
    finally:
        ctx.close()


WORKER = """
import json, sys
from pathlib import Path
from core.flow import FlowContext, start_run, advance_step, record_evidence
from core.workspace import Workspace
ctx = FlowContext.open(Workspace.open(Path(sys.argv[1])))
out = []
for _ in range(int(sys.argv[2])):
    run = start_run(ctx, {"flow_id": "flow_weekly_review", "flow_version": "1.0.0"})["run"]
    rid, s1 = run["run_id"], "flow_weekly_review#1"
    record_evidence(ctx, {"run_id": rid, "step_id": s1, "evidence_ref": "op_1",
                          "pointer_kind": "artifact"})
    out.append(advance_step(ctx, {"run_id": rid, "step_id": s1, "to_status": "done"})["run"])
print(json.dumps([r["etag"] for r in out]))
"""


def test_separate_processes_share_the_store(tmp_path):
    root = make_workspace(tmp_path / "ws")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), "25"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out) == ["r3"] * 25
    ctx = open_ctx(root)
    try:
        page = list_runs(ctx, {"limit": 500})
        assert len(page["runs"]) == 100
        assert all(r["step_states"][0]["status"] == "done" for r in page["runs"])
    finally:
        ctx.close()


def test_concurrent_runs_of_all_six_starter_bundles_finish_intact(tmp_path, clock):
    """Every starter flow, several runs each, driven by hand from parallel threads."""
    import shutil

    folder = starter_dir()
    root = make_workspace(tmp_path / "ws", bundles=[], policy={"scopes": ["personal", "project"]})
    (root / "flows").mkdir()
    datas = []
    for name in STARTER_FILES:
        shutil.copy(folder / name, root / "flows" / name)  # Knowtation's names, as they are
        datas.append(json.loads((folder / name).read_text(encoding="utf-8")))
    ctx = open_ctx(root)
    try:
        jobs = [(data, i) for data in datas for i in range(8)]
        with ThreadPoolExecutor(WORKERS) as pool:
            finals = list(
                pool.map(
                    lambda job: run_by_hand(
                        ctx, job[0], skip_index=job[1] % len(job[0]["steps"]), reason="policy"
                    ),
                    jobs,
                )
            )
        assert len({f["run_id"] for f in finals}) == len(jobs)
        for final, (data, i) in zip(finals, jobs, strict=True):
            assert final["status"] == "done"
            assert [s["step_id"] for s in final["step_states"]] == data["flow"]["steps"]
            skipped = [s for s in final["step_states"] if s["status"] == "skipped"]
            assert len(skipped) == 1 and skipped[0]["skip_reason"] == "policy"
            assert skipped[0]["step_id"] == data["flow"]["steps"][i % len(data["steps"])]
        listed = list_runs(ctx, {"limit": 500})["runs"]
        assert len(listed) == len(jobs) and all(r["status"] == "done" for r in listed)
    finally:
        ctx.close()
