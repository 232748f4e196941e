"""How much two versions of one text share at their ends.

An edit touches a few lines of possibly 100k. Everything that compares two versions (the
incremental re-parse, the proof's diff, the app's version diff) first cuts off what they
share, so its own cost follows the size of the change. Comparisons are done a chunk at a
time with slices, which compare in C: a Python loop over 92k lines or 2.3M characters
cost tens of milliseconds per edit on a 5,000-section document.
"""

from __future__ import annotations

_CHARS = 4096  # characters compared per slice
_LINES = 1024  # lines compared per slice


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    i = 0
    while i < n:
        j = min(i + _CHARS, n)
        if a[i:j] != b[i:j]:
            lo, hi = i, j  # a[:lo] == b[:lo]; the first difference is before hi
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[lo:mid] == b[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        i = j
    return n


def common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest common suffix of ``a`` and ``b``, at most ``limit``
    (callers pass what is left after the common prefix, so the two never overlap)."""
    la, lb = len(a), len(b)
    i = 0
    while i < limit:
        j = min(i + _CHARS, limit)
        if a[la - j : la - i] != b[lb - j : lb - i]:
            lo, hi = i, j  # the last lo chars agree; a difference within the last hi
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
                    lo = mid
                else:
                    hi = mid
            return lo
        i = j
    return limit


def common_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many leading and trailing lines the two lists share (the tail never overlaps the
    head)."""
    limit = min(len(old), len(new))
    head = 0
    while head < limit:
        step = min(_LINES, limit - head)
        if old[head : head + step] == new[head : head + step]:
            head += step
            continue
        while old[head] == new[head]:
            head += 1
        break
    tail = 0
    room = limit - head
    while tail < room:
        step = min(_LINES, room - tail)
        if (
            old[len(old) - tail - step : len(old) - tail]
            == new[len(new) - tail - step : len(new) - tail]
        ):
            tail += step
            continue
        while old[-1 - tail] == new[-1 - tail]:
            tail += 1
        break
    return head, tail


def lf_lines(text: str) -> list[str]:
    """``text``'s lines, each with its ``\\n``: the parser's lines (§6.3: only LF ends a
    line; a CR before it stays in the line), not `str.splitlines`'s, which also breaks at
    U+2028, form feeds and lone CRs and would number lines unlike the editor."""
    lines = [line + "\n" for line in text.split("\n")]
    if lines[-1] == "\n":
        lines.pop()  # the text ended with a line break (or was empty)
    else:
        lines[-1] = lines[-1][:-1]
    return lines


def line_cut(before: str, after: str, context: int) -> tuple[int, int, int, int]:
    """A cut of two texts to the lines that differ plus ``context`` lines each side.

    Returns ``(start, head_lines, old_end, new_end)``: both texts are equal before
    character ``start`` (a line start, ``head_lines`` lines in), and equal from
    ``old_end`` in ``before`` and ``new_end`` in ``after`` to their ends (line starts
    too). Found on the characters, without splitting either text into lines.
    """
    lb, la = len(before), len(after)
    p = common_prefix(before, after)
    start = before.rfind("\n", 0, p) + 1
    for _ in range(context):
        if start == 0:
            break
        start = before.rfind("\n", 0, start - 1) + 1
    q = common_suffix(before, after, min(lb, la) - start)
    # The first line break inside the common suffix: every line after it is whole and the
    # same in both texts (its break is shared, so is everything from there on).
    brk = before.find("\n", lb - q) if q else -1
    old_end = lb if brk == -1 else brk + 1
    for _ in range(context):
        if old_end >= lb:
            break
        nxt = before.find("\n", old_end)
        old_end = lb if nxt == -1 else nxt + 1
    return start, before.count("\n", 0, start), old_end, old_end + (la - lb)
