"""Writing results to the terminal without ever raising on odd text.

Two kinds of output, kept apart on purpose:

- ``write``/``error``: text for a person. Document-derived text in it may carry terminal
  escapes (the workspace is untrusted), so every character a terminal acts on is shown
  as a marker (`core.noma.visible`: ``⟨U+001B⟩``; an undecodable byte as ``⟨FF⟩``).
- ``write_exact``/``write_json``: data for a program (``--json``, ``render`` into a
  pipe). Those bytes are exact; JSON's own escaping already keeps ESC and every other C0
  control out of the stream.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def display(text: str) -> str:
    """Undecodable source bytes (kept as surrogates) become U+FFFD (exports, data)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def write(text: str, stream: Any = None) -> None:
    """Human-readable text: terminal controls and undecodable bytes shown as markers."""
    from ..noma.visible import visible  # here: every command imports this module

    write_exact(visible(text), stream)


def write_exact(text: str, stream: Any = None) -> None:
    """Data, byte for byte (undecodable bytes as U+FFFD: the stream is valid UTF-8)."""
    out = stream or sys.stdout
    data = display(text).encode("utf-8", errors="replace")
    out.flush()
    out.buffer.write(data)
    out.flush()


def write_json(value: Any) -> None:
    """Indented on a terminal; compact (one line, the fast C encoder) into pipes and files."""
    indent = 2 if sys.stdout.isatty() else None
    write_exact(json.dumps(value, ensure_ascii=False, indent=indent) + "\n")


def write_data(data: bytes) -> None:
    """A document or an export to stdout: exact into a pipe or file; on a terminal the
    same text with terminal controls shown as markers (a terminal keeps no bytes anyway,
    and must not act on the document's)."""
    stream = sys.stdout
    if stream.isatty():
        from ..noma.visible import visible

        data = visible(data.decode("utf-8", errors="surrogateescape")).encode("utf-8")
    stream.flush()
    stream.buffer.write(data)
    stream.flush()


def error(message: str) -> None:
    write(f"noma: {message}\n", sys.stderr)


def reader_gone() -> None:
    """The reader of stdout went away (``noma check big.noma | head -1``): what is still to be
    written, and the final flush, go to the null device, so the command's own exit status
    stands rather than a broken-pipe error's."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError):
        pass
