"""JSON projections: the MCP prompt and the external-agent bundle.

Both are serialised one way (`dump`), so the bytes of a projection are a function of the
flow alone, and a stamped file can be checked by parsing it and serialising it again.
The agent bundle is deliberately not a flow bundle (its own ``schema``, a ``read_only``
flag): importing it back is refused by the bundle validator, so a projection can never
become a source.
"""

from __future__ import annotations

import json
from typing import Any

from ..models import FlowBundle
from .markdown import prompt_text

AGENT_BUNDLE_SCHEMA = "noma.agent_bundle/v0"


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def mcp_prompt(bundle: FlowBundle) -> str:
    """An MCP prompt definition (name, description, arguments, one user message)."""
    flow = bundle.flow
    data: dict[str, Any] = {
        "name": flow.flow_id,
        "title": flow.title,
        "description": flow.summary,
        "arguments": [
            {"name": i.name, "description": f"{i.type} (flow input)", "required": i.required}
            for i in flow.inputs or ()
        ],
        "messages": [
            {"role": "user", "content": {"type": "text", "text": prompt_text(bundle)}},
        ],
    }
    return dump(data)


def agent_bundle(bundle: FlowBundle) -> str:
    """Every content field, for an external agent to read (never to execute from)."""
    canonical = bundle.to_json()
    flow = {k: v for k, v in canonical["flow"].items() if k not in ("schema", "steps")}
    steps = [
        {k: v for k, v in step.items() if k not in ("schema", "flow_id")}
        for step in canonical["steps"]
    ]
    data = {"schema": AGENT_BUNDLE_SCHEMA, "read_only": True, "flow": flow, "steps": steps}
    return dump(data)
