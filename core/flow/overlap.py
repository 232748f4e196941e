"""Structural overlap between a candidate's outline and a flow's steps (§5.2 dedup).

Both sides are ordered lists of steps (v0 has no DAG), so overlap is order-aware: each
step is reduced to its signature (its job in lowercase words: Unicode-normalised,
case-folded, punctuation and spacing collapsed), and the overlap is the longest common
subsequence of the two signature lists divided by the longer list's length. Equal
outlines score 1, disjoint ones 0; one missing or extra step in five scores 0.8, the
threshold at which a candidate may be merged into the flow instead of becoming a parallel
one. Fractions keep the threshold exact (4/5 is exactly 0.8, never 0.7999…).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from fractions import Fraction

MERGE_THRESHOLD = Fraction(4, 5)
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def signature(text: str) -> str:
    """A step's structural identity: its words, normalised; wording noise removed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _NON_WORD.sub(" ", folded).strip()


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def structural_overlap(outline: Sequence[str], steps: Sequence[str]) -> Fraction:
    """LCS of the two signature lists over the longer one's length (0 when either is empty)."""
    a = [signature(s) for s in outline]
    b = [signature(s) for s in steps]
    if not a or not b:
        return Fraction(0)
    return Fraction(_lcs(a, b), max(len(a), len(b)))


def mergeable(overlap: Fraction) -> bool:
    return overlap >= MERGE_THRESHOLD
