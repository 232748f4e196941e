"""The flow-candidate rows of the hub's route table (§5) and how a request reaches them.

The rows (`RouteSpec` fields, by name) join `core.hub.routes.ROUTES`, so the Starlette
routes and the OpenAPI document come from the same table as every other route. Each
names a candidate action of `core.flow.candidates`; the path's ``candidate_id`` wins over
(and must agree with) the body's. Review is the human's act: an agent token, and the
owner's local token (an agent), are refused ``FLOW_HUMAN_APPROVAL_REQUIRED`` by the handler itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..flow.candidate_model import FlowCandidate, ProposeCandidate, ReviewCandidate
from ..flow.candidates import CANDIDATE_ACTIONS, candidate_action
from ..flow.context import FlowContext
from ..flow.errors import FlowRefusal, FlowResult, Problem
from ..flow.records import Proposal
from .route_spec import RouteSpec


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class CandidateList(_Envelope):
    schema_: Literal["noma.flow_candidate_list/v0"] = Field(alias="schema")
    candidates: list[FlowCandidate]


class MergeOffer(BaseModel):
    flow_id: str
    version: str
    overlap: float


class CandidateGet(_Envelope):
    schema_: Literal["noma.flow_candidate_get/v0"] = Field(alias="schema")
    candidate: FlowCandidate
    merge_offers: list[MergeOffer]


class CandidatePropose(_Envelope):
    schema_: Literal["noma.flow_candidate_propose/v0"] = Field(alias="schema")
    candidate: FlowCandidate
    active: Literal[False]


class CandidateReview(_Envelope):
    """``proposal`` is the flow proposal an approval filed (null otherwise); ``overlap``
    the structural overlap a merge was accepted at (null otherwise)."""

    schema_: Literal["noma.flow_candidate_review/v0"] = Field(alias="schema")
    candidate: FlowCandidate
    proposal: Proposal | None
    overlap: float | None
    active: Literal[False]


CANDIDATES = "/api/v1/flow-candidates"
LIST_QUERY = (("status", "string"), ("include_low", "boolean"), ("limit", "integer"))

CANDIDATE_ROUTES: tuple[dict[str, Any], ...] = (
    {
        "method": "GET",
        "path": CANDIDATES,
        "action": "candidate_list",
        "summary": "List visible flow candidates, oldest first (low confidence only with "
        "include_low)",
        "request": None,
        "response": CandidateList,
        "query": LIST_QUERY,
    },
    {
        "method": "POST",
        "path": CANDIDATES,
        "action": "candidate_propose",
        "summary": "Propose a session_extraction candidate (opt-in: policy.candidate_capture)",
        "request": ProposeCandidate,
        "response": CandidatePropose,
        "success": 201,
    },
    {
        "method": "GET",
        "path": CANDIDATES + "/{candidate_id}",
        "action": "candidate_get",
        "summary": "One flow candidate and the flows it could be merged into",
        "request": None,
        "response": CandidateGet,
    },
    {
        "method": "POST",
        "path": CANDIDATES + "/{candidate_id}/review",
        "action": "candidate_review",
        "summary": "A human's review: approve (files a flow proposal), reject, or merge "
        "(overlap ≥ 0.8)",
        "request": ReviewCandidate,
        "response": CandidateReview,
    },
)


def is_candidate_action(action: str) -> bool:
    return action in CANDIDATE_ACTIONS


def dispatch_candidate(
    ctx: FlowContext, spec: RouteSpec, params: dict[str, str], payload: dict[str, Any]
) -> FlowResult:
    """The request the route describes: path parameters merged, query names checked."""
    if spec.method == "GET":
        allowed = {name for name, _ in spec.query}
        extra = sorted(set(payload) - allowed)
        if extra:
            return FlowRefusal("BAD_REQUEST", (Problem(extra[0], "unknown query parameter"),))
    request = dict(payload)
    for name, value in params.items():
        if name in request and request[name] != value:
            return FlowRefusal("BAD_REQUEST", (Problem(name, "differs from the path"),))
        request[name] = value
    return candidate_action(ctx, spec.action, request)
