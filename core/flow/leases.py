"""Execution leases: an execution whose process died is settled before anything else runs.

An execution row is written ``running`` with a lease (its budget's run time plus a grace).
If the process running it is killed, nothing ever finishes the row; once the lease has run
out, the execution is over whatever happened to it, and `settle_expired` closes it:

- **in its own transaction**, committed before any precondition of the caller's own request
  is checked, so a refusal of that request (cost capped, consent expired, ...) can never
  roll the settlement back and leave the row ``running`` for good;
- **failed in-band** with ``failure: "interrupted"``, the contract's crash outcome (§2.4:
  ``status`` stays in completed|failed|cost_capped|consent_denied);
- **charged its whole reservation**. The contract's cost cap (§2.5, §4.2 "Cost cap") is a
  ceiling the human set; an execution that died unmeasured may have spent anything up to
  what it reserved (a provider lane bills as it goes), so it is charged exactly that and
  never more. Releasing it instead would let a crash loop spend past the cap. A retry under
  the same consent then proceeds on what is left, or is refused
  ``FLOW_EXECUTION_COST_CAPPED``, which is then the real reason; a new consent (a new
  "yes" from the human) moves the step.

Locks are taken in the stores' one order (run, then consent, then execution), so a
settlement never deadlocks with an execute or a late settle of the same run on PostgreSQL.
"""

from __future__ import annotations

from . import ids
from .context import FlowContext
from .store import StoredExecution, Tx

INTERRUPTED = "interrupted"


def reap(tx: Tx, run_id: str, now: str) -> list[StoredExecution]:
    """Close every expired execution of ``run_id`` inside ``tx``; the ones closed."""
    stale = tx.expired_executions(run_id, now)
    if not stale:
        return []
    tx.load_run(run_id)  # run first: the lock order every writer keeps
    closed = []
    for execution in stale:
        tx.load_consent(execution.consent_key)
        if tx.finish_execution(
            execution.execution_id,
            status="failed",
            cost_units=execution.reserved_units,
            evidence_ref=None,
            failure=INTERRUPTED,
            completed_at=now,
        ):
            tx.settle_units(
                execution.consent_key, execution.reserved_units, execution.reserved_units
            )
            closed.append(execution)
    return closed


class LeaseExpired(Exception):
    """Raised inside a transaction that met an expired execution: roll back, call
    `settle_expired`, then start the request again on the settled state."""


def require_no_expired(tx: Tx, run_id: str) -> None:
    """The check a request makes inside its own transaction (one indexed read)."""
    if tx.expired_executions(run_id, ids.iso(ids.now())):
        raise LeaseExpired(run_id)


def settle_expired(ctx: FlowContext, run_id: str) -> list[StoredExecution]:
    """Settle ``run_id``'s expired executions in a write transaction of their own, so
    the settlement is committed whatever the caller's request then meets."""
    with ctx.store.write() as tx:
        return reap(tx, run_id, ids.iso(ids.now()))


def is_expired(execution: StoredExecution) -> bool:
    return execution.status == "running" and execution.lease_until < ids.iso(ids.now())
