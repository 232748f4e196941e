"""Shared plumbing for the trustworthy-edits tests: schema validation of transcript records,
reading a transcript, running the real CLI and the real MCP server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO, shared_dir


def record_validator() -> Any:
    """A Draft 2020-12 validator for ``transcript.schema.json`` (its ``op`` resolves to the
    official ``patch-op.schema.json``), with format checks on."""
    import jsonschema
    from referencing import Registry, Resource

    schemas_dir = shared_dir("schemas")
    schemas = {p.name: json.loads(p.read_text()) for p in schemas_dir.glob("*.json")}
    registry = (
        Registry()
        .with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
        .with_resources((name, Resource.from_contents(s)) for name, s in schemas.items())
    )
    return jsonschema.Draft202012Validator(
        schemas["transcript.schema.json"],
        registry=registry,
        format_checker=jsonschema.FormatChecker(),
    )


def op_validator() -> Any:
    import jsonschema

    schema = json.loads((shared_dir("schemas") / "patch-op.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def schema_errors(validator: Any, record: dict[str, Any]) -> list[str]:
    return [e.message for e in sorted(validator.iter_errors(record), key=str)]


def transcript_records(doc: Path) -> list[dict[str, Any]]:
    path = Path(str(doc) + ".patches")
    if not path.exists():
        return []
    # Lines end at "\n" only (JSONL): never str.splitlines, which also splits at U+2028.
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def run_noma(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def mcp_calls(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, Any]]:
    """Call ``noma mcp --root ROOT`` tools in order through the ``mcp`` SDK client; each
    result as (is_error, parsed JSON body or raw text)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def drive() -> list[tuple[bool, Any]]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "core.cli", "mcp", "--root", str(root)],
            cwd=str(root),
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        out: list[tuple[bool, Any]] = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                text = result.content[0].text if result.content else ""
                try:
                    payload: Any = json.loads(text)
                except json.JSONDecodeError:
                    payload = text
                out.append((bool(result.is_error), payload))
        return out

    return asyncio.run(drive())
