"""The server's end of a run's control channel: results, setup errors and blob traffic.

Everything arriving here comes from code we do not trust, so each record is parsed with
the real ``json``, checked for shape, and bounded (blob count and bytes per run). Replies
go back as ``<length>\\n<marshal>`` frames, which the sandbox reads without ``json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import marshal
from dataclasses import dataclass, field
from typing import Any

from sandbox.bridge import BlobBridge, BlobWriter
from sandbox.config import Limits
from sandbox.job import RunError

CHUNK_CHARS = 256 * 1024


class ProtocolViolation(ValueError):
    """A control record that the guest runtime would never send."""


@dataclass
class RunState:
    """What the readers observed; turned into an ``Outcome`` once the run is over."""

    result: dict[str, Any] | None = None
    setup_error: dict[str, Any] | None = None
    kill_reason: RunError | None = None
    output_blobs: list[str] = field(default_factory=list)
    readable: set[str] = field(default_factory=set)
    blob_bytes: int = 0
    writer: BlobWriter | None = None
    writer_error: str | None = None
    got_result: asyncio.Event = field(default_factory=asyncio.Event)

    def abort_pending_blob(self) -> None:
        if self.writer is not None:
            self.writer.abort()
            self.writer = None


async def send_reply(stdin: asyncio.StreamWriter, reply: dict[str, Any]) -> None:
    body = marshal.dumps(reply)
    try:
        stdin.write(f"{len(body)}\n".encode() + body)
        await stdin.drain()
    except (ConnectionError, RuntimeError):
        pass  # the sandbox is gone; its run is ending anyway


class ControlHandler:
    def __init__(
        self,
        state: RunState,
        bridge: BlobBridge | None,
        limits: Limits,
        stdin: asyncio.StreamWriter,
    ) -> None:
        self._state = state
        self._bridge = bridge
        self._limits = limits
        self._stdin = stdin

    async def handle(self, record: Any) -> None:
        if not isinstance(record, dict):
            raise ProtocolViolation("record is not an object")
        op = record.get("op")
        state = self._state
        if op == "result":
            if state.result is None:
                if not isinstance(record.get("ok"), bool):
                    raise ProtocolViolation("result without ok flag")
                state.result = record
                state.got_result.set()
        elif op == "setup_error":
            state.setup_error = record
        elif op == "blob_write":
            reply = self._blob_write(record)
            if reply is not None:
                await send_reply(self._stdin, reply)
        elif op == "blob_read":
            await self._blob_read(record.get("blob_id"))
        else:
            raise ProtocolViolation(f"unknown op {op!r}")

    def _blob_write(self, record: dict[str, Any]) -> dict[str, Any] | None:
        state, limits = self._state, self._limits
        data = record.get("data")
        kind = record.get("kind") or "text/plain"
        if not isinstance(data, str) or not isinstance(kind, str):
            raise ProtocolViolation("blob_write needs string data and kind")
        more = bool(record.get("more"))
        if state.kill_reason is not None:  # the run is being stopped: nothing more is kept
            state.abort_pending_blob()
            return None if more else {"ok": False, "error": state.kill_reason.message}
        if state.writer is None and state.writer_error is None:
            if self._bridge is None:
                state.writer_error = "this run has no blob store"
            elif len(state.output_blobs) >= limits.max_blobs_per_run:
                state.writer_error = f"a run may write at most {limits.max_blobs_per_run} blobs"
            else:
                state.writer = self._bridge.open_writer(kind[:255])
        if state.writer is not None:
            state.blob_bytes += len(data.encode())
            if state.blob_bytes > limits.max_blob_bytes_per_run:
                state.abort_pending_blob()
                state.writer_error = (
                    f"a run may write at most {limits.max_blob_bytes_per_run} bytes of blobs"
                )
            else:
                state.writer.write(data)
        if more:
            return None
        if state.writer is not None:
            blob_id = state.writer.commit()
            state.writer = None
            state.output_blobs.append(blob_id)
            state.readable.add(blob_id)
            return {"ok": True, "blob_id": blob_id}
        error, state.writer_error = state.writer_error, None
        return {"ok": False, "error": error}

    async def _blob_read(self, blob_id: Any) -> None:
        if not isinstance(blob_id, str):
            raise ProtocolViolation("blob_read needs a string blob_id")
        if self._bridge is None or blob_id not in self._state.readable:
            await send_reply(
                self._stdin,
                {
                    "ok": False,
                    "error": f"blob {blob_id!r} is not available to this run; pass it in "
                    "input_blobs to make it readable",
                },
            )
            return
        try:
            chunks = iter(self._bridge.read_chunks(blob_id, CHUNK_CHARS))
            current = next(chunks, "")
        except KeyError:
            await send_reply(self._stdin, {"ok": False, "error": f"no blob {blob_id!r}"})
            return
        with contextlib.suppress(KeyError):
            for upcoming in chunks:
                await send_reply(self._stdin, {"ok": True, "data": current, "more": True})
                current = upcoming
        await send_reply(self._stdin, {"ok": True, "data": current, "more": False})
