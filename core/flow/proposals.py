"""Reviewing proposals: the reviewer for review-before-write (flow imports and run outcomes).

`submit_review` routes a run's durable outcome to review as a ``flow_run_outcome`` proposal,
`import_flow` files a ``flow_import`` one and `propose_flow` a ``flow_change``; here they
are listed, shown (with what a bundle changes) and decided. Deciding is
a human's act (like approving a ``human_review`` step): an agent actor is refused. A
bundle's decision goes through `review_import` (approval writes the bundle into
``flows/``); an outcome's is recorded on the proposal.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from . import ids
from .bundle import parse_bundle
from .changes import summarize, unified_diff
from .context import FlowContext
from .enums import ProposalKind, ProposalStatus
from .errors import FlowResult, Problem, Refused
from .handlers import handler
from .importing import BUNDLE_KINDS, base_entry, review_import, sandbox_check
from .models import FlowBundle
from .records import PROPOSAL_SCHEMA
from .requests import Request, parse
from .store import Tx

LIST_SCHEMA = "noma.flow_proposal_list/v0"
GET_SCHEMA = "noma.flow_proposal/v0"
REVIEW_SCHEMA = "noma.flow_review/v0"
MAX_LISTED = 500


class ListProposals(Request):
    status: ProposalStatus | None = None
    kind: ProposalKind | None = None
    limit: Annotated[int, Field(ge=1, le=MAX_LISTED)] = 100


class GetProposal(Request):
    proposal_id: Annotated[str, Field(max_length=64)]


class ReviewProposal(Request):
    proposal_id: Annotated[str, Field(max_length=64)]
    approve: bool


def file_flow_proposal(
    ctx: FlowContext, tx: Tx, bundle: FlowBundle, *, intent: str, evidence_refs: list[str]
) -> dict[str, Any]:
    """File ``bundle`` as a pending ``flow_import`` proposal inside the caller's
    transaction (a promoted flow candidate): the bundle waits, inert, for the same import
    review as any other, and nothing is written into ``flows/`` until it is approved."""
    from .catalog import bundle_sha256

    sandbox_check(bundle, ctx.posture.policy)
    proposal = {
        "schema": PROPOSAL_SCHEMA,
        "proposal_id": ids.proposal_id(),
        "kind": "flow_import",
        "status": "pending",
        "intent": intent,
        "flow_id": bundle.flow_id,
        "flow_version": bundle.version,
        "run_id": None,
        "external_ref": bundle_sha256(bundle),
        "evidence_refs": evidence_refs,
        "automatable_steps": bundle.automatable_steps,
        "source_format": "yaml",
        "actor_hash": ctx.actor.hash,
        "created": ids.iso(ids.now()),
    }
    tx.insert_proposal(proposal, bundle.flow.scope, bundle.to_json())
    return proposal


@handler
def list_proposals(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Proposals the caller may see, oldest first, optionally by status and kind."""
    req = parse(ListProposals, request or {})
    kinds: tuple[ProposalKind, ...] = (
        (req.kind,) if req.kind is not None else ("flow_import", "flow_change", "flow_run_outcome")
    )
    found: list[dict[str, Any]] = []
    with ctx.store.read() as tx:
        for kind in kinds:
            for record, scope in tx.list_proposals(kind, req.status):
                if ctx.actor.can_see(scope, record.get("actor_hash")):
                    found.append(record)
    found.sort(key=lambda r: (r["created"], r["proposal_id"]))
    return {"schema": LIST_SCHEMA, "proposals": found[: req.limit]}


def _visible(ctx: FlowContext, tx: Tx, proposal_id: str) -> tuple[dict[str, Any], str, Any]:
    if not ids.PROPOSAL_ID.match(proposal_id):
        raise Refused("BAD_REQUEST", (Problem("proposal_id", "not a proposal id"),))
    found = tx.load_proposal(proposal_id)
    if found is None or not ctx.actor.can_see(found[1], found[0].get("actor_hash")):
        raise Refused("unknown_proposal")
    return found


@handler
def show_proposal(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """One proposal and, for a bundle, what approving it would change: the proposed
    bundle, the base version it follows, a field-level summary and the unified diff."""
    req = parse(GetProposal, request)
    with ctx.store.read() as tx:
        record, _scope, payload = _visible(ctx, tx, req.proposal_id)
    out: dict[str, Any] = {"schema": GET_SCHEMA, "proposal": record}
    if record["kind"] not in BUNDLE_KINDS or payload is None:
        return out
    proposed = parse_bundle(payload)
    base_version = record.get("base_version")
    base = None
    if base_version is not None:
        entry = ctx.catalog.find(proposed.flow_id, base_version)
        base = entry.bundle if entry is not None else None
    elif "base_version" not in record:  # filed before proposals named their base
        entry = base_entry(ctx, proposed.flow_id)
        if entry is not None and entry.bundle.version != proposed.version:
            base = entry.bundle
    out["bundle"] = payload
    out["base_version"] = base.version if base is not None else None
    out["changes"] = summarize(base, proposed)
    out["diff"] = unified_diff(base, proposed)
    return out


def review_proposal(ctx: FlowContext, request: Any) -> FlowResult:
    """Approve or reject a pending proposal of either kind."""
    try:
        if not ctx.actor.human:
            raise Refused("FLOW_HUMAN_APPROVAL_REQUIRED")
        req = parse(ReviewProposal, request)
        with ctx.store.read() as tx:
            found = _visible(ctx, tx, req.proposal_id)
    except Refused as exc:
        return exc.refusal
    if found[0]["kind"] in BUNDLE_KINDS:
        return review_import(ctx, req.proposal_id, req.approve)
    return _review_outcome(ctx, req)


@handler
def _review_outcome(ctx: FlowContext, req: ReviewProposal) -> dict[str, Any]:
    with ctx.store.write() as tx:
        found = tx.load_proposal(req.proposal_id)
        if found is None or found[0]["kind"] != "flow_run_outcome":
            raise Refused("unknown_proposal")
        record = found[0]
        if record["status"] != "pending":
            raise Refused("BAD_REQUEST", (Problem("proposal_id", "already reviewed"),))
        updated = {**record, "status": "approved" if req.approve else "rejected"}
        tx.set_proposal_status(req.proposal_id, updated["status"], updated)
    return {"schema": REVIEW_SCHEMA, "proposal": updated, "active": False}
