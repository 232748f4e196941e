"""The ordinal frontier and the step rules, as pure functions over step states.

The frontier is the first step (by ordinal) that is neither done nor skipped; only it may
move. Because everything before it is finished and everything after it is pending, at most
one step is ever in progress. Every check here is one pass over the steps: O(steps), never
dependent on how many runs exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .enums import ACTIVE_VERIFICATION, FINISHED_STEP
from .errors import Problem, Refused
from .ids import HASH_POINTER, PROPOSAL_ID, STEP_ID
from .models import FlowStep
from .posture import Actor

ARTIFACT_POINTERS = frozenset({"artifact", "hash", "test_result"})


def frontier_index(states: Sequence[dict[str, Any]]) -> int | None:
    """Index of the first unfinished step, or None when every step is done or skipped."""
    for index, state in enumerate(states):
        if state["status"] not in FINISHED_STEP:
            return index
    return None


def step_index(step_id: str, flow_id: str, count: int) -> int:
    """0-based index of ``step_id`` in a run of ``flow_id``; a foreign id is a bad request."""
    match = STEP_ID.match(step_id)
    if match is None or match.group(1) != flow_id or not 1 <= int(match.group(2)) <= count:
        raise Refused("BAD_REQUEST", (Problem("step_id", "not a step of this run"),))
    return int(match.group(2)) - 1


def require_frontier(states: Sequence[dict[str, Any]], index: int) -> None:
    if frontier_index(states) != index:
        raise Refused("FLOW_STEP_OUT_OF_ORDER")


def run_status(states: Sequence[dict[str, Any]]) -> str:
    index = frontier_index(states)
    if index is None:
        return "done"
    return "blocked" if states[index]["status"] == "blocked" else "in_progress"


def verified_for_done(step: FlowStep, state: dict[str, Any], approve: bool) -> bool:
    """The `verified` value a step gets when it goes to done, or a refusal.

    `human_review` is satisfied only by an explicit human approval over recorded evidence;
    `artifact_exists` by an artifact pointer recorded earlier; the kinds that are not active
    in v0 can never satisfy a step that requires evidence.
    """
    required = step.verification.evidence_required
    kind = step.verification.kind
    verified = bool(state.get("verified"))
    if kind not in ACTIVE_VERIFICATION:
        if required:
            raise Refused("FLOW_VERIFICATION_UNSATISFIED")
        return False
    if kind == "human_review":
        verified = bool(approve and state.get("evidence_ref"))
    if required and not verified:
        raise Refused("FLOW_VERIFICATION_UNSATISFIED")
    return verified


def require_human_to_finish(actor: Actor, step: FlowStep, to_status: str) -> None:
    """A `human_review` step is finished (done or skipped) only by a human.

    The contract keeps human review "manual approval only" (§3.1) and lets a step be skipped
    only where its `when_not_to_run` is met, which for a review is a person's judgement. An
    agent that skips the step, or marks it done without the approval it may not give (when
    evidence is not required that would be done, unverified), would finish the run with
    nobody's sign-off: refused outright, with the approval code, rather than leaving a run
    that looks finished. The agent may still move it in progress or blocked and attach
    evidence for the human.
    """
    if step.verification.kind == "human_review" and to_status in FINISHED_STEP and not actor.human:
        raise Refused("FLOW_HUMAN_APPROVAL_REQUIRED")


def check_skip(to_status: str, reason: str | None) -> None:
    """A skip needs one of the bounded reasons (the request model refuses any other text);
    a reason on anything but a skip is a caller's mistake, refused rather than ignored."""
    if to_status == "skipped" and reason is None:
        problem = Problem("skip_reason", "required when to_status is skipped")
        raise Refused("BAD_REQUEST", (problem,))
    if to_status != "skipped" and reason is not None:
        problem = Problem("skip_reason", "only allowed when to_status is skipped")
        raise Refused("BAD_REQUEST", (problem,))


def check_pointer(evidence_ref: str, pointer_kind: str) -> None:
    if pointer_kind == "hash" and not HASH_POINTER.match(evidence_ref):
        raise Refused("BAD_REQUEST", (Problem("evidence_ref", "not a sha256 pointer"),))
    if pointer_kind == "proposal" and not PROPOSAL_ID.match(evidence_ref):
        raise Refused("BAD_REQUEST", (Problem("evidence_ref", "not a proposal id"),))


def evidence_verifies(step: FlowStep, pointer_kind: str) -> bool:
    """Recording an artifact pointer satisfies `artifact_exists`; nothing else auto-verifies."""
    return step.verification.kind == "artifact_exists" and pointer_kind in ARTIFACT_POINTERS
