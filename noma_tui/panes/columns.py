"""Table columns that fit the pane: fixed columns keep their width, flexible ones share
what is left (each between a minimum and an optional maximum), so the message and result
columns stay on screen at 80 columns and the op summary reads whole at 200.

Textual's `DataTable` sizes columns when they are added; changing a width afterwards needs
two private attributes (`_require_update_dimensions`, `_clear_caches`), pinned by
tests/tui/test_textual_pins.py so a Textual upgrade that moves them fails loudly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.widgets import DataTable


@dataclass(frozen=True, slots=True)
class Col:
    key: str
    minimum: int
    maximum: int | None = None  # None: takes any width left over
    weight: int = 1


def widths(
    available: int,
    columns: list[Col],
    padding: int,
    desired: dict[str, int] | None = None,
    priority: tuple[str, ...] = (),
) -> dict[str, int]:
    """Each column's content width for a table ``available`` cells wide: minimums first,
    then the ``priority`` columns grow toward what their content needs (``desired``), then
    what is left is shared by weight."""
    out = {c.key: c.minimum for c in columns}
    spare = available - sum(out.values()) - padding * len(columns)
    by_key = {c.key: c for c in columns}
    for key in priority:
        col = by_key.get(key)
        if col is None or spare <= 0:
            continue
        want = (desired or {}).get(key, col.minimum)
        if col.maximum is not None:
            want = min(want, col.maximum)
        step = max(0, min(want - out[key], spare))
        out[key] += step
        spare -= step
    growing = [c for c in columns if c.maximum is None or c.maximum > c.minimum]
    while spare > 0 and growing:
        total = sum(c.weight for c in growing)
        given = 0
        for c in growing:
            share = max(1, spare * c.weight // total)
            room = (c.maximum - out[c.key]) if c.maximum is not None else share
            step = min(share, room, spare - given)
            out[c.key] += step
            given += step
        spare -= given
        growing = [c for c in growing if c.maximum is None or out[c.key] < c.maximum]
        if given == 0:
            break
    return out


def fit(
    table: DataTable[Any],
    columns: list[Col],
    desired: dict[str, int] | None = None,
    priority: tuple[str, ...] = (),
) -> None:
    """Resize ``table``'s columns to its current width (no-op before it has one)."""
    available = table.scrollable_content_region.width
    if available <= 0:
        return
    sized = widths(available, columns, 2 * table.cell_padding, desired, priority)
    changed = False
    for key, column in table.columns.items():
        width = sized.get(str(key.value))
        if width is not None and (column.width != width or column.auto_width):
            column.width = width
            column.auto_width = False
            changed = True
    if changed:
        table._require_update_dimensions = True
        table._clear_caches()
        table.refresh()
