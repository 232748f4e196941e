"""The run's control channel: JSON lines to the server, marshal frames back.

The bootstrap moves the server's pipes off fds 0 and 1 (so ``print`` goes to the run's
logs and ``input()`` sees an empty stdin) and hands the duplicates to this module. Records
to the server are JSON (the server does not trust what comes out of a sandbox); replies
from the server are ``<length>\\n<marshal>`` frames (trusted, and ``marshal`` is built in).
Every call is a synchronous request/reply; a lock keeps threads from interleaving.
"""

from __future__ import annotations

import marshal
import os
from _thread import allocate_lock

from runtime import _jsonout

CHUNK_CHARS = 256 * 1024


class ChannelError(RuntimeError):
    """The server refused a request (for example an unknown blob id or a size cap)."""


class _Channel:
    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._buffer = b""
        self._lock = allocate_lock()

    def send(self, record: dict) -> None:
        view = memoryview((_jsonout.dumps(record) + "\n").encode())
        while view:
            written = os.write(self._write_fd, view)
            view = view[written:]

    def _read_exact(self, size: int) -> bytes:
        while len(self._buffer) < size:
            chunk = os.read(self._read_fd, max(65536, size - len(self._buffer)))
            if not chunk:
                raise ChannelError("the server closed the run's control channel")
            self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def receive(self) -> dict:
        header = b""
        while not header.endswith(b"\n"):
            header += self._read_exact(1)
            if len(header) > 20:
                raise ChannelError("malformed reply from the server")
        reply = marshal.loads(self._read_exact(int(header)))
        if not isinstance(reply, dict):
            raise ChannelError("malformed reply from the server")
        if not reply.get("ok"):
            raise ChannelError(str(reply.get("error", "request refused")))
        return reply

    def write_blob(self, content: str, kind: str) -> str:
        with self._lock:
            total = len(content)
            start = 0
            while True:
                chunk = content[start : start + CHUNK_CHARS]
                start += CHUNK_CHARS
                more = start < total
                self.send({"op": "blob_write", "kind": kind, "data": chunk, "more": more})
                if not more:
                    break
            return str(self.receive()["blob_id"])

    def read_blob(self, blob_id: str) -> str:
        with self._lock:
            self.send({"op": "blob_read", "blob_id": blob_id})
            parts: list[str] = []
            while True:
                reply = self.receive()
                parts.append(reply["data"])
                if not reply.get("more"):
                    return "".join(parts)


_channel: _Channel | None = None


def connect(read_fd: int, write_fd: int) -> None:
    global _channel
    _channel = _Channel(read_fd, write_fd)


def channel() -> _Channel:
    if _channel is None:
        raise ChannelError("runtime is only available inside a sandbox run")
    return _channel
