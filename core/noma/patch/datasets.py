"""Placeholder: being built."""

from __future__ import annotations

from typing import Any

from .errors import UNSUPPORTED_OP, PatchError
from .state import OpState


def update_dataset_cell(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def insert_dataset_row(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def delete_dataset_row(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def insert_dataset_column(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')


def delete_dataset_column(state: OpState, op: dict[str, Any]) -> None:
    raise PatchError(UNSUPPORTED_OP, 'not built yet')

