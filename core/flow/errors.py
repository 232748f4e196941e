"""Flow refusals: the §8 codes, their HTTP statuses, and the value every handler returns.

A refusal is a value, not an exception that escapes a handler: the CLI, the MCP tool and the
pane serialise the same `FlowRefusal`, so a refusal is byte-identical on every surface. The
message for a code is fixed text; no refusal ever carries an id, a token, a scope or step
text (§8), only field paths for malformed requests and bundles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

FlowCode = Literal[
    "FLOW_RUN_WRITES_DISABLED",
    "FLOW_AUTOMATABLE_EXECUTION_DISABLED",
    "FLOW_EXECUTION_POLICY_FORBIDDEN",
    "FLOW_STEP_NOT_AUTOMATABLE",
    "FLOW_EXECUTION_CONSENT_REQUIRED",
    "FLOW_EXECUTION_CONSENT_RUN_MISMATCH",
    "FLOW_EXECUTION_COST_CAPPED",
    "FLOW_EXECUTION_LANE_DENIED",
    "FLOW_VERIFICATION_UNSATISFIED",
    "FLOW_STEP_OUT_OF_ORDER",
    "FLOW_RUN_NOT_IN_PROGRESS",
    "FLOW_IMPORT_AUTOMATABLE_DENIED",
    "unknown_run",
    "unknown_flow",
    # Codes this product adds where the spec is silent (see the module docstring of each use).
    "FLOW_REQUEST_INVALID",
    "FLOW_BUNDLE_INVALID",
    "FLOW_EXTERNAL_TOOL_UNDECLARED",
    "FLOW_RUN_CONFLICT",
    "FLOW_VERSION_CONFLICT",
    "unknown_proposal",
    "FLOW_HUMAN_APPROVAL_REQUIRED",
    "unknown_consent",
]

STATUS: dict[str, int] = {
    "FLOW_RUN_WRITES_DISABLED": 403,
    "FLOW_AUTOMATABLE_EXECUTION_DISABLED": 403,
    "FLOW_EXECUTION_POLICY_FORBIDDEN": 403,
    "FLOW_STEP_NOT_AUTOMATABLE": 400,
    "FLOW_EXECUTION_CONSENT_REQUIRED": 403,
    "FLOW_EXECUTION_CONSENT_RUN_MISMATCH": 403,
    "FLOW_EXECUTION_COST_CAPPED": 403,
    "FLOW_EXECUTION_LANE_DENIED": 403,
    "FLOW_VERIFICATION_UNSATISFIED": 403,
    "FLOW_STEP_OUT_OF_ORDER": 409,
    "FLOW_RUN_NOT_IN_PROGRESS": 409,
    "FLOW_IMPORT_AUTOMATABLE_DENIED": 403,
    "unknown_run": 404,
    "unknown_flow": 404,
    "FLOW_REQUEST_INVALID": 400,
    "FLOW_BUNDLE_INVALID": 400,
    "FLOW_EXTERNAL_TOOL_UNDECLARED": 403,
    "FLOW_RUN_CONFLICT": 409,
    "FLOW_VERSION_CONFLICT": 409,
    "unknown_proposal": 404,
    "FLOW_HUMAN_APPROVAL_REQUIRED": 403,
    "unknown_consent": 404,
}

MESSAGES: dict[str, str] = {
    "FLOW_RUN_WRITES_DISABLED": "run writes are disabled in this workspace",
    "FLOW_AUTOMATABLE_EXECUTION_DISABLED": "automatable execution is disabled in this workspace",
    "FLOW_EXECUTION_POLICY_FORBIDDEN": "policy forbids automatable execution here",
    "FLOW_STEP_NOT_AUTOMATABLE": "the step is not automatable",
    "FLOW_EXECUTION_CONSENT_REQUIRED": "a valid, unexpired execution consent is required",
    "FLOW_EXECUTION_CONSENT_RUN_MISMATCH": "the consent is bound to a different run",
    "FLOW_EXECUTION_COST_CAPPED": "the cost cap does not cover this execution",
    "FLOW_EXECUTION_LANE_DENIED": "the requested lane is not allowed or not available",
    "FLOW_VERIFICATION_UNSATISFIED": "the step's verification is not satisfied",
    "FLOW_STEP_OUT_OF_ORDER": "the step is not on the run's frontier",
    "FLOW_RUN_NOT_IN_PROGRESS": "the run is not in progress",
    "FLOW_IMPORT_AUTOMATABLE_DENIED": "policy forbids importing non-manual steps",
    "unknown_run": "no such run",
    "unknown_flow": "no such flow",
    "FLOW_REQUEST_INVALID": "the request is malformed",
    "FLOW_BUNDLE_INVALID": "the flow bundle is not valid",
    "FLOW_EXTERNAL_TOOL_UNDECLARED": "a step uses an external tool it does not declare",
    "FLOW_RUN_CONFLICT": "the run changed or a step is executing; reload and retry",
    "FLOW_VERSION_CONFLICT": "a different flow with this id and version already exists",
    "unknown_proposal": "no such proposal",
    "FLOW_HUMAN_APPROVAL_REQUIRED": "approving a human review is a human's act, not an agent's",
    "unknown_consent": "no such consent",
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a request or bundle: where (a field path) and what."""

    path: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass(frozen=True, slots=True)
class FlowRefusal:
    """A handler's "no": the §8 code, its HTTP status, and (for malformed input) field paths."""

    code: FlowCode
    problems: tuple[Problem, ...] = field(default=())

    @property
    def status(self) -> int:
        return STATUS[self.code]

    @property
    def message(self) -> str:
        return MESSAGES[self.code]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": False,
            "code": self.code,
            "status": self.status,
            "error": self.message,
        }
        if self.problems:
            out["problems"] = [p.to_json() for p in self.problems]
        return out


class Refused(Exception):
    """Raised inside the engine to unwind to the handler boundary, which returns `.refusal`."""

    def __init__(self, code: FlowCode, problems: tuple[Problem, ...] = ()) -> None:
        super().__init__(code)
        self.refusal = FlowRefusal(code, problems)


FlowResult = dict[str, Any] | FlowRefusal


def to_json(result: FlowResult) -> dict[str, Any]:
    """What every surface prints or returns for a handler result."""
    return result.to_json() if isinstance(result, FlowRefusal) else result
