"""Tier 5 — data integrity: the run pin holds the flow_version through execute, step_states
keep ordinal order, the SD-2 task_ref round-trips (and its reciprocal link is atomic),
export -> import keeps `automatable` but not activation; one transaction per write, etags
refuse stale writes, a failed write leaves nothing behind, a crashed execution is reaped."""

from __future__ import annotations

import json
import random
import sqlite3
from typing import Any

import pytest

from core.flow import (
    FlowRefusal,
    advance_step,
    execute_automatable,
    export_flow,
    get_run,
    import_flow,
    list_runs,
    mint_consent,
    record_evidence,
    review_import,
    start_run,
    submit_review,
)
from core.flow.bundle import parse_bundle_text
from core.flow.enums import FINISHED_STEP, SKIP_REASONS
from core.flow.store import Tx

from .conftest import (
    GATE_MATRIX,
    SHEET_URL,
    STARTER_FILES,
    FakeLane,
    automatable_bundle,
    bundle,
    consent_for,
    make_workspace,
    open_ctx,
    sqlite_only,
    started,
    starter_dir,
    step,
    store_dump,
    with_posture,
    write_bundle,
)

pytestmark = pytest.mark.usefixtures("both_stores")


def code(result: object) -> str | None:
    return result.code if isinstance(result, FlowRefusal) else None


