"""``noma mcp``: the Annex B MCP-over-stdio server, built on the ``mcp`` SDK.

Tool results are JSON text in the content array. Only system faults set ``isError``
(B.7); every §3.5 patch error comes back as ``{ok: false, error, code}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from .. import __version__
from ..noma.patch.ops_catalog import ALL_OPS
from . import (
    document_tools,
    flow_candidate_tool,
    flow_defs_tool,
    flow_project_tool,
    flow_tool,
    stdio_guard,
    tools,
)
from .tools import SystemFault, ToolContext

INSTRUCTIONS = (
    "Noma documents: call read_doc or list_ids first, address blocks by canonical id only "
    "(resolve aliases with list_ids), and send one patch op per patch_block call. Pass a "
    "block's hash from read_doc as op.baseHash to refuse stale edits."
)


def _text(text: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


def _run(fn: Any, *args: Any, **kwargs: Any) -> CallToolResult:
    """The tool's JSON body as text; a system fault is ``isError: true`` with plain text, or
    with the JSON body the reference sends for that case (a book manifest)."""
    try:
        return _text(json.dumps(fn(*args, **kwargs), ensure_ascii=False))
    except SystemFault as exc:
        if exc.body is not None:
            return _text(json.dumps(exc.body, ensure_ascii=False), is_error=True)
        raise ToolError(str(exc)) from exc
    except Exception as exc:  # an unexpected fault is a system error, never a crash
        raise ToolError(f"internal error: {type(exc).__name__}: {exc}") from exc


def build_server(root: Path | None = None) -> MCPServer:
    ctx = ToolContext(root)
    server: MCPServer = MCPServer(name="noma", version=__version__, instructions=INSTRUCTIONS)

    @server.tool(
        name="read_doc",
        description="Parse a .noma file; return a summary of every block in document order "
        "(id, type, name, attrs, title, level, aliases, childCount, lines, patchable, hash).",
        structured_output=False,
    )
    def read_doc(file: str) -> CallToolResult:
        return _run(tools.read_doc, ctx, file)

    @server.tool(
        name="list_ids",
        description="Canonical ids in document order and the alias -> canonical id map.",
        structured_output=False,
    )
    def list_ids(file: str) -> CallToolResult:
        return _run(tools.list_ids, ctx, file)

    @server.tool(
        name="validate_doc",
        description="Run the validator (profile from frontmatter): {ok, diagnostics}.",
        structured_output=False,
    )
    def validate_doc(file: str) -> CallToolResult:
        return _run(tools.validate_doc, ctx, file)

    @server.tool(
        name="patch_block",
        description=f"Apply one patch op (any of the {len(ALL_OPS)} v1.0 ops) to a .noma file "
        "and append a v1.0 transcript record to <file>.patches. "
        "Patch errors return {ok: false, code}.",
        structured_output=False,
    )
    def patch_block(
        file: str,
        op: dict[str, Any],
        reason: str | None = None,
        expected_sha: str | None = None,
        actor: dict[str, Any] | None = None,
        base_sha256: str | None = None,
        parent_op_id: str | None = None,
        base_hash: str | None = None,
    ) -> CallToolResult:
        return _run(
            tools.patch_block,
            ctx,
            file,
            op,
            reason=reason,
            expected_sha=expected_sha,
            actor=actor,
            base_sha256=base_sha256,
            parent_op_id=parent_op_id,
            base_hash=base_hash,
        )

    _register_document_tools(server, ctx)
    flow_tool.register(server, root)
    flow_project_tool.register(server, root)
    flow_candidate_tool.register(server, root)
    flow_defs_tool.register(server, root)
    return server


def _register_document_tools(server: MCPServer, ctx: ToolContext) -> None:
    """The additive tools of Annex B.8's v1.1 directions (the v1.0 four are unchanged)."""

    @server.tool(
        name="patch_block_list",
        description="Additive (v1.1 direction): apply an atomic list of patch ops in one call "
        "(all or nothing); one transcript record per op, chained by parent_op_id.",
        structured_output=False,
    )
    def patch_block_list(
        file: str,
        ops: list[dict[str, Any]],
        reason: str | None = None,
        expected_sha: str | None = None,
        actor: dict[str, Any] | None = None,
        base_sha256: str | None = None,
        parent_op_id: str | None = None,
    ) -> CallToolResult:
        return _run(
            tools.patch_block_list,
            ctx,
            file,
            ops,
            reason=reason,
            expected_sha=expected_sha,
            actor=actor,
            base_sha256=base_sha256,
            parent_op_id=parent_op_id,
        )

    @server.tool(
        name="transcript_read",
        description="Additive (v1.1 direction): read <file>.patches records, paged (offset, "
        "limit) and filtered by actor name, actor_kind, op, result and time (since, until).",
        structured_output=False,
    )
    def transcript_read(
        file: str,
        offset: int = 0,
        limit: int = document_tools.DEFAULT_PAGE,
        actor: str | None = None,
        actor_kind: str | None = None,
        op: str | None = None,
        result: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> CallToolResult:
        return _run(
            document_tools.transcript_read,
            ctx,
            file,
            offset=offset,
            limit=limit,
            actor=actor,
            actor_kind=actor_kind,
            op=op,
            result=result,
            since=since,
            until=until,
        )

    @server.tool(
        name="describe_capabilities",
        description="Additive (v1.1 direction): the document's capability sidecar (Annex A); "
        "for a proposed op, its advisories; for a block id, the ops that apply to it. "
        "Advisory only; never enforced in v1.0.",
        structured_output=False,
    )
    def describe_capabilities(
        file: str, op: dict[str, Any] | None = None, id: str | None = None
    ) -> CallToolResult:
        return _run(document_tools.describe_capabilities, ctx, file, op=op, id=id)


def serve(root: Path | None = None) -> int:
    """Serve on stdio; every request line gets an answer (`stdio_guard`)."""
    anyio.run(stdio_guard.run_stdio, build_server(root))
    return 0
