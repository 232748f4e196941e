"""The diagnostics pane: validator findings and parser recovery notes, one row each.

Columns follow the Diagnostic record (§4.3): severity, code, message, id, line. Parser
notes are marked ``(parse)`` after their code, as ``noma check`` prints them. Selecting a
row asks the screen to jump to the block the diagnostic is about.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable

from ..document import DiagnosticRow, LoadedDocument
from ..styles import SEVERITY_GLYPH, SEVERITY_WORD, Themed
from ..visible import plain
from .columns import Col, fit
from .scrollbars import ThumbFollowsScroll

MAX_ROWS = 2000
COLUMNS = [
    Col("sev", 8, 8),
    Col("line", 4, 5),
    Col("code", 12, 30),
    Col("message", 16, None, weight=4),
    Col("id", 8, 22),
]
SEVERITY_LEVELS = (None, "error", "warning", "info")  # `S` cycles: all, then one severity


class DiagnosticsPane(Themed, ThumbFollowsScroll, DataTable[Text | str]):
    class Jump(Message):
        """Go to the block a diagnostic is about."""

        def __init__(self, pane: DiagnosticsPane, block: int) -> None:
            super().__init__()
            self.pane = pane
            self.block = block

        @property
        def control(self) -> DiagnosticsPane:
            return self.pane

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.loaded: LoadedDocument | None = None
        self._blocks: list[int | None] = []
        self.severity: str | None = None  # only this severity (None: all)
        self.filter_text = ""  # `/`: code, message, id or severity contains it

    def on_mount(self) -> None:
        self.add_column("severity", width=8, key="sev")
        self.add_column("line", width=4, key="line")
        self.add_column("code", width=30, key="code")
        self.add_column("message", key="message")
        self.add_column("id", width=18, key="id")

    def on_unmount(self) -> None:
        # Textual's `DataTable` caches a method with ``functools.lru_cache`` keyed by the
        # table, so a table outlives its app: it must not keep the version it showed (a
        # whole tree) alive with it.
        self.loaded = None
        self._blocks = []

    def on_resize(self) -> None:
        self.fit_columns()

    def fit_columns(self) -> None:
        rows = self.loaded.diagnostics if self.loaded is not None else []
        desired = {"code": max((len(r.diagnostic.code) + 8 for r in rows), default=12)}
        fit(self, COLUMNS, desired, ("code",))

    def _rows(self, loaded: LoadedDocument) -> list[DiagnosticRow]:
        needle = self.filter_text.lower()
        out = []
        for row in loaded.diagnostics:
            d = row.diagnostic
            if self.severity is not None and d.severity != self.severity:
                continue
            if needle:
                hay = f"{d.severity}\n{d.code}\n{d.message}\n{d.node_id or ''}".lower()
                if needle not in hay:
                    continue
            out.append(row)
        return out

    def set_filter(self, text: str) -> int:
        self.filter_text = text.strip()
        if self.loaded is not None:
            self.show(self.loaded, force=True)
        return self.row_count

    def cycle_severity(self) -> str | None:
        index = SEVERITY_LEVELS.index(self.severity)
        self.severity = SEVERITY_LEVELS[(index + 1) % len(SEVERITY_LEVELS)]
        if self.loaded is not None:
            self.show(self.loaded, force=True)
        return self.severity

    def show(self, loaded: LoadedDocument, *, force: bool = False) -> None:
        same = (
            not force
            and self.loaded is not None
            and self.loaded.path == loaded.path
            and self.loaded.checked == loaded.checked
            and [r.diagnostic for r in self.loaded.diagnostics]
            == [r.diagnostic for r in loaded.diagnostics]
        )
        self.loaded = loaded
        rows = self._rows(loaded)[:MAX_ROWS]
        self._blocks = [r.block for r in rows]
        if same:
            return
        cursor = self.cursor_row
        self.clear()
        p = self.palette
        for row in rows:
            d = row.diagnostic
            style = p.severity(d.severity)
            sev = Text(f"{SEVERITY_GLYPH[d.severity]} {SEVERITY_WORD[d.severity]}", style=style)
            code = d.code + (" (parse)" if row.parse_note else "")
            node_id = d.node_id or ""
            if not node_id and row.block is not None:
                node_id = loaded.blocks[row.block].id or ""
            # Text, never a str: a quoted value is neither markup nor terminal controls.
            message, ident = Text(plain(d.message)), Text(plain(node_id))
            self.add_row(sev, str(d.line) if d.line else "", Text(code), message, ident)
        self.fit_columns()
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1), animate=False)
        errors, warnings = loaded.count("error"), loaded.count("warning")
        infos = loaded.count("info")
        counts = f"{errors} error · {warnings} warn · {infos} info"
        if not loaded.checked:
            counts = "checking…" + (f" · {counts} from the parser" if loaded.diagnostics else "")
        if len(loaded.diagnostics) > MAX_ROWS:
            counts += f" (first {MAX_ROWS} shown)"
        shown = []
        if self.severity is not None:
            shown.append(f"{self.severity} only")
        if self.filter_text:
            shown.append(f"/{plain(self.filter_text)}")
        if shown:
            counts = f"{' · '.join(shown)} · {len(rows)} shown · {counts}"
        # Plain text, never markup: `escape` leaves a typed "[/" as it is, and the markup
        # parser refuses it (a filter typed a key at a time passes through "[/").
        self.border_subtitle = Content(counts)

    def restyle(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Re-style after a theme change."""
        if self.loaded is not None:
            loaded, self.loaded = self.loaded, None
            self.show(loaded)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = event.cursor_row
        if 0 <= row < len(self._blocks):
            block = self._blocks[row]
            if block is not None:
                self.post_message(self.Jump(self, block))
            else:
                self.app.notify("This diagnostic is about the whole file.", timeout=3)
