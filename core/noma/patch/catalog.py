"""The wire check every surface runs before an op touches a document; the facts about
each op (names, target fields, ...) are its record in `ops_catalog`.

The shape of each op is its typed model (`models`, pydantic, the same meaning as
``schemas/patch-op.schema.json``, which need not be present at run time); this module
maps a model's refusal to the §3.5 codes with a precise message.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .errors import ID_ATTRIBUTE_PROTECTED, INVALID_OP, UNSUPPORTED_OP, PatchError
from .models import first_problem, parse_op
from .ops_catalog import ALL_OPS, CATALOG, CORE_OPS, TARGET_FIELD
from .patterns import ID_RE

__all__ = [
    "ALL_OPS",
    "CORE_OPS",
    "TARGET_FIELD",
    "canonical_op",
    "check_new_id",
    "check_op",
    "op_name",
]


def op_name(op: Any) -> str | None:
    return op.get("op") if isinstance(op, dict) and isinstance(op.get("op"), str) else None


def check_op(op: Any) -> str:
    """Return the op name, or raise ``unsupported_op`` / ``invalid_op`` /
    ``id_attribute_protected``.

    An op passes when its typed model (`models`) accepts it, so it is valid under
    ``patch-op.schema.json`` and the record that carries it validates too.
    ``update_attribute`` with ``value: null`` is the one spec form the schema lacks: it is
    checked as the ``remove_attribute`` it means (`canonical_op`).
    """
    if not isinstance(op, dict):
        raise PatchError(INVALID_OP, "An op must be a JSON object.")
    name = op.get("op")
    if not isinstance(name, str) or name not in CATALOG:
        raise PatchError(
            UNSUPPORTED_OP,
            f"Op {name!r} is not in the v1.0 op catalog."
            if name
            else "The op has no 'op' field naming an operation in the v1.0 catalog.",
        )
    # An op with an attribute ``key`` (update_attribute, remove_attribute) never sets id.
    if op.get("key") == "id" and "key" in CATALOG[name].model.model_fields:
        raise PatchError(
            ID_ATTRIBUTE_PROTECTED, "The id attribute can only change through rename_id."
        )
    candidate = op
    if name == "update_attribute" and "value" in op and op["value"] is None:
        candidate = {k: v for k, v in op.items() if k != "value"}
        candidate["op"] = "remove_attribute"
    try:
        parse_op(candidate)
    except ValidationError as exc:
        where, problem = first_problem(exc)
        raise PatchError(
            INVALID_OP, f"{name}: field '{where}' {problem}." if where else f"{name}: {problem}."
        ) from None
    return name


def canonical_op(op: dict[str, Any]) -> dict[str, Any]:
    """The op as it is applied and recorded: ``update_attribute`` with ``value: null``
    removes the attribute (§3.1.4), so it is the schema-valid ``remove_attribute``."""
    if op.get("op") == "update_attribute" and op.get("value", 0) is None:
        out = {"op": "remove_attribute", "id": op["id"], "key": op["key"]}
        if "baseHash" in op:
            out["baseHash"] = op["baseHash"]
        return out
    return op


def check_new_id(name: str, field: str, value: str) -> None:
    """A new id must match the wire id pattern, so it can be addressed later."""
    if not ID_RE.match(value):
        raise PatchError(
            INVALID_OP,
            f"{name}: '{field}' value {value!r} is not a valid id "
            "(a letter or _, then letters, digits, _ . / : -).",
        )
