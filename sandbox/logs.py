"""Bounded capture of a run's stdout/stderr: a preview of the first and last bytes, a count.

A run may print 100 MB; the server keeps at most ``preview_bytes`` of it in memory, and the
caller stops the run once ``total`` passes its log cap.
"""

from __future__ import annotations


class LogCollector:
    def __init__(self, preview_bytes: int) -> None:
        self._half = preview_bytes // 2
        self._limit = preview_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._half - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > self._half:
                del self._tail[: len(self._tail) - self._half]

    def preview(self) -> str:
        """Head and tail joined by an omission marker, never longer than ``preview_bytes``."""
        if self.total <= self._limit or not self._tail:
            data = bytes(self._head + self._tail)
            return data.decode("utf-8", errors="replace")
        omitted = self.total - len(self._head) - len(self._tail)
        if omitted <= 0:
            return bytes(self._head + self._tail).decode("utf-8", errors="replace")
        marker = f"\n[... {omitted} bytes of logs omitted ...]\n".encode()
        tail = bytes(self._tail[len(marker) :])
        # Cut at character boundaries so the preview never shows replacement noise mid-text.
        head = bytes(self._head).decode("utf-8", errors="ignore")
        return head + marker.decode() + tail.decode("utf-8", errors="ignore")
