"""``render --to llm``: a compact, deterministic context for a language model.

The document in order as Noma source with every id written out (heading ids included, so
a model can address any block in a patch op), attributes in canonical form, directive
bodies verbatim, frontmatter as one JSON line. Nothing depends on time or environment:
the same document gives the same bytes.

With a token budget, blocks are kept whole in priority order -- the outline (headings,
frontmatter) first, then summaries, decisions and claims, then evidence and risks, then
prose, then review traffic and bulky data -- and written back in document order; what was
left out is listed at the end by id (or line), so the model knows the context is partial.
Tokens are estimated at 4 characters each (no tokenizer dependency; documented as such).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..attrs import Attrs, format_attrs
from ..nodes import (
    Code,
    Directive,
    Document,
    Frontmatter,
    ListNode,
    Node,
    Paragraph,
    Quote,
    Section,
    Table,
    ThematicBreak,
)

CHARS_PER_TOKEN = 4
HEADER = "noma-context v1"

# Priority classes (lower is kept first). Anything not listed is class 4.
_PRIORITY: dict[str, int] = {
    "summary": 1,
    "abstract": 1,
    "decision": 1,
    "adr": 1,
    "claim": 1,
    "result": 1,
    "hypothesis": 1,
    "evidence": 2,
    "counterevidence": 2,
    "risk": 2,
    "assumption": 2,
    "limitation": 2,
    "open_question": 2,
    "agent_task": 2,
    "todo": 2,
    "instruction": 2,
    "warning": 2,
    "metric": 2,
    "computed_metric": 2,
    "comment": 5,
    "change_request": 5,
    "review": 5,
    "footnote": 5,
    "endnote": 5,
    "provenance": 5,
    "state_change": 5,
    "dataset": 6,
    "code": 6,
    "code_cell": 6,
    "output": 6,
    "html": 6,
    "svg": 6,
    "script": 6,
}
_PROSE = 3
_BULK = 6
MAX_LISTED = 40  # omitted blocks named one by one; the rest are counted


@dataclass(slots=True)
class Unit:
    """One whole block of the context: what the budget keeps or drops."""

    order: int
    priority: int
    text: str
    label: str  # how the omission note names it

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def estimate_tokens(text: str) -> int:
    """About 4 characters per token, plus one for the separating blank line."""
    return -(-len(text) // CHARS_PER_TOKEN) + 1


def render_llm(doc: Document, *, source_name: str = "", budget: int | None = None) -> str:
    """The context text. ``budget`` (tokens, >= 0) limits the blocks kept, whole."""
    units: list[Unit] = []
    _collect(doc.children, units)
    kept = units
    if budget is not None:
        kept = _fit(units, budget)
    chosen = sorted(kept, key=lambda u: u.order)
    body_tokens = sum(u.tokens for u in chosen)
    head = [HEADER]
    if source_name:
        head.append("source: " + "".join(c if c.isprintable() else "?" for c in source_name))
    head.append(f"blocks: {len(chosen)} of {len(units)}")
    head.append(f"tokens: ~{body_tokens} (4 characters per token)")
    parts = [" · ".join(head), *(u.text for u in chosen)]
    if len(chosen) < len(units):
        parts.append(_omitted(units, kept, budget))
    return "\n\n".join(parts) + "\n"


def _fit(units: list[Unit], budget: int) -> list[Unit]:
    """Greedy by (priority, document order): a block that does not fit is skipped and a
    smaller later one may still fit. Deterministic for a given document and budget."""
    left = budget
    kept = []
    for unit in sorted(units, key=lambda u: (u.priority, u.order)):
        if unit.tokens <= left:
            kept.append(unit)
            left -= unit.tokens
    return kept


def _omitted(units: list[Unit], kept: list[Unit], budget: int | None) -> str:
    kept_ids = {id(u) for u in kept}
    dropped = [u for u in units if id(u) not in kept_ids]
    tokens = sum(u.tokens for u in dropped)
    names = [u.label for u in dropped[:MAX_LISTED]]
    if len(dropped) > MAX_LISTED:
        names.append(f"and {len(dropped) - MAX_LISTED} more")
    why = f" to fit a budget of {budget} tokens" if budget is not None else ""
    return f"omitted{why}: {len(dropped)} block(s), ~{tokens} tokens: " + "; ".join(names)


def _collect(children: list[Node], out: list[Unit]) -> None:
    for node in children:
        if isinstance(node, Section) and not node.in_directive:
            out.append(Unit(len(out), 0, _heading(node), f"#{node.id} (heading)"))
            _collect(node.children, out)
            continue
        text = _text(node)
        if text is None:
            continue
        if isinstance(node, Frontmatter):
            priority = 0
        elif isinstance(node, Directive):
            priority = _PRIORITY.get(node.name, 4)
        elif isinstance(node, Code | Table):
            priority = _BULK if isinstance(node, Code) else _PROSE
        else:
            priority = _PROSE
        label = (
            f"#{node.id} ({node.name})"
            if isinstance(node, Directive) and node.id
            else f"{node.type} at line {node.line}"
        )
        out.append(Unit(len(out), priority, text, label))


def _heading(node: Section) -> str:
    attrs: Attrs = {}
    if node.id is not None:
        attrs["id"] = node.id
    attrs.update((k, v) for k, v in node.attrs.items() if k != "id")
    group = format_attrs(attrs)
    return "#" * node.level + " " + node.title + (" " + group if group else "")


def _text(node: Node) -> str | None:
    if isinstance(node, Paragraph):
        return node.content
    if isinstance(node, Frontmatter):
        return "frontmatter: " + json.dumps(node.data, ensure_ascii=False, default=str)
    if isinstance(node, Directive):
        fence = ":" * node.colons
        opener = fence + node.name + format_attrs(node.attrs)
        body = node.body.strip("\n")
        return f"{opener}\n{body}\n{fence}" if body else f"{opener}\n{fence}"
    if isinstance(node, Code):
        return f"```{node.lang or ''}\n{node.content}\n```"
    if isinstance(node, ListNode):
        return "\n".join(
            (f"{k}. " if node.ordered else "- ") + item.content
            for k, item in enumerate(node.items, 1)
        )
    if isinstance(node, Quote):
        return "\n".join(f"> {line}" if line else ">" for line in node.content.split("\n"))
    if isinstance(node, Table):
        rows = [node.header, ["---"] * len(node.header), *node.rows]
        return "\n".join("| " + " | ".join(r) + " |" for r in rows)
    if isinstance(node, ThematicBreak):
        return None
    if isinstance(node, Section):  # a heading inside a directive body: part of its text
        return None
    return None
