"""Fixtures for the app tests (helpers live in ``tui_helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import copy_demo


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A fresh, writable copy of the shipped demo workspace."""
    return copy_demo(tmp_path)
