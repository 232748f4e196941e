"""The v1.0 op catalog (§3.1 core + §1.5 extended) and the wire shape of each op.

Field rules mirror ``schemas/patch-op.schema.json`` so a malformed op is refused with a
precise message before it touches the document (the engine must not depend on the schema
file being present at run time).
"""

from __future__ import annotations

import math
import re
from typing import Any

from .errors import ID_ATTRIBUTE_PROTECTED, INVALID_OP, UNSUPPORTED_OP, PatchError

ID_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_./:-]*\Z")
BASE_HASH = re.compile(r"[0-9a-fA-F]{8,64}\Z")
# update_attribute / remove_attribute ``key`` (the schema's pattern; ``id`` is protected).
ATTR_KEY_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")

# Field kinds: "id" (the schema's id pattern), "str", "str+" (non-empty), "int>=0", "col"
# (int>=0 or str+), "key" (attribute name), "attr" (str|number|bool|null), "cells" (list of
# str), "action".
_COMMON = {"op": "str", "baseHash": "hash"}
OP_FIELDS: dict[str, tuple[dict[str, str], frozenset[str]]] = {}


def _op(name: str, required: dict[str, str], optional: dict[str, str] | None = None) -> None:
    fields = {**required, **(optional or {})}
    OP_FIELDS[name] = (fields, frozenset(required))


_op("replace_block", {"id": "id", "content": "str+"})
_op("add_block", {"parent": "id", "content": "str+"}, {"position": "int>=0"})
_op("delete_block", {"id": "id"})
_op("update_attribute", {"id": "id", "key": "key", "value": "attr"})
_op("rename_id", {"from": "id", "to": "id"})
_op("replace_body", {"id": "id", "content": "str"})
_op("update_heading", {"id": "id", "title": "str+"})
_op(
    "add_comment",
    {"id": "id", "target": "id", "content": "str+"},
    {"author": "str+", "initials": "str+", "date": "str+", "reply_to": "id"},
)
_op("resolve_comment", {"id": "id"}, {"resolved_by": "str+", "resolved_at": "str+"})
_op("remove_attribute", {"id": "id", "key": "key"})
_op("add_footnote", {"id": "id", "target": "id", "content": "str+"}, {"label": "str+"})
_op("add_endnote", {"id": "id", "target": "id", "content": "str+"}, {"label": "str+"})
_op(
    "add_change_request",
    {"id": "id", "target": "id", "action": "action"},
    {
        "from": "str+",
        "to": "str+",
        "text": "str+",
        "content": "str",
        "author": "str+",
        "date": "str+",
    },
)
_op("update_table_cell", {"id": "id", "row": "int>=0", "column": "col", "value": "str"})
_op("update_table_header_cell", {"id": "id", "column": "col", "value": "str"})
_op("insert_table_row", {"id": "id", "row": "int>=0", "cells": "cells"})
_op("delete_table_row", {"id": "id", "row": "int>=0"})
_op("insert_table_column", {"id": "id", "column": "int>=0", "cells": "cells"}, {"header": "str"})
_op("delete_table_column", {"id": "id", "column": "col"})
_op("update_dataset_cell", {"id": "id", "row": "int>=0", "column": "col", "value": "str"})
_op("insert_dataset_row", {"id": "id", "row": "int>=0", "cells": "cells"})
_op("delete_dataset_row", {"id": "id", "row": "int>=0"})
_op(
    "insert_dataset_column",
    {"id": "id", "column": "int>=0", "header": "str+", "cells": "cells"},
)
_op("delete_dataset_column", {"id": "id", "column": "col"})
_op("move_block", {"id": "id", "parent": "id"}, {"position": "int>=0"})

CORE_OPS = ("replace_block", "add_block", "delete_block", "update_attribute", "rename_id")
ALL_OPS = tuple(OP_FIELDS)

# Where an op's block precondition (baseHash) and capability check apply (§3.4).
TARGET_FIELD = {name: "id" for name in OP_FIELDS}
TARGET_FIELD.update(
    rename_id="from",
    add_block="parent",
    add_comment="target",
    add_footnote="target",
    add_endnote="target",
    add_change_request="target",
)


def op_name(op: Any) -> str | None:
    return op.get("op") if isinstance(op, dict) and isinstance(op.get("op"), str) else None


