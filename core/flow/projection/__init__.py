"""Flow projections (§1.7, §4): canonical flows rendered for the five harnesses.

A projection is derived and read-only. It is regenerated from the canonical bundle, never
edited into one: written files carry a stamp (the flow versions and the hash of what was
generated) so staleness and hand edits (drift) are detected, and nothing here ever feeds a
projection back into ``flows/`` or the import path.
"""

from __future__ import annotations

from .handlers import project_agents_md, project_flow, projection_status, stamped_bytes
from .harness import HARNESSES, Harness

__all__ = [
    "HARNESSES",
    "Harness",
    "project_agents_md",
    "project_flow",
    "projection_status",
    "stamped_bytes",
]
