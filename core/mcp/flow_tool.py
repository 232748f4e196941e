"""The ``flow_run`` MCP tool: placeholder until the Flow runs issue lands (owned by it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def register(server: Any, root: Path | None) -> None:
    """Add the ``flow_run`` tool to ``server``. Filled in by the Flow runs issue."""
