"""The Noma AST (shape of ``../shared/schemas/ast.schema.json``).

Plain slotted classes: a 5,000-section document builds ~100k of these, so construction
cost matters more than conveniences. Trees are read-only once built: a directive's
``attrs`` and ``raw_attrs`` are often one dict (`core.noma.attrs.read_attrs`), and
attribute keys and directive names are interned strings. Every node carries its 1-based
inclusive span (``line``..``end_line``, §6.3); spans are exact for Tier-1 documents.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from .attrs import Attrs
from .change import Change
from .diagnostics import Diagnostic

_SERIALS = itertools.count(1)


@contextlib.contextmanager
def gc_paused(*, promote: bool = False) -> Iterator[None]:
    """Trees have no reference cycles, so cyclic GC passes while one is built (a parse, a
    splice, the first read of a lazily copied version, an index) are pure cost.

    With ``promote``, the objects built meanwhile go straight to the oldest generation when
    the block ends. Without it, the first allocation after re-enabling sweeps the ~10^5
    fresh nodes as generation 0, later passes sweep them again as generation 1 (in
    `validate`, typically: ~40 ms of a 5k-section parse + validate), and only then do they
    rest in generation 2. Those young passes can never free anything here (the tree is
    acyclic: reference counting frees it), so skipping them is the generational scheme's
    own end state, reached without the scans. Full collections still scan the tree, as they
    scan every long-lived object: that cost is paid on CPython's normal schedule, not hidden.

    The promotion (`promote_fresh`: ``gc.freeze()`` then ``gc.unfreeze()``, two list
    splices, O(1)) moves every tracked object of the process, not just the tree: a cycle
    some other code made just before is then found by the next full collection rather than
    a young one, which delays, never loses, its collection. When someone froze objects on
    purpose it never unfreezes them (see there).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if promote:
            promote_fresh()
        if enabled:
            gc.enable()


_FREEZE_OWNED = False


def own_freezing(owned: bool) -> None:
    """A caller that freezes objects itself (``gc.freeze``: the app's idle collector) says
    so, and says so again once it has unfrozen them. While it owns the frozen set, it
    collects it from time to time (unfreeze, full collection, freeze), so `promote_fresh`
    may add to it but never unfreezes it."""
    global _FREEZE_OWNED
    _FREEZE_OWNED = owned


def promote_fresh() -> None:
    """Move every young object (a tree, an index just built) to where young collections no
    longer scan it: those can never free an acyclic tree (reference counting does), yet
    they would sweep its ~10^5 objects as generation 0, then again as generation 1
    (measured in the app: one generation-1 pass of 92 ms after an outside edit).

    Normally ``gc.freeze(); gc.unfreeze()`` (two list splices, O(1)) lands them in the
    oldest generation. That is skipped when someone froze objects on purpose, since the
    unfreeze would undo their freeze; a caller that owns the frozen set (`own_freezing`)
    gets them frozen instead, and collects them at its next full collection. That caller's
    set is never counted: ``gc.get_freeze_count`` walks every frozen object (~35 ms with a
    5,000-section document open in the app, paid by every parse, however small)."""
    if _FREEZE_OWNED:
        gc.freeze()
    elif gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


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
    # A copy moved by a line delta whose children are not made yet (`shifted`).
    _lazy: Any = field(default=None, init=False, repr=False)

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
    _lazy: Any = field(default=None, init=False, repr=False)

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
    _lazy: Any = field(default=None, init=False, repr=False)

    type = "directive"

    @property
    def children_nodes(self) -> list[Node]:
        return self.children

    def _json_fields(self, out: dict[str, Any]) -> None:
        out["name"] = self.name
        out["attrs"] = {k: v for k, v in self.attrs.items() if k != "id"}
        out["body"] = self.body
        out["children"] = [c.to_json() for c in self.children]


