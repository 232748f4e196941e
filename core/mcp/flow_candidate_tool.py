"""The flow-candidate MCP tools (§5): ``flow_candidate_propose``, ``flow_candidate_list``
and ``flow_candidate_get`` over the candidate handlers.

An agent may propose a ``session_extraction`` candidate (opt-in: the workspace's
``[policy] candidate_capture``), and list and read the ones it may see. Reviewing is a
human's act and has no tool here. The session a proposal counts against (the per-session
cap of §5.2) is this server's own, made when the tools are registered: the agent cannot
name another one to get round the cap. Results are the handler's record as JSON text,
exactly what ``noma flow candidates ... --json`` prints; a refusal is a normal result.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any, cast

from mcp.server.mcpserver import MCPServer

from ..flow import to_json
from ..flow.candidates import AGENT_CANDIDATE_ACTIONS, candidate_action
from .flow_tool import agent_context

PROPOSE = (
    "Propose a flow candidate at the end of a session (§5): trigger_signal "
    "session_extraction (the only one an agent may propose), a short "
    "suggested_title, scope_hint personal|project|org, observed_count, evidence_refs "
    "(pointers/ids/hashes only, never content), draft_steps (a one-line outline per step, "
    "at most 20), confidence low|medium|high. Usually the answer is not to propose. The "
    "candidate waits for a human's review; it is never a flow by itself. At most 2 per "
    "session. Refusals return {ok: false, code, status}."
)
LIST = (
    "List the flow candidates you may see, oldest first: status? pending_review|promoted|"
    "rejected|merged_into, include_low? (low confidence is hidden unless asked), limit?."
)
GET = "One flow candidate by candidate_id, with the flows it could be merged into."


def register(server: Any, root: Path | None) -> None:
    """Add the three candidate tools; the workspace is ``root`` (or the cwd)."""
    mcp_server = cast(MCPServer, server)
    session_ref = f"mcp_session_{secrets.token_hex(12)}"

    @mcp_server.tool(name="flow_candidate_propose", description=PROPOSE, structured_output=False)
    def flow_candidate_propose(
        suggested_title: str,
        scope_hint: str,
        trigger_signal: str,
        observed_count: int,
        evidence_refs: list[str],
        confidence: str,
        draft_steps: list[str] | None = None,
    ) -> str:
        request = {
            "suggested_title": suggested_title,
            "scope_hint": scope_hint,
            "trigger_signal": trigger_signal,
            "observed_count": observed_count,
            "evidence_refs": evidence_refs,
            "draft_steps": draft_steps,
            "confidence": confidence,
            "session_ref": session_ref,
        }
        return json.dumps(call(root, "candidate_propose", request), ensure_ascii=False)

    @mcp_server.tool(name="flow_candidate_list", description=LIST, structured_output=False)
    def flow_candidate_list(
        status: str | None = None, include_low: bool | None = None, limit: int | None = None
    ) -> str:
        request = {"status": status, "include_low": include_low, "limit": limit}
        return json.dumps(call(root, "candidate_list", request), ensure_ascii=False)

    @mcp_server.tool(name="flow_candidate_get", description=GET, structured_output=False)
    def flow_candidate_get(candidate_id: str) -> str:
        request = {"candidate_id": candidate_id}
        return json.dumps(call(root, "candidate_get", request), ensure_ascii=False)


def call(root: Path | None, action: str, request: dict[str, Any]) -> dict[str, Any]:
    """One tool call as the workspace's actor speaking as an agent (config re-read); a
    proposal is a store write no gate covers, so it opens the store, a read does not."""
    with agent_context(root, lazy=action != "candidate_propose") as (_, ctx):
        return to_json(candidate_action(ctx, action, request, allowed=AGENT_CANDIDATE_ACTIONS))
