"""Every line on the MCP stdin gets an answer, even one the ``mcp`` SDK cannot read.

The SDK's stdio transport decodes stdin with ``errors="replace"`` and parses each line with
pydantic's JSON reader; a line that reader refuses (an escaped lone surrogate such as
``"a\\ud800b"``, nesting deeper than it allows, text that is not JSON) becomes an exception
on the session's read stream, which the server logs at debug level and drops: the client
waits forever for a reply to its id. A line of bytes that is not UTF-8 is silently mangled
into U+FFFD instead of being refused.

So the server reads stdin itself, line by line, before the SDK sees it. A line that is not
UTF-8, not JSON, too deep, or holds a string that is not Unicode text (a lone surrogate, in
a value or a key) is answered here with the JSON-RPC error the spec gives it (-32700 parse
error with ``id: null`` when no id can be read, -32600 invalid request with the request's
id otherwise) and never reaches a tool. A notification (no id) cannot be answered on the
wire (JSON-RPC 2.0 §4.1), so it is reported on stderr. Every other line goes to the SDK
unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from .. import strict_json

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_LINE_BYTES = 64 * 1024 * 1024

Reply = Callable[[Any, int, str], Awaitable[None]]


class BadLine(ValueError):
    """A stdin line the server refuses: its JSON-RPC code and a fixed message."""

    def __init__(
        self, code: int, message: str, request_id: Any = None, *, notification: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        self.notification = notification


def _answerable_id(message: Any) -> Any:
    """The request's id, if it is one the reply may echo (a clean string or an integer)."""
    if not isinstance(message, dict) or "id" not in message:
        return None
    ident = message["id"]
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        return None
    if isinstance(ident, str) and not strict_json.is_text(ident):
        return None
    return ident


def check_line(raw: bytes) -> str:
    """The line as text for the SDK, or `BadLine` naming why it is refused."""
    if len(raw) > MAX_LINE_BYTES:
        raise BadLine(PARSE_ERROR, "Parse error: the message is too large")
    try:
        strict_json.loads(raw)
    except strict_json.NotJsonText as exc:
        if not exc.parsed:
            raise BadLine(PARSE_ERROR, f"Parse error: {exc}") from None
        message = exc.value
        raise BadLine(
            INVALID_REQUEST,
            f"Invalid Request: {exc}",
            _answerable_id(message),
            notification=isinstance(message, dict) and "id" not in message,
        ) from None
    return raw.decode("utf-8")


class GuardedStdin:
    """The async line source the SDK's stdio transport iterates (``async for line``)."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._reply: Reply | None = None
        self._ready = anyio.Event()

    def answer_with(self, reply: Reply) -> None:
        self._reply = reply
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            raw = await self._read_line()
            if raw is None:
                return
            if len(raw) > MAX_LINE_BYTES:  # read no further into it than the bound
                await self._refuse(
                    raw, BadLine(PARSE_ERROR, "Parse error: the message is too large")
                )
                continue
            if not raw.strip():
                continue
            try:
                yield check_line(raw.rstrip(b"\r\n"))
            except BadLine as bad:
                await self._refuse(raw, bad)

    async def _read_line(self) -> bytes | None:
        """One line (None at end of input); a line over the bound is read to its end in
        bounded pieces and returned as just its first ``MAX_LINE_BYTES + 1`` bytes."""
        read = self._source.readline
        raw: bytes = await anyio.to_thread.run_sync(read, MAX_LINE_BYTES + 1)
        if not raw:
            return None
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while True:  # drop the rest of this line
                rest: bytes = await anyio.to_thread.run_sync(read, MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
        return raw

    async def _refuse(self, raw: bytes, bad: BadLine) -> None:
        if bad.notification:  # no id to answer: say so where the operator can see it
            print(f"noma mcp: refused a notification: {bad.message}", file=sys.stderr)
            return
        await self._ready.wait()
        assert self._reply is not None
        await self._reply(bad.request_id, bad.code, bad.message)


def _claim_stdin() -> tuple[Any, Callable[[], None]]:
    """The wire's stdin as a private descriptor, fd 0 pointed at the null device (so a child
    process never reads the wire), as the SDK does for the streams it claims itself."""
    private = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)

    def restore() -> None:
        with suppress(OSError):
            os.dup2(private, 0)

    return os.fdopen(private, "rb", closefd=True), restore


async def run_stdio(server: Any) -> None:
    """`MCPServer.run_stdio_async` with the guarded stdin in front of the SDK's reader."""
    source, restore = _claim_stdin()
    stdin = GuardedStdin(source)
    try:
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]

            async def reply(request_id: Any, code: int, message: str) -> None:
                error = types.JSONRPCError(
                    jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
                )
                await write_stream.send(SessionMessage(error))

            stdin.answer_with(reply)
            lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does this
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    finally:
        restore()
