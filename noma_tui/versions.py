"""What changed between the version on screen and the next one, so the panes redraw only that.

A tree row shows a block's kind, title or name, id, aliases, badge and duplicate flag
(`noma_tui.labels`). Between two versions with the same structure (the same blocks, in
the same places, with the same ids) a row can only look different when its block's text
changed, its badge changed or its id became (or stopped being) a duplicate. The text part
is the lines that differ: as the new lines were made from the shown ones (`relines`), else
as the engine's re-parse found them (its change value, `core.noma.change`), else the common
head and tail of the two line lists cut (compared in chunks, in C); a block changed when
its span meets the lines in between. That costs
the size of the change, never a label per block. (One thing names a block from outside
its span: frontmatter ``aliases:``; an edit there compares every row.)

Anything else (a block added, removed or moved, an id that changed) is a structure change:
the tree then rebuilds, keeping its cursor, expansion and scroll by id.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from core.noma.api import ChangeKind, Node, common_ends

from .arrangement import Region
from .document import ROOT, LoadedDocument


@dataclass(frozen=True, slots=True)
class Changes:
    """How ``new`` differs from ``base`` (the version the panes showed when it was made)."""

    base: LoadedDocument
    same_structure: bool
    rows: frozenset[int]  # blocks (indexes in the new version) whose row may look different
    lines: tuple[int, int, int]  # changed lines, 0-based: [a, old_end) became [a, new_end)
    # A change of structure confined to one run of blocks (`noma_tui.arrangement.Region`):
    # the tree replaces those rows; None: it rebuilds.
    region: Region | None = None

    def block_changed(self, new: LoadedDocument, block: int | None) -> bool:
        """Does the block view of ``block`` need redrawing (its text, span or badge)?"""
        if block is None or block == ROOT or not self.same_structure:
            return True
        if block in self.rows:
            return True
        old, now = self.base.blocks[block], new.blocks[block]
        return (old.line, old.end_line) != (now.line, now.end_line)


def changed_lines(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """``(a, old_end, new_end)``: ``old[a:old_end]`` became ``new[a:new_end]``, the rest is
    equal (the common head and tail)."""
    a, tail = common_ends(old, new)
    return a, len(old) - tail, len(new) - tail


def diff_versions(base: LoadedDocument, new: LoadedDocument) -> Changes:
    """Compare two versions of the same document (see the module docstring)."""
    relined = new.relined
    change = new.doc.change
    if relined is not None and relined[0] == base.sha256:
        lines = relined[1]  # found when the new lines were made from the base's
    elif (
        change is not None
        and change.kind is ChangeKind.SPLICE
        and change.leads(base.doc.serial, new.doc.serial)
    ):
        # Found by the engine's re-parse (`core.noma.change`): the lines it saw differ.
        lines = (change.edited_old.start, change.edited_old.end, change.edited_new.end)
    else:
        lines = changed_lines(base.lines.lines, new.lines.lines)
    same = (
        base.path == new.path
        and len(base.blocks) == len(new.blocks)
        and base.parents == new.parents
        and base.names == new.names
    )
    if not same:
        spliced = new.spliced
        if spliced is None or spliced[0] != base.sha256 or base.path != new.path:
            return Changes(base, False, frozenset(), lines)
        region = _narrow(base, new, spliced[1])
        return Changes(
            base, False, frozenset(_region_rows(base, new, region, lines)), lines, region
        )
    rows = set(_touched(new, lines[0], lines[2]))
    if lines[0] < max(_frontmatter_end(base), _frontmatter_end(new)):
        # Frontmatter ``aliases:`` name the root section from outside its span: a rare
        # edit, so every row is compared.
        rows.update(
            i
            for i, (a, b) in enumerate(zip(base.blocks, new.blocks, strict=True))
            if a is not b and _label_key(a) != _label_key(b)
        )
    for block in base.badges.keys() | new.badges.keys():
        if base.badges.get(block) != new.badges.get(block):
            rows.add(block)
    flipped = base.duplicate_ids ^ new.duplicate_ids
    if flipped:
        rows.update(i for i, name in enumerate(new.names) if name in flipped)
    return Changes(base, True, frozenset(rows), lines)


def _narrow(base: LoadedDocument, new: LoadedDocument, region: Region) -> Region:
    """Cut from both ends of ``region`` the top-level blocks whose rows would look the same
    (same subtree shape, kinds, titles, ids and aliases). The engine re-parses a few
    neighbours along with a change and copies every node after a change of line count
    (shifted spans); those keep their tree rows, renumbered."""
    at, x0, x1, d, path = region
    old_top = [c for c in (base.roots if at == ROOT else base.children[at]) if x0 <= c < x1]
    new_top = [c for c in (new.roots if at == ROOT else new.children[at]) if x0 <= c < x1 + d]
    i, j = len(old_top), len(new_top)
    while i and j and _same_subtree(base, old_top[i - 1], new, new_top[j - 1]):
        i, j = i - 1, j - 1
    h = 0
    while h < i and h < j and _same_subtree(base, old_top[h], new, new_top[h]):
        h += 1
    start = x0 if h == 0 else _end(base, old_top[h - 1])
    end = old_top[i] if i < len(old_top) else x1
    return Region(at, start, end, d, path)


def _end(version: LoadedDocument, block: int) -> int:
    """One past the last block inside ``block`` (pre-order)."""
    kids = version.children[block]
    while kids:
        block = kids[-1]
        kids = version.children[block]
    return block + 1


def _same_subtree(base: LoadedDocument, j: int, new: LoadedDocument, k: int) -> bool:
    size = _end(base, j) - j
    if _end(new, k) - k != size:
        return False
    ob, nb, op, np_ = base.blocks, new.blocks, base.parents, new.parents
    for t in range(size):
        a, b = ob[j + t], nb[k + t]
        if a is not b and _label_key(a) != _label_key(b):
            return False
        if t and op[j + t] - j != np_[k + t] - k:
            return False
    return True


def _region_rows(
    base: LoadedDocument, new: LoadedDocument, region: Region, lines: tuple[int, int, int]
) -> set[int]:
    """Rows (new indexes) that may look different after a change of structure in
    ``region``: its own blocks, the containers on its path, changed badges and duplicate
    flags (and, after a frontmatter edit, any row whose block shows something else)."""
    _at, x0, x1, d, path = region
    rows = set(path)
    rows.update(range(x0, x1 + d))

    def old_index(i: int) -> int | None:
        return i if i < x0 else (i - d if i >= x1 + d else None)

    moved = {b if b < x0 else b + d for b in base.badges if not x0 <= b < x1}
    for block in new.badges.keys() | moved:
        was = old_index(block)
        if was is not None and base.badges.get(was) != new.badges.get(block):
            rows.add(block)
    flipped = base.duplicate_ids ^ new.duplicate_ids
    if flipped:
        rows.update(i for i, name in enumerate(new.names) if name in flipped)
    if lines[0] < max(_frontmatter_end(base), _frontmatter_end(new)):
        for i, node in enumerate(new.blocks):
            was = old_index(i)
            if was is not None and _label_key(base.blocks[was]) != _label_key(node):
                rows.add(i)
    return rows


def _frontmatter_end(version: LoadedDocument) -> int:
    fm = version.doc.frontmatter
    return fm.end_line if fm is not None else 0


def _label_key(node: Node) -> tuple[object, ...]:
    """What a row shows of its block (`noma_tui.labels`), badge and duplicate flag aside."""
    return (type(node), getattr(node, "title", None), getattr(node, "name", None), node.id,
            tuple(node.aliases))  # fmt: skip


def _touched(new: LoadedDocument, a: int, end: int) -> list[int]:
    """Blocks of ``new`` whose span (0-based ``[line - 1, end_line)``) meets ``[a, end)``;
    for a pure deletion (``a == end``) the blocks that held the removed lines."""
    blocks, starts = new.blocks, new.starts
    if not starts:
        return []
    out: list[int] = []
    first = bisect_left(starts, a + 1)  # starts are 1-based lines
    # Blocks starting before the change meet it only if they contain line a: those are
    # the last block starting before it and its ancestors (blocks nest).
    k = first - 1
    while k != ROOT and k >= 0:
        if blocks[k].end_line > a:
            out.append(k)
        k = new.parents[k]
    stop = bisect_left(starts, end + 1)
    out.extend(range(first, stop))
    return out
