"""A JSON writer for the sandbox side of the control channel, without the ``json`` package.

``import json`` costs ~9 ms here (it pulls in ``re`` and ``enum``), more than the rest of a
run's setup; this writer uses the C string escaper from ``_json`` and covers exactly the
JSON data model (the server parses with the real ``json`` and re-checks everything).
"""

from __future__ import annotations

try:
    from _json import encode_basestring_ascii as _string
except ImportError:  # pragma: no cover - every CPython ships _json
    from json.encoder import py_encode_basestring_ascii as _string

_MAX_DEPTH = 200
_INF = float("inf")


def dumps(obj: object) -> str:
    """Compact, ASCII-only JSON; raises TypeError/ValueError like ``json.dumps`` would."""
    out: list[str] = []
    _write(obj, out, 0)
    return "".join(out)


def _key(key: object) -> str:
    if isinstance(key, str):
        return _string(key)
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return '"' + int.__repr__(key) + '"'
    if isinstance(key, float):
        return '"' + _float(key) + '"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _float(value: float) -> str:
    if value != value or value in (_INF, -_INF):
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return float.__repr__(value)


def _write(obj: object, out: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise ValueError("the value is nested too deeply to serialize")
    if isinstance(obj, str):
        out.append(_string(obj))
    elif obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, int):
        out.append(int.__repr__(obj))
    elif isinstance(obj, float):
        out.append(_float(obj))
    elif isinstance(obj, dict):
        out.append("{")
        first = True
        for key, value in obj.items():
            if not first:
                out.append(",")
            first = False
            out.append(_key(key))
            out.append(":")
            _write(value, out, depth + 1)
        out.append("}")
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        for i, value in enumerate(obj):
            if i:
                out.append(",")
            _write(value, out, depth + 1)
        out.append("]")
    else:
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")
