"""The cells of a ``::table`` block, read the way the table ops read them.

The grid editor must address exactly the rows and columns `update_table_cell` will
(body rows counted from zero after the header and separator), so it asks the engine's own
table reader (``core.noma.patch.tables.read_table``) instead of splitting pipes itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.noma.api import OpState, code_spans
from core.noma.api import read_table as read_table_body

from .document import LoadedDocument


@dataclass(slots=True)
class TableCells:
    ident: str
    header: list[str] | None
    rows: list[list[str]]
    width: int


def shown_cell(text: str) -> str:
    """A cell as a reader sees it: ``\\|`` is the pipe it stands for (inside a code span,
    where it is literal text, it stays). Writing escapes the pipe again (`escape_cell`)."""
    if "\\|" not in text:
        return text
    spans = code_spans(text)
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("\\|", i) and not any(a <= i < b for a, b in spans):
            out.append("|")
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def read_table(loaded: LoadedDocument, block: int) -> TableCells:
    """Raises `core.noma.patch.errors.PatchError` (with its code) when it is not a table."""
    ident = loaded.blocks[block].id or ""
    body = read_table_body(OpState(loaded.source.text, loaded.doc), ident)
    return TableCells(
        ident,
        list(body.header.cells) if body.header is not None else None,
        [list(r.cells) for r in body.body],
        body.width,
    )
