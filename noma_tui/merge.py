"""The three texts of a block-level conflict and a line-based three-way merge.

When the engine refuses an edit with ``sha_mismatch`` the block changed on disk after the
edit opened. The conflict view shows three versions of the block: *base* (as the edit
opened it), *mine* (the edit applied to base) and *theirs* (on disk now), with the lines
each side changed marked. `merge3` combines both sides' changes where they do not touch
the same lines and marks the rest with ``<<<<<<< mine`` / ``=======`` / ``>>>>>>> theirs``
for the writer to settle in the editor; whatever is applied is a patch op against theirs'
block hash, so nothing on disk is overwritten unseen.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from core.noma.api import PatchError, SourceLines, apply_ops_to_text, index, parse

MINE, SEP, THEIRS = "<<<<<<< mine", "=======", ">>>>>>> theirs"


@dataclass(frozen=True, slots=True)
class ConflictTexts:
    base: str
    mine: str
    theirs: str
    mergeable: bool  # True when the editor can take a merged text


def block_source(text: str, ident: str) -> str | None:
    """The raw source of block ``ident`` in ``text`` (None when absent or ambiguous)."""
    doc = parse(text)
    idx = index(doc)
    node = idx.first.get(ident)
    if node is None or idx.count.get(ident, 0) > 1:
        return None
    lines = SourceLines(text)
    return lines.raw_block(node.line, min(node.end_line, len(lines))).replace("\r", "")


def block_texts(
    base_doc: str | None, ops: list[dict[str, Any]], ident: str, theirs: str
) -> ConflictTexts:
    """Block-level base / mine / theirs for any edit: ``ops`` applied to the base
    document (their block preconditions dropped: base is what they were made for)."""
    if base_doc is None:
        missing = "(the version this edit was opened on is no longer known)"
        return ConflictTexts(missing, missing, theirs, False)
    base = block_source(base_doc, ident) or "(not in the base version)"
    plain = [{k: v for k, v in op.items() if k != "baseHash"} for op in ops]
    try:
        after = apply_ops_to_text(base_doc, plain)
        target = next((str(op["to"]) for op in plain if op.get("op") == "rename_id"), ident)
        mine = block_source(after, target) or "(the edit removes the block)"
    except PatchError as exc:
        mine = f"(the edit does not apply to the base version: {exc.code})"
    return ConflictTexts(base, mine, theirs, False)


def _changes(base: list[str], other: list[str]) -> list[tuple[int, int, list[str]]]:
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    return [
        (i1, i2, other[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


def _apply(
    base: list[str], start: int, end: int, changes: list[tuple[int, int, list[str]]]
) -> list[str]:
    out: list[str] = []
    pos = start
    for i1, i2, lines in changes:
        out.extend(base[pos:i1])
        out.extend(lines)
        pos = i2
    out.extend(base[pos:end])
    return out


def merge3(base: str, mine: str, theirs: str) -> tuple[str, int]:
    """Merge ``mine`` and ``theirs`` (both edited from ``base``); returns the merged text
    and the number of conflict regions marked in it."""
    if mine == theirs or theirs == base:
        return mine, 0
    if mine == base:
        return theirs, 0
    b = base.splitlines(keepends=True)
    m = mine.splitlines(keepends=True)
    t = theirs.splitlines(keepends=True)
    tagged = sorted(
        [(i1, i2, lines, "m") for i1, i2, lines in _changes(b, m)]
        + [(i1, i2, lines, "t") for i1, i2, lines in _changes(b, t)],
        key=lambda c: (c[0], c[1]),
    )
    out: list[str] = []
    conflicts = 0
    pos = 0
    k = 0
    while k < len(tagged):
        g1, g2 = tagged[k][0], tagged[k][1]
        group = [tagged[k]]
        k += 1
        while k < len(tagged) and (
            tagged[k][0] < g2
            or (tagged[k][0] == g1 and tagged[k][0] == tagged[k][1])
            or (tagged[k][0] == g2 and g1 == g2)
        ):
            group.append(tagged[k])
            g2 = max(g2, tagged[k][1])
            k += 1
        out.extend(b[pos:g1])
        mine_side = [(i1, i2, ls) for i1, i2, ls, side in group if side == "m"]
        theirs_side = [(i1, i2, ls) for i1, i2, ls, side in group if side == "t"]
        if not theirs_side:
            out.extend(_apply(b, g1, g2, mine_side))
        elif not mine_side:
            out.extend(_apply(b, g1, g2, theirs_side))
        else:
            ours, others = _apply(b, g1, g2, mine_side), _apply(b, g1, g2, theirs_side)
            if ours == others:
                out.extend(ours)
            else:
                conflicts += 1
                out.append(MINE + "\n")
                out.extend(_ended(ours))
                out.append(SEP + "\n")
                out.extend(_ended(others))
                out.append(THEIRS + "\n")
        pos = g2
    out.extend(b[pos:])
    return "".join(out), conflicts


def _ended(lines: list[str]) -> list[str]:
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + "\n"]
    return lines


def marked_lines(text: str, base: str) -> list[tuple[str, bool]]:
    """``text``'s lines, each flagged True where it differs from ``base`` (for display)."""
    ours = text.splitlines()
    matcher = SequenceMatcher(None, base.splitlines(), ours, autojunk=False)
    changed = [True] * len(ours)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for j in range(j1, j2):
                changed[j] = False
    return list(zip(ours, changed, strict=True))
