"""Execute an automatable step (§2.4, §4.2): seven preconditions, reserve, run, settle.

The preconditions are checked in the spec's order inside one store transaction, and the
cost reservation (precondition 5) is a conditional UPDATE in that same transaction, so two
posts can never both reserve the last units. The lane runs outside any transaction; a second
transaction then records the outcome, charges the measured cost (never more than reserved)
and updates the step.

One execution per step at a time, whatever the consent: while an execution of (run, step)
is in flight, any other execute of that step (same consent or another the caller holds)
starts nothing and charges nothing. It waits a bounded time (``IN_FLIGHT_WAIT_SECONDS``)
for that execution's final status; if it is still running then, the response's
``execution`` is that execution as it stands (the same ``execution_id``, status
``running``, no cost yet), so a client always learns which execution holds the step and
can poll the run for its end (§4.2: a re-post "returns the in-flight execution_id").
Re-posting the same (run, step, consent)
after it completed returns that execution (one execution, one charge), as long as the run
is in progress; on a finished run every execute is ``FLOW_RUN_NOT_IN_PROGRESS``. An
execution whose consent was revoked or expired while it ran ends ``consent_denied``: its
output is not used and the step does not move (the measured cost is still charged).
An execution whose lease ran out (its process died) is settled first, in a transaction of
its own (`leases.settle_expired`: failed ``interrupted``, charged its reservation).

What is kept: the execution id, status, a hash pointer, cost units, the lane, timestamps.
Never the step text, the inputs, the output, or a provider payload.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from . import ids
from .consent import check_consent, consent_key, held_consent
from .context import FlowContext
from .enums import INTERNAL_REF_KINDS
from .errors import Refused
from .frontier import require_frontier, run_status, step_index
from .handlers import check_etag, handler, require_automatable, visible_run
from .lanes import MAX_EXECUTION_UNITS, UNIT_MS, ExecutionLane, LaneRequest, LaneResult
from .leases import LeaseExpired, require_no_expired, settle_expired
from .models import FlowStep
from .references import resolve_inputs
from .requests import ExecuteAutomatable, parse
from .store import StoredConsent, StoredExecution, Tx

SCHEMA = "knowtation.flow_execute_automatable/v0"
LEASE_GRACE_SECONDS = 120
IN_FLIGHT_WAIT_SECONDS = 5.0
IN_FLIGHT_POLL_SECONDS = 0.05


def _response(
    run: dict[str, Any], execution: dict[str, Any] | None, **extra: Any
) -> dict[str, Any]:
    return {"schema": SCHEMA, "run": run, "execution": execution, **extra}


def _lane(ctx: FlowContext, consent: StoredConsent, requested: str | None) -> ExecutionLane:
    name = requested or (
        "local_default" if "local_default" in consent.allowed_lanes else consent.allowed_lanes[0]
    )
    lane = ctx.lanes.get(name)
    if (
        name not in consent.allowed_lanes
        or name not in ctx.posture.policy.allowed_lanes
        or lane is None
        or not lane.available
    ):
        raise Refused("FLOW_EXECUTION_LANE_DENIED")
    return lane


def _lane_request(step: FlowStep, budget: int, inputs: dict[str, str]) -> LaneRequest:
    refs = tuple(r for r in step.skill_refs or () if r.kind in INTERNAL_REF_KINDS)
    return LaneRequest(step.step_id, refs, inputs, budget)


@handler
def execute_automatable(ctx: FlowContext, request: Any) -> dict[str, Any]:
    require_automatable(ctx)  # 1. the sub-gate (and run writes under it)
    req = parse(ExecuteAutomatable, request)
    while True:  # each pass settles what expired, so this ends
        try:
            with ctx.store.write() as tx:
                begun = _begin(ctx, tx, req)
            break
        except LeaseExpired:  # settled in its own transaction: a refusal cannot undo it
            settle_expired(ctx, req.run_id)
    if isinstance(begun, dict):
        return begun  # a dry run, or a replay of this consent's finished execution
    if begun.in_flight is not None:
        return _await_in_flight(ctx, begun.in_flight)
    assert begun.execution is not None and begun.lane is not None
    try:
        if not begun.inputs_resolved:  # an unresolved reference fails in-band; no lane call
            result = LaneResult("failed", 0, failure="input_unresolved")
        else:
            result = begun.lane.run(begun.lane_req)
    except Exception:  # a lane fault is a failed execution, never a crash of the caller
        result = LaneResult("failed", 0, failure="sandbox_unavailable")
    return _settle(ctx, begun.execution, begun.step, begun.index, result)


@dataclass(frozen=True, slots=True)
class _Begun:
    step: FlowStep
    index: int
    lane_req: LaneRequest
    lane: ExecutionLane | None = None
    execution: StoredExecution | None = None
    in_flight: StoredExecution | None = None
    inputs_resolved: bool = True  # False: a ``from`` reference has no value (fails in-band)


def _begin(ctx: FlowContext, tx: Tx, req: ExecuteAutomatable) -> dict[str, Any] | _Begun:
    """The preconditions in the spec's order, then the reservation and the execution row,
    all in the caller's one transaction."""
    policy = ctx.posture.policy
    now = ids.now()
    stored = visible_run(ctx, tx, req.run_id)
    record = stored.record
    states = record["step_states"]
    index = step_index(req.step_id, record["flow_id"], len(states))
    step = tx.snapshot(stored.flow_sha256).steps[index]
    if step.automatable != "automatable":  # 2. canonical automatable only
        raise Refused("FLOW_STEP_NOT_AUTOMATABLE")
    require_no_expired(tx, req.run_id)
    if record["status"] != "in_progress":  # 3. run in progress, step on the frontier
        raise Refused("FLOW_RUN_NOT_IN_PROGRESS")
    if not req.dry_run:
        running = tx.running_execution(req.run_id, req.step_id)
        if running is not None:  # one execution per step at a time, whatever the consent
            if running.consent_key == consent_key(req.consent_id):
                held_consent(ctx, tx, req.consent_id)
            else:  # another consent's execution: the caller must hold a valid one too
                check_consent(ctx, tx, req.consent_id, stored)
            return _Begun(step, index, _lane_request(step, 0, {}), in_flight=running)
        live = tx.live_execution(req.run_id, req.step_id, consent_key(req.consent_id))
        if live is not None:
            held_consent(ctx, tx, req.consent_id)
            return _response(record, live.record())
    check_etag(stored, req.expected_etag)
    require_frontier(states, index)
    consent = check_consent(ctx, tx, req.consent_id, stored)  # 4. consent for run + actor
    lane = _lane(ctx, consent, req.model_lane)
    cap = min(consent.cost_cap_units, policy.cost_cap_units)
    remaining = cap - consent.cost_consumed_units - consent.cost_reserved_units
    budget = min(remaining, MAX_EXECUTION_UNITS)
    inputs = resolve_inputs(step, states, tx.run_inputs(req.run_id))
    lane_req = _lane_request(step, budget, inputs or {})
    if budget < lane.min_units(lane_req):  # 5. billing reservation within the caps
        raise Refused("FLOW_EXECUTION_COST_CAPPED")
    if not req.dry_run and not tx.reserve_units(consent.consent_key, budget):
        raise Refused("FLOW_EXECUTION_COST_CAPPED")
    if policy.automatable_forbidden:  # 6. org / classroom policy
        raise Refused("FLOW_EXECUTION_POLICY_FORBIDDEN")
    if any(r.kind not in INTERNAL_REF_KINDS for r in step.skill_refs or ()):
        raise Refused("FLOW_EXECUTION_POLICY_FORBIDDEN")  # 7. never external_tool (SD-5)
    if req.dry_run:
        return _response(
            record,
            None,
            dry_run=True,
            model_lane=lane.name,
            reservable_units=budget,
            inputs_resolved=inputs is not None,
        )
    lease = ids.later(now, math.ceil(budget * UNIT_MS / 1000) + LEASE_GRACE_SECONDS)
    execution = StoredExecution(
        execution_id=ids.execution_id(),
        run_id=req.run_id,
        step_id=req.step_id,
        consent_key=consent.consent_key,
        status="running",
        model_lane=lane.name,
        reserved_units=budget,
        cost_units=0,
        evidence_ref=None,
        failure=None,
        started_at=ids.iso(now),
        lease_until=ids.iso(lease),
        completed_at=None,
    )
    tx.insert_execution(execution)
    state = {**states[index], "status": "in_progress"}
    started = {**record, "step_states": [*states[:index], state, *states[index + 1 :]]}
    tx.update_run(stored, started, busy_step=req.step_id, busy_until=ids.iso(lease))
    return _Begun(
        step, index, lane_req, lane=lane, execution=execution, inputs_resolved=inputs is not None
    )


