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
    """Median wall-clock milliseconds of ``fn`` over ``repeat`` runs (GC collected between)."""
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
