"""`touched_diff` cuts the common head and tail a chunk at a time; the cut must be the same
as a line-by-line comparison, or the diff would show the wrong lines."""

from __future__ import annotations

import random

import pytest

import core.noma.proof as proof
from core.noma.proof import touched_diff


def _line_by_line(old: list[str], new: list[str]) -> tuple[int, int]:
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


@pytest.mark.parametrize("chunk", [1, 2, 3, 1024])
def test_common_ends_match_a_line_by_line_scan(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proof, "_CHUNK", chunk)
    rng = random.Random(chunk)
    for _ in range(2000):
        old = [rng.choice("ab") for _ in range(rng.randrange(0, 14))]
        new = list(old)
        for _ in range(rng.randrange(0, 3)):
            i = rng.randrange(0, len(new) + 1)
            new[i : i + rng.randrange(0, 3)] = [
                rng.choice("abc") for _ in range(rng.randrange(0, 3))
            ]
        assert proof.common_ends(old, new) == _line_by_line(old, new), (old, new)


def test_touched_diff_is_the_line_by_line_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    cases = []
    for _ in range(200):
        before = "".join(f"line {rng.randrange(6)}\n" for _ in range(rng.randrange(1, 3000)))
        lines = before.splitlines(keepends=True)
        i = rng.randrange(len(lines))
        lines[i : i + rng.randrange(0, 3)] = [f"new {rng.randrange(9)}\n"] * rng.randrange(0, 3)
        cases.append((before, "".join(lines)))
    fast = [touched_diff(b, a, "x") for b, a in cases]
    monkeypatch.setattr(proof, "common_ends", _line_by_line)
    assert fast == [touched_diff(b, a, "x") for b, a in cases]
    assert any(fast)
