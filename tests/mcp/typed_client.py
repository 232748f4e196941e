"""A typed MCP client, written the way a typed agent SDK writes one: every response body is
parsed into strict pydantic models (no coercion: an integer field refuses ``4.923`` and
``"4"``; unknown fields are refused too, so an undocumented field fails here first).

`TypedNoma` drives ``noma mcp`` over stdio through the ``mcp`` SDK's client and returns
models, never dicts.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tests.conftest import REPO

Severity = Literal["error", "warning", "info"]
Summary = Literal["ok", "warn", "error"]


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class Pos(Strict):
    line: int
    column: int


class Diagnostic(Strict):
    severity: Severity
    code: str
    message: str
    pos: Pos | None = None
    nodeId: str | None = None
    phase: Literal["pre", "post"] | None = None


class BlockSummary(Strict):
    id: str | None = None
    type: str
    name: str | None = None
    attrs: dict[str, str | bool | int | float] | None = None
    title: str | None = None
    level: int | None = None
    aliases: list[str] | None = None
    childCount: int
    lines: tuple[int, int]
    patchable: bool
    hash: str | None = None


class ReadDoc(Strict):
    blocks: list[BlockSummary]


class ListIds(Strict):
    ids: list[str]
    aliases: dict[str, str]


class ValidateDoc(Strict):
    ok: bool
    diagnostics: list[Diagnostic]


class Actor(Strict):
    kind: Literal["human", "agent", "tool"]
    name: str
    model: str | None = None
    version: str | None = None


class TranscriptLine(Strict):
    protocol_version: Literal["1.0"]
    tool_version: str
    op_id: str
    ts: str
    actor: Actor
    doc_uri: str
    pre_sha256: str
    post_sha256: str
    pre_sha: str
    post_sha: str
    op: dict[str, Any]
    patch_result: Literal["applied", "rejected", "noop"]
    pre_validation: Summary
    post_validation: Summary
    reason: str | None = None
    parent_op_id: str | None = None
    base_sha256: str | None = None
    diagnostics: list[Diagnostic] | None = None
    elapsed_ms: int | None = None
    prev_entry_sha256: str | None = None
    signature: None = None


class PatchOk(Strict):
    ok: Literal[True]
    post_validation: Summary
    transcript_entry: TranscriptLine
    diagnostics: list[Diagnostic]
    advisories: list[str] | None = None


class PatchFailed(Strict):
    ok: Literal[False]
    error: str
    code: str | None = None


class SystemErrorBody(Strict):
    ok: Literal[False]
    code: str
    error: str


class ToolFailure(Exception):
    """``isError: true``: a system fault (text, or a JSON body where one is typed)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class TypedNoma:
    """``async with TypedNoma(root) as noma: blocks = (await noma.read_doc(f)).blocks``.

    Every raw body is kept in `raw` (tool name, arguments, body text) for table checks.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.raw: list[tuple[str, dict[str, Any], str, bool]] = []
        self._stack = AsyncExitStack()
        self.session: Any = None

    async def __aenter__(self) -> TypedNoma:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "core.cli", "mcp", "--root", str(self.root)],
            cwd=str(self.root),
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        read, write = await self._stack.enter_async_context(stdio_client(params))
        self.session = await self._stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        result = await self.session.call_tool(tool, arguments)
        assert len(result.content) == 1 and result.content[0].type == "text"
        text: str = result.content[0].text
        self.raw.append((tool, arguments, text, bool(result.is_error)))
        if result.is_error:
            raise ToolFailure(text)
        return text

    async def tool_schemas(self) -> dict[str, dict[str, Any]]:
        tools = (await self.session.list_tools()).tools
        return {t.name: t.input_schema for t in tools}

    async def read_doc(self, file: str) -> ReadDoc:
        return ReadDoc.model_validate_json(await self.call("read_doc", {"file": file}))

    async def list_ids(self, file: str) -> ListIds:
        return ListIds.model_validate_json(await self.call("list_ids", {"file": file}))

    async def validate_doc(self, file: str) -> ValidateDoc:
        return ValidateDoc.model_validate_json(await self.call("validate_doc", {"file": file}))

    async def patch_block(
        self, file: str, op: dict[str, Any], **extra: Any
    ) -> PatchOk | PatchFailed:
        text = await self.call("patch_block", {"file": file, "op": op, **extra})
        if json.loads(text).get("ok") is True:
            return PatchOk.model_validate_json(text)
        return PatchFailed.model_validate_json(text)
