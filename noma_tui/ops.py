"""Patch ops built from what the user typed: one function per editing action.

The op shapes are the engine's (`core.noma.patch.catalog.OP_FIELDS`); these helpers only
turn form input into those dicts. Whether an op is valid is for the engine to say: the
proof preview runs it before anything is written.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.noma.ids import IdIndex

AttrValue = str | int | float | bool


def parse_attr_value(text: str) -> AttrValue:
    """Form text to an attribute value: ``true``/``false``, numbers, else a string.

    A value in double quotes stays a string (``"0.5"`` sets the text 0.5).
    """
    raw = text.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return raw[1:-1]
    if raw in ("true", "false"):
        return raw == "true"
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r"-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?", raw):
        return float(raw)
    return text


def show_attr_value(value: Any) -> str:
    """The inverse of `parse_attr_value` for prefilling a form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    if parse_attr_value(text) != text:
        return f'"{text}"'
    return text


def free_id(idx: IdIndex, stem: str) -> str:
    """The first ``stem-N`` that is neither an id nor an alias in the document."""
    n = 1
    while True:
        candidate = f"{stem}-{n}"
        if not idx.known(candidate):
            return candidate
        n += 1


def with_base_hash(op: dict[str, Any], base_hash: str | None) -> dict[str, Any]:
    """Attach the block precondition (§3.4): the op is refused if the block changed."""
    if base_hash:
        return {**op, "baseHash": base_hash}
    return op


def replace_body(ident: str, content: str) -> dict[str, Any]:
    return {"op": "replace_body", "id": ident, "content": content}


def replace_block(ident: str, content: str) -> dict[str, Any]:
    return {"op": "replace_block", "id": ident, "content": content}


def update_attribute(ident: str, key: str, value: AttrValue) -> dict[str, Any]:
    return {"op": "update_attribute", "id": ident, "key": key, "value": value}


def remove_attribute(ident: str, key: str) -> dict[str, Any]:
    return {"op": "remove_attribute", "id": ident, "key": key}


def rename_id(old: str, new: str) -> dict[str, Any]:
    return {"op": "rename_id", "from": old, "to": new}


def update_heading(ident: str, title: str) -> dict[str, Any]:
    return {"op": "update_heading", "id": ident, "title": title}


def add_block(parent: str, content: str, position: int | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"op": "add_block", "parent": parent, "content": content}
    if position is not None:
        op["position"] = position
    return op


def delete_block(ident: str) -> dict[str, Any]:
    return {"op": "delete_block", "id": ident}


def move_block(ident: str, parent: str, position: int | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"op": "move_block", "id": ident, "parent": parent}
    if position is not None:
        op["position"] = position
    return op


def add_comment(ident: str, target: str, content: str, author: str) -> dict[str, Any]:
    return {"op": "add_comment", "id": ident, "target": target, "content": content,
            "author": author}  # fmt: skip


def resolve_comment(ident: str, resolved_by: str) -> dict[str, Any]:
    return {"op": "resolve_comment", "id": ident, "resolved_by": resolved_by}


def update_table_cell(ident: str, row: int, column: int, value: str) -> dict[str, Any]:
    return {"op": "update_table_cell", "id": ident, "row": row, "column": column, "value": value}


def update_table_header_cell(ident: str, column: int, value: str) -> dict[str, Any]:
    return {"op": "update_table_header_cell", "id": ident, "column": column, "value": value}