def test_run_pin_survives_the_file_changing_at_the_same_version(ctx, workspace, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    edited = automatable_bundle()
    edited["steps"][0]["automatable"] = "manual"  # same id, same version, new content
    write_bundle(workspace / "flows", edited)
    cid = consent_for(ctx, rid)
    out = execute_automatable(
        ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
    )
    assert out["execution"]["status"] == "completed"  # the pinned step is still automatable
    assert out["run"]["flow_version"] == "1.0.0"
    fresh = started(ctx, "flow_lead_import")["run_id"]
    cid2 = consent_for(ctx, fresh)
    assert (
        code(
            execute_automatable(
                ctx, {"run_id": fresh, "step_id": "flow_lead_import#1", "consent_id": cid2}
            )
        )
        == "FLOW_STEP_NOT_AUTOMATABLE"
    )
    snapshots = ctx.store.connection().execute("SELECT COUNT(*) FROM flow_snapshots").fetchone()
    assert snapshots[0] == 2


def assert_invariants(run: dict[str, Any], step_ids: list[str]) -> None:
    states = run["step_states"]
    assert [s["step_id"] for s in states] == step_ids
    assert sum(s["status"] == "in_progress" for s in states) <= 1
    frontier = next((i for i, s in enumerate(states) if s["status"] not in FINISHED_STEP), None)
    if frontier is None:
        assert run["status"] == "done"
        assert all(s["verified"] for s in states if s["status"] == "done")
        return
    assert all(s["status"] in FINISHED_STEP for s in states[:frontier])
    assert all(s["status"] == "pending" for s in states[frontier + 1 :])
    # every step here requires evidence: done always means verified
    assert all(s["verified"] for s in states if s["status"] == "done")


def test_step_states_keep_ordinal_order_under_random_operations(tmp_path, clock):
    f = "flow_long"
    data = bundle(
        f,
        [
            step(
                f,
                i,
                kind="human_review" if i % 3 == 0 else "artifact_exists",
            )
            for i in range(1, 13)
        ],
    )
    ctx = open_ctx(make_workspace(tmp_path / "ws", [data]))
    rng = random.Random(7)
    step_ids = [f"{f}#{i}" for i in range(1, 13)]
    try:
        rid = started(ctx, f)["run_id"]
        accepted = 0
        for _ in range(600):
            run = get_run(ctx, {"run_id": rid})["run"]
            frontier = next(
                (s["step_id"] for s in run["step_states"] if s["status"] not in FINISHED_STEP),
                step_ids[-1],
            )
            sid = frontier if rng.random() < 0.7 else rng.choice(step_ids)
            action = rng.choices(
                ["evidence", "in_progress", "done", "blocked", "skipped"], [3, 2, 3, 1, 1]
            )[0]
            if action == "evidence":
                result = record_evidence(
                    ctx,
                    {
                        "run_id": rid,
                        "step_id": sid,
                        "evidence_ref": f"op_{rng.randint(1, 99)}",
                        "pointer_kind": rng.choice(["artifact", "test_result", "hash"]),
                    },
                )
            else:
                result = advance_step(
                    ctx,
                    {
                        "run_id": rid,
                        "step_id": sid,
                        "to_status": action,
                        "skip_reason": rng.choice(SKIP_REASONS) if action == "skipped" else None,
                        "approve": rng.random() < 0.5,
                    },
                )
            accepted += isinstance(result, dict)
            assert_invariants(get_run(ctx, {"run_id": rid})["run"], step_ids)
        final = get_run(ctx, {"run_id": rid})["run"]
        assert final["status"] == "done" and accepted >= 12
        assert sum(s["status"] == "done" for s in final["step_states"]) >= 4
    finally:
        ctx.close()


def test_sd2_task_ref_round_trips_with_its_reciprocal_link(ctx, clock):
    run = started(ctx, task_ref="task_abc123", external_ref="muse:sha:0f3a")
    other = started(ctx)
    got = get_run(ctx, {"run_id": run["run_id"]})["run"]
    assert got["task_ref"] == "task_abc123" and got["external_ref"] == "muse:sha:0f3a"
    linked = list_runs(ctx, {"task_ref": "task_abc123"})["runs"]
    assert [r["run_id"] for r in linked] == [run["run_id"]]
    assert other["task_ref"] is None
    links = ctx.store.connection().execute("SELECT task_ref, run_id FROM task_links").fetchall()
    assert [tuple(r) for r in links] == [("task_abc123", run["run_id"])]


@sqlite_only("injects a failure through SQLite's statement trace")
def test_task_link_and_run_are_written_atomically(ctx, clock, monkeypatch):
    real = Tx.execute

    def failing(self: Tx, sql: str, params: tuple[Any, ...] = ()) -> Any:
        if sql.startswith("INSERT INTO task_links"):
            raise sqlite3.OperationalError("disk I/O error")
        return real(self, sql, params)

    monkeypatch.setattr(Tx, "execute", failing)
    with pytest.raises(sqlite3.OperationalError):
        start_run(
            ctx, {"flow_id": "flow_weekly_review", "flow_version": "1.0.0", "task_ref": "task_9"}
        )
    monkeypatch.setattr(Tx, "execute", real)
    assert ctx.store.connection().execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    assert list_runs(ctx, {})["runs"] == []


def test_export_import_preserves_automatable_but_not_activation(tmp_path, clock):
    src = open_ctx(make_workspace(tmp_path / "src"))
    dst = open_ctx(make_workspace(tmp_path / "dst", bundles=[]))
    try:
        for fmt in ("yaml", "json"):
            text = export_flow(src, "flow_lead_import", None, fmt)["text"]
            again = parse_bundle_text(text, json_form=fmt == "json")
            assert again == src.catalog.find("flow_lead_import").bundle
            assert [s.automatable for s in again.steps] == [
                "automatable",
                "automatable",
                "agent_assisted",
            ]
            imported = import_flow(dst, text, fmt)
            assert imported["active"] is False
        assert dst.catalog.entries() == []
        assert code(start_run(dst, {"flow_id": "flow_lead_import", "flow_version": "1.0.0"})) == (
            "unknown_flow"
        )
    finally:
        src.close()
        dst.close()


def count_statements(ctx: Any, fn: Any) -> list[str]:
    seen: list[str] = []
    ctx.store.set_trace(seen.append)
    try:
        fn()
    finally:
        ctx.store.set_trace(None)
    return seen


@sqlite_only("counts BEGIN IMMEDIATE through SQLite's statement trace")
def test_every_write_is_exactly_one_transaction(ctx, clock, lane):
    rid = started(ctx, "flow_lead_import")["run_id"]
    writes = {
        "advance": lambda: advance_step(
            ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "to_status": "in_progress"}
        ),
        "evidence": lambda: record_evidence(
            ctx,
            {
                "run_id": rid,
                "step_id": "flow_lead_import#1",
                "evidence_ref": "op_1",
                "pointer_kind": "artifact",
            },
        ),
        "consent": lambda: mint_consent(
            ctx, {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 9}
        ),
        "submit": lambda: submit_review(ctx, {"run_id": rid, "intent": "x"}),
        "start": lambda: start_run(
            ctx,
            {
                "flow_id": "flow_lead_import",
                "flow_version": "1.0.0",
                "inputs": {"sheet_url": SHEET_URL},
            },
        ),
    }
    for name, fn in writes.items():
        seen = count_statements(ctx, fn)
        assert seen.count("BEGIN IMMEDIATE") == 1, name
        assert seen[0] == "BEGIN IMMEDIATE" and seen[-1] == "COMMIT", name
    cid = consent_for(ctx, rid)
    seen = count_statements(
        ctx,
        lambda: execute_automatable(
            ctx, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
        ),
    )
    # reserve + run + settle: two transactions, the lane runs between them
    assert seen.count("BEGIN IMMEDIATE") == 2 and seen.count("COMMIT") == 2


