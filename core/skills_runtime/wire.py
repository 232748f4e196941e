"""Pydantic models for the JSON-RPC params and results of every Skills Protocol method.

Params reject unknown keys so a misspelt argument is an error the caller sees instead of a
silently ignored one; ``null`` is accepted wherever a field is optional, because the
spec's client sends ``"namespace": null`` and ``"cursor": null``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_LIST_LIMIT = 500


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ListSkillsParams(Params):
    namespace: str | None = None
    detail: Literal["names", "summary"] = "names"
    limit: Annotated[int, Field(ge=1)] = 50
    cursor: str | None = None


class DescribeSkillParams(Params):
    name: str
    version: str | None = None
    detail: Literal["manifest", "summary", "full"] = "summary"


class ReadSkillFileParams(Params):
    name: str
    version: str | None = None
    path: str


class ExecuteSkillParams(Params):
    name: str
    version: str | None = None
    args: dict[str, Any] | None = None
    input_blobs: list[str] | None = None
    timeout_ms: Annotated[int, Field(ge=1)] | None = None


class RunLimits(Params):
    timeout_ms: Annotated[int, Field(ge=1)] | None = None


class RunCodeParams(Params):
    language: Literal["python"]
    code: str
    entrypoint: str = "main"
    args: dict[str, Any] | None = None
    mount_skills: list[str] | None = None
    input_blobs: list[str] | None = None
    limits: RunLimits | None = None


class CreateBlobParams(Params):
    content: str
    kind: Annotated[str, Field(min_length=3, max_length=255, pattern=r"^[\w.+-]+/[\w.+-]+")]


class ReadBlobParams(Params):
    blob_id: str
    mode: Literal["sample_head", "sample_tail", "full"] = "sample_head"
    max_bytes: Annotated[int, Field(ge=1, le=1024 * 1024)] = 2000


class EmptyParams(Params):
    pass


class SkillFile(Params):
    path: str
    content: str


class CreateSkillParams(Params):
    manifest: dict[str, Any]
    skill_md: str
    files: list[SkillFile] = Field(default_factory=list)


# ---------------------------------------------------------------------------- results


class SkillListing(BaseModel):
    name: str
    version: str
    description: str
    namespace: str
    kind: Literal["action", "instruction"]
    tags: list[str] | None = None
    short_description: str | None = None
    inputs: dict[str, Any] | None = None


class ListSkillsResult(BaseModel):
    skills: list[SkillListing]
    next_cursor: str | None


class RunErrorModel(BaseModel):
    type: str
    message: str


class RunResult(BaseModel):
    """The run record returned by ``execute_skill`` and ``run_code``."""

    run_id: str
    status: Literal["completed", "failed"]
    summary: str
    output: Any = None
    output_blobs: list[str] = Field(default_factory=list)
    logs_preview: str = ""
    error: RunErrorModel | None = None
    isolation: str
    duration_ms: int
    # Additive: why a run may behave unlike its manifest (a declared network permission
    # this runtime does not grant, declared secrets the operator did not grant).
    notes: list[str] | None = None

    def to_wire(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        if not self.notes:
            data.pop("notes")
        if self.status == "completed":
            data.pop("error")
        else:
            data.pop("output")
        return data
