"""Where the shipped skills are: package data of the ``skills`` package, found through
``importlib.resources`` so an installed wheel finds them as a source checkout does."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

SHIPPED_PACKAGE = "skills"


def shipped_skills_dir() -> Path:
    """The folder holding the shipped skill directories (``skills.protocol.guide`` etc.)."""
    try:
        root = importlib.resources.files(SHIPPED_PACKAGE)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / SHIPPED_PACKAGE
    return Path(str(root))
