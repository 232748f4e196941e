"""The dogfood projection (§4): a workspace's ``AGENTS.md`` from its canonical flows.

One section per visible flow (its newest version), each the flow's CLI runbook nested a
level down, behind a short index. Like every projection it is derived and stamped, so a
hand edit is drift and the next regeneration says so instead of overwriting it.
"""

from __future__ import annotations

from typing import Any

from ..catalog import CatalogEntry
from ..ids import sha256_hex
from .markdown import finish, runbook_lines
from .text import code, line

AGENTS_MD_SCHEMA = "noma.flow_agents_md/v0"
AGENTS_MD_PATH = "AGENTS.md"

INTRO = (
    "Guidance for agents working in this workspace, generated from its canonical flows "
    "(`flows/`). Edit the flows, not this file: `noma flow project --agents-md --write` "
    "regenerates it, and a hand edit here is reported as drift, never read back."
)


def render(entries: list[CatalogEntry]) -> str:
    out = ["# AGENTS.md", "", INTRO, "", "## Flows", ""]
    if not entries:
        out.append("No flows are defined in this workspace yet.")
    out += [
        f"- {code(e.bundle.flow_id)} v{e.bundle.version}: {line(e.bundle.flow.title)} "
        f"({e.bundle.flow.scope})"
        for e in entries
    ]
    out.append("")
    for entry in entries:
        out += runbook_lines(entry.bundle, "##")
    return finish(out)


def record(entries: list[CatalogEntry]) -> dict[str, Any]:
    rendered = render(entries)
    return {
        "schema": AGENTS_MD_SCHEMA,
        "flows": [
            {
                "flow_id": e.bundle.flow_id,
                "flow_version": e.bundle.version,
                "source_sha256": e.sha256,
            }
            for e in entries
        ],
        "rendered": rendered,
        "generated_from_canonical": True,
        "editable": False,
        "content_sha256": sha256_hex(rendered),
        "path": AGENTS_MD_PATH,
    }