def test_stale_etag_is_refused_and_writes_nothing(ctx, clock):
    run = started(ctx)
    rid = run["run_id"]
    moved = advance_step(
        ctx,
        {
            "run_id": rid,
            "step_id": "flow_weekly_review#1",
            "to_status": "in_progress",
            "expected_etag": run["etag"],
        },
    )
    assert moved["run"]["etag"] == "r2"
    stale = advance_step(
        ctx,
        {
            "run_id": rid,
            "step_id": "flow_weekly_review#1",
            "to_status": "blocked",
            "expected_etag": "r1",
        },
    )
    assert code(stale) == "FLOW_RUN_CONFLICT" and stale.status == 409
    assert get_run(ctx, {"run_id": rid})["run"] == moved["run"]


def test_manual_writes_never_race_a_running_execution(tmp_path, clock):
    import threading

    lane = FakeLane(gate=threading.Event())
    ctx = open_ctx(make_workspace(tmp_path / "ws"), lane)
    try:
        rid = started(ctx, "flow_lead_import")["run_id"]
        cid = consent_for(ctx, rid)
        s1 = "flow_lead_import#1"
        worker = threading.Thread(
            target=execute_automatable,
            args=(ctx, {"run_id": rid, "step_id": s1, "consent_id": cid}),
        )
        worker.start()
        while not lane.calls:
            threading.Event().wait(0.01)
        assert code(advance_step(ctx, {"run_id": rid, "step_id": s1, "to_status": "done"})) == (
            "FLOW_RUN_CONFLICT"
        )
        assert (
            code(
                record_evidence(
                    ctx,
                    {"run_id": rid, "step_id": s1, "evidence_ref": "x", "pointer_kind": "artifact"},
                )
            )
            == "FLOW_RUN_CONFLICT"
        )
        lane.gate.set()
        worker.join(10)
        assert get_run(ctx, {"run_id": rid})["run"]["step_states"][0]["status"] == "done"
    finally:
        ctx.close()


