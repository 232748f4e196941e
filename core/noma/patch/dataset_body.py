"""What every editable ``::dataset`` body shape offers, and a buffer of line edits.

Each shape (``dataset_yaml``, ``dataset_csv``, ``dataset_json``) reads its rows from the
source lines and records the edits one op makes; the op module checks row and column
ranges before calling it, so a shape only has to keep its own syntax right.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from .errors import INVALID_CONTENT, PatchError
from .text import SourceLines


def unsupported(ident: str, why: str) -> PatchError:
    """The one error for a body this engine cannot edit without rewriting it."""
    return PatchError(
        INVALID_CONTENT,
        f"::dataset '{ident}': {why}. Edits in place cover YAML '- [a, b]' rows with "
        "'name: type' schema lines, CSV/TSV with one row per line, and pretty-printed JSON "
        "arrays with one row or record per line; rewrite this body with replace_body.",
    )


@dataclass(slots=True)
class BodyLine:
    lineno: int
    text: str


class Edits:
    """Line edits collected against the op's starting line numbers, applied at once.

    In-place rewrites go first (they shift nothing), then inserts and deletes from the
    bottom up, so every edit lands where it was aimed. At one line a delete runs before
    an insert, so "replace line N" can be written as delete N + insert before N.
    """

    def __init__(self, lines: SourceLines) -> None:
        self.lines = lines
        self._sets: dict[int, str] = {}
        self._moves: list[tuple[int, int, int, list[str]]] = []  # (start, kind, end, lines)

    def set(self, lineno: int, text: str) -> None:
        self._sets[lineno] = text

    def insert(self, before: int, texts: list[str]) -> None:
        self._moves.append((before, 0, before - 1, texts))

    def delete(self, start: int, end: int) -> None:
        self._moves.append((start, 1, end, []))

    def apply(self) -> None:
        for lineno, text in self._sets.items():
            if self.lines.get(lineno) != text:
                self.lines.set(lineno, text)
        for start, _kind, end, texts in sorted(
            self._moves, key=lambda m: (m[0], m[1]), reverse=True
        ):
            self.lines.splice(start, end, texts)


class DatasetBody(ABC):
    """One editable dataset body. Rows and columns are zero-based; callers have checked
    that ``row``/``column`` are in range (``column`` may be past a short row's end)."""

    shape: str = "dataset"

    def __init__(self, ident: str, lines: SourceLines) -> None:
        self.ident = ident
        self.lines = lines

    @abstractmethod
    def names(self) -> list[str] | None:
        """Column labels the body declares, or None when it names no columns."""

    @abstractmethod
    def row_count(self) -> int: ...

    @abstractmethod
    def width(self) -> int:
        """The column count: declared names or the widest row, whichever is larger."""

    @abstractmethod
    def update_cell(self, edits: Edits, row: int, column: int, value: str) -> None: ...

    @abstractmethod
    def insert_row(self, edits: Edits, row: int, cells: list[str]) -> None: ...

    @abstractmethod
    def delete_row(self, edits: Edits, row: int) -> None: ...

    @abstractmethod
    def insert_column(self, edits: Edits, column: int, header: str, cells: list[str]) -> None:
        """``cells`` fill the rows in order; rows past the list get an empty cell."""

    @abstractmethod
    def delete_column(self, edits: Edits, column: int) -> None: ...

    def column_label(self, column: int) -> str:
        names = self.names()
        if names and column < len(names):
            return repr(names[column])
        return str(column)
