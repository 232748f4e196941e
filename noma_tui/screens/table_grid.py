"""Editing a ``::table`` cell by cell in a grid.

The grid shows the header row (``H``) and the body rows numbered from 0, as the table ops
count them. Enter on a cell puts its text in the input below; Enter there proposes
``update_table_cell`` (or ``update_table_header_cell`` on the header row) with the table's
block hash as ``baseHash``. The grid stays open after an edit and re-reads the table, so
several cells can be changed in a row, each its own patch and transcript record.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Input, Label

from core.noma.api import PatchError, has_markers

from .. import ops
from ..document import LoadedDocument
from ..keyorder import OrderedInput
from ..session import EditSession
from ..tables import TableCells, read_table, shown_cell
from ..visible import line_text, plain
from .edit_base import EditScreen
from .form import MARKER_TYPED
from .mounted import composed


class TableGridScreen(EditScreen):
    HINT = "enter edit cell · enter in the input: preview & apply · esc close"
    STAYS_OPEN = True

    def __init__(
        self, session: EditSession, title: str, cells: TableCells, *, cursor_blink: bool = True
    ) -> None:
        super().__init__(session, title)
        self.cells = cells
        self.cursor_blink = cursor_blink
        self.editing: tuple[int, int] | None = None  # (grid row, column)

    def compose_fields(self) -> ComposeResult:
        yield DataTable(id="grid", cursor_type="cell", zebra_stripes=True)
        yield Label("Select a cell and press enter.", id="cell-label", classes="field-label")
        box = OrderedInput(id="cell-value", placeholder="cell text")
        box.cursor_blink = self.cursor_blink
        yield box

    @composed
    def on_mount(self) -> None:
        super().on_mount()
        self._fill()
        self.query_one("#grid", DataTable).focus()

    def _fill(self) -> None:
        grid = self.query_one("#grid", DataTable)
        row, column = grid.cursor_coordinate
        grid.clear(columns=True)
        cells = self.cells
        for c in range(cells.width):
            grid.add_column(f"col {c}", key=str(c))
        if cells.header is not None:
            grid.add_row(*self._pad(cells.header), label="H")
        for i, body in enumerate(cells.rows):
            grid.add_row(*self._pad(body), label=str(i))
        if grid.row_count:
            grid.move_cursor(row=min(row, grid.row_count - 1), column=column, animate=False)

    def _pad(self, row: list[str]) -> list[Text]:
        """Cells as Text: a cell's text is neither markup nor terminal controls."""
        width = self.cells.width
        return [line_text(shown_cell(cell)) for cell in row] + [Text()] * (width - len(row))

    def _cell_text(self, row: int, column: int) -> str:
        cells = self.cells
        if cells.header is not None:
            source = cells.header if row == 0 else cells.rows[row - 1]
        else:
            source = cells.rows[row]
        return source[column] if column < len(source) else ""

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        row, column = event.coordinate.row, event.coordinate.column
        self.editing = (row, column)
        header = self.cells.header is not None and row == 0
        where = "header" if header else f"row {row - (1 if self.cells.header else 0)}"
        self.query_one("#cell-label", Label).update(f"{where}, column {column}:")
        box = self.query_one("#cell-value", Input)
        box.value = plain(shown_cell(self._cell_text(row, column)))  # as shown: `_typed`
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def dirty(self) -> bool:
        if self.editing is None:
            return False
        row, column = self.editing
        return self._typed() != self._cell_text(row, column)

    def _typed(self) -> str:
        """The cell's real text when the input still shows it; else what was typed (marker
        text typed or left in a changed value is refused, as in `FormScreen`)."""
        typed = self.query_one("#cell-value", Input).value
        if self.editing is None:
            return typed
        real = self._cell_text(*self.editing)
        return real if typed == plain(shown_cell(real)) else typed

    def build_ops(self) -> list[dict[str, Any]] | None:
        if self.editing is None:
            self.notify("Select a cell first (enter on the grid).", severity="warning")
            return None
        row, column = self.editing
        value = self._typed()
        if value != self._cell_text(row, column) and has_markers(value):
            self.notify(MARKER_TYPED.format(label="cell"), title="invalid_op", severity="error")
            return None
        ident = self.cells.ident
        if self.cells.header is not None:
            if row == 0:
                return [ops.update_table_header_cell(ident, column, value)]
            row -= 1
        return [ops.update_table_cell(ident, row, column, value)]

    def _reread(self, loaded: LoadedDocument) -> bool:
        block = self.session.current_block(loaded)
        if block is None:
            return False
        try:
            self.cells = read_table(loaded, block)
        except PatchError as exc:
            self.notify(exc.message, title=exc.code, severity="error")
            return False
        self._fill()
        return True

    def applied(self, loaded: LoadedDocument | None) -> None:
        if loaded is None or not self._reread(loaded):
            self.close()
            return
        self.resume()
        self.session.rebase(loaded)
        self.refresh_drift()
        self.editing = None
        self.query_one("#cell-value", Input).value = ""
        self.query_one("#cell-label", Label).update("Saved. Select a cell and press enter.")
        self.query_one("#grid", DataTable).focus()

    def reload_block(self, loaded: LoadedDocument) -> None:
        self._reread(loaded)
        if self.editing is not None:
            row, column = self.editing
            self.query_one("#cell-value", Input).value = self._cell_text(row, column)
