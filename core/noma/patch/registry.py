"""Op name -> implementation. Each implementation mutates an `OpState` or raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import blocks, datasets, notes, tables
from .state import OpState

OpFunc = Callable[[OpState, dict[str, Any]], None]

OPS: dict[str, OpFunc] = {
    "replace_block": blocks.replace_block,
    "add_block": blocks.add_block,
    "delete_block": blocks.delete_block,
    "update_attribute": blocks.update_attribute,
    "rename_id": blocks.rename_id,
    "replace_body": blocks.replace_body,
    "update_heading": blocks.update_heading,
    "remove_attribute": blocks.remove_attribute,
    "move_block": blocks.move_block,
    "add_comment": notes.add_comment,
    "resolve_comment": notes.resolve_comment,
    "add_footnote": notes.add_footnote,
    "add_endnote": notes.add_endnote,
    "add_change_request": notes.add_change_request,
    "update_table_cell": tables.update_table_cell,
    "update_table_header_cell": tables.update_table_header_cell,
    "insert_table_row": tables.insert_table_row,
    "delete_table_row": tables.delete_table_row,
    "insert_table_column": tables.insert_table_column,
    "delete_table_column": tables.delete_table_column,
    "update_dataset_cell": datasets.update_dataset_cell,
    "insert_dataset_row": datasets.insert_dataset_row,
    "delete_dataset_row": datasets.delete_dataset_row,
    "insert_dataset_column": datasets.insert_dataset_column,
    "delete_dataset_column": datasets.delete_dataset_column,
}
