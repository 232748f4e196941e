"""Size limits on what a patch request may carry.

The reference refuses content over 1 MiB (``invalid_content``, error
``content_too_large``). The cap is applied to every string an op carries (``content``,
``value``, ``title``, each table or dataset cell, change-request texts, …), to the sum of
them in one op (a thousand 1 KiB cells are as large as one 1 MiB body), and to the whole
request, whose strings (every op, ``reason``, the actor) end up in transcript records. An
oversized request is refused at the wire, like an op that fails the schema: nothing is
applied, and its records carry oversized ops only as bounded text (`refused`), so no giant
record can be made.
"""

from __future__ import annotations

from typing import Any

from .errors import INVALID_CONTENT, PatchError

MAX_CONTENT_BYTES = 1 << 20  # 1 MiB, per string and per op
# One op's strings together: one maximal string plus room for its ids, names and hashes.
MAX_OP_BYTES = MAX_CONTENT_BYTES + (64 << 10)
MAX_LIST_OPS = 1000  # ops in one list; a longer list is refused (and recorded) as one attempt
MAX_REQUEST_BYTES = 8 << 20  # the strings of a whole op list, reason and actor included
CONTENT_TOO_LARGE = "content_too_large"


def _utf8_len(value: str) -> int:
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def _string_bytes(value: Any, cap: int) -> int:
    """UTF-8 size of every string value in ``value``; any single string over
    `MAX_CONTENT_BYTES` counts as over ``cap`` (returned as ``cap + 1`` at least).
    Iterative: an op nested ten thousand levels deep is hostile input, not a stack overflow."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size = _utf8_len(item)
            total += max(size, cap + 1) if size > MAX_CONTENT_BYTES else size
            if total > cap:
                return total
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total


def too_large() -> PatchError:
    return PatchError(INVALID_CONTENT, CONTENT_TOO_LARGE)


def check_request_size(ops: list[Any], reason: Any = None, actor: Any = None) -> None:
    """Raise ``invalid_content`` / ``content_too_large`` when any one string is over 1 MiB
    (exactly 1 MiB is allowed), one op's strings together or ``reason`` and the actor
    together are over `MAX_OP_BYTES`, or the whole request is over `MAX_REQUEST_BYTES`."""
    extra = _string_bytes(reason, MAX_OP_BYTES) + _string_bytes(actor, MAX_OP_BYTES)
    if extra > MAX_OP_BYTES:
        raise too_large()
    total = extra
    for op in ops:
        size = _string_bytes(op, MAX_OP_BYTES)
        if size > MAX_OP_BYTES:
            raise too_large()
        total += size
        if total > MAX_REQUEST_BYTES:
            raise too_large()