# Weak-referenceable: what is learnt from a tree and kept on it (`core.noma.memo`) refers
# back to it weakly, so the tree stays acyclic (see `gc_paused`).
@dataclass(slots=True, eq=False, weakref_slot=True)
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
    # Pre-order nodes and their parents, None for the document itself (see `walk`).
    _flat: tuple[list[Node], list[Node | None]] | None = field(default=None, repr=False)
    _id_nodes: list[Node] | None = field(default=None, repr=False)  # sections + directives
    _id_lines: list[int] | None = field(default=None, repr=False)  # their lines (ids.id_lines_of)
    _id_names: list[str | None] | None = field(default=None, repr=False)  # and their ids
    # The blocks among them that carry aliases, in line order, as the id pass gave them;
    # None where unknown (a spliced version), when the index looks at every block.
    _aliased: list[Node] | None = field(default=None, repr=False)
    # What modules learnt from this tree and keep on it (its scan, findings, outline, ...):
    # typed caches, each owned by one module (`core.noma.memo`; only that module reads it).
    _memos: dict[object, object] = field(default_factory=dict, repr=False)
    # What the re-parse that made this version changed from its base (`core.noma.change`):
    # None for a version parsed from scratch.
    change: Change | None = field(default=None, repr=False)
    # Names this version for a `Change` (which pair of versions it describes) without a
    # reference that would keep the base version alive. Unique within the process.
    serial: int = field(default_factory=_SERIALS.__next__, repr=False)

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

        The parser records this order as it builds the tree, so walking is a list scan. The
        recorded parents say None for the document: a tree that held a list holding its own
        root would be a reference cycle, freed only by the cyclic collector (whole trees of
        old versions left behind in a long-running process), not when its last user drops it.
        """
        if self._flat is None:
            # Walking a spliced version makes its lazily copied blocks (`shifted`): tens of
            # thousands of acyclic objects, which would only feed cyclic-GC passes.
            with gc_paused(promote=True):
                pairs = list(self._walk())
                self._flat = (
                    [n for n, _ in pairs],
                    [None if p is self else p for _, p in pairs],
                )
        nodes, parents = self._flat
        return zip(nodes, [self if p is None else p for p in parents], strict=True)

    def _walk(self) -> Iterator[tuple[Node, Node]]:
        stack: list[tuple[Node, Node]] = [(c, self) for c in reversed(self.children)]
        while stack:
            node, parent = stack.pop()
            yield node, parent
            kids = node.children_nodes
            if kids:
                stack.extend([(c, node) for c in reversed(kids)])


BLOCK_CONTAINERS = (Document, Section, Directive)

# -- moved copies (issue 14: an edit that changes the line count costs O(changed)) --------
#
# When a splice (`core.noma.incremental`) moves every block after the edit by ``delta``
# lines, the blocks directly in the changed containers are copied with their new spans,
# but what is below them is not: a copy's ``children`` (``items`` for a list) slot is left
# unset, and the first read of it (Python falls back to ``__getattr__`` for an unset slot)
# makes the moved copies of the children, one level, and stores them. A reader that never
# looks inside a block (a proof validated by splice, the structure guard) never pays for
# it; one that walks the whole tree pays what a full copy costs, once. The old version is
# never touched, so both versions stay what they were (immutable trees).
#
# A copy keeps ``_lazy`` (its origin and how far it moved) after its children are made: two
# copies of one origin hold the same subtree, moved by the difference of their lines, which
# lets a reader of two versions (the app's block arrangement) match them without looking
# inside (`origin`).

_LOCK = threading.Lock()  # two threads reading one copy's children get the same list


def _materialize(node: Node, name: str) -> Any:
    slot = "items" if type(node) is ListNode else "children"
    pending = object.__getattribute__(node, "_lazy") if name == slot else None
    if pending is None:
        raise AttributeError(f"{type(node).__name__!r} object has no attribute {name!r}")
    with _LOCK:
        try:
            return object.__getattribute__(node, slot)  # another thread made them
        except AttributeError:
            pass
        source, delta = pending
        made = [shifted(kid, delta) for kid in getattr(source, slot)]
        object.__setattr__(node, slot, made)
        return made


_HOOKED = False
_HOOK_LOCK = threading.Lock()


def _hook_unset_children() -> None:
    """Give the container classes the ``__getattr__`` that reads an unset ``children``
    (``items``) slot through `_materialize`, when the first moved copy is made rather than in
    their bodies. CPython 3.11 specialises attribute reads only on classes whose lookup is
    the generic one: with ``__getattr__`` defined, every ``node.attrs`` or ``node.id`` of a
    section, directive or list goes through the slow path (measured: 7% of a cold parse
    and validate, a fifth of the validator). A process that never splices a line-moving
    edit (every one-shot command, every cold open) never makes a copy and keeps the fast
    reads; no copy exists before its class has the hook."""
    global _HOOKED
    with _HOOK_LOCK:
        if not _HOOKED:
            for kind in (Section, Directive, ListNode):
                setattr(kind, "__getattr__", _materialize)  # noqa: B010 (mypy: no such method)
            _HOOKED = True


def origin(node: Node) -> Node:
    """The block ``node`` was copied from by `shifted` (through any chain of copies), or
    ``node`` itself. Two blocks with one origin hold the same subtree: the later one moved by
    the difference of their lines."""
    lazy = getattr(node, "_lazy", None)
    return node if lazy is None else lazy[0]


def moved_from(node: Node) -> tuple[Node, int] | None:
    """``(origin, delta)`` when ``node`` is a copy made by `shifted` (moved ``delta`` lines
    from `origin`), else None."""
    pending: tuple[Node, int] | None = getattr(node, "_lazy", None)
    return pending


def moves(blocks: list[Node]) -> list[tuple[Node, int] | None]:
    """`moved_from` of each of ``blocks`` (sections, directives or lists), in one C-level
    map: the app checks 20,000 siblings at a time this way."""
    return list(map(_PENDING, blocks))


def unread(node: Node) -> bool:
    """Is ``node`` a moved copy whose children (items, for a list) are not made yet?"""
    kind = type(node)
    if kind is not Section and kind is not Directive and kind is not ListNode:
        return False
    try:
        object.__getattribute__(node, "items" if kind is ListNode else "children")
    except AttributeError:
        return True
    return False


def shifted(node: Node, delta: int) -> Node:
    """``node`` moved ``delta`` lines down (up when negative): a leaf is copied whole, a
    container (section, directive, list) is copied without its children, which are made
    when first read (see above). A copy of a copy not yet read points at the original."""
    copy: Node = _SHIFT[type(node)](node, delta)
    return copy


def _pending(node: Any, delta: int) -> tuple[Node, int]:
    """What a moved copy of ``node`` records in ``_lazy`` (called only when one is made)."""
    if not _HOOKED:
        _hook_unset_children()
    lazy = node._lazy
    return (node, delta) if lazy is None else (lazy[0], lazy[1] + delta)


# One copier per kind, written out: attribute reads and writes on slotted objects are the
# fastest copy Python has (a generic loop over slot names costs three times as much).
def _shift_section(n: Any, d: int) -> Node:
    new = _new(Section)
    new.line = n.line + d
    new.end_line = n.end_line + d
    new.id = n.id
    new.aliases = n.aliases
    new.depth = n.depth
    new.level = n.level
    new.title = n.title
    new.attrs = n.attrs
    new.slug = n.slug
    new.in_directive = n.in_directive
    new._lazy = _pending(n, d)
    return new


def _shift_directive(n: Any, d: int) -> Node:
    new = _new(Directive)
    new.line = n.line + d
    new.end_line = n.end_line + d
    new.id = n.id
    new.aliases = n.aliases
    new.depth = n.depth
    new.name = n.name
    new.attrs = n.attrs
    new.raw_attrs = n.raw_attrs
    new.body = n.body
    new.colons = n.colons
    new.closed = n.closed
    new._lazy = _pending(n, d)
    return new


def _shift_list(n: Any, d: int) -> Node:
    new = _new(ListNode)
    new.line = n.line + d
    new.end_line = n.end_line + d
    new.id = n.id
    new.aliases = n.aliases
    new.depth = n.depth
    new.ordered = n.ordered
    new._lazy = _pending(n, d)
    return new


def _shift_text(n: Any, d: int) -> Node:  # paragraphs, list items, quotes
    new = _new(type(n))
    new.line = n.line + d
    new.end_line = n.end_line + d
    new.id = n.id
    new.aliases = n.aliases
    new.depth = n.depth
    new.content = n.content
    return new  # type: ignore[no-any-return]


def _copy_leaf(node: Any, delta: int) -> Node:
    new = _new(type(node))
    for slot in _SLOTS[type(node)]:
        object.__setattr__(new, slot, object.__getattribute__(node, slot))
    new.line = node.line + delta
    new.end_line = node.end_line + delta
    return new  # type: ignore[no-any-return]


def _slots(kind: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in reversed(kind.__mro__):
        for slot in getattr(klass, "__slots__", ()):
            if slot not in ("children", "items", "_lazy") and slot not in names:
                names.append(slot)
    return tuple(names)


_new = object.__new__
_PENDING = attrgetter("_lazy")
_LEAVES = (Paragraph, Code, ListItem, Quote, ThematicBreak, Table, Frontmatter)
_SLOTS: dict[type, tuple[str, ...]] = {
    kind: _slots(kind) for kind in (Section, Directive, ListNode, *_LEAVES)
}
_SHIFT: dict[type, Any] = {
    **{kind: _copy_leaf for kind in _LEAVES},
    Section: _shift_section,
    Directive: _shift_directive,
    ListNode: _shift_list,
    Paragraph: _shift_text,
    ListItem: _shift_text,
    Quote: _shift_text,
}
