"""The transcript pane: the document's patch records, append-only like a log.

One row per transcript line (time, actor, op, result, pre→post sha, drift flag). When the
file grows, only the new lines are added and the cursor follows the end, as a log would;
if earlier lines changed (the chain was rewritten) the pane starts over and the audit
result in the border says where the chain breaks. Selecting a row shows the whole record.
"""

from __future__ import annotations

from rich.text import Text
from textual.markup import escape
from textual.message import Message
from textual.widgets import DataTable

from ..styles import Themed
from ..transcript_view import TranscriptRow, TranscriptSnapshot
from ..visible import plain
from .columns import Col, fit
from .scrollbars import ThumbFollowsScroll

# The op summary and the result matter most: they grow first; time and shas stay short.
COLUMNS = [
    Col("time", 14, 14),
    Col("drift", 5, 5),
    Col("actor", 8, 24),
    Col("op", 16, None, weight=3),
    Col("result", 10, 32, weight=2),
    Col("sha", 8, 17),
]


class TranscriptPane(Themed, ThumbFollowsScroll, DataTable[Text | str]):
    class ShowRecord(Message):
        def __init__(self, pane: TranscriptPane, row: TranscriptRow) -> None:
            super().__init__()
            self.pane = pane
            self.row = row

        @property
        def control(self) -> TranscriptPane:
            return self.pane

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.rows_shown: list[TranscriptRow] = []
        self.shown_rows: list[TranscriptRow] = []  # the rows in the table (after the filter)
        self.snapshot: TranscriptSnapshot | None = None
        self.filter_text = ""  # `/`: actor, op or result contains it
        self.following = False  # rows were appended: show the end once sizes settle

    def on_mount(self) -> None:
        self.add_column("time (UTC)", width=14, key="time")
        self.add_column("drift", width=5, key="drift")
        self.add_column("actor", width=16, key="actor")
        self.add_column("op", width=24, key="op")
        self.add_column("result", width=21, key="result")
        self.add_column("pre→post", width=17, key="sha")

    def on_unmount(self) -> None:
        # A table outlives its app (Textual's `DataTable` keeps the last tables drawn in an
        # ``lru_cache``): it must not keep the transcript it showed alive with it.
        self.snapshot = None
        self.rows_shown = []
        self.shown_rows = []

    def on_resize(self) -> None:
        self.fit_columns()

    def on_idle(self) -> None:
        """DataTable sizes new rows when idle; only then can the end be scrolled to (its
        own scroll-to-cursor may run before that and stop short). Forced: the layout that
        shows the scrollbar for the new size may not have run yet, and an unforced scroll
        does nothing while the bar is hidden."""
        if self.following and not self._require_update_dimensions:
            self.following = False
            self.scroll_end(animate=False, immediate=True, force=True, x_axis=False)

    def fit_columns(self) -> None:
        rows = self.shown_rows
        desired = {
            "result": max((len(plain(r.result)) for r in rows), default=10),
            "op": max((len(plain(r.op)) for r in rows), default=16),
            "actor": max((len(plain(r.actor)) for r in rows), default=10),
            "sha": 17,
        }
        fit(self, COLUMNS, desired, ("result", "op", "actor", "sha"))

    def show(self, snapshot: TranscriptSnapshot) -> int:
        """Show ``snapshot``; returns how many rows were appended (or added after a reset)."""
        old = self.rows_shown
        new = snapshot.rows
        same_file = self.snapshot is not None and self.snapshot.path == snapshot.path
        self.snapshot = snapshot
        prefix_ok = (
            same_file
            and len(new) >= len(old)
            and all(a.raw == b.raw for a, b in zip(old, new, strict=False))
        )
        if not prefix_ok or self.filter_text:
            self.clear()
            self.rows_shown = []
            self.shown_rows = []
            old = []
        added = new[len(old) :]
        for row in added:
            if self._passes(row):
                self._add(row)
                self.shown_rows.append(row)
        self.rows_shown = list(new)
        self.fit_columns()  # before the cursor moves: its scroll needs the final sizes
        if added and self.row_count:
            self.move_cursor(row=self.row_count - 1, animate=False)
            self.following = True
        self._subtitle(snapshot)
        return len(added)

    def _add(self, row: TranscriptRow) -> None:
        p = self.palette
        result_style = p.error if row.result.startswith(("rejected", "invalid")) else None
        result = Text(plain(row.result), style=result_style or "")
        drift = Text("DRIFT", style=p.drift) if row.drift else Text("")
        # Every field comes from the transcript file: Text (not markup), controls shown.
        cells = [Text(plain(v)) for v in (row.time, row.actor, row.op, row.shas)]
        self.add_row(cells[0], drift, cells[1], cells[2], result, cells[3], key=str(row.number))

    def _passes(self, row: TranscriptRow) -> bool:
        if not self.filter_text:
            return True
        return self.filter_text.lower() in f"{row.actor}\n{row.op}\n{row.result}".lower()

    def set_filter(self, text: str) -> int:
        """Show only records whose actor, op or result contains ``text``; returns how many."""
        self.filter_text = text.strip()
        if self.snapshot is not None:
            snapshot, self.snapshot = self.snapshot, None
            self.rows_shown = []
            self.show(snapshot)
        return len(self.shown_rows)

    def _subtitle(self, snapshot: TranscriptSnapshot) -> None:
        if self.filter_text:
            self.border_subtitle = (
                f"/{escape(plain(self.filter_text))} · {len(self.shown_rows)} of "
                f"{len(snapshot.rows)} record(s)"
            )
            return
        if not snapshot.exists:
            self.border_subtitle = "no transcript yet"
            return
        report = snapshot.report
        count = len(snapshot.rows)
        if report is None or report.ok:
            self.border_subtitle = f"{count} record(s) · chain intact"
        else:
            line = report.first_broken_line
            self.border_subtitle = f"{count} record(s) · chain broken at line {line}"

    def restyle(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        if self.snapshot is not None:
            snapshot, self.snapshot = self.snapshot, None
            self.rows_shown = []
            self.show(snapshot)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = event.cursor_row
        if 0 <= row < len(self.shown_rows):
            self.post_message(self.ShowRecord(self, self.shown_rows[row]))
