"""JSON ``::dataset`` bodies: a top-level array of row arrays (``["legal", 3.4]``) or
records (``{"vertical": "legal"}``). The common layout is pretty-printed, one row per line
(`JsonBody`)::

    [
      ["legal", 3.4],
      ["healthcare", 2.9]
    ]

Any other layout (``[`` or ``]`` sharing a line with rows, several rows on a line, the
whole array on one line) is edited row by row where the rows stand (`InlineJsonBody`).

A touched row is re-serialised compactly (``["legal",3.8]``, as ``JSON.stringify``
writes it), except a record written spaced (``{ "a": 1, "b": 2 }``), which stays spaced;
indentation and trailing commas are kept, and other rows keep their bytes.
Commas follow the row order: appending after the last row gives that row a comma (unless
the body already ends rows with commas), deleting the last row takes it off the new last.
JSON has no schema, so a value keeps its literal type (``3.8`` a number, ``true`` a
boolean, ``null`` a null, anything else a string); records take their column names from
their keys, in first-seen order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..bounded import ContentRefused, check_tree, load_json_bounded, node_budget
from .dataset_body import BodyLine, DatasetBody, Edits, unsupported
from .dataset_values import coerce
from .text import SourceLines

_TRAILING_COMMA = re.compile(r",[ \t]*\Z")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_SPACED_RECORD = re.compile(r"\{[ \t]")


def dumps_like(value: Any, source: str) -> str:
    """``value`` in the style of the row it replaces: a record written ``{ "a": 1 }`` stays
    spaced (``{ "a": 1, "b": 2 }``); everything else is compact."""
    if isinstance(value, dict) and value and _SPACED_RECORD.match(source.lstrip()):
        items = ", ".join(f"{dumps(k)}: {dumps(v)}" for k, v in value.items())
        return "{ " + items + " }"
    return dumps(value)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


@dataclass(slots=True)
class JsonRow:
    line: BodyLine
    indent: str
    value: Any  # a list (row array) or a dict (record)
    comma: bool

    def render(self, value: Any) -> str:
        return self.indent + dumps_like(value, self.line.text) + ("," if self.comma else "")


class NotOneRowPerLine(Exception):
    """The body is not in the one-row-per-line layout: `InlineJsonBody` edits it."""


def json_body(ident: str, lines: SourceLines, body: list[BodyLine]) -> DatasetBody:
    """The editor for a JSON body: one row per line, or rows wherever they stand."""
    try:
        return JsonBody(ident, lines, body)
    except NotOneRowPerLine:
        return InlineJsonBody(ident, lines, body)


class JsonBody(DatasetBody):
    shape = "JSON"

    def __init__(self, ident: str, lines: SourceLines, body: list[BodyLine]) -> None:
        super().__init__(ident, lines)
        filled = [bl for bl in body if bl.text.strip()]
        self.empty_line: BodyLine | None = None  # a one-line "[]"
        self.close: BodyLine | None = None  # the "]" line
        if len(filled) == 1 and filled[0].text.strip().replace(" ", "") == "[]":
            self.empty_line = filled[0]
            items: list[BodyLine] = []
        elif len(filled) >= 2 and filled[0].text.strip() == "[" and filled[-1].text.strip() == "]":
            self.close = filled[-1]
            items = filled[1:-1]
        else:
            raise NotOneRowPerLine
        self.open_indent = filled[0].text[: len(filled[0].text) - len(filled[0].text.lstrip())]
        self.rows = [self._row(bl) for bl in items]
        kinds = {type(r.value) for r in self.rows}
        if len(kinds) > 1:
            raise unsupported(ident, "it mixes row arrays and records")
        self.records = kinds == {dict}
        self.trailing = bool(self.rows) and self.rows[-1].comma

    def _row(self, bl: BodyLine) -> JsonRow:
        text = bl.text.rstrip()
        comma = _TRAILING_COMMA.search(text) is not None
        source = _TRAILING_COMMA.sub("", text).strip()
        try:
            value = load_json_bounded(source)
        except ContentRefused as exc:
            raise unsupported(self.ident, f"row line {bl.lineno} cannot be read: {exc}") from None
        except ValueError:
            value = None
        if not isinstance(value, list | dict):
            raise NotOneRowPerLine
        return JsonRow(bl, text[: len(text) - len(text.lstrip())], value, comma)

    def names(self) -> list[str] | None:
        if not self.records:
            return None
        seen: dict[str, None] = {}
        for row in self.rows:
            for key in row.value:
                seen.setdefault(key, None)
        return list(seen)

    def row_count(self) -> int:
        return len(self.rows)

    def width(self) -> int:
        if self.records:
            return len(self.names() or [])
        return max((len(r.value) for r in self.rows), default=0)

    def _value(self, column: int, text: str) -> Any:
        return coerce(text, None, self.column_label(column)).python()

    def _indent(self) -> str:
        return self.rows[0].indent if self.rows else self.open_indent + "  "

    def update_cell(self, edits: Edits, row: int, column: int, value: str) -> None:
        target = self.rows[row]
        new = self._value(column, value)
        if self.records:
            key = (self.names() or [])[column]
            record = dict(target.value)
            if key in record and _same(record[key], new):
                return
            record[key] = new
            ordered = {k: record[k] for k in (self.names() or []) if k in record}
            edits.set(target.line.lineno, target.render(ordered))
            return
        cells = list(target.value) + [""] * (column + 1 - len(target.value))
        if column < len(target.value) and _same(cells[column], new):
            return
        cells[column] = new
        edits.set(target.line.lineno, target.render(cells))

    def insert_row(self, edits: Edits, row: int, cells: list[str]) -> None:
        values = [self._value(i, v) for i, v in enumerate(cells)]
        values += [""] * (self.width() - len(values))
        value: Any = dict(zip(self.names() or [], values, strict=False)) if self.records else values
        count = len(self.rows)
        text = dumps_like(value, self.rows[0].line.text) if self.rows else dumps(value)
        if row < count:
            edits.insert(self.rows[row].line.lineno, [self._indent() + text + ","])
            return
        line = self._indent() + text + ("," if self.trailing else "")
        if self.rows:
            last = self.rows[-1]
            if not last.comma:
                edits.set(last.line.lineno, last.line.text.rstrip() + ",")
            edits.insert(last.line.lineno + 1, [line])
        elif self.close is not None:
            edits.insert(self.close.lineno, [line])
        else:
            assert self.empty_line is not None
            at = self.empty_line.lineno
            edits.delete(at, at)
            edits.insert(at, [self.open_indent + "[", line, self.open_indent + "]"])

    def delete_row(self, edits: Edits, row: int) -> None:
        target = self.rows[row]
        edits.delete(target.line.lineno, target.line.lineno)
        if row == len(self.rows) - 1 and row > 0 and not self.trailing:
            prev = self.rows[row - 1]
            edits.set(prev.line.lineno, _TRAILING_COMMA.sub("", prev.line.text.rstrip()))

    def insert_column(self, edits: Edits, column: int, header: str, cells: list[str]) -> None:
        names = self.names() or []
        order = [*names[:column], header, *names[column:]]
        for i, row in enumerate(self.rows):
            value = coerce(cells[i], None, repr(header)).python() if i < len(cells) else ""
            if self.records:
                record = {**row.value, header: value}
                new: Any = {k: record[k] for k in order if k in record}
            else:
                new = list(row.value) + [""] * (column - len(row.value))
                new.insert(column, value)
            edits.set(row.line.lineno, row.render(new))

    def delete_column(self, edits: Edits, column: int) -> None:
        key = (self.names() or [""])[column] if self.records else None
        for row in self.rows:
            if self.records:
                if key not in row.value:
                    continue
                new: Any = {k: v for k, v in row.value.items() if k != key}
            else:
                if column >= len(row.value):
                    continue
                new = [v for i, v in enumerate(row.value) if i != column]
            edits.set(row.line.lineno, row.render(new))


@dataclass(slots=True)
class _Span:
    start: int  # offsets into the joined body text
    end: int
    value: Any


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


class InlineJsonBody(DatasetBody):
    """A JSON array in any layout: each row is found by its character span and edited in
    place; the bytes around the rows (brackets, separators, line breaks) are kept.

    A new row takes the separator the body already uses between rows (``", "``, ``","``
    or a line break with indentation); a deleted row takes its separator with it.
    """

    shape = "JSON"

    def __init__(self, ident: str, lines: SourceLines, body: list[BodyLine]) -> None:
        super().__init__(ident, lines)
        filled = [bl for bl in body if bl.text.strip()]
        self.first = filled[0].lineno
        self.region = [bl for bl in body if self.first <= bl.lineno <= filled[-1].lineno]
        self.text = "\n".join(bl.text for bl in self.region)
        self.open, self.rows = self._scan()
        kinds = {type(r.value) for r in self.rows}
        if len(kinds) > 1:
            raise unsupported(ident, "it mixes row arrays and records")
        self.records = kinds == {dict}

    def _scan(self) -> tuple[int, list[_Span]]:
        text, decoder = self.text, json.JSONDecoder()
        pos = _skip_ws(text, 0)
        if text[pos : pos + 1] != "[":
            raise unsupported(self.ident, "the JSON is not an array of rows")
        open_at = pos
        pos = _skip_ws(text, pos + 1)
        rows: list[_Span] = []
        while pos < len(text) and text[pos] != "]":
            try:
                value, end = decoder.raw_decode(text, pos)
                check_tree(value, node_budget(text))
            except ContentRefused as exc:
                raise unsupported(self.ident, f"row {len(rows)} cannot be read: {exc}") from None
            except RecursionError:
                raise unsupported(
                    self.ident, f"row {len(rows)} cannot be read: it is nested too deeply"
                ) from None
            except json.JSONDecodeError:
                value, end = None, pos
            except ValueError as exc:  # a number past sys.int_max_str_digits
                raise unsupported(self.ident, f"row {len(rows)} cannot be read: {exc}") from None
            if not isinstance(value, list | dict):
                raise unsupported(self.ident, f"row {len(rows)} is not a JSON row array or record")
            rows.append(_Span(pos, end, value))
            pos = _skip_ws(text, end)
            if text[pos : pos + 1] == ",":
                pos = _skip_ws(text, pos + 1)
            elif text[pos : pos + 1] != "]":
                raise unsupported(self.ident, "the rows are not separated by commas")
        if pos >= len(text) or _skip_ws(text, pos + 1) != len(text):
            raise unsupported(self.ident, "the JSON array is not closed, or text follows it")
        return open_at, rows

    # -- reading ----------------------------------------------------------------------

    def names(self) -> list[str] | None:
        if not self.records:
            return None
        seen: dict[str, None] = {}
        for row in self.rows:
            for key in row.value:
                seen.setdefault(key, None)
        return list(seen)

    def row_count(self) -> int:
        return len(self.rows)

    def width(self) -> int:
        if self.records:
            return len(self.names() or [])
        return max((len(r.value) for r in self.rows), default=0)

    def _value(self, column: int, text: str) -> Any:
        return coerce(text, None, self.column_label(column)).python()

    def _render(self, row: _Span, value: Any) -> str:
        return dumps_like(value, self.text[row.start : row.end])

    def _separator(self) -> str:
        if len(self.rows) >= 2:
            a, b = self.rows[-2], self.rows[-1]
            return self.text[a.end : b.start]
        return ", "

    # -- writing ----------------------------------------------------------------------

    def _write(self, edits: Edits, changes: list[tuple[int, int, str]]) -> None:
        """Apply character changes to the region and turn them into line edits."""
        text = self.text
        for start, end, new in sorted(changes, reverse=True):
            text = text[:start] + new + text[end:]
        old_lines = [bl.text for bl in self.region]
        new_lines = text.split("\n")
        if len(new_lines) == len(old_lines):
            for bl, line in zip(self.region, new_lines, strict=True):
                if line != bl.text:
                    edits.set(bl.lineno, line)
            return
        last = self.region[-1].lineno
        edits.delete(self.first, last)
        edits.insert(self.first, new_lines)

    def update_cell(self, edits: Edits, row: int, column: int, value: str) -> None:
        target = self.rows[row]
        new = self._value(column, value)
        if self.records:
            key = (self.names() or [])[column]
            if key in target.value and _same(target.value[key], new):
                return
            record = {**target.value, key: new}
            replaced: Any = {k: record[k] for k in (self.names() or []) if k in record}
        else:
            cells = list(target.value) + [""] * (column + 1 - len(target.value))
            if column < len(target.value) and _same(cells[column], new):
                return
            cells[column] = new
            replaced = cells
        self._write(edits, [(target.start, target.end, self._render(target, replaced))])

    def insert_row(self, edits: Edits, row: int, cells: list[str]) -> None:
        values = [self._value(i, v) for i, v in enumerate(cells)]
        values += [""] * (self.width() - len(values))
        value: Any = dict(zip(self.names() or [], values, strict=False)) if self.records else values
        if not self.rows:
            at = self.open + 1
            self._write(edits, [(at, at, dumps(value))])
            return
        text = self._render(self.rows[0], value)
        sep = self._separator()
        if row < len(self.rows):
            at = self.rows[row].start
            self._write(edits, [(at, at, text + sep)])
        else:
            at = self.rows[-1].end
            self._write(edits, [(at, at, sep + text)])

    def delete_row(self, edits: Edits, row: int) -> None:
        target = self.rows[row]
        if len(self.rows) == 1:
            change = (target.start, target.end, "")
        elif row < len(self.rows) - 1:
            change = (target.start, self.rows[row + 1].start, "")
        else:
            change = (self.rows[row - 1].end, target.end, "")
        self._write(edits, [change])

    def insert_column(self, edits: Edits, column: int, header: str, cells: list[str]) -> None:
        names = self.names() or []
        order = [*names[:column], header, *names[column:]]
        changes = []
        for i, row in enumerate(self.rows):
            value = coerce(cells[i], None, repr(header)).python() if i < len(cells) else ""
            if self.records:
                record = {**row.value, header: value}
                new: Any = {k: record[k] for k in order if k in record}
            else:
                new = list(row.value) + [""] * (column - len(row.value))
                new.insert(column, value)
            changes.append((row.start, row.end, self._render(row, new)))
        self._write(edits, changes)

    def delete_column(self, edits: Edits, column: int) -> None:
        key = (self.names() or [""])[column] if self.records else None
        changes = []
        for row in self.rows:
            if self.records:
                if key not in row.value:
                    continue
                new: Any = {k: v for k, v in row.value.items() if k != key}
            else:
                if column >= len(row.value):
                    continue
                new = [v for i, v in enumerate(row.value) if i != column]
            changes.append((row.start, row.end, self._render(row, new)))
        if changes:
            self._write(edits, changes)
