"""`noma_tui.relines`: a new version's lines made from the shown one's are the lines a whole
split gives, and the changed range is the one the line lists' common ends give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.noma.patch.text import SourceLines
from core.noma.source import BOM
from noma_tui.relines import reline
from noma_tui.versions import changed_lines

PIECES = st.sampled_from(["a", "b", "\n", "\r", "\r\n", "\n\n", "xy\n", ""])
TEXT = st.lists(PIECES, max_size=30).map("".join)


def _same(old_text: str, new_text: str) -> None:
    old = SourceLines(old_text)
    got = reline(old, old_text, new_text)
    want = SourceLines(new_text)
    if got is None:
        assert old_text.startswith(BOM) != new_text.startswith(BOM)
        return
    lines = got.lines
    assert lines.lines == want.lines
    assert (lines.bom, lines.crlf, lines.final_newline) == (
        want.bom,
        want.crlf,
        want.final_newline,
    )
    assert lines.text() == new_text
    assert got.changed == changed_lines(old.lines, want.lines)


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT, TEXT, TEXT, st.booleans())
def test_an_edit_in_the_middle_relines_like_a_whole_split(
    head: str, cut: str, put: str, tail: str, bom: bool
) -> None:
    mark = BOM if bom else ""
    _same(mark + head + cut + tail, mark + head + put + tail)


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT)
def test_any_two_texts_reline_like_a_whole_split(old: str, new: str) -> None:
    _same(old, new)


def test_a_byte_order_mark_added_is_split_whole() -> None:
    assert reline(SourceLines("a\n"), "a\n", BOM + "a\n") is None


def test_lines_after_the_change_are_the_old_strings() -> None:
    old_text = "".join(f"line {i}\n" for i in range(1000))
    new_text = old_text.replace("line 10\n", "line ten\nline 10b\n", 1)
    old = SourceLines(old_text)
    got = reline(old, old_text, new_text)
    assert got is not None
    assert got.changed == (10, 11, 12)
    assert got.lines.lines[500] is old.lines[499]
    assert got.lines.lines[5] is old.lines[5]
