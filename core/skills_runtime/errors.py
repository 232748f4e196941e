"""JSON-RPC errors as values: one exception type carrying the code the wire will show.

Only protocol problems become JSON-RPC errors; a run that fails inside the sandbox is a
successful response whose result says ``status: "failed"``.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Server-defined (JSON-RPC reserves -32000..-32099 for these): the workspace's blob quota
# is full. Not -32602: the params are fine, and the same call succeeds once space is freed.
BLOB_QUOTA_EXCEEDED = -32010
# The same code for every stored-bytes quota (the Skills Protocol defines none): a created
# skill that does not fit is -32010 too, told apart by ``data.reason``.
QUOTA_EXCEEDED = BLOB_QUOTA_EXCEEDED


class RpcError(Exception):
    """A protocol-level failure with its JSON-RPC code and optional structured ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def invalid_params(message: str, reason: str, **details: Any) -> RpcError:
    """-32602 with a machine-readable ``reason`` (e.g. ``skill_not_found``)."""
    return RpcError(INVALID_PARAMS, message, {"reason": reason, **details})
