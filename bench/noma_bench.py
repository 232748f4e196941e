"""Document engine benchmark: median parse, validate and render times for N sections.

Run: ``./dev bench docs`` (or ``python -m bench docs``).

Columns: ``parse`` is text to tree; ``validate`` is validation of a *fresh* tree (parsed
anew before each timed run, so nothing the validator keeps on a tree — its walk, index,
per-block findings — is reused); ``parse+val`` is the two together, what opening a file
and showing its diagnostics costs (the cold figure); ``render`` renders a parsed tree.
Each run starts after a full collection (validate: before the untimed parse), and the
cyclic GC stays on as it is in use.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from bench.generate import generate
from bench.timing import median_ms, parsed_and_validated
from core.noma import parse
from core.noma.render import render_noma
from core.noma.validate import validate


def fresh_validate_ms(text: str, repeat: int) -> float:
    """Median ms of `validate` on a tree parsed just before (untimed), never reused.

    No collection between the two: validation starts where it does when a file is opened,
    so any GC passes over the young tree are counted, as a user would pay them.
    """
    samples = []
    for _ in range(repeat):
        gc.collect()
        doc = parse(text)
        start = time.perf_counter()
        validate(doc)
        samples.append((time.perf_counter() - start) * 1000)
        del doc
    return statistics.median(samples)


def run(sizes: tuple[int, ...] = (1000, 5000), repeat: int = 9) -> list[dict[str, float]]:
    rows = []
    for n in sizes:
        text = generate(n)
        doc = parse(text)
        diagnostics = validate(doc)
        rows.append(
            {
                "sections": n,
                "lines": text.count("\n") + 1,
                "kib": len(text.encode()) / 1024,
                "diagnostics": len(diagnostics),
                "parse": median_ms(lambda t=text: parse(t), repeat),
                "validate": fresh_validate_ms(text, repeat),
                "parse+validate": median_ms(lambda t=text: parsed_and_validated(t), repeat),
                "render": median_ms(lambda d=doc: render_noma(d), repeat),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench docs")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--sizes", default="1000,5000")
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    print("document engine (medians, ms; validate = on a fresh tree; parse+val = cold open)")
    print(
        f"{'sections':>8} {'lines':>7} {'KiB':>6} {'parse':>7} {'validate':>9} "
        f"{'parse+val':>9} {'render':>7}"
    )
    for row in run(sizes, args.repeat):
        print(
            f"{row['sections']:>8} {row['lines']:>7} {row['kib']:>6.0f} {row['parse']:>7.1f} "
            f"{row['validate']:>9.1f} {row['parse+validate']:>9.1f} {row['render']:>7.1f}"
        )
    return 0
