"""JSON-RPC 2.0 framing: parse, validate the envelope, dispatch, batch, notifications.

Transport-agnostic: bytes in, bytes (or nothing) out. Per the spec, a notification (a
request without ``id``) gets no response even if it fails; a batch gets an array of the
responses to its non-notification members, or nothing when all were notifications; an
empty batch is one Invalid Request error.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from core import strict_json
from core.skills_runtime.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
)

log = logging.getLogger("noma.skills.rpc")
Handler = Callable[[Any], Awaitable[Any]]
MAX_BATCH = 100
_ABSENT = object()


def _response(
    id_: Any, *, result: Any = _ABSENT, error: dict[str, Any] | None = None
) -> dict[str, Any]:
    if error is not None:
        return {"jsonrpc": "2.0", "id": id_, "error": error}
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool))


class Dispatcher:
    def __init__(self, methods: Mapping[str, Handler], max_batch: int = MAX_BATCH) -> None:
        self._methods = methods
        self._max_batch = max_batch

    async def handle_http(self, body: bytes) -> tuple[bytes | None, int]:
        """The reply and its HTTP status: 400 when the body as a whole is malformed (not
        JSON, a number out of range, not a request object), so HTTP sees a coded 4xx too;
        200 for any reply to a well-formed request, errors of its methods included."""
        reply = await self.handle(body)
        if reply is None or not reply.startswith(b"{") or len(reply) > 4096:
            return reply, 200  # no reply, a batch's array, or a result (errors are small)
        error = json.loads(reply).get("error")
        malformed = isinstance(error, dict) and error.get("code") in (PARSE_ERROR, INVALID_REQUEST)
        return reply, 400 if malformed else 200

    async def handle(self, body: bytes) -> bytes | None:
        try:
            message = strict_json.loads(body)
        except strict_json.NotJsonText as exc:
            if exc.reason == "number_out_of_range":  # past int64, 1e999, NaN: never echoed
                error = _invalid_error(str(exc), "number_out_of_range")
                return _dumps(_response(None, error=error))
            if not exc.parsed:  # not UTF-8, not JSON, or too deep for the parser
                error = {"code": PARSE_ERROR, "message": "Parse error"}
                return _dumps(_response(None, error=error))
            # Parsed, but not text a handler may see (a lone surrogate) or nested past the
            # bound: the whole message is refused, answered under its id when that is clean.
            return _dumps(_invalid(_clean_id(exc.value), str(exc)))
        if isinstance(message, list):
            if not message:
                return _dumps(_invalid(None, "empty batch"))
            if len(message) > self._max_batch:
                return _dumps(_invalid(None, f"batch larger than {self._max_batch} requests"))
            replies = await asyncio.gather(*(self._one(m) for m in message))
            kept = [r for r in replies if r is not None]
            return _dumps(kept) if kept else None
        reply = await self._one(message)
        return _dumps(reply) if reply is not None else None

    async def _one(self, message: Any) -> dict[str, Any] | None:
        if not isinstance(message, dict):
            return _invalid(None, "request must be an object")
        id_ = message.get("id", _ABSENT)
        is_notification = id_ is _ABSENT
        reply_id = None if is_notification or not _valid_id(id_) else id_
        method = message.get("method")
        if (
            message.get("jsonrpc") != "2.0"
            or not isinstance(method, str)
            or (not is_notification and not _valid_id(id_))
            or ("params" in message and not isinstance(message["params"], (dict, list)))
            or set(message) - {"jsonrpc", "id", "method", "params"}
        ):
            return _invalid(reply_id, "not a JSON-RPC 2.0 request object")
        handler = self._methods.get(method)
        try:
            if handler is None or method.startswith("rpc."):
                raise RpcError(METHOD_NOT_FOUND, "Method not found", {"method": method})
            result = await handler(message.get("params"))
        except RpcError as exc:
            return None if is_notification else _response(reply_id, error=exc.to_wire())
        except Exception as exc:
            log.exception("internal error in %s", method)
            error = {
                "code": INTERNAL_ERROR,
                "message": "Internal error",
                "data": {"type": type(exc).__name__},
            }
            return None if is_notification else _response(reply_id, error=error)
        return None if is_notification else _response(reply_id, result=result)


def _invalid_error(why: str, code: str) -> dict[str, Any]:
    return {
        "code": INVALID_REQUEST,
        "message": "Invalid Request",
        "data": {"reason": code, "detail": why},
    }


def _clean_id(message: Any) -> Any:
    if isinstance(message, dict):
        id_ = message.get("id")
        if _valid_id(id_) and not (isinstance(id_, str) and not strict_json.is_text(id_)):
            return id_
    return None


def _invalid(id_: Any, why: str) -> dict[str, Any]:
    return _response(
        id_, error={"code": INVALID_REQUEST, "message": "Invalid Request", "data": {"reason": why}}
    )


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
