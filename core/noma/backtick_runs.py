"""Inline code spans found in linear time, for every reader of inline text.

The parser (table cells), the exports and the validator each find code spans by pairing
backtick runs. Searching the later runs one by one for each opener costs runs x runs on a
line of many unmatched widths (``` `a``a```a ``` ... then thousands of single backticks),
which a single hostile line turns into minutes. Here each run's next run of the same
width is found once, from the right, so a line costs one pass whatever it holds.
"""

from __future__ import annotations

import re

_RUN = re.compile(r"`+")


def paired_runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each code span: a run of N backticks up to the next run of exactly
    N (CommonMark's pairing, without backslash escapes: Noma reads ``\\``` as text too).
    An unmatched run is literal text and pairs with nothing."""
    runs = [(m.start(), m.end()) for m in _RUN.finditer(text)]
    if len(runs) < 2:
        return []
    following: list[int] = [-1] * len(runs)
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        width = runs[i][1] - runs[i][0]
        following[i] = last.get(width, -1)
        last[width] = i
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        j = following[i]
        if j < 0:
            i += 1
            continue
        spans.append((runs[i][0], runs[j][1]))
        i = j + 1
    return spans


def lazy_spans(text: str) -> list[tuple[int, int]]:
    """The spans the pattern ``(`+)(?:.|\\n)+?\\1`` finds, scanning left to right, without
    its backtracking (a run of N backticks before N characters without a match cost it
    N x N x length).

    At a run of L backticks from ``p`` the pattern takes the largest k <= L for which k
    backticks occur again from ``p + k + 1``: inside its own run when ``2k + 1 <= L``,
    else in a later run at least k long; the span ends after the first such occurrence.
    """
    runs = [(m.start(), m.end()) for m in _RUN.finditer(text)]
    longest_after = [0] * (len(runs) + 1)
    for i in range(len(runs) - 1, -1, -1):
        longest_after[i] = max(longest_after[i + 1], runs[i][1] - runs[i][0])
    spans: list[tuple[int, int]] = []
    pos = 0
    i = 0
    while i < len(runs):
        start, end = runs[i]
        p = max(start, pos)
        matched = False
        while p < end:
            own = end - p
            k = max(min(own, longest_after[i + 1]), (own - 1) // 2)
            if k >= 1:
                close = text.find("`" * k, p + k + 1)
                spans.append((p, close + k))
                pos = close + k
                matched = True
                break
            p += 1
        if not matched or pos >= end:  # else the span closed inside this run: read its rest
            i += 1
    return spans
