"""The Noma AST (shape of ``../shared/schemas/ast.schema.json``).

Plain slotted classes: a 5,000-section document builds ~100k of these, so construction
cost matters more than conveniences. Every node carries its 1-based inclusive span
(``line``..``end_line``, §6.3); spans are exact for Tier-1 documents.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .attrs import Attrs
from .diagnostics import Diagnostic


@dataclass(slots=True, eq=False)
class Node:
    line: int
    end_line: int
    id: str | None = field(default=None, kw_only=True)
    # A shared empty tuple until aliases are assigned: saves a list per node on parse.
    aliases: Sequence[str] = field(default=(), kw_only=True)
    # Blocks (sections, directives): how many open containers hold it (1 = top level).
    depth: int = field(default=0, kw_only=True)

    type = "node"

    @property
    def children_nodes(self) -> list[Node]:
        """Block children in document order (list items for a list)."""
        return []

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.id is not None:
            out["id"] = self.id
        if self.aliases:
            out["aliases"] = list(self.aliases)
        out["pos"] = {"line": self.line, "column": 1}
        out["endLine"] = self.end_line
        self._json_fields(out)
        return out

    def _json_fields(self, out: dict[str, Any]) -> None:
        pass


@dataclass(slots=True, eq=False)
class Frontmatter(Node):
    data: dict[str, Any]
    raw: str

    type = "frontmatter"

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["data"] = self.data
        out["raw"] = self.raw


@dataclass(slots=True, eq=False)
class Section(Node):
    """A heading section (``level`` 1-6). Inside a directive body it has no children."""

    level: int
    title: str
    children: list[Node]
    attrs: Attrs = field(default_factory=dict)
    slug: str = ""  # the natural slug of the title, before suffixing
    in_directive: bool = False

    type = "section"

    @property
    def children_nodes(self) -> list[Node]:
        return self.children

    @property
    def explicit_id(self) -> bool:
        return "id" in self.attrs

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["level"] = self.level
        out["title"] = self.title
        attrs = {k: v for k, v in self.attrs.items() if k not in ("id", "aliases")}
        if attrs:
            out["attrs"] = attrs
        out["children"] = [c.to_json() for c in self.children]


@dataclass(slots=True, eq=False)
class Paragraph(Node):
    content: str

    type = "paragraph"

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["content"] = self.content


@dataclass(slots=True, eq=False)
class Code(Node):
    lang: str | None
    content: str
    closed: bool = True

    type = "code"

    def _json_fields(self, out: dict[str, Any]) -> None:
        if self.lang:
            out["lang"] = self.lang
        out["content"] = self.content


@dataclass(slots=True, eq=False)
class ListItem(Node):
    content: str

    type = "list_item"

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["content"] = self.content


@dataclass(slots=True, eq=False)
class ListNode(Node):
    ordered: bool
    items: list[ListItem]

    type = "list"

    @property
    def children_nodes(self) -> list[Node]:
        return list(self.items)

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["ordered"] = self.ordered
        out["items"] = [i.to_json() for i in self.items]


@dataclass(slots=True, eq=False)
class Quote(Node):
    content: str

    type = "quote"

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["content"] = self.content


@dataclass(slots=True, eq=False)
class ThematicBreak(Node):
    type = "thematic_break"


@dataclass(slots=True, eq=False)
class Table(Node):
    header: list[str]
    align: list[str | None]
    rows: list[list[str]]

    type = "table"

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["header"] = list(self.header)
        out["align"] = list(self.align)
        out["rows"] = [list(r) for r in self.rows]


@dataclass(slots=True, eq=False)
class Directive(Node):
    """``::name{attrs}`` ... ``::``; ``colons`` is the fence width as written."""

    name: str
    attrs: Attrs
    raw_attrs: dict[str, str]
    body: str
    children: list[Node]
    colons: int = 2
    closed: bool = True

    type = "directive"

    @property
    def children_nodes(self) -> list[Node]:
        return self.children

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["name"] = self.name
        out["attrs"] = {k: v for k, v in self.attrs.items() if k != "id"}
        out["body"] = self.body
        out["children"] = [c.to_json() for c in self.children]


@dataclass(slots=True, eq=False)
class Document(Node):
    children: list[Node]
    meta: dict[str, Any] = field(default_factory=dict)
    frontmatter: Frontmatter | None = None
    bom: bool = False
    line_count: int = 0
    notes: list[Diagnostic] = field(default_factory=list)  # parser recovery notes
    # (line, group text) of attribute groups the reader had to skip text in (validator)
    attr_problems: list[tuple[int, str]] = field(default_factory=list)
    chapter: str | None = None  # book-mode chapter slug, when parsed as a chapter
    _index: Any = field(default=None, repr=False)
    _flat: tuple[list[Node], list[Node]] | None = field(default=None, repr=False)
    _id_nodes: list[Node] | None = field(default=None, repr=False)  # sections + directives
    _outline: Any = field(default=None, repr=False)  # the structure guard's block outline
    _scan: Any = field(default=None, repr=False)  # the validator's walk (validate.scan)
    # (old outline entries, j0, j1, j1 new) when spliced from a version whose outline was
    # known: entries before j0 and from j1 (old numbering) are unchanged (patch.guard).
    _splice: Any = field(default=None, repr=False)
    # (profiles, findings) of the validator's per-block rules (validate.block_rules), and
    # how to splice them from the base version: (profiles, base findings, run scan, r0,
    # r1, delta).
    _block_diags: Any = field(default=None, repr=False)
    _block_recipe: Any = field(default=None, repr=False)

    type = "document"

    @property
    def children_nodes(self) -> list[Node]:
        return self.children

    @property
    def recovered(self) -> bool:
        """Tier 2 (§6.2): recovery was needed, so spans are hints only."""
        return any(n.severity == "error" for n in self.notes)

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["meta"] = self.meta
        out["children"] = [c.to_json() for c in self.children]

    def walk(self) -> Iterator[tuple[Node, Node]]:
        """Every node below the document, pre-order, with its parent (list items too).

        The parser records this order as it builds the tree, so walking is a list scan.
        """
        if self._flat is None:
            pairs = list(self._walk())
            self._flat = ([n for n, _ in pairs], [p for _, p in pairs])
        return zip(*self._flat, strict=True)

    def _walk(self) -> Iterator[tuple[Node, Node]]:
        stack: list[tuple[Node, Node]] = [(c, self) for c in reversed(self.children)]
        while stack:
            node, parent = stack.pop()
            yield node, parent
            kids = node.children_nodes
            if kids:
                stack.extend([(c, node) for c in reversed(kids)])


BLOCK_CONTAINERS = (Document, Section, Directive)
