"""`SourceLines` after edits: the span it reports and the text it joins from kept runs.

Random chains of copies and edits (set, splice, insert, delete, at the ends and in the
middle, with and without a BOM and a final newline), with runs a few lines long so every
edit crosses run boundaries: the text must be the plain join of the lines, and the span
must be true (the lines it says were kept are the base copy's).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.noma.patch.text as text_module
from core.noma.patch.text import SourceLines
from core.noma.source import BOM

WORDS = ["", "a", "## H", "::note", "::", "text", "  x", "| a |"]


def plain(lines: SourceLines) -> str:
    body = "\n".join(lines.lines)
    if lines.final_newline and lines.lines:
        body += "\n"
    return (BOM if lines.bom else "") + body


edit = st.tuples(
    st.sampled_from(["set", "splice", "insert", "delete", "text", "copy"]),
    st.integers(0, 60),
    st.integers(0, 4),
    st.lists(st.sampled_from(WORDS), max_size=4),
)


@pytest.fixture(autouse=True)
def small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_module, "_CHUNK", 3)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS), max_size=40),
    st.booleans(),
    st.booleans(),
    st.lists(edit, max_size=12),
)
def test_text_and_span_after_random_edits(
    start: list[str], bom: bool, final: bool, edits: list[tuple[str, int, int, list[str]]]
) -> None:
    source = (BOM if bom else "") + "\n".join(start) + ("\n" if final and start else "")
    lines = SourceLines(source).copy()
    assert lines.text() == source
    base = list(lines.lines)
    for kind, at, width, contents in edits:
        n = len(lines)
        if kind == "text":
            assert lines.text() == plain(lines)
            continue
        if kind == "copy":
            lines.text()  # its runs become the copy's base
            lines = lines.copy()
            base = list(lines.lines)
            continue
        if kind == "set":
            if n:
                lines.set(at % n + 1, contents[0] if contents else "")
        elif kind == "splice":
            start_at = at % (n + 1) + 1
            end = min(start_at + width - 1, n)
            lines.splice(start_at, max(end, start_at - 1), contents)
        elif kind == "insert":
            lines.insert(at % (n + 1) + 1, contents)
        elif n:
            first = at % n + 1
            lines.delete(first, min(first + width, n))
        span = lines.changed_span()
        if span is not None:
            head, tail, base_len = span
            assert base_len == len(base)
            assert lines.lines[:head] == base[:head]
            assert lines.lines[len(lines) - tail :] == base[len(base) - tail :]
            assert head + tail <= min(len(lines), len(base))
        assert lines.text() == plain(lines)


def test_an_edit_rejoins_only_the_runs_it_touched() -> None:
    source = "\n".join(f"line {k}" for k in range(30)) + "\n"
    first = SourceLines(source).copy()
    assert first.text() == source
    kept = first._chunks
    assert kept is not None and len(kept) == 10
    second = first.copy()
    second.set(14, "changed")
    assert second.text() == source.replace("line 13\n", "changed\n")
    after = second._chunks
    assert after is not None
    shared = sum(1 for a, b in zip(kept, after, strict=True) if a[2] is b[2])
    assert shared == 9  # one run of three lines joined again, nine copied as they were
