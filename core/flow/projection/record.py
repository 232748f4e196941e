"""The `knowtation.flow_projection/v0` record (§1.7) of one flow for one harness.

The record is derived and read-only: ``generated_from_canonical: true``, ``editable:
false``. Its bytes depend on the flow alone (no clock, no random ids, fixed key order),
so projecting the same flow twice gives the same record, and a regenerated file differs
from the last one only where the flow changed. Additive fields: ``content_sha256`` (of
``rendered``, what a written file is checked against), ``source_sha256`` (the canonical
bundle it came from), ``path`` (where ``--write`` puts it), and staleness against the
newest version the caller can see.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..catalog import CatalogEntry
from ..ids import semver_key, sha256_hex
from ..models import FlowBundle
from . import markdown, structured
from .harness import NOTES, default_path, dropped_fields

PROJECTION_SCHEMA = "knowtation.flow_projection/v0"

RENDERERS: dict[str, Callable[[FlowBundle], str]] = {
    "cursor_rule": markdown.cursor_rule,
    "cursor_skill": markdown.cursor_skill,
    "mcp_prompt": structured.mcp_prompt,
    "cli_runbook": markdown.cli_runbook,
    "agent_bundle": structured.agent_bundle,
}
# The harnesses whose rendering is JSON (stamped inside the object, not as a trailer).
JSON_HARNESSES = frozenset({"mcp_prompt", "agent_bundle"})


def is_older(version: str, latest: str) -> bool:
    return semver_key(version) < semver_key(latest)


def build(entry: CatalogEntry, harness: str, latest_version: str) -> dict[str, Any]:
    bundle = entry.bundle
    rendered = RENDERERS[harness](bundle)
    return {
        "schema": PROJECTION_SCHEMA,
        "flow_id": bundle.flow_id,
        "flow_version": bundle.version,
        "harness": harness,
        "rendered": rendered,
        "generated_from_canonical": True,
        "editable": False,
        "fidelity": {"dropped_fields": dropped_fields(harness, bundle), "notes": NOTES[harness]},
        "content_sha256": sha256_hex(rendered),
        "source_sha256": entry.sha256,
        "path": default_path(harness, bundle.flow_id),
        "latest_version": latest_version,
        "stale": is_older(bundle.version, latest_version),
    }
