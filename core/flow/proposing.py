"""Proposing a flow or an edit (``flow_propose``, ``POST /api/v1/flows``, ``noma flow
propose``): review-before-write for definitions (§6 item 5).

A proposal never becomes a live definition by itself. The bundle is validated (every
problem, under ``bundle.``), put through the same §6 sandbox rules as an import, and
recorded on a pending ``flow_change`` proposal; only a human's approval (`review_import`)
writes it into ``flows/``, after which the new version is the newest and runnable. An
agent may propose (MCP is an agent surface); it may never approve.

An edit is a new version: a bundle whose id and version already exist is refused
(``FLOW_VERSION_CONFLICT`` when its content differs, ``BAD_REQUEST`` when it is the same
bundle), and an edit must be newer than the newest version the caller can see, so what a
reviewer approves is always a step forward from a definition they can compare against.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field

from .bundle import BundleError, parse_bundle_text
from .catalog import bundle_sha256
from .context import FlowContext
from .errors import Problem, Refused
from .handlers import handler
from .ids import semver_key
from .importing import base_entry, file_proposal, sandbox_check
from .models import FlowBundle
from .requests import Request, parse

SCHEMA = "noma.flow_propose/v0"
DEFAULT_INTENT = "propose flow"


class ProposeFlow(Request):
    bundle: dict[str, Any]
    intent: Annotated[str, Field(min_length=1, max_length=2000)] = DEFAULT_INTENT
    format: Literal["json", "yaml"] | None = None


def _bundle(data: dict[str, Any]) -> FlowBundle:
    """The request's bundle through the same bounded JSON reader as a bundle file."""
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        raise Refused("BAD_REQUEST", (Problem("bundle", "not a JSON object"),)) from None
    try:
        return parse_bundle_text(text, json_form=True)
    except BundleError as exc:
        problems = tuple(
            Problem(f"bundle.{p.path}" if p.path else "bundle", p.message) for p in exc.problems
        )
        raise Refused("BAD_REQUEST", problems) from None


@handler
def propose_flow(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Validate, sandbox and park a new flow or a new version on a pending proposal."""
    req = parse(ProposeFlow, request)
    bundle = _bundle(req.bundle)
    sandbox_check(bundle, ctx.posture.policy)
    same = ctx.catalog.find(bundle.flow_id, bundle.version)
    if same is not None and ctx.actor.can_see(same.bundle.flow.scope):
        if same.sha256 != bundle_sha256(bundle):
            raise Refused("FLOW_VERSION_CONFLICT")
        raise Refused(
            "BAD_REQUEST",
            (Problem("bundle.flow.version", "this version exists unchanged; an edit bumps it"),),
        )
    base = base_entry(ctx, bundle.flow_id)
    if base is not None and semver_key(bundle.version) <= semver_key(base.bundle.version):
        raise Refused(
            "BAD_REQUEST",
            (Problem("bundle.flow.version", "an edit must be newer than the newest version"),),
        )
    fmt = req.format or (base.fmt if base is not None else "yaml")
    proposal = file_proposal(ctx, bundle, "flow_change", req.intent, fmt)
    return {"schema": SCHEMA, "proposal": proposal, "active": False}
