"""Which cheap path a splice or a kept finding took, seen only by whoever asks.

A splice (`incremental`) takes the span path ("splice:by-span") and one of three id paths
("splice:same-headings", "splice:headings-local", "splice:eager"); a spliced validation
(`validate.kept_findings`) keeps its base's whole-document findings as "kept:same-facts",
"kept:new-…" or "kept:linked-…" (headings, directives, sites). The tests prove the cheap
paths are taken where they should be, and only there, by counting them inside
`observing()`. Outside it `observer` is None, so a call site costs one ``is not None``
check and nothing is kept process-wide.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

Observer = Counter[str]

# The counter of the innermost `observing()` block, or None (always None in production).
observer: Observer | None = None


@contextmanager
def observing() -> Iterator[Observer]:
    """Count the paths taken inside the block; an enclosing block sees them too."""
    global observer
    outer = observer
    counts: Observer = Counter()
    observer = counts
    try:
        yield counts
    finally:
        observer = outer
        if outer is not None:
            outer.update(counts)
