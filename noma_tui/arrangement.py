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
what is below it is made when first read), and it says so in the value it hands back
(`core.noma.change`: the container path, the run's block range, the line delta). So the
blocks after the run are the old ones renumbered, and their nodes are not read; only the
run is arranged anew. It also says where that run is (`Region`), so the tree can replace
just those rows. A moved block's node is looked up from its parent when a pane first reads
it (`Blocks`), so an edit that moves 17,000 blocks makes none of them. Two versions that
are not one re-parse apart (several ops applied at once) are compared level by level
instead: descending while exactly one child differs, the blocks after the run are the same
nodes or moved copies of them (one origin, `nodes.origin`). When neither can be proven the
splice returns None and the caller arranges the whole tree; the result is the same
either way (a test compares them).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from itertools import compress
from operator import attrgetter, itemgetter, sub
from typing import Any, NamedTuple, TypeVar, overload

from core.noma.api import Change, ChangeKind, Directive, Document, Node, Section, moved_from, moves

_T = TypeVar("_T")

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
_IS_BLOCK = _BLOCKS.__contains__


def block_children(container: Document | Node) -> list[Node]:
    """The sections and directives directly in ``container``, in order."""
    children: list[Node] = container.children  # type: ignore[union-attr]
    # In C (a section may hold 20,000 children): the children whose type is a block's.
    return list(compress(children, map(_IS_BLOCK, map(type, children))))


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
    where they differ, or None when it has to be built whole.

    When ``doc`` was re-parsed from ``old_doc`` its change value (`core.noma.change`) says
    where: the container path, the run's blocks and the line delta are read from it. Two
    versions further apart (several ops applied between them) are compared level by level.
    """
    if doc is old_doc:
        return previous, Region(ROOT, 0, 0, 0, ())
    change = doc.change
    if change is not None and change.leads(old_doc.serial, doc.serial):
        if change.kind is not ChangeKind.SPLICE:
            return None
        found = _run_of(previous, doc, change)
        if found is None:
            return None
        at, path, new_run = found
        x0, x1 = change.old_blocks.start, change.old_blocks.end
        dl = change.line_delta
        made = _spliced(previous, doc, at, path, new_run, x0, x1, dl, [], False)
        if made[1].d != len(change.new_blocks) - len(change.old_blocks):
            raise AssertionError("a change value out of step with its tree")
        return made
    return _compared(previous, old_doc, doc)


def _run_of(
    previous: Arrangement, doc: Document, change: Change
) -> tuple[int, list[tuple[int, Node]], list[Node]] | None:
    """The block index of the change's container, its path (index, new node) and the new
    blocks directly in it that the change re-parsed; None when ``previous`` does not hold
    the container (not the arrangement the change started from)."""
    starts = previous.starts
    at = ROOT
    path: list[tuple[int, Node]] = []
    container: Document | Node = doc
    for line in change.container:
        index = bisect_left(starts, line)
        kids: list[Node] = container.children  # type: ignore[union-attr]
        k = bisect_left(kids, line, key=_LINE)
        if index == len(starts) or starts[index] != line or k == len(kids):
            return None
        container = kids[k]
        if type(container) is not Section or container.line != line:
            return None
        path.append((index, container))
        at = index
    kids = container.children  # type: ignore[union-attr]
    lo = bisect_left(kids, change.new_lines.start + 1, key=_LINE)
    hi = bisect_left(kids, change.new_lines.end + 1, key=_LINE)
    return at, path, [kid for kid in kids[lo:hi] if type(kid) in _BLOCKS]


def _compared(
    previous: Arrangement, old_doc: Document, doc: Document
) -> tuple[Arrangement, Region] | None:
    """`splice` for two versions with no change value between them: descend from the root
    while exactly one child differs; the blocks after the run at each level are the same
    nodes or moved copies of them (one origin, `nodes.origin`, and one line delta)."""
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
        tail, moved = _moved_tail(ob, nb, n - head, moved)
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
    # Moved away and back again (two splices apart): copies at the old lines, not the
    # old nodes, so the nodes below them are read from the new tree too.
    known = previous.blocks.known()
    copied = any(
        known[i] is not node for olds, news in tails for i, node in zip(olds, news, strict=True)
    )
    return _spliced(previous, doc, at, path, new_run, x0, x1, moved or 0, tails, copied)


def _spliced(
    previous: Arrangement,
    doc: Document,
    at: int,
    path: list[tuple[int, Node]],
    new_run: list[Node],
    x0: int,
    x1: int,
    dl: int,
    tails: list[tuple[list[int], list[Node]]],
    copied: bool,
) -> tuple[Arrangement, Region]:
    """The arrangement with the old blocks ``[x0, x1)`` inside block ``at`` replaced by the
    blocks of ``new_run``, those after moved by ``dl`` lines (their nodes read from
    ``tails`` where known, else from their parents when first read; with no line moved
    they are the old nodes, unless ``copied``)."""
    region = _Parts([], [], [], [], [])
    top: list[int] = []
    _visit(new_run, at, top, region, x0)
    d = len(region.nodes) - (x1 - x0)
    known = previous.blocks.known()
    # Each list is copied once and patched in place (a 70,000-entry list takes ~1.5 ms
    # per copy at 20,000 sections), or shared with the previous version when nothing in
    # it changed (an edit that keeps the blocks and their lines: arrangements are never
    # mutated once made).
    if dl or copied:
        nodes = known[:x0] + region.nodes + [None] * (len(known) - x1)
    else:
        nodes = _patched(known, x0, x1, region.nodes)
    for olds, news in tails:
        for i, node in zip(olds, news, strict=True):
            nodes[i + d] = node
    starts = previous.starts
    if dl:
        starts = starts[:x0] + region.starts + list(map(dl.__add__, starts[x1:]))
    elif starts[x0:x1] != region.starts:
        starts = _patched(starts, x0, x1, region.starts)
    parents = previous.parents
    if d:
        after = [p + d if p >= x1 else p for p in parents[x1:]]
        parents = parents[:x0] + region.parents + after
    elif parents[x0:x1] != region.parents:
        parents = _patched(parents, x0, x1, region.parents)
    children = previous.children
    if d:
        shifted = [list(map(d.__add__, kids)) if kids else kids for kids in children[x1:]]
        children = children[:x0] + region.children + shifted
    elif children[x0:x1] != region.children:
        children = _patched(children, x0, x1, region.children)
    names = previous.names
    if d or names[x0:x1] != region.names or any(names[i] != n.id for i, n in path):
        names = _patched(names, x0, x1, region.names)
    ancestors = tuple(index for index, _ in path)
    for index, node in path:
        nodes[index] = node
        if names is not previous.names:
            names[index] = node.id
        if d and index != at:
            children = children if children is not previous.children else list(children)
            children[index] = _renumbered(previous.children[index], x1, d)
    siblings = previous.roots if at == ROOT else previous.children[at]
    k0, k1 = bisect_left(siblings, x0), bisect_left(siblings, x1)
    rearranged = siblings[:k0] + top + _renumbered(siblings[k1:], x1, d)
    roots = previous.roots
    if at == ROOT:
        roots = rearranged if rearranged != roots else roots
    else:
        if rearranged != children[at]:
            children = children if children is not previous.children else list(children)
            children[at] = rearranged
        if d:
            roots = _renumbered(roots, x1, d)
    blocks = Blocks(doc, nodes, parents, children, roots)
    arranged = Arrangement(blocks, parents, children, roots, starts, names)
    return arranged, Region(at, x0, x1, d, ancestors)


def _patched(values: list[_T], x0: int, x1: int, run: list[_T]) -> list[_T]:
    """A copy of ``values`` with ``values[x0:x1]`` replaced by ``run``."""
    out = values.copy()
    out[x0:x1] = run
    return out


def _renumbered(indexes: list[int], x1: int, d: int) -> list[int]:
    """Sorted block ``indexes`` with those from ``x1`` on moved by ``d``."""
    if not d:
        return indexes[:]
    k = bisect_left(indexes, x1)
    return indexes[:k] + list(map(d.__add__, indexes[k:]))


_CHUNK = 512  # siblings checked per step of the tail's fast path
_LINE = attrgetter("line")
_ORIGIN = itemgetter(0)


def _moved_tail(
    ob: list[Node], nb: list[Node], room: int, moved: int | None
) -> tuple[int, int | None]:
    """How many trailing siblings (at most ``room``) of ``nb`` are those of ``ob`` moved by
    one line delta (``moved``, if already known), and that delta.

    A sibling ``w`` is ``o``'s subtree moved by ``delta`` lines when it is the same node
    (0) or a copy of the same origin (`nodes.origin`); anything else is not known unread.
    At 20,000 siblings a loop per sibling costs tens of milliseconds, so runs of them are
    checked a chunk at a time with C-level maps and list compares (nodes compare by
    identity); a chunk that fails is walked one sibling at a time to find where."""
    lo, ln = len(ob), len(nb)
    tail = 0
    while tail < room:
        step = min(_CHUNK, room - tail)
        olds, news = ob[lo - tail - step : lo - tail], nb[ln - tail - step : ln - tail]
        if moved in (None, 0) and olds == news:
            tail, moved = tail + step, 0
            continue
        if moved == 0:
            break
        lazies: list[Any] = moves(news)  # checked for None below
        if None in lazies or list(map(type, olds)) != list(map(type, news)):
            break
        was: list[Any] = moves(olds)
        if was.count(None) == step:
            origins = olds
        elif None in was:
            break
        else:
            origins = list(map(_ORIGIN, was))
        if list(map(_ORIGIN, lazies)) != origins:
            break
        deltas = set(map(sub, map(_LINE, news), map(_LINE, olds)))
        if len(deltas) != 1 or (moved is not None and moved not in deltas):
            break
        tail, moved = tail + step, deltas.pop()
    while tail < room:
        o, w = ob[-1 - tail], nb[-1 - tail]
        if o is w:
            delta = 0
        else:
            lazy = moved_from(w)
            if lazy is None or type(o) is not type(w):
                break
            prior = moved_from(o)
            if lazy[0] is not (o if prior is None else prior[0]):
                break
            delta = w.line - o.line
        if moved is None:
            moved = delta
        elif delta != moved:
            break
        tail += 1
    return tail, moved


def _subtree_end(arrangement: Arrangement, block: int) -> int:
    """One past the last block inside ``block`` (blocks are in pre-order)."""
    kids = arrangement.children[block]
    while kids:
        block = kids[-1]
        kids = arrangement.children[block]
    return block + 1
