"""``stale-citation``: a ``::citation`` whose ``accessed=`` date is older than its window.

The window is the block's ``stale_after_days=``, else the frontmatter's
``stale_citation_days``, else 365 days (noma-interop). "Older than" is strict: a citation
accessed exactly 365 days ago is not yet stale. A future date is never stale.

An ``accessed=`` that is not an ISO date (``2024-03-01`` or an ISO timestamp) gets no
diagnostic: the rule is about freshness, and no §4.4 code covers a malformed date, so
guessing at one would only produce noise.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from ..diagnostics import Diagnostic
from .registry import diag
from .rules import rule
from .scan import Scan

DEFAULT_WINDOW_DAYS = 365


def parse_day(text: str) -> date | None:
    """An ISO date, or the date part of an ISO timestamp; None if it is neither."""
    text = text.strip()
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def _days(value: Any) -> float | None:
    """A usable window: a non-negative number (a numeric string from YAML counts)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int | float) and value >= 0:
        return value
    return None


@rule(scope="document", codes=("stale-citation",), reads=("clock",), attrs_of=("citation",))
def check_citations(scan: Scan, today: date, out: list[Diagnostic]) -> None:
    """Warn on every citation whose ``accessed=`` day is older than its window."""
    citations = scan.checked("citation")
    if not citations:
        return
    doc_window = _days(scan.doc.meta.get("stale_citation_days"))
    default = doc_window if doc_window is not None else DEFAULT_WINDOW_DAYS
    for d in citations:
        raw = d.raw_attrs.get("accessed")
        if not raw:
            continue
        accessed = parse_day(raw)
        if accessed is None:
            continue
        block_window = _days(d.attrs.get("stale_after_days"))
        window = block_window if block_window is not None else default
        age = (today - accessed).days
        if age > window:
            out.append(
                diag(
                    "stale-citation",
                    f"::citation accessed={raw} is {age} days old, older than its "
                    f"{window:g}-day stale window; re-check the source.",
                    d,
                )
            )
