"""Read handlers over flow definitions: list, get, export (``noma flow list|get|export``,
MCP ``flow_list``/``flow_get``, ``GET /api/v1/flows[/{id}]``).

Scope is filtered here, server-side, for every surface: a flow the caller may not see is
absent from the list and ``unknown_flow`` on get, exactly like one that does not exist.
The ``scope`` and ``tag`` filters only narrow what the caller may already see.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from .bundle import dump_bundle
from .context import FlowContext
from .enums import Scope
from .errors import FlowResult, Problem, Refused
from .handlers import handler
from .requests import Request, parse


class ListFlows(Request):
    scope: Scope | None = None
    tag: Annotated[str, Field(min_length=1, max_length=200)] | None = None


class GetFlow(Request):
    flow_id: Annotated[str, Field(min_length=1, max_length=200)]
    version: Annotated[str, Field(min_length=1, max_length=64)] | None = None


def _wanted(bundle_scope: str, tags: list[str] | None, req: ListFlows) -> bool:
    if req.scope is not None and bundle_scope != req.scope:
        return False
    return req.tag is None or req.tag in (tags or ())


@handler
def list_flows(ctx: FlowContext, request: Any = None) -> dict[str, Any]:
    """Visible canonical flows, pending imports and proposed changes, and files that
    failed validation; ``request`` may narrow the flows by ``scope`` and ``tag``."""
    req = parse(ListFlows, request or {})
    root = ctx.catalog.flows_dir
    flows = [
        {
            "flow_id": e.bundle.flow_id,
            "version": e.bundle.version,
            "title": e.bundle.flow.title,
            "scope": e.bundle.flow.scope,
            "steps": len(e.bundle.steps),
            "automatable_steps": len(e.bundle.automatable_steps),
            "file": e.path.relative_to(root).as_posix(),
            "sha256": e.sha256,
        }
        for e in ctx.catalog.entries()
        if ctx.actor.can_see(e.bundle.flow.scope)
        and _wanted(e.bundle.flow.scope, e.bundle.flow.tags, req)
    ]
    with ctx.store.read() as tx:
        pending = [
            {"proposal_id": r["proposal_id"], "flow_id": r["flow_id"], "version": r["flow_version"]}
            for r, scope in tx.list_proposals("flow_import", "pending")
            if ctx.actor.can_see(scope)
        ]
        changes = [
            {
                "proposal_id": r["proposal_id"],
                "flow_id": r["flow_id"],
                "version": r["flow_version"],
                "base_version": r.get("base_version"),
            }
            for r, scope in tx.list_proposals("flow_change", "pending")
            if ctx.actor.can_see(scope, r.get("actor_hash"))
        ]
    invalid = [
        {
            "file": bad.path.relative_to(root).as_posix(),
            "problems": [p.to_json() for p in bad.problems],
        }
        for bad in ctx.catalog.invalid()
    ]
    allowed = ctx.posture.policy.scopes
    invalid += [  # valid, but unusable here: never silently invisible
        {
            "file": e.path.relative_to(root).as_posix(),
            "problems": [
                {
                    "path": "flow.scope",
                    "message": f"scope {e.bundle.flow.scope} is not in this workspace's "
                    "policy.scopes, so the flow cannot be run here",
                }
            ],
        }
        for e in ctx.catalog.entries()
        if e.bundle.flow.scope not in allowed
    ]
    posture = ctx.posture
    return {
        "schema": "noma.flow_list/v0",
        "posture": {
            "run_writes_enabled": posture.gates.run_writes_enabled,
            "automatable_execution_enabled": posture.gates.automatable_execution_enabled,
            "automatable_forbidden": posture.policy.automatable_forbidden,
            "allowed_lanes": list(posture.policy.allowed_lanes),
            "cost_cap_units": posture.policy.cost_cap_units,
            "problems": [p.to_json() for p in posture.problems],
            "why": dict(posture.why),
        },
        "flows": flows,
        "pending_imports": pending,
        "pending_changes": changes,
        "invalid": invalid,
    }


def get_flow_request(ctx: FlowContext, request: Any) -> FlowResult:
    """`get_flow` from a request object ``{flow_id, version?}`` (MCP, REST, the actions)."""
    try:
        req = parse(GetFlow, request)
    except Refused as exc:
        return exc.refusal
    return get_flow(ctx, req.flow_id, req.version)


@handler
def get_flow(ctx: FlowContext, flow_id: str, version: str | None = None) -> dict[str, Any]:
    entry = ctx.catalog.find(flow_id, version)
    if entry is None or not ctx.actor.can_see(entry.bundle.flow.scope):
        raise Refused("unknown_flow")
    return {"schema": "noma.flow_get/v0", "sha256": entry.sha256, "bundle": entry.bundle.to_json()}


@handler
def export_flow(
    ctx: FlowContext, flow_id: str, version: str | None = None, fmt: str | None = None
) -> dict[str, Any]:
    """The lossless bundle text: exactly the canonical records, in the bundle's own format
    (JSON for a JSON bundle) unless ``fmt`` asks for the other; importing it elsewhere
    round-trips every field."""
    entry = ctx.catalog.find(flow_id, version)
    if entry is None or not ctx.actor.can_see(entry.bundle.flow.scope):
        raise Refused("unknown_flow")
    fmt = fmt or entry.fmt
    if fmt not in ("json", "yaml"):
        raise Refused("BAD_REQUEST", (Problem("format", "must be json or yaml"),))
    return {
        "schema": "noma.flow_export/v0",
        "format": fmt,
        "text": dump_bundle(entry.bundle, fmt),
    }


def problem_lines(listing: dict[str, Any]) -> list[str]:
    """One line per problem in ``flows/`` (from `list_flows`), for the CLI and the pane."""
    lines = []
    for bad in listing["invalid"]:
        for p in bad["problems"]:
            lines.append(f"{bad['file']}: {p['path'] or '(file)'}: {p['message']}")
    return lines


def start_fields(ctx: FlowContext, flow_id: str, version: str) -> list[tuple[str, str]]:
    """The flow inputs a start may give values for, as ``(name, label)`` (for forms)."""
    entry = ctx.catalog.find(flow_id, version)
    if entry is None or not ctx.actor.can_see(entry.bundle.flow.scope):
        return []
    return [
        (i.name, f"{i.name} ({i.type}{', required' if i.required else ''})")
        for i in entry.bundle.flow.inputs or ()
    ]
