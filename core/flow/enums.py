"""The bounded enums of Flow v0 and the execution gate, as `Literal` types.

Literals (not `Enum` classes) so records serialise to plain strings with no conversion and
pydantic refuses anything outside the set at every boundary.
"""

from __future__ import annotations

from typing import Literal, get_args

Scope = Literal["personal", "project", "org"]
VerificationKind = Literal[
    "human_review", "artifact_exists", "value_match", "test_pass", "agent_check"
]
Automatable = Literal["manual", "agent_assisted", "automatable"]
RunStatus = Literal["pending", "in_progress", "blocked", "done", "abandoned"]
StepStatus = Literal["pending", "in_progress", "blocked", "done", "skipped"]
SkillRefKind = Literal["mcp_prompt", "skill_pack", "cli", "external_tool"]
RequiresKind = Literal["vault_scope", "tool", "file", "artifact"]
PointerKind = Literal["proposal", "artifact", "hash", "test_result"]
Lane = Literal["local_default", "cloud_premium"]
# The contract's final statuses (§2.4).
ExecutionStatus = Literal["completed", "failed", "cost_capped", "consent_denied"]
# What an answer may carry: a re-post while the step's execution is still in flight answers
# that execution as it is (§4.2 "returns the in-flight execution_id"), status ``running``.
ExecutionWireStatus = Literal["running", "completed", "failed", "cost_capped", "consent_denied"]
ProposalStatus = Literal["pending", "approved", "rejected"]
# The capture flywheel (§1.1, §1.6). `CandidateStatus` is these three or
# ``merged_into:<flow_id>`` (checked by `core.flow.candidate_model`).
TriggerSignal = Literal[
    "repetition", "re_explanation", "repeated_correction", "review_debt", "session_extraction"
]
Confidence = Literal["low", "medium", "high"]
FixedCandidateStatus = Literal["pending_review", "promoted", "rejected"]
# flow_import: a bundle from elsewhere; flow_change: a new flow or a new version proposed
# (flow_propose); flow_run_outcome: a run's durable outcome (submit_review).
ProposalKind = Literal["flow_import", "flow_change", "flow_run_outcome"]
# Why a step is skipped, as the peer (Knowtation's execution handlers) names it: required
# for `to_status: "skipped"`, recorded on the step state. `when_not_to_run` stays prose for
# the person deciding; free text never skips.
SkipReason = Literal["policy", "not_applicable", "blocked_dependency"]
# Why an execution did not complete: bounded, never a message from the run.
ExecutionFailure = Literal[
    "skill_failed",
    "skill_unavailable",
    "sandbox_unavailable",
    "unsupported_ref",
    "budget_exhausted",
    "interrupted",
    "input_unresolved",
]
# What advance may move a step to (never back to pending).
AdvanceTo = Literal["in_progress", "blocked", "done", "skipped"]

ACTIVE_VERIFICATION: frozenset[str] = frozenset({"human_review", "artifact_exists"})
INTERNAL_REF_KINDS: frozenset[str] = frozenset({"mcp_prompt", "skill_pack", "cli"})
FINISHED_STEP: frozenset[str] = frozenset({"done", "skipped"})
SCOPES: tuple[str, ...] = get_args(Scope)
LANES: tuple[str, ...] = get_args(Lane)
SKIP_REASONS: tuple[str, ...] = get_args(SkipReason)
# What each skip reason means, for the surfaces that offer them to a person.
SKIP_REASON_LABELS: dict[str, str] = {
    "policy": "policy: ruled out by policy or the operator",
    "not_applicable": "not_applicable: does not apply to this run",
    "blocked_dependency": "blocked_dependency: something it needs is missing",
}
POINTER_KINDS: tuple[str, ...] = get_args(PointerKind)
