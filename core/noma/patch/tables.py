"""Placeholder: being built."""

from __future__ import annotations

from typing import Any

from .errors import UNSUPPORTED_OP, PatchError
from .state import OpState


def update_table_cell(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def update_table_header_cell(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def insert_table_row(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def delete_table_row(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def insert_table_column(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def delete_table_column(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')

