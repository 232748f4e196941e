"""Small timing helpers shared by the benchmarks: medians over repeated runs."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any


def median_ms(
    fn: Callable[[], Any], repeat: int, *, setup: Callable[[], Any] | None = None
) -> float:
    """Median wall-clock milliseconds of ``fn`` over ``repeat`` runs (GC collected between).

    What ``fn`` returns is dropped after the clock stops: a row times making a result (a
    tree, an export), not freeing it (a document tree is freed by reference counting when
    dropped, ~14 ms at 5,000 sections; the reference's are freed later by its collector).
    """
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - start) * 1000)
        del result
    return statistics.median(samples)


def parsed_and_validated(text: str) -> tuple[Any, Any]:
    """The tree and its diagnostics (both returned, so a timed call does not free the
    tree: see `median_ms`)."""
    from core.noma import parse
    from core.noma.validate import validate

    doc = parse(text)
    return doc, validate(doc)


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
