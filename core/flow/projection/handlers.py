"""The projection handlers of the one handler family: project, AGENTS.md, status.

`project_flow` is what ``noma flow project``, the MCP tool ``flow_project`` and ``GET
/api/v1/flows/{id}/projection`` all call, so the record (and a refusal: ``BAD_REQUEST``
naming ``harness`` for a harness outside §1.1, ``unknown_flow`` for a flow the caller
cannot see) is the same on every surface. Projection is a read: no gate, no store write.
`projection_status` reads written files back and reports each as current, stale, drift,
foreign or missing; it never changes one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..catalog import CatalogEntry
from ..context import FlowContext
from ..errors import Refused
from ..handlers import handler
from ..requests import FlowId, Request, Version, parse
from . import agents_md
from .harness import HARNESSES, Harness, default_path
from .record import JSON_HARNESSES, build, is_older
from .stamp import Inspection, inspect, stamp_for, stamped

STATUS_SCHEMA = "noma.flow_projection_status/v0"


class ProjectRequest(Request):
    flow_id: FlowId
    harness: Harness
    version: Version | None = None


def visible_entries(ctx: FlowContext) -> list[CatalogEntry]:
    """Every version the caller may see, sorted by flow id then version."""
    return [e for e in ctx.catalog.entries() if ctx.actor.can_see(e.bundle.flow.scope)]


def latest_visible(ctx: FlowContext) -> dict[str, CatalogEntry]:
    latest: dict[str, CatalogEntry] = {}
    for entry in visible_entries(ctx):  # sorted: the newest version of each id wins
        latest[entry.bundle.flow_id] = entry
    return latest


@handler
def project_flow(ctx: FlowContext, raw: Any) -> dict[str, Any]:
    request = parse(ProjectRequest, raw)
    versions = [e for e in visible_entries(ctx) if e.bundle.flow_id == request.flow_id]
    wanted = [e for e in versions if request.version in (None, e.bundle.version)]
    if not wanted:  # missing and out of scope answer alike
        raise Refused("unknown_flow")
    return build(wanted[-1], request.harness, versions[-1].bundle.version)


@handler
def project_agents_md(ctx: FlowContext) -> dict[str, Any]:
    return agents_md.record(list(latest_visible(ctx).values()))


def stamped_bytes(record: dict[str, Any]) -> bytes:
    """The bytes a projection record is written as (its stamp included)."""
    if record["schema"] == agents_md.AGENTS_MD_SCHEMA:
        flows = [(f["flow_id"], f["flow_version"]) for f in record["flows"]]
        stamp = stamp_for("agents_md", flows, record["rendered"])
        return stamped(stamp, record["rendered"], is_json=False)
    harness = record["harness"]
    stamp = stamp_for(harness, [(record["flow_id"], record["flow_version"])], record["rendered"])
    return stamped(stamp, record["rendered"], is_json=harness in JSON_HARNESSES)


def judge(ctx: FlowContext, path: str, data: bytes | None) -> dict[str, Any]:
    """One file's status: missing, foreign, drift, stale (a flow moved on or is gone) or
    current. Drift outranks staleness: a hand edit is reported before anything else."""
    out: dict[str, Any] = {"path": path}
    if data is None:
        return {**out, "status": "missing"}
    seen: Inspection = inspect(data)
    if seen.stamp is None:
        return {**out, "status": "foreign"}
    latest = latest_visible(ctx)
    flows = []
    stale = False
    for f in seen.stamp.flows:
        newest = latest.get(f.flow_id)
        lagging = newest is None or is_older(f.flow_version, newest.bundle.version)
        stale = stale or lagging
        flows.append(
            {
                "flow_id": f.flow_id,
                "flow_version": f.flow_version,
                "latest_version": None if newest is None else newest.bundle.version,
                "stale": lagging,
            }
        )
    if seen.stamp.harness == "agents_md":
        stamped_ids = sorted(f.flow_id for f in seen.stamp.flows)
        stale = stale or stamped_ids != sorted(latest)  # a flow was added or removed
    status = "drift" if seen.drift else "stale" if stale else "current"
    return {**out, "status": status, "harness": seen.stamp.harness, "flows": flows}


def projection_status(
    ctx: FlowContext, root: Path, paths: list[str] | None = None
) -> dict[str, Any]:
    """The named files; or every default projection path of every visible flow (and
    ``AGENTS.md``) that exists, and every other stamped file in the harnesses' folders."""
    from .files import read_projection, stamped_files

    if paths is None:
        candidates = [agents_md.AGENTS_MD_PATH] + [
            default_path(h, flow_id) for flow_id in latest_visible(ctx) for h in HARNESSES
        ]
        found = [(p, read_projection(root, p)) for p in candidates]
        files = [judge(ctx, p, data) for p, data in found if data is not None]
        # Projections of flows that are gone or out of sight: stamped files in the
        # harnesses' folders (a user's own unstamped rule there is not ours to judge).
        files += [
            judge(ctx, p, data) for p, data in stamped_files(root) if p not in set(candidates)
        ]
    else:
        files = [judge(ctx, p, read_projection(root, p)) for p in paths]
    return {
        "schema": STATUS_SCHEMA,
        "files": files,
        "ok": all(f["status"] == "current" for f in files),
    }
