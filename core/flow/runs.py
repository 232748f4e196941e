"""Run handlers: start, get, list, advance (manual), record evidence, submit to review.

Each write is one store transaction that loads the run, checks the rules against the
run's pinned flow, and writes the new record with a new etag: a constant number of
statements whatever the number of runs. Read paths are not behind the run-write gate.
"""

from __future__ import annotations

from typing import Any

from . import ids
from .context import FlowContext
from .errors import Problem, Refused
from .frontier import (
    check_pointer,
    check_skip,
    evidence_verifies,
    require_frontier,
    require_human_to_finish,
    run_status,
    step_index,
    verified_for_done,
)
from .handlers import check_etag, handler, require_run_writes, visible_run
from .leases import is_expired, settle_expired
from .models import FlowBundle
from .records import PROPOSAL_SCHEMA, RUN_SCHEMA
from .requests import (
    AdvanceStep,
    GetRun,
    ListRuns,
    RecordEvidence,
    StartRun,
    SubmitReview,
    parse,
)
from .run_inputs import input_problems
from .store import StoredExecution, StoredRun, decode_cursor, encode_cursor

LIVE_RUN = ("in_progress", "blocked")


@handler
def start_run(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Start a run pinned to a visible canonical version of a flow (§2.1)."""
    require_run_writes(ctx)
    req = parse(StartRun, request)
    entry = ctx.catalog.find(req.flow_id, req.flow_version)
    if entry is None or not ctx.actor.can_see(entry.bundle.flow.scope):
        raise Refused("unknown_flow")
    flow = entry.bundle.flow
    # The declared inputs, required and typed, before anything is written (`run_inputs`).
    problems = input_problems(flow.inputs, req.inputs)
    if problems:
        raise Refused("BAD_REQUEST", tuple(problems))
    record: dict[str, Any] = {
        "schema": RUN_SCHEMA,
        "run_id": ids.run_id(),
        "flow_id": flow.flow_id,
        "flow_version": flow.version,
        "scope": flow.scope,
        "status": "in_progress",
        "step_states": [
            {"step_id": sid, "status": "pending", "evidence_ref": None, "verified": False}
            for sid in flow.steps
        ],
        "started": ids.iso(ids.now()),
        "provenance": {"actor": ctx.actor.hash, "harness": ctx.actor.harness},
        "task_ref": req.task_ref,
        "external_ref": req.external_ref,
    }
    with ctx.store.write() as tx:
        tx.put_snapshot(entry.sha256, entry.bundle)
        tx.insert_run(record, entry.sha256, ctx.actor.hash)
        if req.inputs:
            tx.put_run_inputs(record["run_id"], req.inputs)
    return {"schema": "knowtation.flow_run_start/v0", "run": {**record, "etag": "r1"}}


@handler
def get_run(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """One run. Executions whose lease ran out are settled first (`settle_expired`), so
    a crashed one reads as what it is; a run that has had executions lists them
    (additive ``executions``: finished ones as the contract's record, ``failure:
    "interrupted"`` for a crash; a running one as ``status: "running"`` with its lease)."""
    req = parse(GetRun, request)
    with ctx.store.read() as tx:
        stored = visible_run(ctx, tx, req.run_id)
        executions = tx.executions_for_run(req.run_id)
    if any(is_expired(e) for e in executions):
        settle_expired(ctx, req.run_id)
        with ctx.store.read() as tx:
            stored = visible_run(ctx, tx, req.run_id)
            executions = tx.executions_for_run(req.run_id)
    out: dict[str, Any] = {"schema": "knowtation.flow_run_get/v0", "run": stored.record}
    if executions:
        out["executions"] = [_listed(e) for e in executions]
    return out


def _listed(execution: StoredExecution) -> dict[str, Any]:
    if execution.status != "running":
        return execution.record()
    return {
        **execution.record(),
        "started_at": execution.started_at,
        "lease_until": execution.lease_until,
    }


@handler
def list_runs(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Visible runs, newest first, a page at a time (`next_cursor` continues)."""
    req = parse(ListRuns, request or {})
    after = None
    if req.cursor is not None:
        after = decode_cursor(req.cursor)
        if after is None:
            raise Refused("BAD_REQUEST", (Problem("cursor", "not a cursor"),))
    runs: list[dict[str, Any]] = []
    if ctx.actor.scopes:
        with ctx.store.read() as tx:
            runs = tx.list_runs(
                scopes=ctx.actor.scopes,
                actor_hash=ctx.actor.hash,
                flow_id=req.flow_id,
                status=req.status,
                task_ref=req.task_ref,
                after=after,
                limit=req.limit + 1,
            )
    page, more = runs[: req.limit], len(runs) > req.limit
    cursor = encode_cursor(page[-1]["started"], page[-1]["run_id"]) if more else None
    return {"schema": "knowtation.flow_run_list/v0", "runs": page, "next_cursor": cursor}


def _live(stored: StoredRun) -> None:
    if stored.record["status"] not in LIVE_RUN:
        raise Refused("FLOW_RUN_NOT_IN_PROGRESS")


def _not_executing(stored: StoredRun, step_id: str) -> None:
    """Manual writes never race an automatable execution of the same step (§4.1)."""
    if stored.busy_step == step_id and (stored.busy_until or "") > ids.iso(ids.now()):
        raise Refused("FLOW_RUN_CONFLICT")


def _frontier_step(
    ctx: FlowContext, tx: Any, req: AdvanceStep | RecordEvidence
) -> tuple[StoredRun, dict[str, Any], list[dict[str, Any]], int]:
    """Load a visible, live run at the caller's etag; the addressed step must be the
    frontier and not under an automatable execution. Shared by every manual step write."""
    stored = visible_run(ctx, tx, req.run_id)
    check_etag(stored, req.expected_etag)
    _live(stored)
    record = stored.record
    states = record["step_states"]
    index = step_index(req.step_id, record["flow_id"], len(states))
    require_frontier(states, index)
    _not_executing(stored, req.step_id)
    return stored, record, states, index


@handler
def advance_step(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Move the frontier step (§2.2): done needs verification, skipped needs a `skip_reason`
    (policy | not_applicable | blocked_dependency), recorded on the step state."""
    require_run_writes(ctx)
    req = parse(AdvanceStep, request)
    check_skip(req.to_status, req.skip_reason)
    if req.approve and not ctx.actor.human:  # manual approval only (§3.1 "Human review")
        raise Refused("FLOW_HUMAN_APPROVAL_REQUIRED")
    with ctx.store.write() as tx:
        stored, record, states, index = _frontier_step(ctx, tx, req)
        state = dict(states[index])
        if state["status"] == req.to_status:
            return {"schema": RUN_SCHEMA, "run": record}
        step = tx.snapshot(stored.flow_sha256).steps[index]
        if req.to_status == "done":  # missing proof is named first, for human and agent
            state["verified"] = verified_for_done(step, state, req.approve)
        require_human_to_finish(ctx.actor, step, req.to_status)
        if req.to_status == "skipped":
            state["skip_reason"] = req.skip_reason  # additive field on the step state
        state["status"] = req.to_status
        new_states = [*states[:index], state, *states[index + 1 :]]
        updated = {**record, "step_states": new_states, "status": run_status(new_states)}
        saved = tx.update_run(stored, updated)
    return {"schema": RUN_SCHEMA, "run": saved}


@handler
def record_evidence(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Attach a pointer (never content) to the frontier step (§2.3)."""
    require_run_writes(ctx)
    req = parse(RecordEvidence, request)
    check_pointer(req.evidence_ref, req.pointer_kind)
    with ctx.store.write() as tx:
        stored, record, states, index = _frontier_step(ctx, tx, req)
        step = tx.snapshot(stored.flow_sha256).steps[index]
        state = {
            **states[index],
            "evidence_ref": req.evidence_ref,
            "verified": evidence_verifies(step, req.pointer_kind),
        }
        new_states = [*states[:index], state, *states[index + 1 :]]
        saved = tx.update_run(stored, {**record, "step_states": new_states})
    return {"schema": RUN_SCHEMA, "run": saved}


@handler
def submit_review(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Route the run's durable outcome to review as a proposal (§2.6); the run is unchanged."""
    require_run_writes(ctx)
    req = parse(SubmitReview, request)
    with ctx.store.write() as tx:
        stored = visible_run(ctx, tx, req.run_id)
        record = stored.record
        proposal = {
            "schema": PROPOSAL_SCHEMA,
            "proposal_id": ids.proposal_id(),
            "kind": "flow_run_outcome",
            "status": "pending",
            "intent": req.intent,
            "flow_id": record["flow_id"],
            "flow_version": record["flow_version"],
            "run_id": record["run_id"],
            "external_ref": record.get("external_ref") or record["run_id"],
            "evidence_refs": [
                s["evidence_ref"] for s in record["step_states"] if s.get("evidence_ref")
            ],
            "actor_hash": ctx.actor.hash,
            "created": ids.iso(ids.now()),
        }
        tx.insert_proposal(proposal, stored.scope)
    # The peer's shape: the run and the new proposal's id; the full proposal is additive.
    return {
        "schema": RUN_SCHEMA,
        "run": record,
        "proposal_id": proposal["proposal_id"],
        "proposal": proposal,
    }


def pinned_bundle(ctx: FlowContext, run_id: str) -> FlowBundle | None:
    """The exact definition a visible run is pinned to (for display: step names, kinds)."""
    with ctx.store.read() as tx:
        stored = tx.load_run(run_id)
        if stored is None or not ctx.actor.can_see(stored.scope, stored.actor_hash):
            return None
        return tx.snapshot(stored.flow_sha256)
