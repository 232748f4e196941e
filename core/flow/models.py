"""Flow definitions: `knowtation.flow/v0` and `knowtation.flow_step/v0` as pydantic models.

Unknown keys are refused (``extra="forbid"``) so nothing an author writes is silently
dropped, which is what makes export -> import lossless. Step text (`instruction`,
`boundaries`, `output_shape`, ...) is untrusted data: the engine stores and shows it, and
never reads it as a command or a permission.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from .enums import (
    Automatable,
    RequiresKind,
    Scope,
    SkillRefKind,
    SkipReason,
    VerificationKind,
)
from .ids import FLOW_ID, SEMVER, STEP_ID

FLOW_SCHEMA = "knowtation.flow/v0"
STEP_SCHEMA = "knowtation.flow_step/v0"
# The anatomy rule: without these a record is not a step.
ANATOMY = ("trigger", "when_not_to_run", "output_shape", "verification")

Text = Annotated[str, StringConstraints(strip_whitespace=False, min_length=1, max_length=20_000)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Handle = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^\S+$")]


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _check_flow_id(value: str) -> str:
    if not FLOW_ID.match(value):
        raise ValueError("must look like flow_<slug> with slug [a-z0-9_]{1,64}")
    return value


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


class FlowInput(Record):
    name: Name
    type: Name
    required: bool = False


class Requirement(Record):
    """A handle the step needs (a scope, a tool, a file, an artifact); never a secret."""

    kind: RequiresKind
    id: Handle


class SkillRef(Record):
    kind: SkillRefKind
    id: Handle


class StepInput(Record):
    """`from` names where the value comes from; for skill refs it is passed as a literal."""

    name: Name
    from_: Annotated[str, StringConstraints(max_length=2000)] = Field(alias="from")


class StepOutput(Record):
    name: Name
    type: Name


class Verification(Record):
    kind: VerificationKind
    evidence_required: bool
    description: Text


class WhenNotToRun(Record):
    """The structured form: prose plus the skip reasons that satisfy it."""

    description: Text
    skip_reasons: list[SkipReason] = Field(default_factory=list)


class FlowStep(Record):
    schema_: Literal["knowtation.flow_step/v0"] = Field(alias="schema")
    step_id: str
    flow_id: str
    ordinal: Annotated[int, Field(ge=1, le=100_000)]
    owned_job: Text
    instruction: Text
    trigger: Text
    when_not_to_run: Text | WhenNotToRun
    requires: list[Requirement] | None = None
    boundaries: list[Text]
    skill_refs: list[SkillRef] | None = None
    inputs: list[StepInput] | None = None
    outputs: list[StepOutput] | None = None
    output_shape: Text | dict[str, Any]
    verification: Verification
    automatable: Automatable = "manual"

    _blank = field_validator("owned_job", "instruction", "trigger")(_non_blank)

    @field_validator("step_id")
    @classmethod
    def _step_id(cls, value: str) -> str:
        if not STEP_ID.match(value):
            raise ValueError("must look like flow_<slug>#<ordinal>")
        return value

    _flow_id = field_validator("flow_id")(_check_flow_id)

    @property
    def skip_reasons(self) -> tuple[str, ...]:
        """Reasons this step may be skipped for; prose alone allows none."""
        if isinstance(self.when_not_to_run, WhenNotToRun):
            return tuple(self.when_not_to_run.skip_reasons)
        return ()

    @property
    def verification_kind(self) -> str:
        return self.verification.kind


class FlowDefinition(Record):
    schema_: Literal["knowtation.flow/v0"] = Field(alias="schema")
    flow_id: str
    title: Name
    version: str
    scope: Scope = "personal"
    summary: Annotated[str, StringConstraints(max_length=20_000)]
    tags: list[Name] | None = None
    steps: Annotated[list[str], Field(min_length=1, max_length=10_000)]
    inputs: list[FlowInput] | None = None
    updated: str
    truncated: bool = False

    _blank = field_validator("title")(_non_blank)

    _flow_id = field_validator("flow_id")(_check_flow_id)

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not SEMVER.match(value):
            raise ValueError("must be semver MAJOR.MINOR.PATCH")
        return value

    @field_validator("updated")
    @classmethod
    def _updated(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError("must be an ISO 8601 date-time") from exc
        return value


class FlowBundle(Record):
    """One bundle file: the flow record and its step records, in ordinal order."""

    flow: FlowDefinition
    steps: list[FlowStep]

    @property
    def flow_id(self) -> str:
        return self.flow.flow_id

    @property
    def version(self) -> str:
        return self.flow.version

    def step(self, step_id: str) -> FlowStep | None:
        match = STEP_ID.match(step_id)
        if match is None or match.group(1) != self.flow.flow_id:
            return None
        index = int(match.group(2)) - 1
        return self.steps[index] if 0 <= index < len(self.steps) else None

    def to_json(self) -> dict[str, Any]:
        """The lossless on-disk form: every field by its wire name; absent optionals omitted."""
        data = self.model_dump(mode="json", by_alias=True)
        _drop_absent(data["flow"], ("tags", "inputs"))
        for step in data["steps"]:
            _drop_absent(step, ("requires", "skill_refs", "inputs", "outputs"))
        return data


def _drop_absent(record: dict[str, Any], optional: tuple[str, ...]) -> None:
    for key in optional:
        if record.get(key) is None:
            record.pop(key, None)
