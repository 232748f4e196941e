"""Resolving a step's `inputs[].from` references at execution time.

Import has already checked every reference against its bundle (`bundle.reference_problem`),
so here a reference can only be *unresolved*: a flow input no value was given for at start,
or an earlier step that finished without an evidence pointer (skipped, or not proven). An
unresolved reference fails the execution in-band; the reference string itself is never
handed to a lane as if it were the value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .bundle import FLOW_INPUT_REF, STEP_OUTPUT_REF
from .models import FlowStep


def resolve_inputs(
    step: FlowStep, states: Sequence[Mapping[str, Any]], run_inputs: Mapping[str, str]
) -> dict[str, str] | None:
    """``{input name: value}`` for every step input, or None if any does not resolve.

    ``flow.inputs.<name>`` is the value given at start; ``<step_id>.outputs.<name>`` is that
    earlier step's evidence pointer (the engine keeps pointers, never step output).
    """
    evidence = {s["step_id"]: s.get("evidence_ref") for s in states}
    out: dict[str, str] = {}
    for item in step.inputs or ():
        ref = item.from_
        value: str | None = None
        if ref.startswith(FLOW_INPUT_REF):
            value = run_inputs.get(ref[len(FLOW_INPUT_REF) :])
        else:
            match = STEP_OUTPUT_REF.match(ref)
            if match is not None:
                value = evidence.get(match.group(1))
        if value is None:
            return None
        out[item.name] = value
    return out