def _await_in_flight(ctx: FlowContext, execution: StoredExecution) -> dict[str, Any]:
    """Wait (bounded) for another post's execution of this step; never start a second."""
    deadline = time.monotonic() + IN_FLIGHT_WAIT_SECONDS
    while True:
        with ctx.store.read() as tx:
            current = tx.load_execution(execution.execution_id)
            stored = tx.load_run(execution.run_id)
        assert current is not None and stored is not None
        if current.status != "running" or time.monotonic() >= deadline:
            return _response(stored.record, current.record())
        time.sleep(IN_FLIGHT_POLL_SECONDS)


def _consent_still_valid(tx: Tx, key: str) -> bool:
    consent = tx.load_consent(key)
    return (
        consent is not None
        and consent.revoked_at is None
        and consent.expires_at > ids.iso(ids.now())
    )


def _settle(
    ctx: FlowContext, execution: StoredExecution, step: FlowStep, index: int, result: LaneResult
) -> dict[str, Any]:
    """Record the outcome, charge the measured cost, and move the step if it is verified."""
    cost = min(max(result.cost_units, 0), execution.reserved_units)
    pointer = f"hash_{result.output_sha256}" if result.status == "completed" else None
    # human_review is never satisfied here; only artifact_exists is, by the output hash.
    verified = pointer is not None and step.verification.kind == "artifact_exists"
    done_at = ids.iso(ids.now())
    with ctx.store.write() as tx:
        status: str = result.status
        if not _consent_still_valid(tx, execution.consent_key):
            # Withdrawn (or expired) while the lane ran: the output is not used.
            status, pointer, verified = "consent_denied", None, False
        finished = tx.finish_execution(
            execution.execution_id,
            status=status,
            cost_units=cost,
            evidence_ref=pointer if verified else None,
            failure=result.failure,
            completed_at=done_at,
        )
        if finished:
            tx.settle_units(execution.consent_key, execution.reserved_units, cost)
        stored = tx.load_run(execution.run_id)
        assert stored is not None
        record = stored.record
        states = record["step_states"]
        state = dict(states[index])
        if finished and pointer is not None and state["status"] == "in_progress":
            state["evidence_ref"] = pointer
            state["verified"] = verified
            if verified:
                state["status"] = "done"
        new_states = [*states[:index], state, *states[index + 1 :]]
        updated = {**record, "step_states": new_states}
        if record["status"] in ("in_progress", "blocked"):
            updated["status"] = run_status(new_states)
        saved = tx.update_run(stored, updated)
        final = tx.load_execution(execution.execution_id)
    assert final is not None
    return _response(saved, final.record())
