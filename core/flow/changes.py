"""What a proposed bundle changes against the flow it would replace: for the reviewer.

A reviewer approves a definition, not a button: every surface that shows a proposal shows
this summary (which flow fields changed, which steps were added, removed or changed and in
which fields) and the unified diff of the two bundles in their export form. The texts are
the bundles' own (untrusted) words; a surface prints them as data, never as markup.
"""

from __future__ import annotations

import difflib
from typing import Any

from .bundle import dump_bundle
from .models import FlowBundle

MAX_DIFF_LINES = 2000


def summarize(base: FlowBundle | None, proposed: FlowBundle) -> dict[str, Any]:
    """Field names and step ids only (no step text): safe to show in any list."""
    new_steps = {s.step_id: s.model_dump(mode="json", by_alias=True) for s in proposed.steps}
    if base is None:
        return {
            "new_flow": True,
            "flow_fields": [],
            "steps_added": list(new_steps),
            "steps_removed": [],
            "steps_changed": [],
        }
    old_flow = base.to_json()["flow"]
    new_flow = proposed.to_json()["flow"]
    flow_fields = sorted(
        k for k in set(old_flow) | set(new_flow) if old_flow.get(k) != new_flow.get(k)
    )
    old_steps = {s.step_id: s.model_dump(mode="json", by_alias=True) for s in base.steps}
    changed = []
    for step_id, new in new_steps.items():
        old = old_steps.get(step_id)
        if old is None:
            continue
        fields = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        if fields:
            changed.append({"step_id": step_id, "fields": fields})
    return {
        "new_flow": False,
        "flow_fields": flow_fields,
        "steps_added": [s for s in new_steps if s not in old_steps],
        "steps_removed": [s for s in old_steps if s not in new_steps],
        "steps_changed": changed,
    }


def unified_diff(base: FlowBundle | None, proposed: FlowBundle) -> str:
    """The export-form (YAML) diff, base to proposed; a new flow is all additions."""
    old = dump_bundle(base, "yaml").splitlines(keepends=True) if base is not None else []
    new = dump_bundle(proposed, "yaml").splitlines(keepends=True)
    before = f"{base.flow_id}@{base.version}" if base is not None else "/dev/null"
    lines = list(
        difflib.unified_diff(old, new, before, f"{proposed.flow_id}@{proposed.version}", n=2)
    )
    if len(lines) > MAX_DIFF_LINES:
        dropped = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"... {dropped} more diff lines not shown\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
