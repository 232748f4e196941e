"""YAML ``::dataset`` bodies: a ``schema:`` mapping and/or ``columns:`` list, and rows as
one-line flow sequences::

    schema:
      vertical: string
      growth: number
    rows:
      - [legal, 3.4]   # a comment here survives

``rows:`` (or ``data:``) may be missing or empty, and a body may also be a bare top-level
sequence of ``- [a, b]`` rows. A touched row keeps its ``- `` prefix, its trailing comment
and the source text of every cell it does not change; only the changed cell is written
anew, as a plain scalar unless YAML needs quotes (single quotes). Column ops insert or
remove the matching ``schema:`` line and ``columns:`` entry too. A new schema line's type
is inferred from the new cells (noma-interop leaves it open: see ``infer_type``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..bounded import ContentRefused
from ..frontmatter import load_yaml
from .dataset_body import BodyLine, DatasetBody, Edits, unsupported
from .dataset_values import coerce, infer_type, yaml_scalar, yaml_string
from .text import SourceLines

_KEY_LINE = re.compile(r"""(?P<key>[A-Za-z_][\w.-]*|'[^']*'|"[^"]*")[ \t]*:(?P<rest>[ \t].*)?\Z""")
_ITEM = re.compile(r"[ \t]*-[ \t]+")
# Inside a flow row, characters that could make YAML see items differently from the simple
# split (mappings, anchors, tags, quotes): a row holding one is checked by a real load.
_UNUSUAL = re.compile(r"""[:?&*!|>%@`'"\\{}\[\]]""")
_DATASET_KEY = re.compile(r"(?:schema|columns|rows|data)[ \t]*:(?:[ \t]|\Z)")
_ROW_KEYS = ("rows", "data")
PAD = "''"


def split_flow(text: str, start: int) -> tuple[list[str], str] | None:
    """Split the one-line flow sequence at ``text[start] == '['`` into the source text of
    each scalar item and what follows the ``]`` (spaces and a comment). None when the
    line is anything else: nested collections, an unclosed quote, a multi-line row."""
    i, n = start + 1, len(text)
    cells: list[str] = []
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return None
        if text[i] == "]" and not cells:
            i += 1
            break
        ch = text[i]
        if ch == "'":
            j = i + 1
            while True:
                j = text.find("'", j)
                if j < 0:
                    return None
                if text[j + 1 : j + 2] == "'":
                    j += 2
                    continue
                break
            token, i = text[i : j + 1], j + 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return None
            token, i = text[i : j + 1], j + 1
        else:
            j = i
            while j < n and text[j] not in ",]":
                if text[j] in "[{}" or (text[j] == "#" and text[j - 1] in " \t"):
                    return None
                j += 1
            token, i = text[i:j].rstrip(), j
            if not token:
                return None
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return None
        cells.append(token)
        if text[i] == "]":
            i += 1
            break
        if text[i] != ",":
            return None
        i += 1
        k = i
        while k < n and text[k] in " \t":
            k += 1
        if text[k : k + 1] == "]":  # a trailing comma: [a, b, ]
            i = k + 1
            break
    suffix = text[i:]
    if suffix.strip() and not (suffix[0] in " \t" and suffix.lstrip().startswith("#")):
        return None
    if not _UNUSUAL.search(text, start + 1, i - 1):
        return cells, suffix  # plain words and numbers: nothing YAML could read otherwise
    try:
        loaded = load_yaml(text[start:])
    except (yaml.YAMLError, ValueError):  # ValueError: beyond `bounded`'s bounds
        return None
    if not isinstance(loaded, list) or len(loaded) != len(cells):
        return None
    return cells, suffix


