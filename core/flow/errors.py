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
    # Where the contract is silent: the names the peer (Knowtation's handlers) answers with.
    "BAD_REQUEST",
    "FLOW_IMPORT_EXTERNAL_TOOL_DENIED",
    # Codes this product adds where neither the contract nor the peer names one.
    "FLOW_IMPORT_SCOPE_DENIED",
    "FLOW_RUN_CONFLICT",
    "FLOW_VERSION_CONFLICT",
    "FLOW_PROJECTION_DRIFT",
    "unknown_proposal",
    "FLOW_HUMAN_APPROVAL_REQUIRED",
    "unknown_consent",
    "unknown_candidate",
    "FLOW_CANDIDATE_CAPTURE_DISABLED",
    "FLOW_CANDIDATE_CAP_REACHED",
    "FLOW_CANDIDATE_OVERLAP_TOO_LOW",
]

# The one table of every flow code: (HTTP status, fixed message, when). README's
# "Flow codes" table is this table (a test keeps them equal).
CODES: dict[str, tuple[int, str, str]] = {
    "FLOW_RUN_WRITES_DISABLED": (
        403,
        "run writes are disabled in this workspace",
        "a run write while the run-write sub-gate is off",
    ),
    "FLOW_AUTOMATABLE_EXECUTION_DISABLED": (
        403,
        "automatable execution is disabled in this workspace",
        "execute while the automatable sub-gate is off",
    ),
    "FLOW_EXECUTION_POLICY_FORBIDDEN": (
        403,
        "policy forbids automatable execution here",
        "org policy forbids automatable steps, or the step has an external_tool ref",
    ),
    "FLOW_STEP_NOT_AUTOMATABLE": (
        400,
        "the step is not automatable",
        "execute on a manual or agent_assisted step",
    ),
    "FLOW_EXECUTION_CONSENT_REQUIRED": (
        403,
        "a valid, unexpired execution consent is required",
        "missing, unknown, expired or revoked consent",
    ),
    "FLOW_EXECUTION_CONSENT_RUN_MISMATCH": (
        403,
        "the consent is bound to a different run",
        "consent minted for another run",
    ),
    "FLOW_EXECUTION_COST_CAPPED": (
        403,
        "the cost cap does not cover this execution",
        "the consent or policy cap cannot cover the reservation",
    ),
    "FLOW_EXECUTION_LANE_DENIED": (
        403,
        "the requested lane is not allowed or not available",
        "lane outside consent or policy, or not available",
    ),
    "FLOW_VERIFICATION_UNSATISFIED": (
        403,
        "the step's verification is not satisfied",
        "advance to done without the proof the step requires",
    ),
    "FLOW_STEP_OUT_OF_ORDER": (
        409,
        "the step is not on the run's frontier",
        "a write to a step that is not the ordinal frontier",
    ),
    "FLOW_RUN_NOT_IN_PROGRESS": (
        409,
        "the run is not in progress",
        "a step write on a finished or abandoned run",
    ),
    "FLOW_IMPORT_AUTOMATABLE_DENIED": (
        403,
        "policy forbids importing non-manual steps",
        "import of a non-manual step while policy sets automatable_forbidden",
    ),
    "unknown_run": (404, "no such run", "missing or not visible in the caller's scope"),
    "unknown_flow": (404, "no such flow", "missing or not visible in the caller's scope"),
    "BAD_REQUEST": (
        400,
        "the request is malformed",
        "a request or bundle that does not validate; `problems` lists field paths",
    ),
    "FLOW_IMPORT_EXTERNAL_TOOL_DENIED": (
        403,
        "a step uses an external tool it does not declare",
        "import of an external_tool ref the step does not declare under requires",
    ),
    "FLOW_IMPORT_SCOPE_DENIED": (
        403,
        "this workspace's policy does not allow the bundle's scope",
        "import or proposal (or approval) of a bundle whose scope policy.scopes does not list",
    ),
    "FLOW_RUN_CONFLICT": (
        409,
        "the run changed or a step is executing; reload and retry",
        "stale expected_etag, or a manual write racing an execution",
    ),
    "FLOW_VERSION_CONFLICT": (
        409,
        "a different flow with this id and version already exists",
        "proposing, or approving, a bundle whose id+version exists with other content",
    ),
    "FLOW_PROJECTION_DRIFT": (
        409,
        "the file there was edited by hand or is not a projection; it is kept",
        "writing a projection over a hand-edited or foreign file without --force",
    ),
    "unknown_proposal": (404, "no such proposal", "missing or not visible"),
    "FLOW_HUMAN_APPROVAL_REQUIRED": (
        403,
        "approving a human review is a human's act, not an agent's",
        "an agent (MCP, an agent hub token) approves, skips or finishes a human_review "
        "step, reviews a proposal or a flow candidate, or mints consent",
    ),
    "unknown_consent": (404, "no such consent", "revoking a consent that is missing or not yours"),
    "unknown_candidate": (404, "no such flow candidate", "missing or not visible"),
    "FLOW_CANDIDATE_CAPTURE_DISABLED": (
        403,
        "capturing flow candidates is off in this workspace",
        "a candidate proposed while policy.candidate_capture is off (the default)",
    ),
    "FLOW_CANDIDATE_CAP_REACHED": (
        429,
        "too many flow candidates from this caller",
        "a third candidate in one session, or over 50 pending from one actor",
    ),
    "FLOW_CANDIDATE_OVERLAP_TOO_LOW": (
        409,
        "the candidate's steps overlap the flow by less than 0.8",
        "merging a candidate into a flow whose step structure differs too much",
    ),
}

STATUS: dict[str, int] = {code: row[0] for code, row in CODES.items()}
MESSAGES: dict[str, str] = {code: row[1] for code, row in CODES.items()}

# Success statuses over HTTP (the contract's REST routes): starts create a run (201, as the
# peer answers); every other action answers 200.
SUCCESS_STATUS: dict[str, int] = {"start": 201}


def success_status(action: str) -> int:
    return SUCCESS_STATUS.get(action, 200)


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