def check_op(op: Any) -> str:
    """Return the op name, or raise ``unsupported_op`` / ``invalid_op`` /
    ``id_attribute_protected``.

    An op that passes is valid under ``patch-op.schema.json`` (a test compares the two), so
    the transcript record that carries it validates too. ``update_attribute`` with ``value:
    null`` is the one spec form the schema lacks; `canonical_op` turns it into the
    ``remove_attribute`` it means before it is applied or recorded.
    """
    if not isinstance(op, dict):
        raise PatchError(INVALID_OP, "An op must be a JSON object.")
    name = op.get("op")
    if not isinstance(name, str) or name not in OP_FIELDS:
        raise PatchError(
            UNSUPPORTED_OP,
            f"Op {name!r} is not in the v1.0 op catalog."
            if name
            else "The op has no 'op' field naming an operation in the v1.0 catalog.",
        )
    fields, required = OP_FIELDS[name]
    if fields.get("key") == "key" and op.get("key") == "id":
        raise PatchError(
            ID_ATTRIBUTE_PROTECTED, "The id attribute can only change through rename_id."
        )
    for key in required:
        if key not in op:
            raise PatchError(INVALID_OP, f"{name}: missing required field '{key}'.")
    for key, value in op.items():
        kind = fields.get(key) or _COMMON.get(key)
        if kind is None:
            raise PatchError(INVALID_OP, f"{name}: unknown field '{key}'.")
        problem = _check_field(kind, value)
        if problem:
            raise PatchError(INVALID_OP, f"{name}: field '{key}' {problem}.")
    if name == "add_change_request":
        _check_change_request(op)
    return name


def _check_field(kind: str, value: Any) -> str | None:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if isinstance(value, str) and not _is_unicode(value):
        return "is not valid Unicode text (it holds a lone surrogate)"
    if kind == "str":
        return None if isinstance(value, str) else "must be a string"
    if kind == "str+":
        if not isinstance(value, str) or not value:
            return "must be a non-empty string"
        return None
    if kind == "id":
        if not isinstance(value, str) or not ID_PATTERN.match(value):
            return "must be an id (a letter or _, then letters, digits, _ . / : -)"
        return None
    if kind == "key":
        if not isinstance(value, str) or not ATTR_KEY_PATTERN.match(value):
            return "must be an attribute name (a letter or _, then letters, digits, _ -)"
        return None
    if kind == "hash":
        if not isinstance(value, str) or not BASE_HASH.match(value):
            return "must be 8 to 64 hex characters"
        return None
    if kind == "int>=0":
        return None if is_int and value >= 0 else "must be an integer >= 0"
    if kind == "col":
        if is_int and value >= 0:
            return None
        if isinstance(value, str) and value:
            return None
        return "must be a column index (integer >= 0) or a column label"
    if kind == "attr":
        if isinstance(value, float) and not math.isfinite(value):
            return "must be a finite number"
        if value is None or isinstance(value, str | bool | int | float):
            return None
        return "must be a string, number, boolean or null"
    if kind == "cells":
        if isinstance(value, list) and all(isinstance(c, str) and _is_unicode(c) for c in value):
            return None
        return "must be a list of strings"
    if kind == "action":
        return (
            None
            if value in ("insert", "delete", "replace")
            else "must be insert, delete or replace"
        )
    return f"has an unknown kind {kind}"


def _is_unicode(text: str) -> bool:
    """False for a lone surrogate, which no UTF-8 document or transcript can hold."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def canonical_op(op: dict[str, Any]) -> dict[str, Any]:
    """The op as it is applied and recorded: ``update_attribute`` with ``value: null``
    removes the attribute (§3.1.4), so it is the schema-valid ``remove_attribute``."""
    if op.get("op") == "update_attribute" and op.get("value", 0) is None:
        out = {"op": "remove_attribute", "id": op["id"], "key": op["key"]}
        if "baseHash" in op:
            out["baseHash"] = op["baseHash"]
        return out
    return op


def _check_change_request(op: dict[str, Any]) -> None:
    action = op["action"]
    if action == "replace" and not ("from" in op and "to" in op):
        raise PatchError(INVALID_OP, "add_change_request: action 'replace' needs 'from' and 'to'.")
    if action == "insert" and not ("to" in op or "text" in op):
        raise PatchError(INVALID_OP, "add_change_request: action 'insert' needs 'to' or 'text'.")
    if action == "delete" and not ("from" in op or "text" in op):
        raise PatchError(INVALID_OP, "add_change_request: action 'delete' needs 'from' or 'text'.")


def check_new_id(name: str, field: str, value: str) -> None:
    """A new id must match the wire id pattern, so it can be addressed later."""
    if not ID_PATTERN.match(value):
        raise PatchError(
            INVALID_OP,
            f"{name}: '{field}' value {value!r} is not a valid id "
            "(a letter or _, then letters, digits, _ . / : -).",
        )
