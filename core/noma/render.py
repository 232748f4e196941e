"""``render --to noma``: a normalised source rendering of the AST (noma-interop "Round-trip").

This is the canonical form, not the patch engine: patches edit source bytes and never go
through here. The guarantee is ``parse(render_noma(parse(x)))`` equal to ``parse(x)`` in
`structure` (everything but spans and raw text).

Ids are never changed. The normal form drops a heading's explicit id when it equals the
title's slug (the reference tool's form). That is only safe when the heading gets that
slug back on re-parse; when it would not (the same explicit id twice, which ``check``
flags as a duplicate: ``## H {id="h"}`` twice would read back as ``h, h-2``), the document
is rendered with every explicit id kept as written, so the output names the same blocks as
the input, duplicate and all. Documents without such a dropped id pay nothing for the check.
"""

from __future__ import annotations

import json
from typing import Any

from .attrs import Attrs, format_attrs, normal_attrs, split_trailing_group
from .nodes import (
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
from .source import BOM


def render_noma(doc: Document) -> str:
    text = _render_document(doc, keep_ids=False)
    if not _drops_an_explicit_id(doc):
        return text
    from .parser import parse

    if _ids(parse(text, chapter=doc.chapter)) == _ids(doc):
        return text
    return _render_document(doc, keep_ids=True)


def _drops_an_explicit_id(doc: Document) -> bool:
    return any(
        isinstance(node, Section) and node.attrs.get("id") == node.slug for node, _ in doc.walk()
    )


def _ids(doc: Document) -> list[str | None]:
    return [node.id for node, _ in doc.walk() if isinstance(node, Section | Directive)]


def _render_document(doc: Document, *, keep_ids: bool) -> str:
    blocks = _render_children(doc.children, 0, keep_ids)
    if blocks and blocks[0] == "---" and doc.frontmatter is None:
        blocks[0] = "***"  # a leading `---` would read as frontmatter
    text = "\n\n".join(blocks)
    if text:
        text += "\n"
    if doc.bom or text.startswith(BOM):
        # A first block that starts with U+FEFF would be read back as the byte-order mark
        # and lost: a mark of its own in front keeps it content.
        return BOM + text
    return text


def render_json(doc: Document) -> str:
    return json.dumps(doc.to_json(), ensure_ascii=False, indent=2) + "\n"


def _render_children(children: list[Node], depth: int, keep_ids: bool) -> list[str]:
    return [_render(child, depth, keep_ids) for child in children]


def _render(node: Node, depth: int, keep_ids: bool) -> str:
    if isinstance(node, Paragraph):
        return node.content
    if isinstance(node, Section):
        head = _heading_line(node, keep_ids)
        if not node.children:
            return head
        return head + "\n\n" + "\n\n".join(_render_children(node.children, depth, keep_ids))
    if isinstance(node, Directive):
        fence = ":" * (depth + 2)
        opener = fence + node.name + format_attrs(node.attrs)
        inner = _render_children(node.children, depth + 1, keep_ids)
        if not inner:
            return opener + "\n" + fence
        return opener + "\n" + "\n\n".join(inner) + "\n" + fence
    if isinstance(node, Code):
        if node.content == "":
            return f"```{node.lang or ''}\n```"
        return f"```{node.lang or ''}\n{node.content}\n```"
    if isinstance(node, ListNode):
        if node.ordered:
            return "\n".join(f"{k}. {item.content}" for k, item in enumerate(node.items, 1))
        return "\n".join(f"- {item.content}" for item in node.items)
    if isinstance(node, Quote):
        return "\n".join(f"> {line}" if line.strip() else ">" for line in node.content.split("\n"))
    if isinstance(node, Table):
        return _render_table(node)
    if isinstance(node, ThematicBreak):
        return "---"
    if isinstance(node, Frontmatter):
        return f"---\n{node.raw}\n---"
    raise TypeError(f"cannot render {node.type}")


def _heading_line(section: Section, keep_ids: bool = False) -> str:
    attrs: Attrs = {}
    if section.id is not None and section.id != section.slug and not section.explicit_id:
        attrs["id"] = section.id  # a suffixed implicit id is written out (interop)
    for key, value in section.attrs.items():
        if key == "id" and value == section.slug and not keep_ids:
            continue  # an explicit id equal to the natural slug is dropped
        attrs[key] = value
    group = format_attrs(attrs)
    title = section.title
    if not title:
        # "# " alone is a paragraph; "# {}" reads back as a heading with an empty title
        return "#" * section.level + " " + (group or "{}")
    if not group and split_trailing_group(title)[1] is not None:
        group = "{}"  # a title ending in {...} keeps it as text only before an empty group
    return "#" * section.level + " " + title + (" " + group if group else "")


def _render_table(table: Table) -> str:
    width = len(table.header)
    rows = [table.header, *table.rows]
    widths = []
    for col in range(width):
        align = table.align[col] if col < len(table.align) else None
        colons = 2 if align == "center" else 1 if align in ("left", "right") else 0
        content = max(len(row[col]) if col < len(row) else 0 for row in rows)
        widths.append(max(content, 3 + colons))

    def line(cells: list[str]) -> str:
        padded = [(cells[c] if c < len(cells) else "").ljust(widths[c]) for c in range(width)]
        return "| " + " | ".join(padded) + " |"

    seps = []
    for col in range(width):
        w = widths[col]
        align = table.align[col] if col < len(table.align) else None
        if align == "center":
            seps.append(":" + "-" * (w - 2) + ":")
        elif align == "left":
            seps.append(":" + "-" * (w - 1))
        elif align == "right":
            seps.append("-" * (w - 1) + ":")
        else:
            seps.append("-" * w)
    out = [line(table.header), "| " + " | ".join(seps) + " |"]
    out.extend(line(row) for row in table.rows)
    return "\n".join(out)


def structure(node: Node) -> Any:
    """A node with spans and raw text removed: what the round-trip property compares."""
    out: dict[str, Any] = {"type": node.type, "id": node.id, "aliases": list(node.aliases)}
    if isinstance(node, Document):
        out["meta"] = node.meta
        out["children"] = [structure(c) for c in node.children]
    elif isinstance(node, Frontmatter):
        out["data"] = node.data
    elif isinstance(node, Section):
        out.update(level=node.level, title=node.title)
        out["attrs"] = {k: v for k, v in normal_attrs(node.attrs).items() if k != "id"}
        out["children"] = [structure(c) for c in node.children]
    elif isinstance(node, Directive):
        out.update(name=node.name, attrs=normal_attrs(node.attrs))
        out["children"] = [structure(c) for c in node.children]
    elif isinstance(node, Paragraph | Quote):
        out["content"] = node.content
    elif isinstance(node, Code):
        out.update(lang=node.lang, content=node.content)
    elif isinstance(node, ListNode):
        out["ordered"] = node.ordered
        out["items"] = [item.content for item in node.items]
    elif isinstance(node, Table):
        out.update(header=node.header, align=node.align, rows=node.rows)
    return out


# == The optional compiled accelerator. setup.py compiles this module's text ABOVE this line.
#
# As for the parser (see the end of `core.noma.parser`): setup.py copies the text above into
# ``_render_native`` (reading attributes with the compiled ``_attrs_native``) and compiles it
# with mypyc; the copy stands in only while ``render.py``, ``attrs.py`` and the compiled
# export sources on disk are the ones it was built from. The pure definitions stay in `PURE`.

ACCELERATED_NAMES = ("render_noma",)
PURE: dict[str, Any] = {name: globals()[name] for name in ACCELERATED_NAMES}


def _load() -> tuple[Any, str]:
    from .native_build import load_compiled

    return load_compiled("_render_native")


_native, ACCELERATOR = _load()
ACCELERATED = _native is not None
if _native is not None:
    globals().update({name: getattr(_native, name) for name in ACCELERATED_NAMES})
del _native
