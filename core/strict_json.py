"""JSON from an untrusted peer, read strictly: UTF-8 text, bounded depth, Unicode strings.

Python's ``json`` accepts what no other party should: an escaped lone surrogate
(``"\\ud800"``) becomes a ``str`` that cannot be encoded, so it fails later and somewhere
else (a file name, a reply that cannot be serialised, a parser in another library that drops
the message); bytes are decoded as UTF-16/32 when they look like it; nesting deep enough
exhausts the interpreter's recursion. Every surface that parses a request body or a request
line (the hub's REST routes, the Skills JSON-RPC, the MCP stdin) reads it here, so each gets
one of these refusals, with a reason it can put in its own coded error, and never a
half-valid value.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from . import json_numbers

MAX_DEPTH = 64  # far beyond any real request, far below the parsers' recursion limits

Reason = Literal["not_utf8", "not_json", "too_deep", "lone_surrogate", "number_out_of_range"]

MESSAGES: dict[str, str] = {
    "not_utf8": "not UTF-8 text",
    "not_json": "not JSON",
    "too_deep": f"nested more than {MAX_DEPTH} levels deep",
    "lone_surrogate": "a string holds a lone surrogate (not Unicode text)",
    "number_out_of_range": json_numbers.MESSAGE,
}


class NotJsonText(ValueError):
    """Why a payload was refused; ``value`` is the parsed value when parsing got that far
    (so a JSON-RPC reply can still echo a clean request id)."""

    def __init__(self, reason: Reason, value: Any = None, parsed: bool = False) -> None:
        super().__init__(MESSAGES[reason])
        self.reason: Reason = reason
        self.value = value
        self.parsed = parsed


def is_text(value: str) -> bool:
    """False for a string holding a lone surrogate (it has no UTF-8 form)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def problem(value: Any, max_depth: int = MAX_DEPTH) -> Reason | None:
    """The first thing wrong with an already parsed value, or None."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not is_text(item):
                return "lone_surrogate"
        elif isinstance(item, dict | list):
            if depth > max_depth:
                return "too_deep"
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)
    return None


def loads(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``data`` or raise `NotJsonText`."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise NotJsonText("not_utf8") from None
    else:
        text = data
        if not is_text(text):
            raise NotJsonText("not_utf8")
    try:
        value = json.loads(text, **json_numbers.HOOKS)  # int64 and finite floats only
    except json_numbers.NumberOutOfRange:
        raise NotJsonText("number_out_of_range") from None
    except RecursionError:
        raise NotJsonText("too_deep") from None
    except ValueError:
        raise NotJsonText("not_json") from None
    reason = problem(value, max_depth)
    if reason is not None:
        raise NotJsonText(reason, value, parsed=True)
    return value
