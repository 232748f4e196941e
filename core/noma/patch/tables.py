"""``::table`` ops: update_table_cell, update_table_header_cell, insert_table_row,
delete_table_row, insert_table_column, delete_table_column (spec §1.5).

A ``::table`` body is pipe rows, one per non-blank line, outer pipes optional. A
``| --- | :---: |`` line is the separator, never a row. The first row is the header when
the opener has the ``header`` flag or the second row is a separator. Body rows are counted
from zero after the header and separator.

Edits rewrite only the rows they touch, each in the ``| a | b |`` form; every other line
keeps its bytes. Pipes in new values are escaped outside code spans, short cell lists are
padded with empty cells, and ``align=`` is never touched (noma-interop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..nodes import Directive
from .errors import INVALID_CONTENT, TARGET_MISSING, PatchError
from .state import OpState
from .table_rows import checked_row, escape_cell, indent_of, is_separator, split_row


@dataclass(slots=True)
class Row:
    """One pipe row: its 1-based line number and its cells as read."""

    line: int
    cells: list[str]


@dataclass(slots=True)
class TableBody:
    """The rows of one ``::table`` as they sit in the source."""

    ident: str
    header: Row | None
    separators: list[Row]  # normally one; every one is kept in step by column ops
    body: list[Row]
    first_line: int  # where a row goes in an empty table: just after the opener

    @property
    def width(self) -> int:
        """The column count: the widest of the header and the body rows."""
        rows = self.body if self.header is None else [self.header, *self.body]
        return max((len(r.cells) for r in rows), default=0)

    def rows(self) -> list[Row]:
        """Every pipe line, in source order."""
        head = [self.header] if self.header is not None else []
        return sorted([*head, *self.separators, *self.body], key=lambda r: r.line)

    def last_line(self) -> int:
        """The line after which an appended row goes."""
        rows = self.rows()
        return rows[-1].line if rows else self.first_line - 1


def _flag(node: Directive, key: str) -> bool:
    value = node.attrs.get(key)
    return value is True or value == 1 or str(value).lower() in ("yes", "on")


def read_table(state: OpState, ident: str) -> TableBody:
    """The rows of ``::table`` ``ident`` exactly as the table ops address them (public: the
    app's grid editor reads cells through this so its row/column numbers match the ops)."""
    node = state.directive(ident)
    if node.name != "table":
        raise PatchError(
            TARGET_MISSING,
            f"'{ident}' is a ::{node.name} block, not a ::table; table ops edit "
            "::table blocks only.",
        )
    if not node.closed:
        raise PatchError(
            INVALID_CONTENT,
            f"::table '{ident}' has no closing fence, so its rows cannot be told from what "
            "follows; close it first.",
        )
    lines = state.lines
    rows: list[Row] = []
    separators: list[Row] = []
    second_is_separator = False
    seen = 0
    for lineno in range(node.line + 1, node.end_line):
        if lines.is_blank(lineno):
            continue
        text = lines.get(lineno)
        row = Row(lineno, split_row(text))
        seen += 1
        if is_separator(text):
            separators.append(row)
            second_is_separator = second_is_separator or seen == 2
        else:
            rows.append(row)
    has_header = _flag(node, "header") or second_is_separator
    header = rows.pop(0) if has_header and rows else None
    return TableBody(ident, header, separators, rows, node.line + 1)


def _column_index(table: TableBody, column: int | str, *, allow_end: bool = False) -> int:
    """Resolve an index or a header label to a zero-based column, or refuse precisely."""
    width = table.width
    if isinstance(column, str):
        if table.header is None:
            raise PatchError(
                TARGET_MISSING,
                f"column {column!r} cannot be found: ::table '{table.ident}' has no header row, "
                "so columns are addressed by index.",
            )
        labels = table.header.cells
        if column in labels:
            return labels.index(column)
        folded = [i for i, label in enumerate(labels) if label.casefold() == column.casefold()]
        if len(folded) == 1:
            return folded[0]
        shown = ", ".join(repr(label) for label in labels)
        raise PatchError(
            TARGET_MISSING,
            f"column {column!r} does not exist: the header of ::table '{table.ident}' is {shown}.",
        )
    limit = width + 1 if allow_end else width
    if column >= limit:
        span = f"0..{width}" if allow_end else f"0..{width - 1}" if width else "none"
        raise PatchError(
            TARGET_MISSING,
            f"column {column} does not exist: ::table '{table.ident}' has {width} column(s) "
            f"(valid: {span}).",
        )
    return column


def _body_row(table: TableBody, row: int) -> Row:
    if row >= len(table.body):
        raise PatchError(
            TARGET_MISSING,
            f"row {row} does not exist: ::table '{table.ident}' has {len(table.body)} body "
            "row(s) (rows count from 0 after the header).",
        )
    return table.body[row]


def _padded(cells: list[str], width: int) -> list[str]:
    return cells + [""] * (width - len(cells)) if len(cells) < width else list(cells)


def _rewrite(state: OpState, row: Row, cells: list[str]) -> None:
    """Write ``row`` back in the ``| a | b |`` form, keeping its indentation."""
    state.lines.set(row.line, checked_row(cells, indent_of(state.lines.get(row.line))))


def _set_cell(state: OpState, row: Row, column: int, value: str, what: str) -> None:
    cell = escape_cell(value, what=what)
    cells = _padded(row.cells, column + 1)
    if column < len(row.cells) and cells[column] == cell:
        return  # same text: nothing to rewrite
    cells[column] = cell
    _rewrite(state, row, cells)


def update_table_cell(state: OpState, op: dict[str, Any]) -> None:
    table = read_table(state, op["id"])
    row = _body_row(table, op["row"])
    column = _column_index(table, op["column"])
    _set_cell(state, row, column, op["value"], "A table cell")


def update_table_header_cell(state: OpState, op: dict[str, Any]) -> None:
    table = read_table(state, op["id"])
    if table.header is None:
        raise PatchError(
            TARGET_MISSING,
            f"::table '{table.ident}' has no header row (set the header flag or add a "
            "separator line under the first row).",
        )
    column = _column_index(table, op["column"])
    _set_cell(state, table.header, column, op["value"], "A table header cell")


def _new_cells(table: TableBody, values: list[str], what: str) -> list[str]:
    width = table.width
    if width and len(values) > width:
        raise PatchError(
            INVALID_CONTENT,
            f"{what} has {len(values)} cells but ::table '{table.ident}' has {width} "
            "column(s); add a column first.",
        )
    cells = [escape_cell(v, what="A table cell") for v in values]
    return _padded(cells, max(width, 1))


def insert_table_row(state: OpState, op: dict[str, Any]) -> None:
    table = read_table(state, op["id"])
    row = op["row"]
    count = len(table.body)
    if row > count:
        raise PatchError(
            TARGET_MISSING,
            f"row {row} is out of range: ::table '{table.ident}' has {count} body row(s), so "
            f"a row can go at 0..{count}.",
        )
    cells = _new_cells(table, op["cells"], "The new row")
    lines = state.lines
    if row < count:
        before = table.body[row].line
        indent = indent_of(lines.get(before))
    else:
        before = table.last_line() + 1
        neighbour = table.rows()
        indent = indent_of(lines.get(neighbour[-1].line)) if neighbour else ""
    lines.insert(before, [checked_row(cells, indent)])


def delete_table_row(state: OpState, op: dict[str, Any]) -> None:
    table = read_table(state, op["id"])
    row = _body_row(table, op["row"])
    state.lines.delete(row.line, row.line)


def insert_table_column(state: OpState, op: dict[str, Any]) -> None:
    table = read_table(state, op["id"])
    column = _column_index(table, op["column"], allow_end=True)
    values: list[str] = op["cells"]
    if len(values) > len(table.body):
        raise PatchError(
            INVALID_CONTENT,
            f"{len(values)} cells given but ::table '{table.ident}' has {len(table.body)} body "
            "row(s); cells fill body rows in order.",
        )
    header = op.get("header")
    if table.header is None and header:
        raise PatchError(
            INVALID_CONTENT,
            f"::table '{table.ident}' has no header row, so the new column cannot have the "
            f"header {header!r}; leave header out.",
        )
    width = table.width
    if table.header is not None:
        cells = _padded(table.header.cells, width)
        cells.insert(column, escape_cell(header or "", what="A table header cell"))
        _rewrite(state, table.header, cells)
    for separator in table.separators:
        cells = [c or "---" for c in _padded(separator.cells, width)]
        cells.insert(column, "---")
        _rewrite(state, separator, cells)
    for i, row in enumerate(table.body):
        cells = _padded(row.cells, width)
        cells.insert(column, escape_cell(values[i], what="A table cell") if i < len(values) else "")
        _rewrite(state, row, cells)


def delete_table_column(state: OpState, op: dict[str, Any]) -> None:
    table = read_table(state, op["id"])
    column = _column_index(table, op["column"])
    if table.width <= 1:
        raise PatchError(
            INVALID_CONTENT,
            f"::table '{table.ident}' has a single column; deleting it would leave no table "
            "(use delete_block or replace_body).",
        )
    for row in table.rows():
        if column < len(row.cells):
            cells = list(row.cells)
            del cells[column]
            _rewrite(state, row, cells)