@dataclass(slots=True)
class Section:
    """A top-level ``key:`` line and the lines under it (blank and comment lines left out)."""

    key: str
    line: BodyLine
    inline: str  # the value written after ``key:``, comment removed
    comment: str  # `` # ...`` after the key line's value, as written
    items: list[BodyLine] = field(default_factory=list)

    @property
    def last_line(self) -> int:
        return self.items[-1].lineno if self.items else self.line.lineno

    def key_only(self) -> str:
        """The key line with its inline value (``[]``, ``{}``) removed."""
        text = self.line.text
        return text[: text.index(":") + 1] + self.comment


@dataclass(slots=True)
class YamlRow:
    line: BodyLine
    prefix: str  # indentation and "- "
    cells: list[str]  # the source text of each item
    suffix: str  # after "]": spaces and a comment

    def render(self, cells: list[str]) -> str:
        return f"{self.prefix}[{', '.join(cells)}]{self.suffix}"


@dataclass(slots=True)
class Entry:
    """One ``schema:`` entry or ``columns:`` item: its source lines."""

    start: int
    end: int
    indent: str


def _split_comment(rest: str) -> tuple[str, str]:
    """`` value  # note`` -> (``value``, ``  # note``); quotes protect a ``#``."""
    quote = ""
    for i, ch in enumerate(rest):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or rest[i - 1] in " \t"):
            value = rest[:i].rstrip()
            return value.strip(), rest[len(value) :]
    return rest.strip(), ""


