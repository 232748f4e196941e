"""The blob store as the sandbox sees it: a read and a write door, nothing else.

``sandbox`` may not import ``core``; the caller passes an object with this shape. Reads
yield text chunks so a large blob never sits whole in the server's memory; writes stream
chunks into a pending blob that only becomes visible on ``commit``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol


class BlobQuotaError(Exception):
    """Raised by a writer when the blob store's quota would be exceeded; the run fails."""


class BlobWriter(Protocol):
    def write(self, text: str) -> None: ...

    def commit(self) -> str:
        """Make the blob visible and return its id (``blob:...``)."""
        ...

    def abort(self) -> None: ...


class BlobBridge(Protocol):
    def read_chunks(self, blob_id: str, chunk_chars: int) -> Iterator[str]:
        """Yield the blob's text; raise ``KeyError`` if there is no such blob."""
        ...

    def open_writer(self, kind: str) -> BlobWriter: ...

    def delete(self, blob_id: str) -> None:
        """Remove a committed blob (a run that failed on the quota leaves none behind)."""
        ...
