"""How a refused op the wire schema cannot describe is still recorded (§5.1, B.6).

Every attempted op gets one transcript record, rejections included. A record's ``op`` must
be a ``patch-op.schema.json`` op and ``transcript.schema.json`` allows no extra top-level
field, so an op that is not one (unknown name, missing field, a protected ``id`` key, not
an object at all) is recorded as `PLACEHOLDER_OP` and the request as received is kept,
bounded, on the failing diagnostic under `RAW_OP_FIELD` (diagnostic entries are open in the
schema). docs/transcript-extensions.md is the decision and its reasons.

The raw text is made for people and audits, never for replay (a rejected record is skipped,
§5.5): it is written by `raw_text`, which never recurses, never follows more than
`MAX_RAW_DEPTH` levels, stops at `MAX_RAW_CHARS`, names values JSON cannot carry, and shows
characters a terminal would act on as markers (`core.noma.visible`), so a hostile op can
neither blow up the record nor the reader who prints it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..visible import visible_line
from .catalog import canonical_op, check_op
from .errors import PatchError
from .limits import MAX_OP_BYTES, _string_bytes

PLACEHOLDER_OP: dict[str, Any] = {
    "op": "remove_attribute",
    "id": "x-noma-refused",
    "key": "x_noma_refused",
}
"""The schema-valid stand-in for an op that is not one. Rejected records are never replayed,
so it is never applied; its id and key say what it is to anyone reading the record."""
RAW_OP_FIELD = "x_noma_raw_op"
RAW_ACTOR_FIELD = "x_noma_raw_actor"
MAX_RAW_CHARS = 4096
MAX_RAW_DEPTH = 16
CUT = "…"


def recordable_op(op: Any) -> tuple[dict[str, Any], str | None]:
    """The op a record carries, and the raw text to keep beside it (None when the op is
    itself a schema-valid op of reasonable size, carried as is)."""
    try:
        check_op(op)
    except PatchError:
        return dict(PLACEHOLDER_OP), raw_text(op)
    if _string_bytes(op, MAX_OP_BYTES) > MAX_OP_BYTES:
        return dict(PLACEHOLDER_OP), raw_text(op)
    return canonical_op(op), None


def raw_text(value: Any, limit: int = MAX_RAW_CHARS) -> str:
    """JSON-like text of ``value``, at most ``limit`` characters (ending in ``…`` when cut),
    safe to print. Built iteratively with a budget, so a 1 MiB string or a 100,000-level
    nesting costs ``limit`` work, not its size."""
    out: list[str] = []
    used = 0
    # A stack of pending items: either literal text or (value, depth).
    stack: list[str | tuple[Any, int]] = [(value, 0)]
    while stack:
        if used >= limit:
            break
        item = stack.pop()
        piece = item if isinstance(item, str) else _piece(item[0], item[1], stack, limit - used)
        out.append(piece)
        used += len(piece)
    text = "".join(out)
    if stack or len(text) > limit:
        text = text[: max(limit - len(CUT), 0)] + CUT
    return visible_line(text)


def _piece(value: Any, depth: int, stack: list[str | tuple[Any, int]], room: int) -> str:
    """The text for one value; a container pushes its parts (reversed) onto ``stack``."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        digits = len(str(abs(value))) if value.bit_length() < 4000 else None
        return str(value) if digits is not None else "<a very long integer>"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"<{value!r}: not JSON>"
    if isinstance(value, str):
        return _quoted(value, room)
    if isinstance(value, dict | list | tuple):
        if depth >= MAX_RAW_DEPTH:
            return "<nested too deeply>"
        if isinstance(value, dict):
            parts: list[str | tuple[Any, int]] = []
            for n, (key, item) in enumerate(value.items()):
                if n:
                    parts.append(",")
                key_text = key if isinstance(key, str) else f"<key {type(key).__name__}>"
                parts.append(_quoted(key_text, 200) + ":")
                parts.append((item, depth + 1))
                if n > room:  # each entry costs at least a character: the rest is cut
                    break
            stack.append("}")
            stack.extend(reversed(parts))
            return "{"
        items: list[str | tuple[Any, int]] = []
        for n, item in enumerate(value):
            if n:
                items.append(",")
            items.append((item, depth + 1))
            if n > room:
                break
        stack.append("]")
        stack.extend(reversed(items))
        return "["
    return f"<{type(value).__name__}: not JSON>"


def _quoted(text: str, room: int) -> str:
    """A JSON string literal of ``text``, cut first so a huge string is never copied whole."""
    cut = len(text) > room
    body = json.dumps(text[: max(room, 0)], ensure_ascii=False)
    return body[:-1] + CUT + '"' if cut else body