def test_a_crashed_execution_is_reaped_after_its_lease(ctx, clock, lane):
    from core.flow.store import StoredExecution

    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid, cap=100)
    from core.flow.consent import consent_key

    with ctx.store.write() as tx:  # what a process that died mid-run leaves behind
        assert tx.reserve_units(consent_key(cid), 30)
        tx.insert_execution(
            StoredExecution(
                "fexec_dead",
                rid,
                "flow_lead_import#1",
                consent_key(cid),
                "running",
                "local_default",
                30,
                0,
                None,
                None,
                "2026-06-20T12:00:00Z",
                "2026-06-20T12:05:00Z",
                None,
            )
        )
    post = {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
    waiting = execute_automatable(ctx, post)  # in flight: bounded wait, then named, not rerun
    assert waiting["execution"]["execution_id"] == "fexec_dead"
    assert waiting["execution"]["status"] == "running" and "in_flight" not in waiting
    clock.advance(301)
    fresh = execute_automatable(ctx, post)
    assert fresh["execution"]["execution_id"] != "fexec_dead"
    assert fresh["execution"]["status"] == "completed"
    dead = (
        ctx.store.connection()
        .execute(
            "SELECT status, failure, cost_units FROM executions WHERE execution_id='fexec_dead'"
        )
        .fetchone()
    )
    assert tuple(dead) == ("failed", "interrupted", 30)
    row = (
        ctx.store.connection()
        .execute("SELECT cost_consumed_units, cost_reserved_units FROM consents")
        .fetchone()
    )
    assert tuple(row) == (30 + lane.cost, 0)


@sqlite_only("the SQLite store's journal mode")
def test_the_store_is_sqlite_wal(ctx):
    mode = ctx.store.connection().execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


@pytest.mark.parametrize(("writes", "automatable"), GATE_MATRIX)
def test_gated_off_writes_leave_the_database_untouched(ctx, clock, writes, automatable):
    rid = started(ctx, "flow_lead_import")["run_id"]
    cid = consent_for(ctx, rid)
    gated = with_posture(ctx, writes=writes, automatable=automatable)

    def dump() -> list[str]:
        return store_dump(ctx.store)

    before = dump()
    attempts: list[Any] = []
    if not writes:
        attempts += [
            start_run(gated, {"flow_id": "flow_lead_import", "flow_version": "1.0.0"}),
            advance_step(
                gated, {"run_id": rid, "step_id": "flow_lead_import#1", "to_status": "in_progress"}
            ),
            record_evidence(
                gated,
                {
                    "run_id": rid,
                    "step_id": "flow_lead_import#1",
                    "evidence_ref": "x",
                    "pointer_kind": "artifact",
                },
            ),
            submit_review(gated, {"run_id": rid, "intent": "x"}),
        ]
    if not (writes and automatable):
        attempts += [
            mint_consent(
                gated, {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 3}
            ),
            execute_automatable(
                gated, {"run_id": rid, "step_id": "flow_lead_import#1", "consent_id": cid}
            ),
        ]
    assert all(isinstance(a, FlowRefusal) for a in attempts)
    assert dump() == before


# ------------------------------------------------ round trips of the starter bundles


def _approved(ctx: Any, text: str, fmt: str) -> None:
    imported = import_flow(ctx, text, fmt)
    assert isinstance(imported, dict), imported
    approved = review_import(ctx, imported["proposal"]["proposal_id"], True)
    assert approved["proposal"]["status"] == "approved", approved


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("name", STARTER_FILES)
def test_starter_bundle_round_trips_byte_for_byte(tmp_path, clock, name, fmt):
    """export -> import -> export is byte-identical (in either format) and the JSON export
    equals the original file modulo key order: no field is lost, added or defaulted."""
    original_text = (starter_dir() / name).read_text(encoding="utf-8")
    original = json.loads(original_text)
    flow_id = original["flow"]["flow_id"]
    policy = {"scopes": ["personal", "project"]}
    first = open_ctx(make_workspace(tmp_path / "a", bundles=[], policy=policy))
    second = open_ctx(make_workspace(tmp_path / "b", bundles=[], policy=policy))
    try:
        _approved(first, original_text, "json")
        exported = export_flow(first, flow_id, None, fmt)["text"]
        if fmt == "json":
            assert json.loads(exported) == original
        else:
            assert parse_bundle_text(exported).to_json() == original
        _approved(second, exported, fmt)
        again = export_flow(second, flow_id, None, fmt)["text"]
        assert again == exported  # byte-identical
        assert json.loads(export_flow(second, flow_id, None, "json")["text"]) == original
        # the vault mirror path and empty optional lists survive (never dropped or filled)
        assert (
            json.loads(export_flow(second, flow_id, None, "json")["text"])["flow"][
                "vault_mirror_path"
            ]
            == original["flow"]["vault_mirror_path"]
        )
    finally:
        first.close()
        second.close()


def test_export_writes_only_canonical_fields(tmp_path, clock):
    """A bundle that leaves every optional field out exports without them: export never
    adds defaults (scope, truncated and automatable are required, so nothing to add)."""
    data = bundle("flow_bare", [step("flow_bare", 1)])
    del data["flow"]["tags"]
    ctx = open_ctx(make_workspace(tmp_path / "ws", [data]))
    try:
        out = json.loads(export_flow(ctx, "flow_bare", None, "json")["text"])
        assert out == data
        assert set(out["flow"]) == {
            "schema",
            "flow_id",
            "title",
            "version",
            "scope",
            "summary",
            "steps",
            "updated",
            "truncated",
        }
    finally:
        ctx.close()


def test_a_store_with_two_running_executions_of_one_step_still_opens(tmp_path):
    """Written before one-execution-per-step: the older duplicate is closed as interrupted."""
    import sqlite3

    from core.flow.store import RunStore

    state = tmp_path / "state"
    state.mkdir()
    store = RunStore.open(state)
    conn = store.connection()
    conn.execute("DROP INDEX one_running_step")
    conn.execute("PRAGMA foreign_keys=OFF")
    for i in (1, 2):
        conn.execute(
            "INSERT INTO executions (execution_id, run_id, step_id, consent_key, status, "
            "model_lane, reserved_units, started_at, lease_until) VALUES "
            "(?, 'run_a', 'flow_a#1', ?, 'running', 'local_default', 5, ?, ?)",
            (f"fexec_{i}", f"k{i}", f"2026-01-0{i}T00:00:00Z", "2027-01-01T00:00:00Z"),
        )
    store.close()
    reopened = RunStore.open(state)
    try:
        rows = reopened.connection().execute(
            "SELECT execution_id, status, failure FROM executions ORDER BY execution_id"
        )
        assert [tuple(r) for r in rows] == [
            ("fexec_1", "failed", "interrupted"),
            ("fexec_2", "running", None),
        ]
        with pytest.raises(sqlite3.IntegrityError):
            reopened.connection().execute(
                "INSERT INTO executions (execution_id, run_id, step_id, consent_key, status, "
                "model_lane, reserved_units, started_at, lease_until) VALUES "
                "('fexec_3', 'run_a', 'flow_a#1', 'k3', 'running', 'local_default', 5, 'a', 'b')"
            )
    finally:
        reopened.close()
