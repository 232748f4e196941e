"""Blob helpers: move large data by id instead of through the run's small ``output``.

Only blobs named in the run's ``input_blobs`` and blobs this run wrote are readable; every
blob written here is listed in the run's ``output_blobs``.
"""

from __future__ import annotations

from runtime import _jsonout
from runtime._channel import ChannelError, channel

__all__ = ["ChannelError", "read_json", "read_text", "write_json", "write_text"]


def read_text(blob_id: str) -> str:
    """Return the whole content of a blob as text."""
    return channel().read_blob(str(blob_id))


def read_json(blob_id: str) -> object:
    """Return a blob parsed as JSON."""
    import json

    return json.loads(read_text(blob_id))


def write_text(content: str, kind: str = "text/plain") -> str:
    """Store ``content`` as a new blob and return its id (``blob:...``)."""
    if not isinstance(content, str):
        raise TypeError(f"write_text expects str, got {type(content).__name__}")
    return channel().write_blob(content, kind)


def write_json(obj: object, kind: str = "application/json") -> str:
    """Store ``obj`` serialised as JSON in a new blob and return its id."""
    return channel().write_blob(_jsonout.dumps(obj), kind)
