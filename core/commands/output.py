"""Writing results to the terminal without ever raising on odd text."""

from __future__ import annotations

import json
import sys
from typing import Any


def display(text: str) -> str:
    """Undecodable source bytes (kept as surrogates) become U+FFFD for display."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def write(text: str, stream: Any = None) -> None:
    out = stream or sys.stdout
    data = display(text).encode("utf-8", errors="replace")
    out.flush()
    out.buffer.write(data)
    out.flush()


def write_json(value: Any) -> None:
    """Indented on a terminal; compact (one line, the fast C encoder) into pipes and files."""
    indent = 2 if sys.stdout.isatty() else None
    write(json.dumps(value, ensure_ascii=False, indent=indent) + "\n")


def error(message: str) -> None:
    write(f"noma: {message}\n", sys.stderr)
