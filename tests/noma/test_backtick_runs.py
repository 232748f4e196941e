"""Code spans in linear time (`core.noma.backtick_runs`): the same spans as the pairing
and the pattern they replace, on random text, and no blow-up on the lines that made
those quadratic."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.noma.backtick_runs import lazy_spans, paired_runs

_PATTERN = re.compile(r"(`+)(?:.|\n)+?\1")


def _paired_by_scanning(text: str) -> list[tuple[int, int]]:
    """The pairing as it was written before: each opener scans the later runs."""
    runs = list(re.finditer(r"`+", text))
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        width = len(runs[i].group(0))
        for j in range(i + 1, len(runs)):
            if len(runs[j].group(0)) == width:
                spans.append((runs[i].start(), runs[j].end()))
                i = j
                break
        i += 1
    return spans


TEXT = st.lists(st.sampled_from(["`", "``", "```", "a", " ", "\n", "|"]), max_size=40).map("".join)


@settings(max_examples=600, derandomize=True, deadline=None)
@given(TEXT)
def test_the_same_spans_as_before(text: str) -> None:
    assert paired_runs(text) == _paired_by_scanning(text)
    assert lazy_spans(text) == [m.span() for m in _PATTERN.finditer(text)]


def test_a_line_of_unmatched_widths_costs_one_pass() -> None:
    """~1.2 MB: runs of 1,400 distinct widths, then 100,000 single backticks. Scanning
    took minutes; these calls return at once (no clock asserted: they would hang)."""
    text = "".join("`" * k + "a" for k in range(2, 1400)) + "`a" * 100_000
    assert len(paired_runs(text)) == 50_000
    text = "`" * 100_000 + "a" * 100_000 + " [[x]]"
    assert lazy_spans(text) == [(0, 99_999)]  # 49,999 backticks, one, then 49,999
