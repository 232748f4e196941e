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
    text, dropped = _render_document(doc, keep_ids=False)
    if not dropped:
        return text
    from .parser import parse

    if _ids(parse(text, chapter=doc.chapter)) == _ids(doc):
        return text
    return _render_document(doc, keep_ids=True)[0]


def _ids(doc: Document) -> list[str | None]:
    return [node.id for node, _ in doc.walk() if isinstance(node, Section | Directive)]


def _render_document(doc: Document, *, keep_ids: bool) -> tuple[str, bool]:
    """The text, and whether a heading's explicit id was dropped (`render_noma`)."""
    out = _Blocks(keep_ids)
    out.add(doc.children, 0)
    blocks = out.blocks
    if blocks and blocks[0] == "---" and doc.frontmatter is None:
        blocks[0] = "***"  # a leading `---` would read as frontmatter
    text = "\n\n".join(blocks)
    if text:
        text += "\n"
    if doc.bom or text.startswith(BOM):
        # A first block that starts with U+FEFF would be read back as the byte-order mark
        # and lost: a mark of its own in front keeps it content.
        return BOM + text, out.dropped
    return text, out.dropped


def render_json(doc: Document) -> str:
    return json.dumps(doc.to_json(), ensure_ascii=False, indent=2) + "\n"


class _Blocks:
    """The blocks of a rendering, blank-line separated, in one flat list joined once.

    A section is its heading line followed by its children's blocks, with the same blank
    line between them as between top-level blocks, so its children go into the list they
    share with it (no string per section built and copied again by the enclosing join).
    A directive's body sits between its fences with single newlines, so it is joined on its
    own. ``dropped`` says whether a heading's explicit id was left out (`_heading_line`).
    """

    def __init__(self, keep_ids: bool) -> None:
        self.blocks: list[str] = []
        self.keep_ids = keep_ids
        self.dropped = False

    def add(self, children: list[Node], depth: int) -> None:
        blocks = self.blocks
        for node in children:
            if isinstance(node, Paragraph):
                blocks.append(node.content)
            elif isinstance(node, Section):
                blocks.append(self.heading_line(node))
                kids = node.children
                if kids:
                    self.add(kids, depth)
            elif isinstance(node, Directive):
                blocks.append(self.directive(node, depth))
            else:
                blocks.append(_render_leaf(node))

    def directive(self, node: Directive, depth: int) -> str:
        fence = ":" * (depth + 2)
        attrs = node.attrs
        opener = fence + node.name + format_attrs(attrs) if attrs else fence + node.name
        kids = node.children
        if not kids:
            return opener + "\n" + fence
        if len(kids) == 1:
            only = kids[0]
            if isinstance(only, Paragraph):
                return opener + "\n" + only.content + "\n" + fence
        inner = _Blocks(self.keep_ids)
        inner.add(kids, depth + 1)
        if inner.dropped:
            self.dropped = True
        return opener + "\n" + "\n\n".join(inner.blocks) + "\n" + fence

    def heading_line(self, section: Section) -> str:
        title = section.title
        attrs = section.attrs
        ident = section.id
        if not attrs and (ident is None or ident == section.slug):
            group = ""  # the common heading: nothing to write beside the title
        else:
            group, dropped = _heading_group(section, self.keep_ids)
            if dropped:
                self.dropped = True
        hashes = "#" * section.level
        if not title:
            # "# " alone is a paragraph; "# {}" reads back as a heading with an empty title
            return hashes + " " + (group or "{}")
        if not group:
            if split_trailing_group(title)[1] is not None:
                # a title ending in {...} keeps it as text only before an empty group
                return hashes + " " + title + " {}"
            return hashes + " " + title
        return hashes + " " + title + " " + group


def _heading_group(section: Section, keep_ids: bool) -> tuple[str, bool]:
    """The attribute group of a heading line, and whether an explicit id equal to the
    natural slug was left out of it."""
    attrs: Attrs = {}
    dropped = False
    if section.id is not None and section.id != section.slug and not section.explicit_id:
        attrs["id"] = section.id  # a suffixed implicit id is written out (interop)
    for key, value in section.attrs.items():
        if key == "id" and value == section.slug:
            dropped = True
            if not keep_ids:
                continue  # an explicit id equal to the natural slug is dropped
        attrs[key] = value
    return format_attrs(attrs), dropped


def _render_leaf(node: Node) -> str:
    """Any block other than a paragraph, a section or a directive."""
    if isinstance(node, Code):
        if node.content == "":
            return f"```{node.lang or ''}\n```"
        return f"```{node.lang or ''}\n{node.content}\n```"
    if isinstance(node, ListNode):
        if node.ordered:
            return "\n".join([f"{k}. {item.content}" for k, item in enumerate(node.items, 1)])
        return "\n".join(["- " + item.content for item in node.items])
    if isinstance(node, Quote):
        return "\n".join([f"> {line}" if line else ">" for line in node.content.split("\n")])
    if isinstance(node, Table):
        return _render_table(node)
    if isinstance(node, ThematicBreak):
        return "---"
    if isinstance(node, Frontmatter):
        return f"---\n{node.raw}\n---"
    raise TypeError(f"cannot render {node.type}")


def _render_table(table: Table) -> str:
    header = table.header
    width = len(header)
    align = table.align
    aligns = [align[col] if col < len(align) else None for col in range(width)]
    widths = [3 + (2 if a == "center" else 1 if a in ("left", "right") else 0) for a in aligns]
    rows = [header, *table.rows]
    for row in rows:
        for col, cell in enumerate(row[:width]):
            size = len(cell)
            if size > widths[col]:
                widths[col] = size
    seps = []
    for col in range(width):
        w = widths[col]
        a = aligns[col]
        if a == "center":
            seps.append(":" + "-" * (w - 2) + ":")
        elif a == "left":
            seps.append(":" + "-" * (w - 1))
        elif a == "right":
            seps.append("-" * (w - 1) + ":")
        else:
            seps.append("-" * w)
    out = []
    for row in rows:
        padded = [cell.ljust(widths[col]) for col, cell in enumerate(row[:width])]
        padded.extend([" " * widths[col] for col in range(len(padded), width)])
        out.append("| " + " | ".join(padded) + " |")
    out.insert(1, "| " + " | ".join(seps) + " |")
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
