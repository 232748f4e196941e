"""The structure guard: an op may change only the structure it asked for.

Each op checks its own values (`opener.render_attr`, `table_rows.checked_row`, ...); this is
the net behind them, run on every applied op of a Tier-1 document (one the parser read
without recovery, §6.1). The block outline of a document is its pre-order list of blocks
(heading sections and directives) as ``(id, name, depth)``. Between the outline before and
after the op, everything outside one changed window must be identical, and the window may
hold only what the op itself wrote (its record's `ops_catalog.Outline` rule):

- ops that edit inside a block (attributes, titles, cells, rows, columns, resolve) change
  no outline entry at all;
- ``add_block`` and the review ops add exactly the blocks of their content (plus the new
  review block); ``replace_block`` and ``replace_body`` swap the old block's (or body's)
  blocks for the content's; ``delete_block`` removes the target's blocks;
- ``move_block`` keeps the same blocks, and ``rename_id`` the same outline with ``from``
  renamed ``to`` (and headings whose ``[[from]]`` link it retargeted, as the reference does).

The post-state must also parse without recovery notes. A Tier-2 document (one that already
needed recovery) is left to today's behaviour: its spans are hints only (§6.2).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..change import ChangeKind
from ..ids import id_nodes_of
from ..memo import Memo
from ..nodes import Directive, Document, Node, Section, gc_paused
from ..parser import parse
from .blocks import content_lines
from .errors import INVALID_CONTENT, PatchError
from .ops_catalog import CATALOG, Outline

Entry = tuple[str | None, str, int]
# The outline of a document (entries, and their blocks: None until first asked on a
# spliced version whose blocks are not made yet). Only this module reads or writes it.
_OUTLINE: Memo[tuple[list[Entry], list[Node] | None]] = Memo("structure guard outline")


def _is_block(node: Node) -> bool:
    return isinstance(node, Directive | Section)


def outline(doc: Document) -> tuple[list[Entry], list[Node]]:
    """The document's blocks in pre-order as ``(id, name, depth)``, and the nodes.

    Built from the id pass's line-ordered block list and the depth the parser recorded, so
    it costs one short loop (the warm path caches it on the document it keeps).
    """
    cached = _OUTLINE.get(doc)
    if cached is not None:
        kept, made = cached
        if made is None:  # spliced entries, blocks not made yet (`nodes.shifted`)
            made = id_nodes_of(doc)
            _OUTLINE.put(doc, (kept, made))
        return kept, made
    nodes = id_nodes_of(doc)
    with gc_paused():  # 17k new tuples would trigger full collections of a 100k-node tree
        entries = _entries(nodes)
    _OUTLINE.put(doc, (entries, nodes))
    return entries, nodes


def _entries(nodes: list[Node]) -> list[Entry]:
    """The outline entries of ``nodes`` (sections and directives), in order."""
    return [
        (n.id, n.name if isinstance(n, Directive) else _LEVELS[n.level], n.depth)  # type: ignore[attr-defined]
        for n in nodes
    ]


def splice_outline(
    old: Document, new: Document, j0: int, j1: int, run: list[Node]
) -> list[Entry] | None:
    """Give a spliced ``new`` the outline of ``old`` with its entries ``j0..j1`` replaced by
    those of the run's blocks ``run`` (its blocks listed when first asked); returns the old
    entries, or None when
    ``old`` had no outline and no cheap way to one (then ``new`` has none either).

    An ``old`` whose block list is made (a whole parse, the first version an editor or
    the app opened) gets its outline here first: one loop over its blocks. Without it,
    every version spliced from it would lack one, and the first guarded edit of such a
    version would make every moved copy's children to list its blocks (at 20,000
    sections, 0.4 s for the first proof after an outside edit that moved lines).
    """
    cached = _OUTLINE.get(old)
    if cached is None:
        if old._id_nodes is None:
            return None
        cached = outline(old)
    entries = cached[0]
    _OUTLINE.put(new, ([*entries[:j0], *_entries(run), *entries[j1:]], new._id_nodes))
    return entries


_LEVELS = {level: "#" * level for level in range(1, 7)}


def _count_blocks(node: Node) -> int:
    total = 1 if _is_block(node) else 0
    stack = list(node.children_nodes)
    while stack:
        n = stack.pop()
        if _is_block(n):
            total += 1
        stack.extend(n.children_nodes)
    return total


def _content_blocks(text: str) -> int:
    doc = parse("\n".join(content_lines(text)))
    return _count_blocks(doc)


def _subtree(doc: Document, ident: Any) -> Node | None:
    if not isinstance(ident, str):
        return None
    from ..ids import find_block

    return find_block(doc, ident)[0]


def _allowance(op: dict[str, Any], outline_rule: Outline, before: Document) -> tuple[int, int]:
    """(blocks the op may remove, blocks it may add), by its record's `Outline` rule."""
    if outline_rule is Outline.ADDS:
        return 0, _content_blocks(op["content"])
    if outline_rule is Outline.REVIEW:
        body = op.get("content") or ""
        return 0, 1 + (_content_blocks(body) if body.strip() else 0)
    target = _subtree(before, op.get("id"))
    old = _count_blocks(target) if target is not None else 0
    if outline_rule is Outline.REPLACES:
        return old, _content_blocks(op["content"])
    if outline_rule is Outline.REPLACES_BODY:
        body = op["content"]
        return max(old - 1, 0), (_content_blocks(body) if body.strip() else 0)
    if outline_rule is Outline.REMOVES:
        return old, 0
    return 0, 0


