"""CSV and TSV ``::dataset`` bodies: the first non-blank line is the header, every other
non-blank line is one row (a quoted cell may hold the delimiter but not a line break).

A touched line keeps the source text of the cells it does not change and its separator
style (``a,b`` or ``a, b``); a new cell is quoted only when it must be, with ``"``
doubled. CSV carries no types, so values are written as given.
"""

from __future__ import annotations

from .dataset_body import BodyLine, DatasetBody, Edits, unsupported
from .dataset_values import csv_field
from .text import SourceLines


def split_fields(text: str, delimiter: str) -> list[str] | None:
    """The fields of one line as written (quotes and spaces kept); None when a quote is
    left open or text follows a closing quote."""
    fields: list[str] = []
    i, n, start = 0, len(text), 0
    while True:
        j = i
        while j < n and text[j] == " ":
            j += 1
        if j < n and text[j] == '"':
            j += 1
            while True:
                if j >= n:
                    return None
                if text[j] == '"':
                    if text[j + 1 : j + 2] == '"':
                        j += 2
                        continue
                    break
                j += 1
            j += 1
            while j < n and text[j] == " ":
                j += 1
            if j < n and text[j] != delimiter:
                return None
        else:
            while j < n and text[j] != delimiter:
                j += 1
        fields.append(text[start:j])
        if j >= n:
            return fields
        i = start = j + 1


def field_value(raw: str) -> str:
    """The text a reader sees in one field."""
    bare = raw.strip(" ")
    if len(bare) >= 2 and bare[0] == '"' and bare[-1] == '"':
        return bare[1:-1].replace('""', '"')
    return raw


class CsvRow:
    def __init__(self, line: BodyLine, fields: list[str], delimiter: str) -> None:
        self.line = line
        self.fields = fields
        self.spaced = (
            delimiter == "," and len(fields) > 1 and all(f.startswith(" ") for f in fields[1:])
        )


class CsvBody(DatasetBody):
    def __init__(
        self, ident: str, lines: SourceLines, body: list[BodyLine], delimiter: str
    ) -> None:
        super().__init__(ident, lines)
        self.delimiter = delimiter
        self.shape = "TSV" if delimiter == "\t" else "CSV"
        rows: list[CsvRow] = []
        for bl in body:
            if not bl.text.strip():
                continue
            fields = split_fields(bl.text, delimiter)
            if fields is None:
                raise unsupported(
                    ident, f"line {bl.lineno} has a quoted cell that is not closed on that line"
                )
            rows.append(CsvRow(bl, fields, delimiter))
        if not rows:
            raise unsupported(ident, "the body has no header line")
        self.header = rows[0]
        self.rows = rows[1:]

    def names(self) -> list[str] | None:
        return [field_value(f).strip() for f in self.header.fields]

    def row_count(self) -> int:
        return len(self.rows)

    def width(self) -> int:
        return max(len(r.fields) for r in (self.header, *self.rows))

    def _render(self, fields: list[str], spaced: bool) -> str:
        if spaced:
            return ", ".join(f.lstrip(" ") for f in fields)
        return self.delimiter.join(fields)

    def _field(self, value: str) -> str:
        return csv_field(value, self.delimiter)

    def _write(self, edits: Edits, row: CsvRow, fields: list[str]) -> None:
        edits.set(row.line.lineno, self._render(fields, row.spaced))

    def update_cell(self, edits: Edits, row: int, column: int, value: str) -> None:
        target = self.rows[row]
        fields = target.fields + [""] * (column + 1 - len(target.fields))
        new = self._field(value)
        if column < len(target.fields) and fields[column].strip(" ") == new:
            return
        fields[column] = new
        self._write(edits, target, fields)

    def insert_row(self, edits: Edits, row: int, cells: list[str]) -> None:
        fields = [self._field(v) for v in cells]
        fields += [""] * (self.width() - len(fields))
        text = self._render(fields, self.header.spaced)
        if row < len(self.rows):
            edits.insert(self.rows[row].line.lineno, [text])
        else:
            last = self.rows[-1] if self.rows else self.header
            edits.insert(last.line.lineno + 1, [text])

    def delete_row(self, edits: Edits, row: int) -> None:
        lineno = self.rows[row].line.lineno
        edits.delete(lineno, lineno)

    def insert_column(self, edits: Edits, column: int, header: str, cells: list[str]) -> None:
        for i, row in enumerate((self.header, *self.rows)):
            if i == 0:
                value = self._field(header)
            else:
                value = self._field(cells[i - 1]) if i - 1 < len(cells) else ""
            fields = row.fields + [""] * (column - len(row.fields))
            fields.insert(column, value)
            self._write(edits, row, fields)

    def delete_column(self, edits: Edits, column: int) -> None:
        for row in (self.header, *self.rows):
            if column < len(row.fields):
                fields = list(row.fields)
                del fields[column]
                self._write(edits, row, fields)
