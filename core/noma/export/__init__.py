"""Export a parsed document to the writers' formats: Markdown, HTML and an LLM context.

One entry point, `export`, so the CLI, the app's Export action and the preview pane all
produce the same bytes for the same document.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

from ..diagnostics import Diagnostic
from ..nodes import Document

FORMATS: tuple[str, ...] = ("markdown", "html", "llm")
SUFFIXES: dict[str, str] = {"markdown": ".md", "html": ".html", "llm": ".llm.txt"}
"""The file name ending each format is written with beside its document."""


def export(
    doc: Document,
    fmt: str,
    *,
    source_name: str = "",
    budget: int | None = None,
    diagnostics: Sequence[Diagnostic] | None = None,
) -> str:
    """Render ``doc`` as ``fmt`` (one of `FORMATS`); raises ValueError for another name.

    ``diagnostics`` is used by HTML only (the optional summary); ``budget`` and
    ``source_name`` by the LLM context only.
    """
    enabled = gc.isenabled()
    gc.disable()  # ~10^5 short-lived tokens and strings, no cycles: GC passes are waste
    try:
        return _export(doc, fmt, source_name, budget, diagnostics)
    finally:
        if enabled:
            gc.enable()


def _export(
    doc: Document,
    fmt: str,
    source_name: str,
    budget: int | None,
    diagnostics: Sequence[Diagnostic] | None,
) -> str:
    if fmt == "markdown":
        from .compiled import module

        markdown: str = module("markdown").render_markdown(doc)
        return markdown
    if fmt == "html":
        from .compiled import module

        page: str = module("html").render_html(doc, diagnostics)
        return page
    if fmt == "llm":
        from .llm import render_llm

        return render_llm(doc, source_name=source_name, budget=budget)
    raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
