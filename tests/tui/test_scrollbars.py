"""Scrollbar thumbs show where a pane is scrolled, whatever order scrolling and layout
come in (the cause of the snapshot flake: a thumb one cell off with the content right).

DataTable and Tree scroll to their cursor with ``force=True``, which works while the bar is
still hidden; Textual moves a thumb only while its bar is shown. These tests put the scroll
before the layout that shows the bar on purpose (no event-loop turn in between), so the
order that happened in some runs only happens in every run here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable, Input
from tui_helpers import make_app, ready, until

from noma_tui.panes.scrollbars import PaneTable, ThumbFollowsScroll
from noma_tui.panes.transcript import TranscriptPane
from noma_tui.transcript_view import TranscriptRow, TranscriptSnapshot


class OneWidget(App[None]):
    """One widget, five lines high: little room, so a few rows need a scrollbar."""

    CSS = "#under-test { height: 5; width: 60; }"

    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


async def scroll_before_the_bar_is_shown(pilot: Pilot[Any], table: DataTable[Any]) -> None:
    """What DataTable does after rows arrive, in the order that left the thumb behind: the
    new virtual size, then the cursor's forced scroll, then (next turn) the layout."""
    table.add_column("n", width=10)
    await pilot.pause()
    assert not table.show_vertical_scrollbar
    table.virtual_size = Size(10, 40)
    table.scroll_to(y=table.max_scroll_y, animate=False, force=True, immediate=True)
    assert table.scroll_y > 0 and not table.show_vertical_scrollbar
    await pilot.pause()
    assert table.show_vertical_scrollbar


async def test_a_bar_shown_after_a_forced_scroll_puts_its_thumb_at_the_offset() -> None:
    table = PaneTable(id="under-test")
    async with OneWidget(table).run_test(size=(80, 12)) as pilot:
        await scroll_before_the_bar_is_shown(pilot, table)
        assert table.vertical_scrollbar.position == table.scroll_y == table.max_scroll_y


async def test_the_same_order_leaves_a_plain_textual_table_thumb_behind() -> None:
    """Why the mixin exists (Textual 8.2): remove it and the test above fails like this."""
    table: DataTable[Any] = DataTable(id="under-test")
    async with OneWidget(table).run_test(size=(80, 12)) as pilot:
        await scroll_before_the_bar_is_shown(pilot, table)
        assert table.scroll_y > 0
        assert table.vertical_scrollbar.position == 0


async def test_a_horizontal_bar_shown_after_a_forced_scroll_follows_too() -> None:
    table = PaneTable(id="under-test")
    async with OneWidget(table).run_test(size=(80, 12)) as pilot:
        table.add_column("n", width=10)
        await pilot.pause()
        assert not table.show_horizontal_scrollbar
        table.virtual_size = Size(300, 3)
        table.scroll_to(x=table.max_scroll_x, animate=False, force=True, immediate=True)
        await pilot.pause()
        assert table.show_horizontal_scrollbar
        assert table.horizontal_scrollbar.position == table.scroll_x > 0


def rows(count: int) -> list[TranscriptRow]:
    return [
        TranscriptRow(
            number=n,
            time="06-20 12:00:00",
            actor="human:ann",
            op=f"replace_body b-{n}",
            result="applied",
            shas="aaaaaaaa→bbbbbbbb",
            drift=False,
            record=None,
            problem=None,
            raw=f"line {n}".encode(),
        )
        for n in range(1, count + 1)
    ]


async def test_the_transcript_ends_at_its_last_row_with_the_thumb_at_the_end() -> None:
    """Rows added in one go, then appended: the view and the thumb both end at the end."""
    pane = TranscriptPane(id="under-test")
    path = Path("memo.noma.patches")
    async with OneWidget(pane).run_test(size=(80, 12)) as pilot:
        for count in (3, 12, 13, 30):
            pane.show(TranscriptSnapshot(path=path, rows=rows(count), exists=True))
            await until(pilot, lambda: not pane.following, "the transcript at its end")
            await pilot.pause()
            assert pane.cursor_row == count - 1
            assert pane.scroll_y == pane.max_scroll_y
            if count > 3:  # 3 rows fit: no bar
                assert pane.show_vertical_scrollbar and pane.max_scroll_y > 0
                assert pane.vertical_scrollbar.position == pane.scroll_y


async def test_every_scrolling_pane_keeps_its_thumb_at_the_offset(demo: Path) -> None:
    """A pane added later without the mixin would bring the flake back."""
    app = make_app(demo)
    async with app.run_test(size=(120, 34)) as pilot:
        await ready(pilot)
        scrolling = [
            w
            for w in app.main.walk_children(with_self=False)
            if w.is_scrollable
            and (
                (w.styles.overflow_y != "hidden" and w.styles.scrollbar_size_vertical)
                or (w.styles.overflow_x != "hidden" and w.styles.scrollbar_size_horizontal)
            )
            and type(w).__module__.startswith("noma_tui.")
            and not isinstance(w, Input)  # one line that scrolls sideways, never a bar
        ]
        names = {w.id for w in scrolling}
        assert {"tree", "block", "diagnostics", "transcript", "files", "flow-runs"} <= names
        assert [w.id for w in scrolling if not isinstance(w, ThumbFollowsScroll)] == []


async def test_the_transcript_follows_its_end_before_the_layout_shows_the_bar() -> None:
    """The order that left the view short: rows sized (an idle turn), the follow, and only
    then the layout that shows the bar. Run by hand here, so it is that order every time."""
    pane = TranscriptPane(id="under-test")
    path = Path("memo.noma.patches")
    async with OneWidget(pane).run_test(size=(80, 12)) as pilot:
        pane.show(TranscriptSnapshot(path=path, rows=rows(2), exists=True))
        await until(pilot, lambda: not pane.following, "two rows shown")
        await pilot.pause()
        assert not pane.show_vertical_scrollbar
        pane.show(TranscriptSnapshot(path=path, rows=rows(30), exists=True))
        await DataTable._on_idle(pane, events.Idle())  # the table sizes the new rows
        assert not pane.show_vertical_scrollbar and pane.max_scroll_y > 0
        pane.on_idle()  # the pane follows its end, before any layout
        assert not pane.following
        assert pane.scroll_y == pane.max_scroll_y
        await pilot.pause()
        assert pane.show_vertical_scrollbar
        assert pane.scroll_y == pane.max_scroll_y
        assert pane.vertical_scrollbar.position == pane.scroll_y
