"""Flow definitions: `knowtation.flow/v0` and `knowtation.flow_step/v0` as pydantic models.

The records of the canonical spec (§1.3, §1.4) exactly: every required field is required
(a bundle without one is refused with its field path, never filled in), optional fields are
absent or typed, never null. Unknown keys are refused (``extra="forbid"``) so nothing an
author writes is silently dropped, which is what makes export -> import lossless. Step
text (`instruction`, `boundaries`, `output_shape`, ...) is untrusted data: the engine
stores and shows it, and never reads it as a command or a permission.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

from .enums import Automatable, RequiresKind, Scope, SkillRefKind, VerificationKind
from .ids import FLOW_ID, SEMVER, STEP_ID

FLOW_SCHEMA = "knowtation.flow/v0"
STEP_SCHEMA = "knowtation.flow_step/v0"
# The anatomy rule: without these a record is not a step.
ANATOMY = ("trigger", "when_not_to_run", "output_shape", "verification")
# Optional fields (§1.3, §1.4): absent or of their type, never null; export omits them when
# absent and keeps them (even empty) when present, so a bundle round-trips as written.
FLOW_OPTIONAL = ("tags", "inputs", "vault_mirror_path")
STEP_OPTIONAL = ("requires", "skill_refs", "inputs", "outputs")


def _non_blank(value: str) -> str:
    """The anatomy rule trims: text that is only whitespace is as missing as no text."""
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _printable(value: str) -> str:
    """Opaque ids may hold spaces but no line breaks or other control characters."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("must not contain control characters")
    return value


Text = Annotated[
    str, StringConstraints(min_length=1, max_length=20_000), AfterValidator(_non_blank)
]
Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200),
    AfterValidator(_non_blank),
    AfterValidator(_printable),
]
# `skill_refs[].id` and `requires[].id` are opaque (§1.4): a handle, a prompt name, or a
# whole CLI line such as `knowtation list-notes --folder inbox --json`.
OpaqueId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=1000),
    AfterValidator(_non_blank),
    AfterValidator(_printable),
]
# `inputs[].from`: one line too; its grammar is checked across records (`bundle`).
Reference = OpaqueId


class Record(BaseModel):
    # Strict: `"truncated": "yes"` or `"ordinal": "1"` is refused, never coerced, so what
    # is stored is what the author wrote.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)


def _check_flow_id(value: str) -> str:
    if not FLOW_ID.match(value):
        raise ValueError("must look like flow_<slug> with slug [a-z0-9_]{1,64}")
    return value


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("must be omitted rather than null")
    return value


class FlowInput(Record):
    name: Name
    type: Name
    required: bool


class Requirement(Record):
    """A handle the step needs (a scope, a tool, a file, an artifact); never a secret."""

    kind: RequiresKind
    id: OpaqueId


class SkillRef(Record):
    kind: SkillRefKind
    id: OpaqueId


class StepInput(Record):
    """`from` is a reference, `flow.inputs.<name>` or `<step_id>.outputs.<name>` (checked
    across records in `bundle`); it is resolved at execution, never passed as a value."""

    name: Name
    from_: Reference = Field(alias="from")


class StepOutput(Record):
    name: Name
    type: Name


class Verification(Record):
    kind: VerificationKind
    evidence_required: bool
    description: Text


class FlowStep(Record):
    schema_: Literal["knowtation.flow_step/v0"] = Field(alias="schema")
    step_id: str
    flow_id: str
    ordinal: Annotated[int, Field(ge=1, le=100_000)]
    owned_job: Text
    instruction: Text
    trigger: Text
    when_not_to_run: Text
    requires: list[Requirement] | None = None
    boundaries: Annotated[list[Text], Field(max_length=1000)]
    skill_refs: Annotated[list[SkillRef], Field(max_length=1000)] | None = None
    inputs: Annotated[list[StepInput], Field(max_length=1000)] | None = None
    outputs: Annotated[list[StepOutput], Field(max_length=1000)] | None = None
    output_shape: Text
    verification: Verification
    automatable: Automatable

    _optional = field_validator(*STEP_OPTIONAL, mode="before")(_not_null)

    @field_validator("step_id")
    @classmethod
    def _step_id(cls, value: str) -> str:
        if not STEP_ID.match(value):
            raise ValueError("must look like flow_<slug>#<ordinal>")
        return value

    _flow_id = field_validator("flow_id")(_check_flow_id)

    @property
    def verification_kind(self) -> str:
        return self.verification.kind


class FlowDefinition(Record):
    schema_: Literal["knowtation.flow/v0"] = Field(alias="schema")
    flow_id: str
    title: Name
    version: str
    scope: Scope
    summary: Text
    tags: Annotated[list[Name], Field(max_length=1000)] | None = None
    steps: Annotated[list[str], Field(min_length=1, max_length=10_000)]
    inputs: Annotated[list[FlowInput], Field(max_length=1000)] | None = None
    vault_mirror_path: Name | None = None
    updated: str
    truncated: bool

    _optional = field_validator(*FLOW_OPTIONAL, mode="before")(_not_null)

    _flow_id = field_validator("flow_id")(_check_flow_id)

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not SEMVER.match(value):
            raise ValueError("must be MAJOR.MINOR.PATCH (numbers only)")
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

    @property
    def automatable_steps(self) -> list[str]:
        """The one meaning of "automatable steps" on every surface: ``automatable:
        automatable`` (agent_assisted steps are advanced by hand, never executed)."""
        return [s.step_id for s in self.steps if s.automatable == "automatable"]

    def step(self, step_id: str) -> FlowStep | None:
        match = STEP_ID.match(step_id)
        if match is None or match.group(1) != self.flow.flow_id:
            return None
        index = int(match.group(2)) - 1
        return self.steps[index] if 0 <= index < len(self.steps) else None

    def to_json(self) -> dict[str, Any]:
        """The lossless on-disk form: every field by its wire name; absent optionals omitted."""
        data = self.model_dump(mode="json", by_alias=True)
        _drop_absent(data["flow"], FLOW_OPTIONAL)
        for step in data["steps"]:
            _drop_absent(step, STEP_OPTIONAL)
        return data


def _drop_absent(record: dict[str, Any], optional: tuple[str, ...]) -> None:
    for key in optional:
        if record.get(key) is None:
            record.pop(key, None)
