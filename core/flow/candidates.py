"""The capture flywheel's handlers (§5): list, get, propose and review flow candidates.

The guardrails of §5.3 are properties of these handlers, not of their callers:

- **No silent promotion.** Only `review_candidate` changes a candidate, and only a human
  actor may call it (an agent gets ``FLOW_HUMAN_APPROVAL_REQUIRED``). Even an approval makes
  no flow: it files a pending ``flow_import`` proposal (`proposals.file_flow_proposal`) that
  waits for the normal import review before anything is written into ``flows/``.
- **Detection is inert.** Nothing here runs in the background or derives candidates from
  sessions; a candidate exists only because a caller proposed one, and the only signal a
  caller may propose is ``session_extraction`` (the explicit end-of-session capture).
- **Opt-in and bounded.** Proposing needs ``[policy] candidate_capture = true`` in a
  trusted workspace; each session may propose at most `SESSION_CAP` candidates and each
  actor hold at most `PENDING_CAP` pending ones (§5.2). A candidate carries a short
  outline, counts and pointers only (`candidate_model`), never raw content.
- **Scope is confirmed, never widened.** A candidate is visible like a run (its
  ``scope_hint``, personal ones to their proposer only); an approval may narrow the scope
  hint, never widen it, and the import policy is checked again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import ids
from .candidate_model import (
    CANDIDATE_SCHEMA,
    MERGED_PREFIX,
    FlowCandidate,
    GetCandidate,
    ListCandidates,
    ProposeCandidate,
    ReviewCandidate,
)
from .context import FlowContext
from .errors import FlowRefusal, FlowResult, Problem, Refused
from .handlers import handler
from .models import FlowBundle
from .overlap import mergeable, structural_overlap
from .proposals import file_flow_proposal
from .records import Provenance
from .requests import parse

LIST_SCHEMA = "noma.flow_candidate_list/v0"
GET_SCHEMA = "noma.flow_candidate_get/v0"
PROPOSE_SCHEMA = "noma.flow_candidate_propose/v0"
REVIEW_SCHEMA = "noma.flow_candidate_review/v0"

SESSION_CAP = 2  # §5.2 per-session candidate cap
PENDING_CAP = 50  # pending candidates one actor may hold (a session id is the caller's word)
PROMOTED_VERSION = "0.1.0"
SCOPE_RANK = {"personal": 0, "project": 1, "org": 2}
SURFACED = ("medium", "high")  # §5.2: low is suppressed unless asked for


def _problem(path: str, message: str) -> Refused:
    return Refused("BAD_REQUEST", (Problem(path, message),))


def _visible(ctx: FlowContext, found: tuple[dict[str, Any], str, str] | None) -> dict[str, Any]:
    if found is None or not ctx.actor.can_see(found[1], found[2]):
        raise Refused("unknown_candidate")
    return found[0]


@handler
def list_candidates(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Visible candidates, oldest first; ``low`` confidence only with ``include_low``."""
    req = parse(ListCandidates, request or {})
    with ctx.store.read() as tx:
        found = tx.list_candidates(
            scopes=ctx.actor.scopes,
            actor_hash=ctx.actor.hash,
            status=req.status,
            confidences=("low", *SURFACED) if req.include_low else SURFACED,
            limit=req.limit,
        )
    return {"schema": LIST_SCHEMA, "candidates": found}


