"""Patch ops built from what the user typed: one function per editing action.

A thin shim over the typed op catalog (`core.noma.patch.models`): each helper builds the
op's model from form input, unvalidated, and returns its wire form. Whether an op is valid
is for the engine to say: the proof preview runs it before anything is written, so a bad
value becomes a coded refusal there, never an exception here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.noma.api import IdIndex
from core.noma.api import patch_models as m

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


def _op(model: type[m.Op], **fields: Any) -> dict[str, Any]:
    """The wire dict of ``model`` built from ``fields`` (field names; ``from_`` is "from")."""
    return model.model_construct(op=model.op_name(), **fields).wire()


def replace_body(ident: str, content: str) -> dict[str, Any]:
    return _op(m.ReplaceBody, id=ident, content=content)


def replace_block(ident: str, content: str) -> dict[str, Any]:
    return _op(m.ReplaceBlock, id=ident, content=content)


def update_attribute(ident: str, key: str, value: AttrValue) -> dict[str, Any]:
    return _op(m.UpdateAttribute, id=ident, key=key, value=value)


def remove_attribute(ident: str, key: str) -> dict[str, Any]:
    return _op(m.RemoveAttribute, id=ident, key=key)


def rename_id(old: str, new: str) -> dict[str, Any]:
    return _op(m.RenameId, from_=old, to=new)


def update_heading(ident: str, title: str) -> dict[str, Any]:
    return _op(m.UpdateHeading, id=ident, title=title)


def add_block(parent: str, content: str, position: int | None = None) -> dict[str, Any]:
    return _op(m.AddBlock, parent=parent, content=content, position=position)


def delete_block(ident: str) -> dict[str, Any]:
    return _op(m.DeleteBlock, id=ident)


def move_block(ident: str, parent: str, position: int | None = None) -> dict[str, Any]:
    return _op(m.MoveBlock, id=ident, parent=parent, position=position)


def add_comment(ident: str, target: str, content: str, author: str) -> dict[str, Any]:
    return _op(m.AddComment, id=ident, target=target, content=content, author=author)


def resolve_comment(ident: str, resolved_by: str) -> dict[str, Any]:
    return _op(m.ResolveComment, id=ident, resolved_by=resolved_by)


def update_table_cell(ident: str, row: int, column: int, value: str) -> dict[str, Any]:
    return _op(m.UpdateTableCell, id=ident, row=row, column=column, value=value)


def update_table_header_cell(ident: str, column: int, value: str) -> dict[str, Any]:
    return _op(m.UpdateTableHeaderCell, id=ident, column=column, value=value)
