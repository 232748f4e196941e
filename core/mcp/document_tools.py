"""The MCP tools that read a document's records and capabilities: ``transcript_read`` and
``describe_capabilities``, with ``patch_block_list`` (in `tools`, beside the ``patch_block``
that is its one-op case) re-exported; the additive tools of Annex B.8's v1.1 directions.

They add to the binding and change nothing in the four v1.0 tools. Like those, they return
JSON bodies; user errors are ``{ok: false, error, code}`` and only system faults (a file
outside the root, a book manifest, a filesystem error) raise `SystemFault`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..noma.boundary import BoundaryError, document_place
from ..noma.patch.capabilities import describe, load_descriptor, op_advisories
from ..noma.transcript import RESULTS, parse_lines, transcript_path
from .tools import SystemFault, ToolContext, boundary_fault, patch_block_list

__all__ = ["describe_capabilities", "patch_block_list", "transcript_read"]

DEFAULT_PAGE = 100
MAX_PAGE = 1000
INVALID_ARGUMENT = "invalid_argument"


def _bad(message: str, code: str = INVALID_ARGUMENT) -> dict[str, Any]:
    return {"ok": False, "error": message, "code": code}


def _when(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def transcript_read(
    ctx: ToolContext,
    file: str,
    offset: int = 0,
    limit: int = DEFAULT_PAGE,
    actor: str | None = None,
    actor_kind: str | None = None,
    op: str | None = None,
    result: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> dict[str, Any]:
    """A page of ``<file>.patches`` records, oldest first, filtered by actor name or kind,
    op name, result and time (``since`` <= ts < ``until``). Unreadable lines are listed in
    ``problems`` (never silently dropped); ``warnings`` are a record's inconsistencies."""
    path = ctx.resolve(file)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        return _bad("offset must be an integer >= 0")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        return _bad(f"limit must be an integer from 1 to {MAX_PAGE}")
    if result is not None and result not in RESULTS:
        return _bad("result must be applied, rejected or noop")
    if actor_kind is not None and actor_kind not in ("human", "agent", "tool"):
        return _bad("actor_kind must be human, agent or tool")
    bounds = {"since": since, "until": until}
    parsed = {k: _when(v) for k, v in bounds.items()}
    for key, value in bounds.items():
        if value is not None and parsed[key] is None:
            return _bad(f"{key} must be an ISO 8601 date-time")
    transcript = transcript_path(path)
    try:
        # Through the boundary: a transcript planted as a symlink is refused, not read.
        with document_place(path, ctx._base(path)) as where:
            raw = where.folder.read_bytes(transcript.name)
        lines = parse_lines(raw) if raw is not None else []
    except BoundaryError as exc:
        raise boundary_fault(exc) from exc
    except OSError as exc:
        raise SystemFault(f"{transcript}: {exc.strerror or exc}") from exc
    problems = [{"line": ln.number, "problem": ln.problem} for ln in lines if ln.problem]
    matched: list[dict[str, Any]] = []
    for line in lines:
        record = line.record
        if record is None or line.problem:
            continue
        raw_actor = record.get("actor")
        who: dict[str, Any] = raw_actor if isinstance(raw_actor, dict) else {}
        if actor is not None and who.get("name") != actor:
            continue
        if actor_kind is not None and who.get("kind") != actor_kind:
            continue
        raw_op = record.get("op")
        if op is not None and (not isinstance(raw_op, dict) or raw_op.get("op") != op):
            continue
        if result is not None and record.get("patch_result") != result:
            continue
        if parsed["since"] is not None or parsed["until"] is not None:
            ts = _when(record.get("ts"))
            if ts is None:
                continue
            if parsed["since"] is not None and ts < parsed["since"]:
                continue
            if parsed["until"] is not None and ts >= parsed["until"]:
                continue
        entry: dict[str, Any] = {"line": line.number, "record": record}
        if line.warnings:
            entry["warnings"] = line.warnings
        matched.append(entry)
    page = matched[offset : offset + limit]
    after = offset + len(page)
    return {
        "ok": True,
        "transcript": str(transcript),
        "total": len(matched),
        "offset": offset,
        "limit": limit,
        "next_offset": after if after < len(matched) else None,
        "entries": page,
        "problems": problems,
    }


def describe_capabilities(
    ctx: ToolContext, file: str, op: Any = None, id: str | None = None
) -> dict[str, Any]:
    """The document's capability sidecar (Annex A); for a proposed ``op``, the advisories
    ``patch_block`` would give an agent; for a block ``id``, the ops that apply to it
    (`applicable_ops`). Advisory only: v1.0 never enforces a descriptor."""
    from ..noma.ids import index
    from ..noma.patch.applicable import applicable_ops

    path = ctx.resolve(file)
    out: dict[str, Any] = {"ok": True, **describe(load_descriptor(path))}
    if op is not None and not isinstance(op, dict):
        return _bad("op must be one patch op object", "invalid_op")
    if op is None and id is None:
        return out
    doc = ctx.load(file)[2].doc
    if op is not None:
        out["advisories"] = op_advisories(path, [op], doc)
    if id is not None:
        node = index(doc).first.get(id)
        if node is None:
            return _bad(f"no block with the canonical id '{id}'", "target_missing")
        out["applicable_ops"] = applicable_ops(doc, node)
    return out