@handler
def get_candidate(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """One candidate, with the visible flows it could be merged into (overlap ≥ 0.8)."""
    req = parse(GetCandidate, request)
    with ctx.store.read() as tx:
        record = _visible(ctx, tx.load_candidate(req.candidate_id))
    return {"schema": GET_SCHEMA, "candidate": record, "merge_offers": merge_offers(ctx, record)}


def merge_offers(ctx: FlowContext, record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The newest version of every visible flow whose steps overlap the outline enough."""
    outline = record.get("draft_steps") or []
    if not outline:
        return []
    newest: dict[str, FlowBundle] = {}
    for entry in ctx.catalog.entries():  # sorted by id then version: the last one wins
        if ctx.actor.can_see(entry.bundle.flow.scope):
            newest[entry.bundle.flow_id] = entry.bundle
    scored = []
    for flow_id, bundle in newest.items():
        overlap = structural_overlap(outline, [s.owned_job for s in bundle.steps])
        if mergeable(overlap):
            scored.append((-overlap, flow_id, bundle.version))
    return [
        {"flow_id": flow_id, "version": version, "overlap": round(float(-neg), 4)}
        for neg, flow_id, version in sorted(scored)
    ]


@handler
def propose_candidate(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Record an explicitly proposed ``session_extraction`` candidate, pending review."""
    if not ctx.posture.policy.candidate_capture:
        raise Refused("FLOW_CANDIDATE_CAPTURE_DISABLED")
    req = parse(ProposeCandidate, request)
    if req.trigger_signal != "session_extraction":
        raise _problem(
            "trigger_signal",
            "only session_extraction may be proposed; detection is inert in v0 (gate 7A-L4)",
        )
    if req.scope_hint not in ctx.actor.scopes:
        raise _problem("scope_hint", "not a scope this caller may use")
    record = FlowCandidate(
        schema=CANDIDATE_SCHEMA,
        candidate_id=ids.candidate_id(),
        suggested_title=req.suggested_title,
        scope_hint=req.scope_hint,
        trigger_signal=req.trigger_signal,
        observed_count=req.observed_count,
        evidence_refs=req.evidence_refs,
        draft_steps=req.draft_steps,
        confidence=req.confidence,
        status="pending_review",
        provenance=Provenance(actor=ctx.actor.hash, harness=ctx.actor.harness),
    ).to_json()
    session_key = ids.sha256_hex(req.session_ref)
    with ctx.store.write() as tx:
        tx.lock_candidate_quota(ctx.actor.hash)
        if tx.count_candidates(ctx.actor.hash, session_key=session_key) >= SESSION_CAP:
            raise Refused("FLOW_CANDIDATE_CAP_REACHED")
        if tx.count_candidates(ctx.actor.hash) >= PENDING_CAP:
            raise Refused("FLOW_CANDIDATE_CAP_REACHED")
        tx.insert_candidate(record, ctx.actor.hash, session_key, ids.iso(ids.now()))
    return {"schema": PROPOSE_SCHEMA, "candidate": record, "active": False}


def review_candidate(ctx: FlowContext, request: Any) -> FlowResult:
    """A human's decision: approve (file a flow proposal), reject, or merge into a flow."""
    if not ctx.actor.human:  # before parsing: an agent learns nothing about the request
        return FlowRefusal("FLOW_HUMAN_APPROVAL_REQUIRED")
    return _review(ctx, request)


@handler
def _review(ctx: FlowContext, request: Any) -> dict[str, Any]:
    req = parse(ReviewCandidate, request)
    if req.decision in ("approve", "merge") and req.flow_id is None:
        raise _problem("flow_id", f"required to {req.decision}")
    if req.decision == "reject" and req.flow_id is not None:
        raise _problem("flow_id", "only with approve or merge")
    if req.decision != "approve" and req.scope is not None:
        raise _problem("scope", "only with approve")
    proposal: dict[str, Any] | None = None
    overlap: float | None = None
    with ctx.store.write() as tx:
        record = _visible(ctx, tx.load_candidate(req.candidate_id))
        if record["status"] != "pending_review":
            raise _problem("candidate_id", "already reviewed")
        if req.decision == "reject":
            status = "rejected"
        elif req.decision == "merge":
            assert req.flow_id is not None
            overlap = _merge_overlap(ctx, record, req.flow_id)
            status = MERGED_PREFIX + req.flow_id
        else:
            assert req.flow_id is not None
            bundle = _promotion_bundle(ctx, record, req.flow_id, req.scope)
            proposal = file_flow_proposal(
                ctx,
                tx,
                bundle,
                intent="promote flow candidate",
                evidence_refs=[record["candidate_id"]],
            )
            status = "promoted"
        updated = {**record, "status": status}
        tx.set_candidate_status(req.candidate_id, updated)
    return {
        "schema": REVIEW_SCHEMA,
        "candidate": updated,
        "proposal": proposal,
        "overlap": overlap,
        "active": False,
    }


def _merge_overlap(ctx: FlowContext, record: Mapping[str, Any], flow_id: str) -> float:
    entry = ctx.catalog.find(flow_id)
    if entry is None or not ctx.actor.can_see(entry.bundle.flow.scope):
        raise Refused("unknown_flow")
    overlap = structural_overlap(
        record.get("draft_steps") or [], [s.owned_job for s in entry.bundle.steps]
    )
    if not mergeable(overlap):
        raise Refused(
            "FLOW_CANDIDATE_OVERLAP_TOO_LOW",
            (Problem("flow_id", f"structural overlap {float(overlap):.2f} is below 0.80"),),
        )
    return round(float(overlap), 4)


def _promotion_bundle(
    ctx: FlowContext, record: Mapping[str, Any], flow_id: str, scope: str | None
) -> FlowBundle:
    """The draft flow an approval proposes: the outline as manual, human-reviewed steps
    whose missing anatomy says so, for the import reviewer to complete or refuse."""
    from .bundle import BundleError, parse_bundle

    hint = record["scope_hint"]
    confirmed = scope or hint
    if SCOPE_RANK[confirmed] > SCOPE_RANK[hint]:
        raise _problem("scope", "may narrow the candidate's scope_hint, never widen it")
    outline: list[str] = record.get("draft_steps") or []
    if not outline:
        raise _problem("candidate_id", "has no draft_steps to promote: merge or reject it")
    if ctx.catalog.find(flow_id) is not None:
        raise _problem("flow_id", "a flow with this id exists: merge into it or pick another")
    steps = [
        {
            "schema": "knowtation.flow_step/v0",
            "step_id": ids.step_id(flow_id, n),
            "flow_id": flow_id,
            "ordinal": n,
            "owned_job": text,
            "instruction": text,
            "trigger": "after the previous step of this flow is done",
            "when_not_to_run": "not yet specified: drafted from a flow candidate",
            "boundaries": ["drafted from a flow candidate: review before relying on it"],
            "output_shape": "not yet specified: drafted from a flow candidate",
            "verification": {
                "kind": "human_review",
                "evidence_required": True,
                "description": "a person confirms the step was done",
            },
            "automatable": "manual",
        }
        for n, text in enumerate(outline, start=1)
    ]
    data = {
        "flow": {
            "schema": "knowtation.flow/v0",
            "flow_id": flow_id,
            "title": record["suggested_title"],
            "version": PROMOTED_VERSION,
            "scope": confirmed,
            "summary": f"Drafted from flow candidate {record['candidate_id']}.",
            "tags": ["flow_candidate"],
            "steps": [s["step_id"] for s in steps],
            "updated": ids.iso(ids.now()),
            "truncated": False,
        },
        "steps": steps,
    }
    try:
        return parse_bundle(data)
    except BundleError as exc:
        raise Refused("BAD_REQUEST", tuple(exc.problems)) from None


Handler = Callable[[FlowContext, Any], FlowResult]

CANDIDATE_ACTIONS: dict[str, Handler] = {
    "candidate_list": list_candidates,
    "candidate_get": get_candidate,
    "candidate_propose": propose_candidate,
    "candidate_review": review_candidate,
}
# Reviewing is the human's act: agents (MCP) list, get and propose only.
AGENT_CANDIDATE_ACTIONS: tuple[str, ...] = ("candidate_list", "candidate_get", "candidate_propose")


def candidate_action(
    ctx: FlowContext,
    action: str,
    payload: Mapping[str, Any] | None,
    allowed: tuple[str, ...] | None = None,
) -> FlowResult:
    """Dispatch by name (``None`` values dropped first, as `actions.run_action` does)."""
    if action not in CANDIDATE_ACTIONS or (allowed is not None and action not in allowed):
        return FlowRefusal("BAD_REQUEST", (Problem("action", "unknown action"),))
    request = {k: v for k, v in (payload or {}).items() if v is not None}
    return CANDIDATE_ACTIONS[action](ctx, request)
