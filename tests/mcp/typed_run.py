"""One typed-client run over the official patch and patch-error fixtures, shared by the
tests that check its results (a server start and 32 fixtures are not free)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typed_client import PatchFailed, PatchOk, ToolFailure, TypedNoma

TARGET = {
    "rename_id": "from",
    "add_block": "parent",
    "add_comment": "target",
    "add_footnote": "target",
    "add_endnote": "target",
    "add_change_request": "target",
}


@dataclass
class FixtureRun:
    name: str
    doc: Path
    results: list[PatchOk | PatchFailed] = field(default_factory=list)
    expected_post: bytes | None = None
    expected_code: str | None = None
    input_bytes: bytes = b""


@dataclass
class TypedRun:
    fixtures: list[FixtureRun]
    raw: list[tuple[str, dict[str, Any], str, bool]]
    schemas: dict[str, dict[str, Any]]
    extra: dict[str, Any]


def _ops(path: Path) -> list[dict[str, Any]]:
    payload = json.loads(path.read_text())
    return payload if isinstance(payload, list) else [payload]


async def _drive(root: Path, corpus: Path) -> TypedRun:
    runs: list[FixtureRun] = []
    extra: dict[str, Any] = {}
    async with TypedNoma(root) as noma:
        schemas = await noma.tool_schemas()
        for track in ("patch", "patch-error"):
            for fixture in sorted((corpus / track).iterdir()):
                if not (fixture / "patch.json").exists():
                    continue
                work = root / track / fixture.name
                work.mkdir(parents=True)
                doc = work / "input.noma"
                shutil.copyfile(fixture / "input.noma", doc)
                run = FixtureRun(f"{track}/{fixture.name}", doc, input_bytes=doc.read_bytes())
                if (fixture / "expected.post.noma").exists():
                    run.expected_post = (fixture / "expected.post.noma").read_bytes()
                if (fixture / "expected.error.json").exists():
                    run.expected_code = json.loads((fixture / "expected.error.json").read_text())[
                        "code"
                    ]
                # All four tools on every fixture; each op through patch_block alone, with
                # the target block's fresh hash from read_doc as the top-level base_hash.
                await noma.list_ids(str(doc))
                await noma.validate_doc(str(doc))
                for op in _ops(fixture / "patch.json"):
                    blocks = (await noma.read_doc(str(doc))).blocks
                    target = op.get(TARGET.get(op["op"], "id"))
                    hashes = [b.hash for b in blocks if b.id == target and b.hash]
                    args: dict[str, Any] = {"actor": {"kind": "agent", "name": "typed-sdk"}}
                    if hashes:
                        args["base_hash"] = hashes[0][:16]
                    result = await noma.patch_block(str(doc), op, **args)
                    run.results.append(result)
                    if not result.ok:
                        break
                await noma.validate_doc(str(doc))
                runs.append(run)
        # Every optional request field once, so every optional response field shows up.
        memo = root / "memo.noma"
        memo.write_text('# Memo {aliases="m"}\n\n::claim{id="c1" confidence=0.5}\nBody.\n::\n')
        first = await noma.patch_block(
            str(memo),
            {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.75},
            reason="typed run",
            actor={"kind": "agent", "name": "typed-sdk", "model": "m-1", "version": "2.0"},
            base_sha256=hashlib.sha256(memo.read_bytes()).hexdigest(),
        )
        assert isinstance(first, PatchOk)
        extra["second"] = await noma.patch_block(
            str(memo),
            {"op": "update_attribute", "id": "c1", "key": "reviewed", "value": True},
            parent_op_id=first.transcript_entry.op_id,
        )
        await noma.read_doc(str(memo))
        await noma.list_ids(str(memo))
        await noma.validate_doc(str(memo))
        # A book manifest: isError with the reference's JSON body.
        (root / "book.noma.yml").write_text("chapters: [a.noma]\n")
        try:
            await noma.patch_block(str(root / "book.noma.yml"), {"op": "delete_block", "id": "x"})
        except ToolFailure as failure:
            extra["book"] = failure.text
        try:
            await noma.read_doc("/etc/hostname")
        except ToolFailure as failure:
            extra["outside"] = failure.text
    return TypedRun(runs, noma.raw, schemas, extra)


def run_fixtures(root: Path, corpus: Path) -> TypedRun:
    return asyncio.run(asyncio.wait_for(_drive(root, corpus), timeout=300))
