"""Flow runs: definitions, the SQLite run store, and the one handler family (gate 7A-L3).

Surfaces open a `FlowContext` for a workspace and call the handlers below (or
`run_action`, which dispatches by name); each returns a JSON-ready record or a
`FlowRefusal` carrying a §8 code and its HTTP status.
"""

from __future__ import annotations

from .actions import MCP_ACTIONS, RUN_ACTIONS, run_action
from .consent import mint_consent
from .context import FlowContext
from .definitions import export_flow, get_flow, list_flows
from .errors import FlowRefusal, FlowResult, to_json
from .execute import execute_automatable
from .importing import import_flow, review_import
from .posture import Actor, Posture
from .runs import advance_step, get_run, list_runs, record_evidence, start_run, submit_review

__all__ = [
    "MCP_ACTIONS",
    "RUN_ACTIONS",
    "Actor",
    "FlowContext",
    "FlowRefusal",
    "FlowResult",
    "Posture",
    "advance_step",
    "execute_automatable",
    "export_flow",
    "get_flow",
    "get_run",
    "import_flow",
    "list_flows",
    "list_runs",
    "mint_consent",
    "record_evidence",
    "review_import",
    "run_action",
    "start_run",
    "submit_review",
    "to_json",
]
