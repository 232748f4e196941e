"""The action table every surface dispatches through (MCP ``flow_run``, CLI, pane).

One name per handler; the payload is the §2 request object. ``None`` values are dropped
first, so a surface with optional parameters (MCP, argparse) sends exactly what a direct
caller would, and the handler sees the same request either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .consent import list_consents, mint_consent, revoke_consent
from .context import FlowContext
from .definitions import get_flow_request, list_flows
from .errors import FlowRefusal, FlowResult, Problem
from .execute import execute_automatable
from .proposals import list_proposals, review_proposal, show_proposal
from .proposing import propose_flow
from .runs import advance_step, get_run, list_runs, record_evidence, start_run, submit_review

Handler = Callable[[FlowContext, Any], FlowResult]

RUN_ACTIONS: dict[str, Handler] = {
    "start": start_run,
    "get": get_run,
    "list": list_runs,
    "advance": advance_step,
    "evidence": record_evidence,
    "consent": mint_consent,
    "execute_automatable": execute_automatable,
    "submit_review": submit_review,
    "consents": list_consents,
    "revoke_consent": revoke_consent,
    "proposals": list_proposals,
    "proposal": show_proposal,
    "review": review_proposal,
    # Definitions (§3): the same handlers behind flow_list / flow_get / flow_propose.
    "flows": list_flows,
    "flow": get_flow_request,
    "propose": propose_flow,
}
# Agents may not mint consent or review proposals: those are the human's acts (CLI or
# pane), so MCP lacks them (and consent listing/revoking, which are the human's ledger).
MCP_ACTIONS: tuple[str, ...] = (
    "start",
    "get",
    "list",
    "advance",
    "evidence",
    "execute_automatable",
    "submit_review",
)


def clean(payload: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (payload or {}).items() if v is not None}


def run_action(
    ctx: FlowContext,
    action: str,
    payload: Mapping[str, Any] | None,
    allowed: tuple[str, ...] | None = None,
) -> FlowResult:
    if action not in RUN_ACTIONS or (allowed is not None and action not in allowed):
        return FlowRefusal("BAD_REQUEST", (Problem("action", "unknown action"),))
    return RUN_ACTIONS[action](ctx, clean(payload))
