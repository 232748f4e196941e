"""Reading one ``::table`` body line as cells: shared by the table ops and the exports.

A leaf module (the parser's splitter and nothing else), so an export reads a table the way
the patch engine does without loading the patch engine.
"""

from __future__ import annotations

import re

from .parser import split_table_row

SEPARATOR_CELL = re.compile(r"[ \t]*:?-{3,}:?[ \t]*\Z")


def split_row(line: str) -> list[str]:
    """Cells of one body line, stripped; leading and trailing pipes are optional.

    The line is wrapped in pipes and handed to the parser's splitter, so ``\\|`` and pipes
    inside code spans never split. An outer pipe shows up as an empty first or last cell,
    which is dropped.
    """
    text = line.strip()
    if not text:
        return []
    cells = split_table_row("|" + text + "|")
    if text.startswith("|"):
        cells = cells[1:]
    if len(cells) > 1 and text.endswith("|") and cells[-1] == "":
        cells = cells[:-1]
    return cells


def is_separator(line: str) -> bool:
    """A ``| --- | :---: |`` line: every cell is dashes (>= 3) with optional colons."""
    cells = split_row(line)
    return bool(cells) and all(SEPARATOR_CELL.match(c) for c in cells)
