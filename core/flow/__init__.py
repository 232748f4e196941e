"""Flow runs: definitions, the SQLite run store, and the one handler family (gate 7A-L3).

Surfaces open a `FlowContext` for a workspace and call the handlers below (or
`run_action`, which dispatches by name); each returns a JSON-ready record or a
`FlowRefusal` carrying a §8 code and its HTTP status.

Each name is imported on first use (PEP 562 ``__getattr__``, as in ``core.noma.api``):
a process that needs one part (a store opener, a hub worker, the CLI's argument check)
does not pay ~1 s of CPU to build every handler's models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .actions import MCP_ACTIONS, RUN_ACTIONS, run_action
    from .consent import mint_consent
    from .context import FlowContext
    from .definitions import export_flow, get_flow, list_flows
    from .errors import FlowRefusal, FlowResult, to_json
    from .execute import execute_automatable
    from .importing import import_flow, review_import
    from .posture import Actor, Posture
    from .runs import advance_step, get_run, list_runs, record_evidence, start_run, submit_review

_HOMES: dict[str, str] = {
    "MCP_ACTIONS": ".actions",
    "RUN_ACTIONS": ".actions",
    "run_action": ".actions",
    "mint_consent": ".consent",
    "FlowContext": ".context",
    "export_flow": ".definitions",
    "get_flow": ".definitions",
    "list_flows": ".definitions",
    "FlowRefusal": ".errors",
    "FlowResult": ".errors",
    "to_json": ".errors",
    "execute_automatable": ".execute",
    "import_flow": ".importing",
    "review_import": ".importing",
    "Actor": ".posture",
    "Posture": ".posture",
    "advance_step": ".runs",
    "get_run": ".runs",
    "list_runs": ".runs",
    "record_evidence": ".runs",
    "start_run": ".runs",
    "submit_review": ".runs",
}

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


def __getattr__(name: str) -> Any:
    """Import ``name``'s module on first use and keep the value here."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __package__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
