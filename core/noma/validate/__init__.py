"""The §4.4 validator. (Being built: see rules/ once landed.)"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from pathlib import Path

from ..diagnostics import Diagnostic
from ..nodes import Document


def validate(
    doc: Document,
    *,
    profile: str | None = None,
    ignore_rules: Iterable[str] = (),
    today: date | None = None,
    base_dir: Path | None = None,
) -> list[Diagnostic]:
    """Run every §4.4 rule over ``doc`` and return its diagnostics in document order."""
    raise NotImplementedError