def _describe(entry: Entry, node: Node | None) -> str:
    ident, name, _depth = entry
    where = f" at line {node.line}" if node is not None else ""
    label = name if name.startswith("#") else "::" + name
    return f"{label} block" + (f" '{ident}'" if ident else " (no id)") + where


def _refuse(why: str) -> PatchError:
    return PatchError(
        INVALID_CONTENT,
        f"The op would change the document's structure beyond what it wrote: {why}. "
        "Nothing was written.",
    )


def outline_entries(doc: Document) -> list[Entry]:
    """The outline's entries only: a spliced tree has them without making its blocks."""
    cached = _OUTLINE.get(doc)
    if cached is not None:
        return cached[0]
    return outline(doc)[0]


def check_structure(op: dict[str, Any], before: Document, after: Document) -> PatchError | None:
    """None when ``after`` differs from ``before`` only as ``op`` asked; else the refusal."""
    if before.recovered:
        return None  # Tier 2: spans are hints only; keep today's behaviour
    if after.recovered:
        note = next(n for n in after.notes if n.severity == "error")
        return _refuse(f"the result would need parser recovery ({note.message}, line {note.line})")
    if len(after.notes) > len(before.notes):
        note = after.notes[-1]
        return _refuse(f"the result would gain a parser note ({note.message}, line {note.line})")
    a = outline_entries(before)
    b = outline_entries(after)
    limit = min(len(a), len(b))
    i = 0
    j = 0
    change = after.change
    if change is not None and (
        change.kind is not ChangeKind.SPLICE or not change.leads(before.serial, after.serial)
    ):
        change = None
    stop = limit
    if change is not None:
        # Spliced from ``before`` (`core.noma.change`): the entries outside its block range
        # are known equal, so the scans below start at its edges.
        old_blocks, new_blocks = change.old_blocks, change.new_blocks
        i = old_blocks.start
        stop = min(limit, max(old_blocks.end, new_blocks.end))
    while i < stop and a[i] == b[i]:
        i += 1
    if (
        i == stop < limit
        and change is not None
        and len(change.old_blocks) == len(change.new_blocks)
    ):
        return None  # the run's entries are the old ones, and so is all after it
    while i < limit and a[i] == b[i]:
        i += 1
    if change is not None:
        j = min(len(a) - change.old_blocks.end, limit - i)
    while j < limit - i and a[-1 - j] == b[-1 - j]:
        j += 1
    pre_mid, post_mid = a[i : len(a) - j], b[i : len(b) - j]
    if not pre_mid and not post_mid:
        return None
    record = CATALOG.get(str(op.get("op")))
    rule = record.outline if record is not None else Outline.IN_PLACE
    if rule is Outline.RENAMES:
        return _check_rename(op, pre_mid, post_mid, outline(before)[1][i:], outline(after)[1][i:])
    if rule is Outline.MOVES:
        if Counter(e[:2] for e in pre_mid) == Counter(e[:2] for e in post_mid):
            return None
        return _refuse("the moved blocks would not be the same blocks after the move")
    in_place = rule is Outline.IN_PLACE
    removed, added = (0, 0) if in_place else _allowance(op, rule, before)
    if not in_place and (
        len(pre_mid) <= removed and len(post_mid) <= added and len(b) - len(a) == added - removed
    ):
        return None
    # The first differing blocks, read only to name them in a refusal: on the way to a
    # None no block is made (a spliced version's moved blocks stay `shifted` copies).
    first_pre = outline(before)[1][i] if pre_mid else None
    first_post = outline(after)[1][i] if post_mid else None
    if in_place:
        if pre_mid and post_mid:
            return _refuse(
                f"{_describe(pre_mid[0], first_pre)} would become "
                f"{_describe(post_mid[0], first_post)}"
            )
        if post_mid:
            return _refuse(f"a new {_describe(post_mid[0], first_post)} would appear")
        return _refuse(f"{_describe(pre_mid[0], first_pre)} would disappear")
    if len(b) - len(a) > added - removed and post_mid:
        return _refuse(
            f"{len(b) - len(a) - (added - removed)} block(s) beyond its content would appear, "
            f"starting with {_describe(post_mid[0], first_post)}"
        )
    if pre_mid and post_mid:
        return _refuse(
            f"{_describe(pre_mid[0], first_pre)} would become {_describe(post_mid[0], first_post)}"
        )
    if pre_mid:
        return _refuse(f"{_describe(pre_mid[0], first_pre)} would disappear")
    return _refuse(f"a new {_describe(post_mid[0], first_post)} would appear")


def _check_rename(
    op: dict[str, Any],
    pre_mid: list[Entry],
    post_mid: list[Entry],
    pre_nodes: list[Node],
    post_nodes: list[Node],
) -> PatchError | None:
    old, new = op.get("from"), op.get("to")
    if len(pre_mid) != len(post_mid):
        return _refuse("the number of blocks would change")
    for k, (x, y) in enumerate(zip(pre_mid, post_mid, strict=True)):
        if x == y:
            continue
        if x[1:] != y[1:]:
            return _refuse(
                f"{_describe(x, pre_nodes[k])} would become {_describe(y, post_nodes[k])}"
            )
        if x[0] == old and y[0] == new:
            continue
        node = pre_nodes[k]
        if isinstance(node, Section) and f"[[{old}" in node.title.replace("[[ ", "[["):
            continue  # its [[old]] link was retargeted, so its slug changed (as the reference)
        return _refuse(f"{_describe(x, node)} would change its id to '{y[0]}'")
    return None
