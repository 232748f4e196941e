"""The incremental engine (issue 14): what one edit costs on a large document.

- ``apply``: one op in memory on a warm engine (`DocumentCache` holds the pre-state): read and
  hash the file, apply the op, build and validate the post-state; nothing written
  (``patch_file(write=False)``, what a proof costs). Two ops from the issue: update_attribute
  on the last claim, replace_body (one line becomes two) on the first risk.
- ``patch``: warm ``patch_block`` end to end: the same, plus the write-ahead commit
  (fsync, rename, transcript record); a different claim each run so every run writes.
- ``patch body``: warm ``patch_block`` of a replace_body that changes the line count, on
  a different risk each run (the previous version's moved blocks were copied lazily).
- ``validate_doc``: the MCP tool on an unchanged file (one read, one hash).
- heading edits (second table): `pipeline.analyse` of an outside edit given the previous
  version's state (splice + validate), alternating the edit and its reverse so each run's
  base is the version the previous run made: a section inserted near the top and removed
  again, the last finding retitled (a new slug nothing names) and back, and a finding
  that a later one links to retitled and back (the link breaks and mends: the linking
  sites are checked again).
- directive edits (third table): the same for a directive inserted before the first risk
  and removed again: a note (no whole-document rule reads it beyond its id), a claim
  (its own ``claim-without-evidence`` is made from its names), a note whose body links to
  a claim (its text site is checked on its own), a paragraph with a broken link; and an
  agent's ``add_block`` of a note in memory (``patch_file(write=False)``, warm cache, a
  different note each run).

Medians over ``--repeat`` runs. Run: ``./dev bench incremental`` (``--sizes 1000,5000,20000,50000
--mcp --warm-only`` for the warm path alone at every size, over MCP stdio too).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.generate import generate
from core.noma.patch.pipeline import Actor, DocumentCache, PatchRequest, patch_file

ACTOR = Actor("agent", "bench")


def _median(samples: list[float]) -> float:
    return round(statistics.median(samples), 1)


def _ops(n: int) -> dict[str, dict[str, Any]]:
    return {
        "attr-last-claim": {
            "op": "update_attribute",
            "id": f"claim-{n - 1}",
            "key": "bench",
            "value": 1,
        },
        "body-first-risk": {
            "op": "replace_body",
            "id": "risk-0",
            "content": "The effect holds for small tenants.\nLarger ones were not measured.",
        },
    }


def apply_in_memory(path: Path, op: dict[str, Any], repeat: int) -> float:
    cache = DocumentCache()
    patch_file(path, PatchRequest(ops=[op], actor=ACTOR), write=False, cache=cache)  # warm
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        outcome = patch_file(path, PatchRequest(ops=[op], actor=ACTOR), write=False, cache=cache)
        samples.append((time.perf_counter() - start) * 1000)
        assert outcome.ok, outcome.error
    return _median(samples)


def patch_warm(path: Path, n: int, repeat: int) -> float:
    cache = DocumentCache()
    first = {"op": "update_attribute", "id": "claim-0", "key": "bench_seq", "value": -1}
    patch_file(path, PatchRequest(ops=[first], actor=ACTOR), cache=cache)
    samples = []
    for i in range(repeat):
        op = {"op": "update_attribute", "id": f"claim-{(i * 7919) % n}", "key": "seq", "value": i}
        start = time.perf_counter()
        outcome = patch_file(path, PatchRequest(ops=[op], actor=ACTOR), cache=cache)
        samples.append((time.perf_counter() - start) * 1000)
        assert outcome.ok and outcome.written, outcome.error
    return _median(samples)


def patch_warm_body(path: Path, n: int, repeat: int) -> float:
    """Warm ``patch_block`` of a replace_body that moves every later line (one line becomes
    two, then one again), on a different risk each run: the write path when the previous
    version was spliced with lazily copied blocks."""
    cache = DocumentCache()
    risks = [k for k in range(n) if k % 6 == 0]
    patch_file(
        path,
        PatchRequest(ops=[{"op": "replace_body", "id": "risk-0", "content": "x"}], actor=ACTOR),
        cache=cache,
    )
    samples = []
    for i in range(repeat):
        body = "One line." if i % 2 else "Two lines.\nThe second."
        op = {"op": "replace_body", "id": f"risk-{risks[(i * 7919) % len(risks)]}", "content": body}
        start = time.perf_counter()
        outcome = patch_file(path, PatchRequest(ops=[op], actor=ACTOR), cache=cache)
        samples.append((time.perf_counter() - start) * 1000)
        assert outcome.ok, outcome.error
    return _median(samples)


def validate_unchanged(path: Path, repeat: int) -> float | None:
    try:
        from core.mcp.tools import ToolContext, validate_doc
    except ImportError:
        return None
    ctx = ToolContext(path.parent)
    validate_doc(ctx, str(path))
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        validate_doc(ctx, str(path))
        samples.append((time.perf_counter() - start) * 1000)
    return _median(samples)


def mcp_round_trips(path: Path, n: int, repeat: int) -> tuple[float, float]:
    """Medians of ``validate_doc`` (unchanged file) and ``patch_block`` over MCP stdio."""
    import asyncio
    import os
    import sys

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def drive() -> tuple[float, float]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "core.cli", "mcp", "--root", str(path.parent)],
            cwd=str(path.parent),
            env=dict(os.environ),  # the SDK passes a minimal environment by default
        )
        checks: list[float] = []
        patches: list[float] = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("validate_doc", {"file": str(path)})  # warm
            for _ in range(repeat):
                start = time.perf_counter()
                await session.call_tool("validate_doc", {"file": str(path)})
                checks.append((time.perf_counter() - start) * 1000)
            for i in range(repeat):
                op = {"op": "update_attribute", "id": f"claim-{(i * 7919) % n}", "key": "m"}
                op["value"] = i
                start = time.perf_counter()
                result = await session.call_tool("patch_block", {"file": str(path), "op": op})
                patches.append((time.perf_counter() - start) * 1000)
                assert not result.is_error
        return _median(checks), _median(patches)

    return asyncio.run(drive())


def _retitle(text: str, number: int, title: str) -> str:
    import re

    found = re.search(rf"^## Finding {number}: .*$", text, re.M)
    assert found is not None
    return text[: found.start()] + f"## Finding {number}: {title}" + text[found.end() :]


def heading_edits(n: int, repeat: int) -> dict[str, tuple[float, float]]:
    """Medians of (edit, reverse edit) through `pipeline.analyse` with the previous state."""
    text = generate(n)
    edits = {
        "insert/remove section": text.replace(
            "## Finding 3: ", "## Added outside\n\nWritten by another editor.\n\n## Finding 3: ", 1
        ),
        "retitle last finding": _retitle(text, n - 1, "Retitled by another editor"),
        "retitle linked finding": _retitle(text, 7, "Retitled by another editor"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        return {name: _forth_and_back(text, edited, base, repeat) for name, edited in edits.items()}


def _forth_and_back(text: str, edited: str, base: Path, repeat: int) -> tuple[float, float]:
    """Medians of (``text`` -> ``edited``, and back) through `pipeline.analyse` with the
    previous version's state, as a chain of versions."""
    import hashlib

    from core.noma.patch.pipeline import analyse

    state = analyse(text, base, hashlib.sha256(text.encode()).hexdigest())
    forth: list[float] = []
    back: list[float] = []
    for _ in range(repeat):
        for target, samples in ((edited, forth), (text, back)):
            sha = hashlib.sha256(target.encode()).hexdigest()
            start = time.perf_counter()
            state = analyse(target, base, sha, previous=state)
            samples.append((time.perf_counter() - start) * 1000)
    return _median(forth), _median(back)


