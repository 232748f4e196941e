"""Request shapes of §2, validated once at the handler boundary.

Unknown keys are refused, so a misspelt field is a `BAD_REQUEST` the caller sees,
not a silently ignored option. The refusal lists field paths and error kinds only, never
the offending values (they may be ids or tokens).
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .enums import AdvanceTo, Lane, PointerKind, RunStatus, SkipReason
from .errors import Problem, Refused

P = TypeVar("P", bound="Request")

FlowId = Annotated[str, Field(pattern=r"^flow_[a-z0-9_]{1,64}$")]
RunId = Annotated[str, Field(pattern=r"^run_[a-z0-9_]{1,48}$")]
StepId = Annotated[str, Field(pattern=r"^flow_[a-z0-9_]{1,64}#[1-9][0-9]{0,5}$")]
Version = Annotated[str, Field(min_length=5, max_length=64)]
Pointer = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:#/@+-]{0,199}$")]
ConsentToken = Annotated[str, Field(min_length=1, max_length=200)]
Etag = Annotated[str, Field(pattern=r"^r[0-9]{1,12}$")]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


InputName = Annotated[str, Field(min_length=1, max_length=200)]
InputValue = Annotated[str, Field(max_length=4000)]


class StartRun(Request):
    flow_id: FlowId
    flow_version: Version
    task_ref: Pointer | None = None
    external_ref: Pointer | None = None
    # Additive: values of the flow's declared inputs, resolved for `flow.inputs.<name>`
    # references at execution (kept beside the run, never in the run record).
    inputs: Annotated[dict[InputName, InputValue], Field(max_length=200)] | None = None


class GetRun(Request):
    run_id: RunId


class ListRuns(Request):
    flow_id: FlowId | None = None
    status: RunStatus | None = None
    task_ref: Pointer | None = None
    limit: Annotated[int, Field(ge=1, le=500)] = 50
    cursor: Annotated[str, Field(max_length=400)] | None = None


class AdvanceStep(Request):
    run_id: RunId
    step_id: StepId
    to_status: AdvanceTo
    skip_reason: SkipReason | None = None
    approve: bool = False
    expected_etag: Etag | None = None


class RecordEvidence(Request):
    run_id: RunId
    step_id: StepId
    evidence_ref: Pointer
    pointer_kind: PointerKind
    expected_etag: Etag | None = None


class MintConsent(Request):
    run_id: RunId
    allowed_lanes: Annotated[list[Lane], Field(min_length=1, max_length=8)]
    cost_cap_units: Annotated[int, Field(ge=1, le=10_000_000)]
    ttl_seconds: Annotated[int, Field(ge=1, le=10_000_000)] | None = None


class ExecuteAutomatable(Request):
    run_id: RunId
    step_id: StepId
    consent_id: ConsentToken
    model_lane: Lane | None = None
    dry_run: bool = False
    expected_etag: Etag | None = None


class SubmitReview(Request):
    run_id: RunId
    intent: Annotated[str, Field(min_length=1, max_length=2000)]


def _message(err: Any) -> str:
    """The error kind; for a bounded enum, the values it allows (never the value sent)."""
    if err["type"] == "literal_error" and "expected" in err.get("ctx", {}):
        return f"literal_error: must be one of {err['ctx']['expected']}"
    return str(err["type"])


def parse(model: type[P], raw: Any) -> P:
    """Validate ``raw`` (a mapping or an instance) or refuse with the failing field paths."""
    if isinstance(raw, model):
        return raw
    if not isinstance(raw, dict):
        raise Refused("BAD_REQUEST", (Problem("", "the request must be an object"),))
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = tuple(
            Problem(".".join(str(p) for p in err["loc"]) or "request", _message(err))
            for err in exc.errors()[:20]
        )
        raise Refused("BAD_REQUEST", problems) from None
