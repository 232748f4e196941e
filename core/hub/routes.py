"""The REST route table of the execution contract (§2), one row per route.

The same table builds the Starlette routes, the OpenAPI document and the docs page, so the
three cannot disagree. Each row names the handler-family action it calls (the same names
the CLI, the MCP tool and the pane dispatch through), the sub-gate it sits behind, the
request model and the response envelope.
"""

from __future__ import annotations

from ..flow import requests as rq
from ..flow.proposals import ReviewProposal
from ..flow.proposing import ProposeFlow
from . import projection_route, wire
from .candidate_routes import CANDIDATE_ROUTES
from .route_spec import RouteSpec

RUN = "/api/v1/flows/{flow_id}/runs/{run_id}"

ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "GET",
        "/api/v1/flows",
        "flows",
        "none",
        "List visible canonical flows (query: scope, tag)",
        None,
        wire.FlowList,
    ),
    RouteSpec(
        "POST",
        "/api/v1/flows",
        "propose",
        "none",
        "Propose a new flow or a new version for a human's review (§3.3); never live",
        ProposeFlow,
        wire.ProposeResult,
        201,
    ),
    RouteSpec(
        "GET",
        "/api/v1/flows/{flow_id}",
        "flow",
        "none",
        "One flow bundle (query: version, default the newest)",
        None,
        wire.FlowGet,
    ),
    RouteSpec(
        "GET",
        projection_route.PATH,
        projection_route.ACTION,
        "none",
        "A derived, read-only projection of the flow (query: harness, version)",
        None,
        projection_route.Projection,
    ),
    RouteSpec(
        "POST",
        "/api/v1/flows/{flow_id}/runs",
        "start",
        "writes",
        "Start a run pinned to flow_version (§2.1)",
        rq.StartRun,
        wire.RunStart,
        201,
    ),
    RouteSpec(
        "GET",
        "/api/v1/flows/{flow_id}/runs",
        "list",
        "none",
        "List visible runs of the flow (query: status, task_ref, limit, cursor)",
        None,
        wire.RunList,
    ),
    RouteSpec("GET", RUN, "get", "none", "One run", None, wire.RunGet),
    RouteSpec(
        "POST",
        RUN + "/advance",
        "advance",
        "writes",
        "Advance a step manually (§2.2); If-Match carries expected_etag",
        rq.AdvanceStep,
        wire.RunWrite,
    ),
    RouteSpec(
        "POST",
        RUN + "/evidence",
        "evidence",
        "writes",
        "Record an evidence pointer (§2.3)",
        rq.RecordEvidence,
        wire.RunWrite,
    ),
    RouteSpec(
        "POST",
        RUN + "/consent",
        "consent",
        "automatable",
        "Mint a run-bound execution consent (§2.5; a human token's act)",
        rq.MintConsent,
        wire.ConsentMint,
        201,
    ),
    RouteSpec(
        "POST",
        RUN + "/execute-automatable",
        "execute_automatable",
        "automatable",
        "Execute an automatable step (§2.4); idempotent per (run, step, consent)",
        rq.ExecuteAutomatable,
        wire.ExecuteResult,
    ),
    RouteSpec(
        "POST",
        RUN + "/submit-review",
        "submit_review",
        "writes",
        "Submit the run's outcome to review (§2.6)",
        rq.SubmitReview,
        wire.SubmitResult,
    ),
    RouteSpec(
        "GET",
        "/api/v1/flow-proposals",
        "proposals",
        "none",
        "List visible proposals, oldest first (query: status, kind, limit)",
        None,
        wire.ProposalList,
    ),
    RouteSpec(
        "GET",
        "/api/v1/flow-proposals/{proposal_id}",
        "proposal",
        "none",
        "One proposal; for a bundle, its base version, a change summary and the diff",
        None,
        wire.ProposalGet,
    ),
    RouteSpec(
        "POST",
        "/api/v1/flow-proposals/{proposal_id}/review",
        "review",
        "none",
        "Approve or reject a pending proposal (a human token's act)",
        ReviewProposal,
        wire.ReviewResult,
    ),
    RouteSpec(
        "GET", "/api/v1/flow-runs/{run_id}", "get", "none", "One run by id", None, wire.RunGet
    ),
    # Additive: every visible run, with the CLI's filters (flow_id among them), so a client
    # that does not know a run's flow can still find it.
    RouteSpec(
        "GET",
        "/api/v1/flow-runs",
        "list",
        "none",
        "List visible runs of every flow (query: flow_id, status, task_ref, limit, cursor)",
        None,
        wire.RunList,
    ),
)
# The flow-candidate rows (§5) live beside their wire shapes; built here so this stays the
# one table (every candidate route is ungated: the handlers hold their own rules).
ROUTES += tuple(RouteSpec(gate="none", **row) for row in CANDIDATE_ROUTES)
