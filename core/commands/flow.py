"""``noma flow ...``: placeholder until the Flow runs issue lands (owned by that issue)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``flow`` command group. Filled in by the Flow runs issue."""
