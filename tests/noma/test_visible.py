"""`core.noma.visible`: every character a terminal acts on becomes a visible marker."""

from __future__ import annotations

import pytest
from hygiene_testlib import MARKUP, PAYLOADS, dangerous

from core.noma.visible import has_markers, is_visible, visible, visible_line


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_every_payload_loses_its_active_characters(name: str) -> None:
    payload = PAYLOADS[name]
    assert dangerous(payload), "the corpus entry must be an attack"
    assert dangerous(visible(payload)) == []
    assert dangerous(visible_line(payload)) == []


def test_escape_is_shown_by_its_code_point() -> None:
    assert visible("\x1b]0;pwned\x07") == "⟨U+001B⟩]0;pwned⟨U+0007⟩"
    assert visible("\x9b31m") == "⟨U+009B⟩31m"
    assert visible("\u202eexe") == "⟨U+202E⟩exe"


def test_undecodable_bytes_keep_the_apps_byte_marker() -> None:
    # surrogateescape keeps byte 0x9B as U+DC9B: the byte marker, distinct from U+009B
    assert visible("a\udc9bb\x9b") == "a⟨9B⟩b⟨U+009B⟩"
    assert visible("\ud800") == "⟨U+D800⟩"


def test_multi_line_text_keeps_newline_tab_and_crlf_but_not_a_lone_cr() -> None:
    assert visible("a\n\tb\r\nc") == "a\n\tb\r\nc"
    assert visible("rm -rf /\rsafe") == "rm -rf /⟨U+000D⟩safe"


def test_single_line_text_maps_newline_tab_and_cr_too() -> None:
    assert visible_line("a\nb\tc\r\n") == "a⟨U+000A⟩b⟨U+0009⟩c⟨U+000D⟩⟨U+000A⟩"


def test_ordinary_text_comes_back_as_the_same_object() -> None:
    for text in ("Plain heading", "Café ⟨not a marker⟩ — 東京", "a\nb\tc", ""):
        assert visible(text) is text
    assert visible_line("Plain heading") == "Plain heading"
    assert visible_line("no\u00a0break") == "no\u00a0break"  # printable-but-not-ASCII kept


def test_markup_is_not_this_functions_business() -> None:
    # Brackets are printable: markup is escaped where markup is built (the app), not here.
    assert visible(MARKUP) is MARKUP


def test_is_visible_and_has_markers() -> None:
    assert is_visible("ok") and not is_visible("a\x1bb")
    assert not is_visible("a\nb", single_line=True)
    assert has_markers(visible("a\x1bb")) and has_markers(visible("\udcff"))
    assert not has_markers("⟨hello⟩ ⟨12⟩")