DIRECTIVES = {
    "note added/removed": '::note{id="n-added"}\nAdded outside.\n::\n\n',
    "claim added/removed": '::claim{id="claim-new"}\nAdded outside.\n::\n\n',
    "linking note": '::note{id="n-linked"}\nSee [[claim-3]].\n::\n\n',
    "paragraph, broken link": "See [[nowhere]] for more.\n\n",
}


def directive_edits(n: int, repeat: int) -> dict[str, tuple[float, float | None]]:
    """Medians of (insert, removal) through `pipeline.analyse` with the previous state,
    plus (add_block in memory, -)."""
    import re

    from core.noma.slug import slugify

    text = generate(n)
    anchor = '::risk{id="risk-0"'
    out: dict[str, tuple[float, float | None]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for name, block in DIRECTIVES.items():
            edited = text.replace(anchor, block + anchor, 1)
            out[name] = _forth_and_back(text, edited, base, repeat)
        path = base / "bench.noma"
        path.write_text(text)
        found = re.search(r"^## (Finding 3: .*)$", text, re.M)
        assert found is not None
        out["add_block note (apply)"] = (
            add_block_in_memory(path, slugify(found.group(1)), repeat),
            None,
        )
    return out


def add_block_in_memory(path: Path, parent: str, repeat: int) -> float:
    """An agent's add_block of a note in memory on a warm engine: a different note each
    run (an identical one would take the post-state the previous dry run prepared)."""
    cache = DocumentCache()

    def op(k: int) -> dict[str, Any]:
        content = f'::note{{id="n-agent-{k}"}}\nAdded by an agent.\n::'
        return {"op": "add_block", "parent": parent, "position": 0, "content": content}

    patch_file(path, PatchRequest(ops=[op(-1)], actor=ACTOR), write=False, cache=cache)
    samples = []
    for k in range(repeat):
        start = time.perf_counter()
        outcome = patch_file(path, PatchRequest(ops=[op(k)], actor=ACTOR), write=False, cache=cache)
        samples.append((time.perf_counter() - start) * 1000)
        assert outcome.ok, outcome.error
    return _median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench incremental")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--mcp", action="store_true", help="also time the MCP stdio server")
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="only the first table (skip the outside heading and directive edits)",
    )
    args = parser.parse_args(argv)
    print("one edit on a warm engine (medians, ms)")
    header = ("sections", "apply attr", "apply body", "patch", "patch body", "validate_doc")
    print(
        f"{header[0]:>8} {header[1]:>11} {header[2]:>11} {header[3]:>8} {header[4]:>11}"
        f" {header[5]:>13}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.noma"
            path.write_text(generate(n))
            ops = _ops(n)
            attr = apply_in_memory(path, ops["attr-last-claim"], args.repeat)
            body = apply_in_memory(path, ops["body-first-risk"], args.repeat)
            unchanged = validate_unchanged(path, args.repeat)
            warm = patch_warm(path, n, args.repeat)
            warm_body = patch_warm_body(path, n, args.repeat)
            print(
                f"{n:>8} {attr:>11} {body:>11} {warm:>8} {warm_body:>11} {unchanged!s:>13}",
                flush=True,
            )
            if args.mcp:
                check, patch = mcp_round_trips(path, n, args.repeat)
                print(f"{'':>8} MCP stdio: validate_doc {check}, patch_block {patch}", flush=True)
    if args.warm_only:
        return 0
    print("outside heading edits, analyse with the previous state (medians, ms: edit / back)")
    for n in (int(s) for s in args.sizes.split(",")):
        for name, (forth, back) in heading_edits(n, args.repeat).items():
            print(f"{n:>8} {name:>24} {forth:>7} / {back}", flush=True)
    print("outside directive edits, analyse with the previous state (medians, ms: edit / back)")
    for n in (int(s) for s in args.sizes.split(",")):
        for name, (forth, maybe) in directive_edits(n, args.repeat).items():
            tail = "" if maybe is None else f" / {maybe}"
            print(f"{n:>8} {name:>24} {forth:>7}{tail}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
