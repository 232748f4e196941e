"""``GET /api/v1/flows/{flow_id}/projection?harness=`` (§3.3): its record model, its query
parameters and its dispatch, kept beside the route table rather than in it.

The route calls `core.flow.projection.project_flow` (the CLI's and MCP's handler): a
read, behind no gate, answering the §1.7 record or a refusal with its status (400
``BAD_REQUEST`` for a missing or unknown harness, 404 ``unknown_flow``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..flow import FlowContext, FlowRefusal, FlowResult
from ..flow.errors import Problem
from ..flow.projection import HARNESSES, Harness, project_flow

PATH = "/api/v1/flows/{flow_id}/projection"
ACTION = "projection"
QUERY = ("harness", "version")


class Fidelity(BaseModel):
    dropped_fields: list[str]
    notes: str | None = None


class Projection(BaseModel):
    """`knowtation.flow_projection/v0` with the additive hash, path and staleness fields."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    schema_: Literal["knowtation.flow_projection/v0"] = Field(alias="schema")
    flow_id: str
    flow_version: str
    harness: Harness
    rendered: str
    generated_from_canonical: Literal[True]
    editable: Literal[False]
    fidelity: Fidelity
    content_sha256: str
    source_sha256: str
    path: str
    latest_version: str
    stale: bool


def parameters() -> list[dict[str, Any]]:
    """The route's query parameters for the OpenAPI document."""
    return [
        {
            "name": "harness",
            "in": "query",
            "required": True,
            "schema": {"type": "string", "enum": list(HARNESSES)},
        },
        {"name": "version", "in": "query", "required": False, "schema": {"type": "string"}},
    ]


def dispatch(ctx: FlowContext, params: dict[str, str], query: dict[str, Any]) -> FlowResult:
    extra = sorted(set(query) - set(QUERY))
    if extra:
        return FlowRefusal("BAD_REQUEST", (Problem(extra[0], "unknown query parameter"),))
    return project_flow(ctx, {**query, "flow_id": params["flow_id"]})
