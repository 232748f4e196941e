"""JSON ``::dataset`` bodies: a pretty-printed top-level array with one row per line,
either row arrays (``["legal", 3.4],``) or records (``{"vertical": "legal"},``)::

    [
      ["legal", 3.4],
      ["healthcare", 2.9]
    ]

A touched line is re-serialised compactly (``["legal",3.8]``, as ``JSON.stringify``
writes it) with its indentation and trailing comma kept; other lines keep their bytes.
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

from .dataset_body import BodyLine, DatasetBody, Edits, unsupported
from .dataset_values import coerce
from .text import SourceLines

_TRAILING_COMMA = re.compile(r",[ \t]*\Z")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


@dataclass(slots=True)
class JsonRow:
    line: BodyLine
    indent: str
    value: Any  # a list (row array) or a dict (record)
    comma: bool

    def render(self, value: Any) -> str:
        return self.indent + dumps(value) + ("," if self.comma else "")


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
            raise unsupported(
                ident, "the JSON is not an array with '[' and ']' on lines of their own"
            )
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
            value = json.loads(source)
        except ValueError:
            value = None
        if not isinstance(value, list | dict):
            raise unsupported(self.ident, f"line {bl.lineno} is not one JSON row array or record")
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
        if row < count:
            line = self._indent() + dumps(value) + ","
            edits.insert(self.rows[row].line.lineno, [line])
            return
        line = self._indent() + dumps(value) + ("," if self.trailing else "")
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
