"""Response shapes of the REST routes, as pydantic models (the OpenAPI document is built
from them and from the request models in `core.flow.requests`).

The records themselves are the flow engine's (`core.flow.records`); these only wrap them in
the envelopes the handlers return, so the document cannot drift from what is served.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..flow.records import Consent, Execution, FlowRun, Proposal


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class RunStart(_Envelope):
    schema_: Literal["knowtation.flow_run_start/v0"] = Field(alias="schema")
    run: FlowRun


class RunGet(_Envelope):
    schema_: Literal["knowtation.flow_run_get/v0"] = Field(alias="schema")
    run: FlowRun


class RunWrite(_Envelope):
    """Advance and evidence answer with the updated run record."""

    schema_: Literal["knowtation.flow_run/v0"] = Field(alias="schema")
    run: FlowRun


class RunList(_Envelope):
    schema_: Literal["knowtation.flow_run_list/v0"] = Field(alias="schema")
    runs: list[FlowRun]
    next_cursor: str | None = None


class ConsentMint(_Envelope):
    schema_: Literal["knowtation.flow_execution_consent_mint/v0"] = Field(alias="schema")
    consent: Consent


class ExecuteResult(_Envelope):
    """``execution`` has status ``running`` when the step was still executing for another
    post; a dry run answers ``execution: null`` and ``dry_run: true`` with the lane and the
    units it could reserve."""

    schema_: Literal["knowtation.flow_execute_automatable/v0"] = Field(alias="schema")
    run: FlowRun
    execution: Execution | None = None
    dry_run: bool | None = None


class SubmitResult(_Envelope):
    schema_: str = Field(alias="schema")
    run: FlowRun | None = None
    proposal: Proposal


class FlowList(_Envelope):
    """``posture.why`` names what each gate that is on is on for (``[gates.why]``)."""

    schema_: Literal["noma.flow_list/v0"] = Field(alias="schema")
    posture: dict[str, Any]
    flows: list[dict[str, Any]]
    pending_imports: list[dict[str, Any]]
    pending_changes: list[dict[str, Any]]
    invalid: list[dict[str, Any]]


class FlowGet(_Envelope):
    schema_: Literal["noma.flow_get/v0"] = Field(alias="schema")
    sha256: str
    bundle: dict[str, Any]


class ProposeResult(_Envelope):
    schema_: Literal["noma.flow_propose/v0"] = Field(alias="schema")
    proposal: Proposal
    active: Literal[False]


class ProposalList(_Envelope):
    schema_: Literal["noma.flow_proposal_list/v0"] = Field(alias="schema")
    proposals: list[Proposal]


class ProposalGet(_Envelope):
    """A bundle's proposal also carries ``bundle``, ``base_version``, ``changes`` (field
    names and step ids) and ``diff`` (unified, export form): what approval would write."""

    schema_: Literal["noma.flow_proposal/v0"] = Field(alias="schema")
    proposal: Proposal
    bundle: dict[str, Any] | None = None
    base_version: str | None = None
    changes: dict[str, Any] | None = None
    diff: str | None = None


class ReviewResult(_Envelope):
    schema_: Literal["noma.flow_review/v0"] = Field(alias="schema")
    proposal: Proposal
    active: bool


class ProblemOut(BaseModel):
    path: str
    message: str


class Refusal(BaseModel):
    """Every refusal: the §8 code and its HTTP status, fixed text, field paths at most."""

    ok: Literal[False]
    code: str
    status: int
    error: str
    problems: list[ProblemOut] | None = None


class Unauthorized(BaseModel):
    """A missing, malformed, unknown or revoked token: one answer, no detail."""

    ok: Literal[False]
    status: Literal[401]
    error: Literal["unauthorized"]
