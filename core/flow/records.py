"""Run-side records: `flow_run/v0`, `flow_execution_consent/v0`, executions and proposals.

These are what the store persists and every surface returns. They hold ids, hashes,
bounded enums and counters only (security checklist item 4): no step text, no output, no
actor name, no consent token beyond the one mint response that hands it to its owner.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from .enums import (
    ExecutionFailure,
    ExecutionWireStatus,
    Lane,
    ProposalKind,
    ProposalStatus,
    RunStatus,
    Scope,
    SkipReason,
    StepStatus,
)

RUN_SCHEMA: Final = "knowtation.flow_run/v0"
CONSENT_SCHEMA: Final = "knowtation.flow_execution_consent/v0"
PROPOSAL_SCHEMA: Final = "knowtation.proposal/v0"

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Timestamp = Annotated[str, Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")]
Pointer = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:#/@+-]{0,199}$")]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class StepState(_Record):
    step_id: str
    status: StepStatus = "pending"
    evidence_ref: Pointer | None = None
    verified: bool = False
    # additive: present on skipped steps only (absent, not null, elsewhere, as on the wire)
    skip_reason: SkipReason | None = Field(default=None, exclude_if=lambda v: v is None)


class Provenance(_Record):
    actor: Sha256
    harness: str


class FlowRun(_Record):
    schema_: Literal["knowtation.flow_run/v0"] = Field(RUN_SCHEMA, alias="schema")
    run_id: Annotated[str, Field(pattern=r"^run_[a-z0-9_]{1,48}$")]
    flow_id: str
    flow_version: str
    scope: Scope
    status: RunStatus
    step_states: list[StepState]
    started: Timestamp
    provenance: Provenance
    task_ref: Pointer | None = None
    external_ref: Pointer | None = None
    etag: str


class Consent(_Record):
    schema_: Literal["knowtation.flow_execution_consent/v0"] = Field(CONSENT_SCHEMA, alias="schema")
    consent_id: Annotated[str, Field(pattern=r"^fcons_[a-z0-9_]{1,64}$")]
    vault_id: str
    scope: Scope
    run_id: str
    flow_id: str
    flow_version: str
    allowed_lanes: Annotated[list[Lane], Field(min_length=1)]
    cost_cap_units: Annotated[int, Field(ge=0)]
    cost_consumed_units: Annotated[int, Field(ge=0)]
    actor_hash: Sha256
    expires_at: Timestamp
    revoked_at: Timestamp | None = None


class Execution(_Record):
    execution_id: Annotated[str, Field(pattern=r"^fexec_[a-z0-9_]{1,64}$")]
    step_id: str
    status: ExecutionWireStatus
    evidence_ref: Pointer | None = None
    cost_units: Annotated[int, Field(ge=0)]
    model_lane: Lane
    completed_at: Timestamp | None = None
    failure: ExecutionFailure | None = None


class Proposal(_Record):
    schema_: Literal["knowtation.proposal/v0"] = Field(PROPOSAL_SCHEMA, alias="schema")
    proposal_id: Annotated[str, Field(pattern=r"^prop_[a-z0-9_]{1,48}$")]
    kind: ProposalKind
    status: ProposalStatus
    intent: Annotated[str, Field(min_length=1, max_length=2000)]
    flow_id: str
    flow_version: str
    base_version: str | None = None
    run_id: str | None = None
    external_ref: Pointer | None = None
    evidence_refs: list[Pointer] = Field(default_factory=list)
    automatable_steps: list[str] | None = None
    source_format: Literal["json", "yaml"] | None = None
    actor_hash: Sha256
    created: Timestamp
