"""Pipe-row text for ``::table`` bodies: reading cells, escaping new values, writing rows.

A ``::table`` row may omit its outer pipes (``a | b``) or keep them (``| a | b |``); both
read the same. A touched row is always written back in the full ``| a | b |`` form
(noma-interop), so the edit is visible and unambiguous whatever the row looked like before.
Cells are read with the parser's own splitter so that a written row reads back exactly as
the parser will see it. Reading a line as cells lives in `core.noma.table_cells`.
"""

from __future__ import annotations

from ..parser import code_spans
from ..table_cells import SEPARATOR_CELL as SEPARATOR_CELL  # re-exported
from ..table_cells import is_separator as is_separator  # re-exported
from ..table_cells import split_row as split_row  # re-exported
from .errors import INVALID_CONTENT, PatchError
from .opener import check_one_line


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def render_row(cells: list[str], indent: str = "") -> str:
    """The canonical ``| a | b |`` form of a row."""
    return indent + "| " + " | ".join(cells) + " |"


_code_spans = code_spans


def escape_cell(value: str, *, what: str = "A table cell") -> str:
    """Make ``value`` one cell: strip it and turn pipes outside code spans into ``\\|``.

    A pipe already written as ``\\|`` is left alone (no double escaping); pipes inside a
    code span are kept, because ``\\|`` would show literally there. A line break cannot
    live in a pipe row, so it is refused.
    """
    check_one_line(value, what, "a table cell")
    text = value.strip()
    if "|" not in text:
        return text
    inside = [False] * len(text)  # one pass over the spans, not spans x characters
    for a, b in _code_spans(text):
        inside[a:b] = [True] * (b - a)
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch == "|" and not (i > 0 and text[i - 1] == "\\") and not inside[i]:
            out.append("\\|")
        else:
            out.append(ch)
    return "".join(out)


def checked_row(cells: list[str], indent: str = "") -> str:
    """Render ``cells`` and make sure the row reads back as exactly those cells.

    The parser reads a backtick as opening or closing a code span, so an unpaired backtick
    (or runs that pair up differently) would swallow a cell separator or split a cell at
    a kept pipe; such a value is refused rather than written wrong.
    """
    line = render_row(cells, indent)
    if split_row(line) != cells:
        raise PatchError(
            INVALID_CONTENT,
            "The new cell text would not read back as the cells written: its backticks must "
            "pair up, since an open code span swallows the '|' that ends the cell.",
        )
    return line
