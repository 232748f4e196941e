"""The blocks of a document in order, with their parent/child links, as the panes index them.

`arrange` builds it from a tree by entering containers only (sections and directives live
only in the document, sections and directives): a spliced tree has no recorded walk, and
`Document.walk` would visit every paragraph and list item.

`splice` builds the next version's arrangement from the previous one in the size of the
change. The engine's splice shares every node outside the re-parsed run and copies the
containers on the path to it (architecture "Immutable trees"), so descending from the root
while exactly one child differs by identity finds the path; at the first level where more
(or other) children differ, the differing run is re-arranged and everything before and after
it is taken over as it was (indexes after it moved by the number of blocks the run gained
or lost). It also says where that run is (`Region`), so the tree can replace just those
rows. When the path cannot be proven it returns None and the caller arranges the whole
tree; the result is the same either way (a test compares them).
"""

from __future__ import annotations

from typing import NamedTuple

from core.noma.nodes import Directive, Document, Node, Section

ROOT = -1
"""The parent index of a top-level block (the document itself)."""


class Arrangement(NamedTuple):
    blocks: list[Node]
    parents: list[int]
    children: list[list[int]]
    roots: list[int]
    positions: dict[int, int]  # id(node) -> block index


class Region(NamedTuple):
    """Where a spliced arrangement differs from the one it came from: the blocks
    ``[x0, x1)`` inside container ``at`` (a block index, or ROOT) became ``[x0, x1 + d)``;
    blocks from ``x1`` on are the same nodes at index ``+ d``; the containers on the path
    down to ``at`` (``path``, outermost first, ``at`` included) are new copies."""

    at: int
    x0: int
    x1: int
    d: int
    path: tuple[int, ...]


def _visit(
    nodes: list[Node],
    parent: int,
    siblings: list[int],
    out: Arrangement,
    offset: int,
) -> None:
    blocks, parents, children, positions = out.blocks, out.parents, out.children, out.positions
    for node in nodes:
        if not isinstance(node, Section | Directive):
            continue
        i = offset + len(blocks)
        blocks.append(node)
        positions[id(node)] = i
        parents.append(parent)
        kids: list[int] = []
        children.append(kids)
        siblings.append(i)
        if node.children:
            _visit(node.children, i, kids, out, offset)


def arrange(doc: Document) -> Arrangement:
    out = Arrangement([], [], [], [], {})
    _visit(doc.children, ROOT, out.roots, out, 0)
    return out


def _is_block(node: Node) -> bool:
    return isinstance(node, Section | Directive)


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
    positions = previous.positions
    while True:
        ok: list[Node] = old_c.children  # type: ignore[union-attr]
        nk: list[Node] = new_c.children  # type: ignore[union-attr]
        n = min(len(ok), len(nk))
        head = 0
        while head < n and ok[head] is nk[head]:
            head += 1
        tail = 0
        while tail < n - head and ok[-1 - tail] is nk[-1 - tail]:
            tail += 1
        old_run, new_run = ok[head : len(ok) - tail], nk[head : len(nk) - tail]
        if (
            len(old_run) == 1
            and len(new_run) == 1
            and type(old_run[0]) is type(new_run[0])
            and _is_block(old_run[0])
            and old_run[0].line == new_run[0].line
            and id(old_run[0]) in positions
        ):
            index = positions[id(old_run[0])]
            path.append((index, new_run[0]))
            old_c, new_c, at = old_run[0], new_run[0], index
            continue
        break
    # Old blocks of the run: a contiguous range [x0, x1) in pre-order.
    old_blocks = [node for node in old_run if _is_block(node)]
    if old_blocks:
        x0 = positions.get(id(old_blocks[0]))
        if x0 is None:
            return None
    else:
        before = [node for node in ok[:head] if _is_block(node)]
        x0 = _subtree_end(previous, positions[id(before[-1])]) if before else at + 1
    after = next((node for node in ok[len(ok) - tail :] if _is_block(node)), None)
    if after is not None:
        x1 = positions.get(id(after))
        if x1 is None:
            return None
    else:
        x1 = _subtree_end(previous, at) if at != ROOT else len(previous.blocks)
    region = Arrangement([], [], [], [], {})
    top: list[int] = []
    _visit(new_run, at, top, region, x0)
    d = len(region.blocks) - (x1 - x0)
    old_blocks_after = previous.blocks[x1:]
    blocks = previous.blocks[:x0] + region.blocks + old_blocks_after
    parents_after = previous.parents[x1:]
    if d:
        parents_after = [p + d if p >= x1 else p for p in parents_after]
    parents = previous.parents[:x0] + region.parents + parents_after
    children_after = previous.children[x1:]
    if d:
        children_after = [[c + d for c in kids] for kids in children_after]
    children = previous.children[:x0] + region.children + children_after
    new_positions = dict(positions)
    for node in previous.blocks[x0:x1]:
        new_positions.pop(id(node), None)
    new_positions.update(region.positions)
    if d:
        new_positions.update(
            zip(map(id, old_blocks_after), range(x1 + d, len(blocks)), strict=True)
        )
    ancestors = tuple(index for index, _ in path)
    for index, node in path:
        new_positions.pop(id(previous.blocks[index]), None)
        blocks[index] = node
        new_positions[id(node)] = index
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
    return Arrangement(blocks, parents, children, roots, new_positions), Region(
        at, x0, x1, d, ancestors
    )


def _subtree_end(arrangement: Arrangement, block: int) -> int:
    """One past the last block inside ``block`` (blocks are in pre-order)."""
    kids = arrangement.children[block]
    while kids:
        block = kids[-1]
        kids = arrangement.children[block]
    return block + 1
