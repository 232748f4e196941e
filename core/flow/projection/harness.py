"""The five harnesses of §1.1 and what each one carries (§4's fidelity report).

A canonical flow has more than a weak harness can say: a Cursor rule is short guidance
read on every edit, so it leaves out tool handles and data bindings; an MCP prompt is
invoked by name, so when to run it (trigger, anti-trigger) means nothing there. Each
harness names the content fields it leaves out; a projection reports the ones the flow
actually has (`dropped_fields`), so "nothing dropped" is a claim the record makes, not
an omission. Identity and version fields (ids, ordinals, ``version``, ``updated``,
``truncated``) are carried by the projection record itself and are never "dropped".
"""

from __future__ import annotations

from typing import Literal, get_args

from ..models import FlowBundle

Harness = Literal["cursor_rule", "cursor_skill", "mcp_prompt", "cli_runbook", "agent_bundle"]
HARNESSES: tuple[str, ...] = get_args(Harness)

# Every content field a flow can hold, in the order a fidelity report lists them.
FLOW_FIELDS = ("title", "summary", "scope", "tags", "inputs", "vault_mirror_path")
STEP_FIELDS = (
    "owned_job",
    "instruction",
    "trigger",
    "when_not_to_run",
    "requires",
    "boundaries",
    "skill_refs",
    "inputs",
    "outputs",
    "output_shape",
    "verification",
    "automatable",
)
CONTENT_FIELDS: tuple[str, ...] = tuple(f"flow.{f}" for f in FLOW_FIELDS) + tuple(
    f"steps[].{f}" for f in STEP_FIELDS
)

# What each harness cannot carry (a subset of CONTENT_FIELDS).
LEAVES_OUT: dict[str, frozenset[str]] = {
    "cursor_rule": frozenset(
        {
            "flow.tags",
            "flow.inputs",
            "flow.vault_mirror_path",
            "steps[].requires",
            "steps[].skill_refs",
            "steps[].inputs",
            "steps[].outputs",
            "steps[].automatable",
        }
    ),
    "cursor_skill": frozenset({"flow.vault_mirror_path", "steps[].automatable"}),
    "mcp_prompt": frozenset(
        {
            "flow.tags",
            "flow.vault_mirror_path",
            "steps[].trigger",
            "steps[].when_not_to_run",
            "steps[].outputs",
            "steps[].automatable",
        }
    ),
    "cli_runbook": frozenset({"flow.vault_mirror_path"}),
    "agent_bundle": frozenset(),
}

NOTES: dict[str, str] = {
    "cursor_rule": "A Cursor rule is short guidance: tool handles, data bindings and "
    "execution labels are left to the canonical flow.",
    "cursor_skill": "A skill is run by an agent by hand: the execution label is left out.",
    "mcp_prompt": "A prompt is invoked by name: when to run it, declared outputs and the "
    "execution label are left out.",
    "cli_runbook": "A runbook carries every step field; the vault mirror location is not "
    "procedure.",
    "agent_bundle": "Read-only: an external agent reads it, never executes from it.",
}


def default_path(harness: str, flow_id: str) -> str:
    """Where ``--write`` puts a projection, relative to the workspace root (never under
    ``flows/``, where canonical bundles live)."""
    if harness == "cursor_rule":
        return f".cursor/rules/{flow_id}.mdc"
    if harness == "cursor_skill":
        return f".cursor/skills/{skill_name(flow_id)}/SKILL.md"
    if harness == "cli_runbook":
        return f"docs/runbooks/{flow_id}.md"
    return f".flow-projections/{flow_id}.{harness}.json"


def skill_name(flow_id: str) -> str:
    """A skill name is lowercase letters, digits and hyphens."""
    return flow_id.replace("_", "-")


def present_fields(bundle: FlowBundle) -> set[str]:
    """The content fields this flow actually holds (an empty list holds nothing)."""
    out = {f"flow.{f}" for f in FLOW_FIELDS if _holds(getattr(bundle.flow, f))}
    for step in bundle.steps:
        out |= {f"steps[].{f}" for f in STEP_FIELDS if _holds(getattr(step, f))}
    return out


def _holds(value: object) -> bool:
    return value is not None and value != [] and value != ""


def dropped_fields(harness: str, bundle: FlowBundle) -> list[str]:
    """Exactly the fields this flow holds that ``harness`` cannot carry, in a fixed order."""
    present = present_fields(bundle)
    return [f for f in CONTENT_FIELDS if f in LEAVES_OUT[harness] and f in present]
