"""What changed between the version on screen and the next one, so the panes redraw only that.

A tree row shows a block's kind, title or name, id, aliases, badge and duplicate flag
(`noma_tui.labels`). Between two versions with the same structure (the same blocks, in
the same places, with the same ids) a row can only look different when its block's text
changed, its badge changed or its id became (or stopped being) a duplicate. The text part
is found from the lines: the common head and tail of the two line lists are cut (compared
in chunks, in C), and a block changed when its span meets the lines in between. That costs
the size of the change, never a label per block. (One thing names a block from outside
its span: frontmatter ``aliases:``; an edit there compares every row.)

Anything else (a block added, removed or moved, an id that changed) is a structure change:
the tree then rebuilds, keeping its cursor, expansion and scroll by id.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from core.noma.nodes import Node

from .document import ROOT, LoadedDocument

_CHUNK = 2048


@dataclass(frozen=True, slots=True)
class Changes:
    """How ``new`` differs from ``base`` (the version the panes showed when it was made)."""

    base: LoadedDocument
    same_structure: bool
    rows: frozenset[int]  # blocks (indexes in the new version) whose row may look different
    lines: tuple[int, int, int]  # changed lines, 0-based: [a, old_end) became [a, new_end)

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
    limit = min(len(old), len(new))
    a = 0
    while a < limit:
        b = min(a + _CHUNK, limit)
        if old[a:b] == new[a:b]:
            a = b
            continue
        while old[a] == new[a]:
            a += 1
        break
    tail = 0
    room = limit - a
    while tail < room:
        step = min(_CHUNK, room - tail)
        lo_old, lo_new = len(old) - tail - step, len(new) - tail - step
        if old[lo_old : len(old) - tail] == new[lo_new : len(new) - tail]:
            tail += step
            continue
        while old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
            tail += 1
        break
    return a, len(old) - tail, len(new) - tail


def diff_versions(base: LoadedDocument, new: LoadedDocument) -> Changes:
    """Compare two versions of the same document (see the module docstring)."""
    lines = changed_lines(base.lines.lines, new.lines.lines)
    same = (
        base.path == new.path
        and len(base.blocks) == len(new.blocks)
        and base.parents == new.parents
        and all(a is b or a.id == b.id for a, b in zip(base.blocks, new.blocks, strict=True))
    )
    if not same:
        return Changes(base, False, frozenset(), lines)
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
        rows.update(i for i, n in enumerate(new.blocks) if n.id in flipped)
    return Changes(base, True, frozenset(rows), lines)


def _frontmatter_end(version: LoadedDocument) -> int:
    fm = version.doc.frontmatter
    return fm.end_line if fm is not None else 0


def _label_key(node: Node) -> tuple[object, ...]:
    """What a row shows of its block (`noma_tui.labels`), badge and duplicate flag aside."""
    return (type(node), getattr(node, "title", None), getattr(node, "name", None), node.id,
            tuple(node.aliases))  # fmt: skip


def _start(node: Node) -> int:
    return node.line - 1


def _touched(new: LoadedDocument, a: int, end: int) -> list[int]:
    """Blocks of ``new`` whose span (0-based ``[line - 1, end_line)``) meets ``[a, end)``;
    for a pure deletion (``a == end``) the blocks that held the removed lines."""
    blocks = new.blocks
    if not blocks:
        return []
    out: list[int] = []
    first = bisect_left(blocks, a, key=_start)
    # Blocks starting before the change meet it only if they contain line a: those are
    # the last block starting before it and its ancestors (blocks nest).
    k = first - 1
    while k != ROOT and k >= 0:
        if blocks[k].end_line > a:
            out.append(k)
        k = new.parents[k]
    stop = bisect_left(blocks, end, key=_start)
    out.extend(range(first, stop))
    return out
