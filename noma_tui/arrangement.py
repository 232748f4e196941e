"""The blocks of a document in order, with their parent/child links, as the panes index them.

`arrange` builds it from a tree by entering containers only (sections and directives live
only in the document, sections and directives): a spliced tree has no recorded walk, and
`Document.walk` would visit every paragraph and list item. The blocks are the engine's
block list (`core.noma.ids.id_nodes_of`): sections and directives in pre-order, so no two
share a start line, and a block is found by its line (``starts``) or its id (``names``).

`splice` builds the next version's arrangement from the previous one in the size of the
change. The engine's splice shares every node before the re-parsed run, copies the
containers on the path to it (architecture "Immutable trees"), and after it either shares
the blocks (no line moved) or copies the top of each moved block lazily (`nodes.shifted`:
what is below it is made when first read). So, descending from the root while exactly one
child differs, the blocks after the run at each level are the same nodes or moved copies
of them (one origin, `nodes.origin`, and one line delta): their rows, links and ids are
the old ones renumbered, and their nodes are not read. Only the run between is arranged
anew. It also says where that run is (`Region`), so the tree can replace just those rows.
A moved block's node is looked up from its parent when a pane first reads it (`Blocks`),
so an edit that moves 17,000 blocks makes none of them. When the path cannot be proven
the splice returns None and the caller arranges the whole tree; the result is the same
either way (a test compares them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple, overload

from core.noma.nodes import Directive, Document, Node, Section

ROOT = -1
"""The parent index of a top-level block (the document itself)."""


class Blocks(Sequence[Node]):
    """The blocks of one version in pre-order. A block moved by a splice is not looked at
    until read: its entry is None, and the first read takes it from its parent's children
    (the parent's own entry made the same way, up to one that is known), filling every
    sibling at once. Two threads reading at once fill in the same nodes (a copy makes its
    children once, `nodes._materialize`), so the race is harmless."""

    __slots__ = ("_children", "_doc", "_nodes", "_parents", "_roots")

    def __init__(
        self,
        doc: Document,
        nodes: list[Node | None],
        parents: list[int],
        children: list[list[int]],
        roots: list[int],
    ) -> None:
        self._doc = doc
        self._nodes = nodes
        self._parents = parents
        self._children = children
        self._roots = roots

    def __len__(self) -> int:
        return len(self._nodes)

    @overload
    def __getitem__(self, i: int) -> Node: ...

    @overload
    def __getitem__(self, i: slice) -> list[Node]: ...

    def __getitem__(self, i: int | slice) -> Node | list[Node]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self._nodes)))]
        node = self._nodes[i]
        if node is None:
            node = self._resolve(i if i >= 0 else i + len(self._nodes))
        return node

    def __iter__(self) -> Iterator[Node]:
        nodes = self._nodes
        for i in range(len(nodes)):
            node = nodes[i]
            yield node if node is not None else self._resolve(i)

    def known(self) -> list[Node | None]:
        """The entries as they are (None: not read yet): for splicing, never mutate."""
        return self._nodes

    def _resolve(self, i: int) -> Node:
        nodes, parents = self._nodes, self._parents
        chain = []
        k = i
        while k != ROOT and nodes[k] is None:
            chain.append(k)
            k = parents[k]
        for k in reversed(chain):
            if nodes[k] is not None:  # filled with a sibling lower in the chain
                continue
            parent = parents[k]
            container = self._doc if parent == ROOT else nodes[parent]
            slots = self._roots if parent == ROOT else self._children[parent]
            kids = block_children(container)  # type: ignore[arg-type]
            if len(kids) != len(slots):
                raise AssertionError("a block arrangement out of step with its tree")
            for index, kid in zip(slots, kids, strict=True):
                nodes[index] = kid
        node = nodes[i]
        assert node is not None
        return node


class Arrangement(NamedTuple):
    blocks: Blocks
    parents: list[int]
    children: list[list[int]]
    roots: list[int]
    starts: list[int]  # each block's first line (1-based): distinct and increasing
    names: list[str | None]  # each block's canonical id


class Region(NamedTuple):
    """Where a spliced arrangement differs from the one it came from: the blocks
    ``[x0, x1)`` inside container ``at`` (a block index, or ROOT) became ``[x0, x1 + d)``;
    blocks from ``x1`` on are the same blocks at index ``+ d`` (the same nodes, or copies
    moved by a line delta with the same rows); the containers on the path down to ``at``
    (``path``, outermost first, ``at`` included) are new copies."""

    at: int
    x0: int
    x1: int
    d: int
    path: tuple[int, ...]


_BLOCKS = frozenset({Section, Directive})


def block_children(container: Document | Node) -> list[Node]:
    """The sections and directives directly in ``container``, in order."""
    blocks = _BLOCKS
    return [c for c in container.children if type(c) in blocks]  # type: ignore[union-attr]


class _Parts(NamedTuple):
    nodes: list[Node | None]
    parents: list[int]
    children: list[list[int]]
    starts: list[int]
    names: list[str | None]


def _visit(nodes: list[Node], parent: int, siblings: list[int], out: _Parts, offset: int) -> None:
    blocks, parents, children, starts, names = out
    for node in nodes:
        kind = type(node)
        if kind is not Section and kind is not Directive:
            continue
        i = offset + len(blocks)
        blocks.append(node)
        parents.append(parent)
        starts.append(node.line)
        names.append(node.id)
        kids: list[int] = []
        children.append(kids)
        siblings.append(i)
        if node.children:  # type: ignore[attr-defined]
            _visit(node.children, i, kids, out, offset)  # type: ignore[attr-defined]


def arrange(doc: Document) -> Arrangement:
    out = _Parts([], [], [], [], [])
    roots: list[int] = []
    _visit(doc.children, ROOT, roots, out, 0)
    blocks = Blocks(doc, out.nodes, out.parents, out.children, roots)
    return Arrangement(blocks, out.parents, out.children, roots, out.starts, out.names)


def splice(
    previous: Arrangement, old_doc: Document, doc: Document
) -> tuple[Arrangement, Region] | None:
    """The arrangement of ``doc`` from ``previous`` (the arrangement of ``old_doc``) and
    where they differ, or None when it has to be built whole."""
    if doc is old_doc:
        return previous, Region(ROOT, 0, 0, 0, ())
    old_c: Document | Node = old_doc
    new_c: Document | Node = doc
    at = ROOT  # block index of the container (ROOT: the document)
    path: list[tuple[int, Node]] = []  # ancestors of the run: (index, new node)
    tails: list[tuple[list[int], list[Node]]] = []  # per level: old indexes, new nodes
    moved: int | None = None  # the line delta of every block after the run
    while True:
        ob, nb = block_children(old_c), block_children(new_c)
        slots = previous.roots if at == ROOT else previous.children[at]
        if len(ob) != len(slots):
            return None  # not the tree this arrangement was made from
        n = min(len(ob), len(nb))
        head = 0
        while head < n and ob[head] is nb[head]:
            head += 1
        tail = 0
        while tail < n - head:  # every later sibling: kept inline, no call per block
            # ``w`` is ``o``'s subtree moved by ``delta`` lines: the same node (0), or a
            # copy of one origin (`nodes.origin`); anything else is not known unread.
            o, w = ob[-1 - tail], nb[-1 - tail]
            if o is w:
                delta = 0
            else:
                lazy = getattr(w, "_lazy", None)
                if lazy is None or type(o) is not type(w):
                    break
                was = getattr(o, "_lazy", None)
                if lazy[0] is not (o if was is None else was[0]):
                    break
                delta = w.line - o.line
            if moved is None:
                moved = delta
            elif delta != moved:
                break
            tail += 1
        if tail:
            tails.append((slots[len(ob) - tail :], nb[len(nb) - tail :]))
        old_run, new_run = ob[head : len(ob) - tail], nb[head : len(nb) - tail]
        if (
            len(old_run) == 1
            and len(new_run) == 1
            and type(old_run[0]) is type(new_run[0])
            and old_run[0].line == new_run[0].line
        ):
            index = slots[head]
            path.append((index, new_run[0]))
            old_c, new_c, at = old_run[0], new_run[0], index
            continue
        break
    # Old blocks of the run: a contiguous range [x0, x1) in pre-order.
    if old_run:
        x0 = slots[head]
    elif head:
        x0 = _subtree_end(previous, slots[head - 1])
    else:
        x0 = at + 1
    if tail:
        x1 = slots[len(ob) - tail]
    else:
        x1 = _subtree_end(previous, at) if at != ROOT else len(previous.blocks)
    region = _Parts([], [], [], [], [])
    top: list[int] = []
    _visit(new_run, at, top, region, x0)
    d = len(region.nodes) - (x1 - x0)
    dl = moved or 0
    known = previous.blocks.known()
    after = len(known) - x1
    nodes = known[:x0] + region.nodes + (known[x1:] if not dl else [None] * after)
    for olds, news in tails:
        for i, node in zip(olds, news, strict=True):
            nodes[i + d] = node
    starts_after = previous.starts[x1:]
    starts = (
        previous.starts[:x0]
        + region.starts
        + ([s + dl for s in starts_after] if dl else starts_after)
    )
    names = previous.names[:x0] + region.names + previous.names[x1:]
    parents_after = previous.parents[x1:]
    if d:
        parents_after = [p + d if p >= x1 else p for p in parents_after]
    parents = previous.parents[:x0] + region.parents + parents_after
    children_after = previous.children[x1:]
    if d:
        children_after = [[c + d for c in kids] for kids in children_after]
    children = previous.children[:x0] + region.children + children_after
    ancestors = tuple(index for index, _ in path)
    for index, node in path:
        nodes[index] = node
        names[index] = node.id
        if d and index != at:
            children[index] = [c + d if c >= x1 else c for c in previous.children[index]]
    siblings = previous.roots if at == ROOT else previous.children[at]
    rearranged = [i for i in siblings if i < x0] + top + [i + d for i in siblings if i >= x1]
    roots = previous.roots
    if at == ROOT:
        roots = rearranged
    else:
        children[at] = rearranged
        if d:
            roots = [r + d if r >= x1 else r for r in roots]
    blocks = Blocks(doc, nodes, parents, children, roots)
    arranged = Arrangement(blocks, parents, children, roots, starts, names)
    return arranged, Region(at, x0, x1, d, ancestors)


def _subtree_end(arrangement: Arrangement, block: int) -> int:
    """One past the last block inside ``block`` (blocks are in pre-order)."""
    kids = arrangement.children[block]
    while kids:
        block = kids[-1]
        kids = arrangement.children[block]
    return block + 1
