"""``::dataset`` ops: update_dataset_cell, insert_dataset_row, delete_dataset_row,
insert_dataset_column, delete_dataset_column (spec §1.5).

The inline body is edited in place, line by line, in one of three shapes (spec §1.5:
"inline YAML row arrays plus single-line CSV/TSV datasets with quoted cells and simple
pretty-printed JSON row or record arrays"):

* YAML: ``schema:``/``columns:`` and ``- [a, b]`` rows (``dataset_yaml``);
* CSV/TSV: a header line, then one row per line (``dataset_csv``);
* JSON: ``[`` / one row array or record per line / ``]`` (``dataset_json``).

The shape comes from ``format=`` (csv, tsv, json, yaml), else from the language of a code
fence wrapping the body, else from the text: ``[``/``{`` is JSON, a YAML mapping with
schema/columns/rows/data (or a list of rows) is YAML, anything else is CSV (TSV when the
header line has a tab). Any other layout is refused with ``invalid_content`` pointing to
``replace_body``, never rewritten wholesale.

Columns are addressed by index or label. Labels come from a ``columns=`` attribute when
there is one (as the validator reads them), else from the body: schema keys, a
``columns:`` list, the CSV header or the JSON record keys. Column ops keep a ``columns=``
attribute in step. A dataset that names no columns anywhere still takes new columns; the
header then has nowhere to be written.
"""

from __future__ import annotations

from typing import Any

from ..bounded import ContentRefused
from ..nodes import Directive
from ..parser import FENCE
from .dataset_body import BodyLine, DatasetBody, Edits, unsupported
from .dataset_csv import CsvBody
from .dataset_json import json_body
from .dataset_values import check_one_line
from .dataset_yaml import YamlBody, looks_like_yaml
from .errors import INVALID_CONTENT, TARGET_MISSING, PatchError
from .opener import render_attr, set_attr
from .state import OpState


class Dataset:
    """A resolved ``::dataset`` target: its directive, editable body and column labels."""

    def __init__(self, state: OpState, node: Directive, body: DatasetBody) -> None:
        self.state = state
        self.node = node
        self.body = body
        self.ident = body.ident
        self.attr_names = _attr_names(node)
        self.names = self.attr_names if self.attr_names is not None else body.names()
        self.width = max(body.width(), len(self.attr_names or []))

    def row(self, row: int) -> int:
        count = self.body.row_count()
        if row >= count:
            raise PatchError(
                TARGET_MISSING,
                f"row {row} does not exist: ::dataset '{self.ident}' has {count} row(s) "
                "(rows count from 0, the header is not a row).",
            )
        return row

    def column(self, column: int | str) -> int:
        if isinstance(column, str):
            return self._label(column)
        if column >= self.width:
            valid = f"0..{self.width - 1}" if self.width else "none"
            raise PatchError(
                TARGET_MISSING,
                f"column {column} does not exist: ::dataset '{self.ident}' has {self.width} "
                f"column(s) (valid: {valid}).",
            )
        return column

    def _label(self, label: str) -> int:
        names = self.names
        if not names:
            raise PatchError(
                TARGET_MISSING,
                f"column {label!r} cannot be found: ::dataset '{self.ident}' names no columns "
                "(no schema, columns list, header or columns= attribute); use an index.",
            )
        if label in names:
            return names.index(label)
        folded = [i for i, name in enumerate(names) if name.casefold() == label.casefold()]
        if len(folded) == 1:
            return folded[0]
        shown = ", ".join(repr(n) for n in names)
        raise PatchError(
            TARGET_MISSING,
            f"column {label!r} does not exist: ::dataset '{self.ident}' has the columns {shown}.",
        )

    def set_columns_attr(self, edits: Edits, change: list[str]) -> None:
        """Write the ``columns=`` attribute back after a column op changed its names."""
        raw = self.node.raw_attrs.get("columns")
        if raw is None:
            return
        sep = (", " if ", " in raw else ",") if "," in raw else " "
        bad = sep.strip() or " "
        if any(bad in name for name in change):
            shown = "a comma" if bad == "," else "a space"
            raise PatchError(
                INVALID_CONTENT,
                f"A column name cannot hold {shown} in the columns= attribute of ::dataset "
                f"'{self.ident}'.",
            )
        line = self.state.lines.get(self.node.line)
        rendered = render_attr("columns", sep.join(change))
        edits.set(self.node.line, set_attr(line, "columns", rendered))


def _attr_names(node: Directive) -> list[str] | None:
    """``columns="a, b"`` or ``columns="a b"`` (commas win), as the validator splits it."""
    raw = node.raw_attrs.get("columns")
    if raw is None:
        return None
    parts = raw.split(",") if "," in raw else raw.split()
    return [p.strip() for p in parts if p.strip()]


def _body_lines(state: OpState, node: Directive) -> tuple[list[BodyLine], str | None]:
    """The body lines, unwrapped from a surrounding code fence, and the fence language."""
    lines = state.lines
    body = [BodyLine(n, lines.get(n)) for n in range(node.line + 1, node.end_line)]
    filled = [bl for bl in body if bl.text.strip()]
    if not filled:
        return [], None
    m = FENCE.match(filled[0].text)
    if m is None:
        return body, None
    if len(filled) < 2 or filled[-1].text.strip() != "```":
        raise unsupported(node.id or "", "its code fence is not closed inside the block")
    inner = [bl for bl in body if filled[0].lineno < bl.lineno < filled[-1].lineno]
    return inner, (m.group(1).lower() or None)


