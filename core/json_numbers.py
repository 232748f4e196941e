"""Numbers in JSON from an untrusted peer: integers that fit in 64 bits, finite floats.

Python reads any JSON number: a 4,000-digit integer (which overflows SQLite, a float
conversion or a JavaScript client further on, or is echoed back as a request id nobody
else can read), ``1e999`` (infinity) and the non-JSON ``NaN`` / ``Infinity`` (which are
echoed as invalid JSON). Every HTTP surface parses a body with these hooks, so such a
number is refused as the request arrives, with a coded 4xx, never a 500 later.
"""

from __future__ import annotations

import math
from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
MAX_NUMBER_CHARS = 64  # far beyond any int64 or float literal; int() of more is not tried
MESSAGE = "a number is out of range: integers fit in 64 bits, floats are finite"


class NumberOutOfRange(ValueError):
    """A JSON number the server does not accept (its text is never echoed)."""

    def __init__(self) -> None:
        super().__init__(MESSAGE)


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise NumberOutOfRange
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise NumberOutOfRange
    return value


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise NumberOutOfRange
    value = float(text)
    if not math.isfinite(value):
        raise NumberOutOfRange
    return value


def _constant(text: str) -> Any:
    raise NumberOutOfRange  # NaN, Infinity, -Infinity: not JSON at all


# Keyword arguments for ``json.loads``.
HOOKS: dict[str, Any] = {"parse_int": _int, "parse_float": _float, "parse_constant": _constant}
