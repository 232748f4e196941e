"""An MCP client from the ``mcp`` SDK drives ``noma mcp`` over stdio (Annex B)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

DOC = '# Memo {aliases="memo-alias"}\n\n::claim{id="c1" confidence=0.5}\nbody.\n::\n'


def body(result: Any) -> dict[str, Any]:
    assert result.content and result.content[0].type == "text"
    return json.loads(result.content[0].text)


async def drive(root: Path) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "core.cli", "mcp", "--root", str(root)], cwd=str(root)
    )
    doc = root / "memo.noma"
    out: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
        out["read_doc"] = body(await session.call_tool("read_doc", {"file": str(doc)}))
        out["list_ids"] = body(await session.call_tool("list_ids", {"file": str(doc)}))
        out["validate_doc"] = body(await session.call_tool("validate_doc", {"file": str(doc)}))
        claim = next(b for b in out["read_doc"]["blocks"] if b.get("id") == "c1")
        ok = await session.call_tool(
            "patch_block",
            {
                "file": str(doc),
                "op": {
                    "op": "update_attribute",
                    "id": "c1",
                    "key": "confidence",
                    "value": 0.9,
                    "baseHash": claim["hash"],
                },
                "reason": "stronger evidence",
                "actor": {"kind": "agent", "name": "tester", "model": "m1"},
            },
        )
        out["patch_ok"] = (ok.is_error, body(ok))
        user_error = await session.call_tool(
            "patch_block",
            {
                "file": str(doc),
                "op": {"op": "delete_block", "id": "memo-alias"},
            },
        )
        out["user_error"] = (user_error.is_error, body(user_error))
        stale = await session.call_tool(
            "patch_block",
            {
                "file": str(doc),
                "op": {"op": "replace_body", "id": "c1", "content": "x", "baseHash": claim["hash"]},
            },
        )
        out["stale"] = (stale.is_error, body(stale))
        missing = await session.call_tool("read_doc", {"file": str(root / "absent.noma")})
        out["system_error"] = (missing.is_error, missing.content[0].text)
        book = await session.call_tool(
            "patch_block",
            {
                "file": str(root / "book.noma.yml"),
                "op": {"op": "delete_block", "id": "x"},
            },
        )
        out["book"] = (book.is_error, book.content[0].text)
        outside = await session.call_tool("list_ids", {"file": "/etc/hostname"})
        out["outside"] = outside.is_error
    return out


def test_all_four_tools_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "memo.noma").write_text(DOC)
    (tmp_path / "book.noma.yml").write_text("chapters: [memo.noma]\n")
    out = asyncio.run(asyncio.wait_for(drive(tmp_path), timeout=120))
    # The four Annex B tools (the server also carries flow_run, architecture.md).
    assert {"list_ids", "patch_block", "read_doc", "validate_doc"} <= set(out["tools"])

    blocks = out["read_doc"]["blocks"]
    section = blocks[0]
    assert section == {
        "id": "memo",
        "type": "section",
        "title": "Memo",
        "level": 1,
        "aliases": ["memo-alias"],
        "childCount": 1,
        "lines": [1, 5],
        "patchable": True,
        "hash": section["hash"],
    }
    claim = next(b for b in blocks if b.get("id") == "c1")
    assert (
        claim["name"] == "claim"
        and claim["attrs"] == {"confidence": 0.5}
        and claim["lines"] == [3, 5]
    )
    para = next(b for b in blocks if b["type"] == "paragraph")
    assert para["patchable"] is False and "id" not in para

    assert out["list_ids"] == {"ids": ["memo", "c1"], "aliases": {"memo-alias": "memo"}}
    assert out["validate_doc"]["ok"] is True
    assert [d["code"] for d in out["validate_doc"]["diagnostics"]] == ["claim-without-evidence"]

    is_error, ok = out["patch_ok"]
    assert is_error is False and ok["ok"] is True and ok["post_validation"] == "warn"
    entry = ok["transcript_entry"]
    assert entry["patch_result"] == "applied" and entry["reason"] == "stronger evidence"
    assert entry["actor"] == {"kind": "agent", "name": "tester", "model": "m1"}
    assert "confidence=0.9" in (tmp_path / "memo.noma").read_text()

    is_error, user = out["user_error"]
    assert is_error is False and user["ok"] is False and user["code"] == "target_missing"
    is_error, stale = out["stale"]
    assert is_error is False and stale["code"] == "sha_mismatch"

    assert out["system_error"][0] is True and "no such file" in out["system_error"][1]
    assert out["book"][0] is True and "book manifest" in out["book"][1]
    assert out["outside"] is True

    records = (tmp_path / "memo.noma.patches").read_text().splitlines()
    assert [json.loads(r)["patch_result"] for r in records] == ["applied", "rejected", "rejected"]