def _shape(state: OpState, node: Directive, ident: str) -> DatasetBody:
    body, lang = _body_lines(state, node)
    text = "\n".join(bl.text for bl in body)
    if not text.strip():
        src = node.raw_attrs.get("src")
        where = f" (its data is in src={src!r}, which patches do not edit)" if src else ""
        raise PatchError(
            INVALID_CONTENT,
            f"::dataset '{ident}' has no inline rows to edit{where}; write a body with "
            "replace_body first.",
        )
    fmt = str(node.raw_attrs.get("format") or lang or "").lower().rsplit("/", 1)[-1]
    if fmt in ("csv", "tsv"):
        return CsvBody(ident, state.lines, body, "\t" if fmt == "tsv" else ",")
    if fmt == "json" or (fmt not in ("yaml", "yml") and text.lstrip()[:1] in ("[", "{")):
        return json_body(ident, state.lines, body)
    if fmt in ("yaml", "yml") or looks_like_yaml([bl.text for bl in body]):
        return YamlBody(ident, state.lines, body)
    header = next(bl.text for bl in body if bl.text.strip())
    return CsvBody(ident, state.lines, body, "\t" if "\t" in header else ",")


def _dataset(state: OpState, ident: str) -> Dataset:
    node = state.directive(ident)
    if node.name != "dataset":
        raise PatchError(
            TARGET_MISSING,
            f"'{ident}' is a ::{node.name} block, not a ::dataset; dataset ops edit ::dataset "
            "blocks only.",
        )
    if not node.closed:
        raise PatchError(
            INVALID_CONTENT,
            f"::dataset '{ident}' has no closing fence, so its rows cannot be told from what "
            "follows; close it first.",
        )
    try:
        shape = _shape(state, node, ident)
    except (ContentRefused, RecursionError) as exc:  # each shape refuses its own; a backstop
        why = str(exc) if isinstance(exc, ContentRefused) else "it is nested too deeply"
        raise unsupported(ident, f"the body cannot be read: {why}") from None
    return Dataset(state, node, shape)


def _check_cells(ds: Dataset, cells: list[str]) -> None:
    for cell in cells:
        check_one_line(cell)
    if ds.width and len(cells) > ds.width:
        raise PatchError(
            INVALID_CONTENT,
            f"The new row has {len(cells)} cells but ::dataset '{ds.ident}' has {ds.width} "
            "column(s); add a column first.",
        )


def update_dataset_cell(state: OpState, op: dict[str, Any]) -> None:
    ds = _dataset(state, op["id"])
    row = ds.row(op["row"])
    column = ds.column(op["column"])
    edits = Edits(state.lines)
    ds.body.update_cell(edits, row, column, op["value"])
    edits.apply()


def insert_dataset_row(state: OpState, op: dict[str, Any]) -> None:
    ds = _dataset(state, op["id"])
    row, count = op["row"], ds.body.row_count()
    if row > count:
        raise PatchError(
            TARGET_MISSING,
            f"row {row} is out of range: ::dataset '{ds.ident}' has {count} row(s), so a row "
            f"can go at 0..{count}.",
        )
    _check_cells(ds, op["cells"])
    edits = Edits(state.lines)
    ds.body.insert_row(edits, row, op["cells"])
    edits.apply()


def delete_dataset_row(state: OpState, op: dict[str, Any]) -> None:
    ds = _dataset(state, op["id"])
    edits = Edits(state.lines)
    ds.body.delete_row(edits, ds.row(op["row"]))
    edits.apply()


def insert_dataset_column(state: OpState, op: dict[str, Any]) -> None:
    ds = _dataset(state, op["id"])
    column, header, cells = op["column"], op["header"], op["cells"]
    if column > ds.width:
        raise PatchError(
            TARGET_MISSING,
            f"column {column} is out of range: ::dataset '{ds.ident}' has {ds.width} "
            f"column(s), so a column can go at 0..{ds.width}.",
        )
    check_one_line(header, "A column name")
    if ds.names and header in ds.names:
        raise PatchError(
            INVALID_CONTENT, f"::dataset '{ds.ident}' already has a column {header!r}."
        )
    count = ds.body.row_count()
    if len(cells) > count:
        raise PatchError(
            INVALID_CONTENT,
            f"{len(cells)} cells given but ::dataset '{ds.ident}' has {count} row(s); cells "
            "fill the rows in order.",
        )
    for cell in cells:
        check_one_line(cell)
    edits = Edits(state.lines)
    if ds.attr_names is not None:
        names = list(ds.attr_names)
        names.insert(min(column, len(names)), header)
        ds.set_columns_attr(edits, names)
    ds.body.insert_column(edits, column, header, cells)
    edits.apply()


def delete_dataset_column(state: OpState, op: dict[str, Any]) -> None:
    ds = _dataset(state, op["id"])
    column = ds.column(op["column"])
    if ds.width <= 1:
        raise PatchError(
            INVALID_CONTENT,
            f"::dataset '{ds.ident}' has a single column; deleting it would leave no data "
            "(use delete_block or replace_body).",
        )
    edits = Edits(state.lines)
    if ds.attr_names is not None and column < len(ds.attr_names):
        ds.set_columns_attr(edits, [n for i, n in enumerate(ds.attr_names) if i != column])
    ds.body.delete_column(edits, column)
    edits.apply()
