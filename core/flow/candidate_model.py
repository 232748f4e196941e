"""`knowtation.flow_candidate/v0` (§1.6) and the requests of the candidate handlers.

A candidate is a reviewable suggestion that some repeated work could become a flow; it is
never a flow itself (§5). Every field is pinned: the enums of §1.1, the ``cand_<token>``
id of §1.2, and ``status`` as one of ``pending_review | promoted | rejected`` or
``merged_into:<flow_id>``. Its text (`suggested_title`, `draft_steps`) is untrusted and
kept short and single-line on purpose: a candidate carries a structural outline, never a
prompt, a completion or a note body (§5.1, §6 item 4), so the bounds below are part of the
privacy guarantee, not only of robustness.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from .enums import Confidence, FixedCandidateStatus, Scope, TriggerSignal
from .ids import CANDIDATE_ID, FLOW_ID
from .records import Provenance
from .requests import FlowId, Pointer, Request

CANDIDATE_SCHEMA: Final = "knowtation.flow_candidate/v0"
MERGED_PREFIX: Final = "merged_into:"
FIXED_STATUSES: Final = get_args(FixedCandidateStatus)

MAX_TITLE = 120
MAX_DRAFT_STEP = 160
MAX_DRAFT_STEPS = 20
MAX_EVIDENCE_REFS = 20
MAX_OBSERVED = 10_000
MAX_LISTED = 500


def _line(value: str) -> str:
    """One printable line, not blank: no line breaks or other control characters."""
    if not value.strip():
        raise ValueError("must not be blank")
    if any(ord(ch) < 32 or 127 <= ord(ch) < 160 or ch in "\u2028\u2029" for ch in value):
        raise ValueError("must be one line without control characters")
    return value


def _candidate_id(value: str) -> str:
    if not CANDIDATE_ID.match(value):
        raise ValueError("must look like cand_<token> with token [a-z0-9]{4,32}")
    return value


def _status(value: str) -> str:
    if value in FIXED_STATUSES:
        return value
    if value.startswith(MERGED_PREFIX) and FLOW_ID.match(value[len(MERGED_PREFIX) :]):
        return value
    raise ValueError(
        "must be pending_review, promoted, rejected or merged_into:<flow_id>",
    )


Title = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TITLE), AfterValidator(_line)]
DraftStep = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_DRAFT_STEP), AfterValidator(_line)
]
CandidateId = Annotated[str, StringConstraints(max_length=40), AfterValidator(_candidate_id)]
CandidateStatus = Annotated[str, StringConstraints(max_length=100), AfterValidator(_status)]
EvidenceRefs = Annotated[list[Pointer], Field(max_length=MAX_EVIDENCE_REFS)]
DraftSteps = Annotated[list[DraftStep], Field(max_length=MAX_DRAFT_STEPS)]
ObservedCount = Annotated[int, Field(ge=1, le=MAX_OBSERVED)]


class FlowCandidate(BaseModel):
    """The wire record, exactly the §1.6 fields; unknown keys and coercions are refused."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    schema_: Literal["knowtation.flow_candidate/v0"] = Field(alias="schema")
    candidate_id: CandidateId
    suggested_title: Title
    scope_hint: Scope
    trigger_signal: TriggerSignal
    observed_count: ObservedCount
    evidence_refs: EvidenceRefs
    draft_steps: DraftSteps | None = None
    confidence: Confidence
    status: CandidateStatus
    provenance: Provenance

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True)
        if data["draft_steps"] is None:
            del data["draft_steps"]
        return data


def is_merged(status: str) -> bool:
    return status.startswith(MERGED_PREFIX)


# ---------------------------------------------------------------------- requests


class ProposeCandidate(Request):
    """What an agent may say when it proposes (§5.1 ``session_extraction``): a title, an
    outline, counts and pointers. ``session_ref`` names the session for the per-session
    cap; MCP fills it in with its own session and never takes it from the agent."""

    suggested_title: Title
    scope_hint: Scope
    trigger_signal: TriggerSignal
    observed_count: ObservedCount
    evidence_refs: EvidenceRefs
    draft_steps: DraftSteps | None = None
    confidence: Confidence
    session_ref: Pointer


class ListCandidates(Request):
    status: Literal["pending_review", "promoted", "rejected", "merged_into"] | None = None
    include_low: bool = False
    limit: Annotated[int, Field(ge=1, le=MAX_LISTED)] = 100


class GetCandidate(Request):
    candidate_id: CandidateId


class ReviewCandidate(Request):
    """approve (with the new flow's id, optionally a narrower scope), reject, or merge
    (with the existing flow's id)."""

    candidate_id: CandidateId
    decision: Literal["approve", "reject", "merge"]
    flow_id: FlowId | None = None
    scope: Scope | None = None
