"""Random edits for the app's incremental tests: line-level changes that keep, add or
remove blocks (headings, directives, stray closers), applied to generated memos and the
demo documents."""

from __future__ import annotations

import random
from pathlib import Path

from bench.generate import generate
from core.noma.nodes import Document, unread
from noma_tui.demo import DEMO_SOURCE

EDITS = [
    "Plain text that changed.",
    "",
    "## A new heading",
    '::note{id="n-new"}\nInside.\n::',
    "- a list item",
    "::",
    "# Top heading",
]


def random_edit(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    kind = rng.randrange(4)
    if kind == 0:  # change a line in place (line count kept)
        lines[i] = lines[i] + " edited" if lines[i].strip() else lines[i]
        if lines[i].startswith("::") and "{" in lines[i]:
            lines[i] = lines[i].replace("}", ' extra="1"}', 1)
    elif kind == 1:
        lines[i:i] = rng.choice(EDITS).split("\n")
    elif kind == 2:
        del lines[i : i + rng.randrange(1, 3)]
    else:
        lines[i] = rng.choice(EDITS).split("\n")[0]
    return "\n".join(lines)


def sample_texts() -> list[str]:
    texts = [generate(40, seed=3)]
    texts += [p.read_text("utf-8") for p in sorted(Path(DEMO_SOURCE).glob("*.noma"))]
    return texts


def unread_count(doc: Document) -> int:
    """Moved copies whose children were never made (`nodes.unread`), reachable without
    making any: what an O(change) reader of a spliced version leaves unread."""
    count = 0
    stack = list(doc.children)
    while stack:
        node = stack.pop()
        if unread(node):
            count += 1
        elif hasattr(node, "children"):
            stack.extend(node.children)
    return count
