"""Writers' formats benchmark: median export (Markdown, HTML, LLM context), ingest and fmt
times for the synthetic research memo of N sections.

Run: ``./dev bench formats`` (or ``python -m bench formats``).
"""

from __future__ import annotations

import argparse

from bench.generate import generate
from bench.timing import median_ms
from core.noma import parse
from core.noma.export import export
from core.noma.fmt import format_source
from core.noma.ingest import ingest_markdown
from core.noma.source import from_text

COLUMNS = ("markdown", "html", "llm", "llm 2k", "ingest", "fmt")


def run(sizes: tuple[int, ...] = (1000, 5000), repeat: int = 5) -> list[dict[str, float]]:
    rows = []
    for n in sizes:
        text = generate(n)
        doc = parse(text)
        markdown = export(doc, "markdown")
        rows.append(
            {
                "sections": n,
                "markdown": median_ms(lambda d=doc: export(d, "markdown"), repeat),
                "html": median_ms(lambda d=doc: export(d, "html"), repeat),
                "llm": median_ms(lambda d=doc: export(d, "llm"), repeat),
                "llm 2k": median_ms(lambda d=doc: export(d, "llm", budget=2000), repeat),
                "ingest": median_ms(lambda m=markdown: ingest_markdown(m), repeat),
                "fmt": median_ms(lambda t=text: format_source(from_text(t)), repeat),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench formats")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="1000,5000")
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    print("writers' formats (medians, ms; fmt = parse + render + re-parse + compare)")
    print(f"{'sections':>8} " + " ".join(f"{c:>9}" for c in COLUMNS))
    for row in run(sizes, args.repeat):
        print(f"{row['sections']:>8} " + " ".join(f"{row[c]:>9.1f}" for c in COLUMNS))
    return 0