class YamlBody(DatasetBody):
    shape = "YAML"

    def __init__(self, ident: str, lines: SourceLines, body: list[BodyLine]) -> None:
        super().__init__(ident, lines)
        self.body = body
        self.sections: dict[str, Section] = {}
        top_rows: list[BodyLine] = []
        current: Section | None = None
        for bl in body:
            text = bl.text
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if text[0] in " \t" or (text.startswith("-") and _ITEM.match(text)):
                if current is not None:
                    current.items.append(bl)
                elif text[0] not in " \t":
                    top_rows.append(bl)
                else:
                    raise unsupported(ident, f"line {bl.lineno} is indented under no key")
                continue
            m = _KEY_LINE.match(text)
            if m is None:
                raise unsupported(ident, f"line {bl.lineno} is not a 'key:' line")
            key = m.group("key").strip("'\"")
            if key in self.sections:
                raise unsupported(ident, f"the key '{key}' appears twice")
            inline, comment = _split_comment(m.group("rest") or "")
            current = Section(key, bl, inline, comment)
            self.sections[key] = current
        if top_rows and self.sections:
            raise unsupported(ident, "it mixes a top-level list with 'key:' lines")
        self.top_level = bool(top_rows)
        self.rows_section = next((self.sections[k] for k in _ROW_KEYS if k in self.sections), None)
        row_lines = top_rows if self.top_level else self._row_lines()
        self.rows = [self._row(bl) for bl in row_lines]
        # Rows are checked one by one above; YAML-load only the rest (schema, columns),
        # which keeps a large dataset cheap to open.
        skip = {bl.lineno for bl in row_lines}
        try:
            data = load_yaml("\n".join(bl.text for bl in body if bl.lineno not in skip))
        except yaml.YAMLError as exc:
            raise unsupported(
                ident, f"the body is not valid YAML ({exc.__class__.__name__})"
            ) from None
        except ContentRefused as exc:
            raise unsupported(ident, f"the body cannot be read: {exc}") from None
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}
        self.types, self.schema_names = self._schema_types()
        self.column_names = self._columns_list()

    # -- reading ----------------------------------------------------------------------

    def _row_lines(self) -> list[BodyLine]:
        sec = self.rows_section
        if sec is None:
            return []
        if sec.inline not in ("", "[]"):
            raise unsupported(self.ident, f"'{sec.key}:' is written on one line")
        if sec.inline == "[]" and sec.items:
            raise unsupported(self.ident, f"'{sec.key}: []' is followed by more lines")
        return sec.items

    def _row(self, bl: BodyLine) -> YamlRow:
        m = _ITEM.match(bl.text)
        split = (
            split_flow(bl.text, m.end()) if m and bl.text[m.end() : m.end() + 1] == "[" else None
        )
        if m is None or split is None:
            raise unsupported(
                self.ident, f"line {bl.lineno} is not a one-line '- [a, b]' row of plain values"
            )
        return YamlRow(bl, bl.text[: m.end()], *split)

    def _schema_types(self) -> tuple[list[Any], list[str] | None]:
        schema = self.data.get("schema")
        if isinstance(schema, dict):
            return list(schema.values()), [str(k) for k in schema]
        if isinstance(schema, list):
            types, names = [], []
            for item in schema:
                if isinstance(item, dict):
                    types.append(item.get("type"))
                    names.append(str(item.get("name", "")))
                else:
                    types.append(None)
                    names.append(str(item))
            return types, names
        return [], None

    def _columns_list(self) -> list[str] | None:
        cols = self.data.get("columns")
        if isinstance(cols, list):
            return [str(c) for c in cols]
        return None

    def names(self) -> list[str] | None:
        return self.schema_names or self.column_names

    def row_count(self) -> int:
        return len(self.rows)

    def width(self) -> int:
        declared = len(self.names() or [])
        return max([declared, *(len(r.cells) for r in self.rows)])

    def _type(self, column: int) -> Any:
        return self.types[column] if column < len(self.types) else None

    def _cell(self, column: int, value: str) -> str:
        return yaml_scalar(coerce(value, self._type(column), self.column_label(column)))

    # -- rows -------------------------------------------------------------------------

    def update_cell(self, edits: Edits, row: int, column: int, value: str) -> None:
        target = self.rows[row]
        cells = target.cells + [PAD] * (column + 1 - len(target.cells))
        cell = self._cell(column, value)
        if column < len(target.cells) and cells[column] == cell:
            return
        cells[column] = cell
        edits.set(target.line.lineno, target.render(cells))

    def _new_prefix(self) -> str:
        if self.rows:
            return self.rows[0].prefix
        return "- " if self.top_level else "  - "

    def insert_row(self, edits: Edits, row: int, cells: list[str]) -> None:
        values = [self._cell(i, v) for i, v in enumerate(cells)]
        values += [PAD] * (self.width() - len(values))
        text = f"{self._new_prefix()}[{', '.join(values)}]"
        if row < len(self.rows):
            edits.insert(self.rows[row].line.lineno, [text])
            return
        if self.rows:
            edits.insert(self.rows[-1].line.lineno + 1, [text])
            return
        sec = self.rows_section
        if sec is not None:
            if sec.inline == "[]":
                edits.set(sec.line.lineno, sec.key_only())
            edits.insert(sec.line.lineno + 1, [text])
        elif self.body:
            edits.insert(self.body[-1].lineno + 1, ["rows:", text])
        else:
            raise unsupported(self.ident, "the body is empty")

    def delete_row(self, edits: Edits, row: int) -> None:
        lineno = self.rows[row].line.lineno
        edits.delete(lineno, lineno)

    # -- columns ----------------------------------------------------------------------

    def _entries(self, key: str) -> list[Entry] | None:
        """Source entries of a block ``schema:`` mapping or ``columns:`` list; None when
        the section is absent, [] when it is empty, and an error when it is written in a
        form these ops cannot edit line by line."""
        sec = self.sections.get(key)
        if sec is None or (key == "columns" and sec.inline.startswith("[")):
            return None  # absent, or a one-line list (see _flow_columns)
        if sec.inline not in ("", "{}", "[]"):
            raise unsupported(self.ident, f"'{key}:' is written on one line")
        if not sec.items:
            return []
        indent = sec.items[0].text[: len(sec.items[0].text) - len(sec.items[0].text.lstrip())]
        entries: list[Entry] = []
        for bl in sec.items:
            own = bl.text[: len(bl.text) - len(bl.text.lstrip())]
            starts_item = _ITEM.match(bl.text) is not None
            if own == indent and (starts_item == (key == "columns")):
                entries.append(Entry(bl.lineno, bl.lineno, indent))
            elif len(own) > len(indent) and entries:
                entries[-1].end = bl.lineno
            else:
                form = "'- name' item" if key == "columns" else "'name: type' line"
                raise unsupported(self.ident, f"the '{key}:' entries are not one {form} each")
        return entries

    def _flow_columns(self) -> tuple[Section, list[str], str] | None:
        sec = self.sections.get("columns")
        if sec is None or not sec.inline.startswith("["):
            return None
        text = sec.line.text
        start = text.index("[", text.index(":"))
        split = split_flow(text, start)
        if split is None:
            raise unsupported(self.ident, "'columns:' is not a one-line list of plain names")
        return sec, split[0], text[:start]

    def _check_entries(
        self, key: str, entries: list[Entry] | None, names: list[str] | None
    ) -> None:
        if entries is not None and names is not None and len(entries) != len(names):
            raise unsupported(self.ident, f"the '{key}:' entries do not match its names")

    def insert_column(self, edits: Edits, column: int, header: str, cells: list[str]) -> None:
        schema = self._entries("schema")
        self._check_entries("schema", schema, self.schema_names)
        columns = self._entries("columns")
        self._check_entries("columns", columns, self.column_names)
        flow = self._flow_columns()
        kind = infer_type(cells)
        name = yaml_string(header)
        if schema is not None:
            self._insert_entry(edits, "schema", schema, column, f"{name}: {kind}")
        if columns is not None:
            self._insert_entry(edits, "columns", columns, column, f"- {name}")
        if flow is not None:
            sec, items, head = flow
            items.insert(min(column, len(items)), name)
            edits.set(sec.line.lineno, f"{head}[{', '.join(items)}]{sec.comment}")
        type_name = kind if schema is not None else None
        for i, row in enumerate(self.rows):
            value = PAD
            if i < len(cells):
                value = yaml_scalar(coerce(cells[i], type_name, repr(header)))
            new = row.cells + [PAD] * (column - len(row.cells))
            new.insert(column, value)
            edits.set(row.line.lineno, row.render(new))

    def _insert_entry(
        self, edits: Edits, key: str, entries: list[Entry], column: int, text: str
    ) -> None:
        sec = self.sections[key]
        if column < len(entries):
            edits.insert(entries[column].start, [entries[column].indent + text])
            return
        indent = entries[0].indent if entries else "  "
        if sec.inline in ("{}", "[]"):
            edits.set(sec.line.lineno, sec.key_only())
        after = entries[-1].end if entries else sec.line.lineno
        edits.insert(after + 1, [indent + text])

    def delete_column(self, edits: Edits, column: int) -> None:
        schema = self._entries("schema")
        self._check_entries("schema", schema, self.schema_names)
        columns = self._entries("columns")
        self._check_entries("columns", columns, self.column_names)
        flow = self._flow_columns()
        for entries in (schema, columns):
            if entries is not None and column < len(entries):
                edits.delete(entries[column].start, entries[column].end)
        if flow is not None:
            sec, items, head = flow
            if column < len(items):
                del items[column]
                edits.set(sec.line.lineno, f"{head}[{', '.join(items)}]{sec.comment}")
        for row in self.rows:
            if column < len(row.cells):
                new = list(row.cells)
                del new[column]
                edits.set(row.line.lineno, row.render(new))


def looks_like_yaml(lines: list[str]) -> bool:
    """A body with a top-level ``schema:``/``columns:``/``rows:``/``data:`` key, or one
    that starts with a ``- `` list item (a bare list of rows)."""
    significant = [t for t in lines if t.strip() and not t.lstrip().startswith("#")]
    if significant and _ITEM.match(significant[0]) and not significant[0][0].isspace():
        return True
    return any(_DATASET_KEY.match(t) for t in significant)
