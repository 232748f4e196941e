"""The four Annex B tools as plain functions returning JSON-ready dicts.

Kept apart from the MCP server so the CLI, tests and the server share one implementation.
User-facing patch errors are ``{ok: false, error, code}`` values; system faults raise
`SystemFault`, which the server turns into ``isError: true`` (B.7).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..noma.boundary import BoundaryError, check_document, document_place
from ..noma.files import DocumentIOError, is_book_manifest, read_source_at
from ..noma.ids import index
from ..noma.nodes import Directive, Node, Section
from ..noma.patch.errors import PatchError
from ..noma.patch.pipeline import (
    Actor,
    DocumentCache,
    DocumentState,
    PatchOutcome,
    PatchRequest,
    patch_file,
)
from ..noma.patch.text import SourceLines
from ..noma.source import Source


class SystemFault(Exception):
    """Filesystem errors, book manifests, paths outside the root, unexpected exceptions.

    ``body`` is the JSON body the reference sends with ``isError`` for the cases it types
    (a book manifest: ``{ok: false, code: "unsupported_op", error}``); others are plain text.
    """

    def __init__(self, message: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.body = body


def boundary_fault(exc: BoundaryError) -> SystemFault:
    """A refused path as the typed system fault every tool raises: ``isError: true`` with
    ``{ok: false, code, error}`` (codes in `core.noma.boundary`)."""
    return SystemFault(exc.message, {"ok": False, "code": exc.code, "error": exc.message})


class ToolContext:
    """Per-server state: the root paths are contained to, and the warm document cache.

    The root is trusted as the operator typed it (``noma mcp --root``); below it every file
    is reached through the boundary (`core.noma.boundary`): no ``..`` out of it, no
    symlink followed, and only regular ``.noma`` files, for reading tools as for the
    patching ones (a tool that would read ``~/.ssh/id_rsa`` through a planted symlink, or
    parse a shell script's ``# comments`` as headings, is refused before it reads)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root.resolve() if root is not None else None
        self._typed = Path(os.path.abspath(root)) if root is not None else None
        self.cache = DocumentCache()

    def _base(self, path: Path) -> Path | None:
        """The root form ``path`` is written under (as typed, or resolved)."""
        if self.root is None:
            return None
        for base in (self._typed, self.root):
            if base is not None and Path(os.path.normpath(path)).is_relative_to(base):
                return base
        return self.root

    def resolve(self, file: str) -> Path:
        if not isinstance(file, str) or not file:
            raise SystemFault("'file' must be a path to a .noma file")
        path = Path(file)
        if not path.is_absolute():
            path = (self._typed or Path.cwd()) / path
        path = Path(os.path.normpath(path))
        base = self._base(path)
        if base is not None and not path.is_relative_to(base):
            message = (
                f"{file}: outside the server's root {self.root}; start the server with "
                "`noma mcp --root DIR` where DIR contains this file to widen it"
            )
            raise SystemFault(message)  # plain text, as the reference clients expect
        if is_book_manifest(path):
            message = (
                f"{path.name} is a book manifest, not a valid target (§2.3); "
                "address a chapter's .noma file"
            )
            raise SystemFault(message, {"ok": False, "code": "unsupported_op", "error": message})
        try:
            check_document(path, base)
        except FileNotFoundError as exc:
            raise SystemFault(f"{path}: no such file") from exc
        except BoundaryError as exc:
            raise boundary_fault(exc) from exc
        return path

    def load(self, file: str) -> tuple[Path, Source, DocumentState]:
        """The file's current state from the warm cache: an unchanged file costs one read
        and one hash, a changed one a splice from the version seen last."""
        path = self.resolve(file)
        try:
            with document_place(path, self._base(path)) as where:
                source = read_source_at(where, path)
            source, state = self.cache.load(path, source)
        except FileNotFoundError as exc:
            raise SystemFault(f"{path}: no such file") from exc
        except BoundaryError as exc:
            raise boundary_fault(exc) from exc
        except DocumentIOError as exc:
            raise SystemFault(str(exc)) from exc
        return path, source, state

    def patch(self, path: Path, request: PatchRequest) -> PatchOutcome:
        """`patch_file` under this root, its faults as `SystemFault`."""
        try:
            return patch_file(path, request, cache=self.cache, root=self._base(path))
        except BoundaryError as exc:
            raise boundary_fault(exc) from exc
        except DocumentIOError as exc:
            raise SystemFault(str(exc)) from exc
        except OSError as exc:
            raise SystemFault(f"{path}: {exc.strerror or exc}") from exc


def block_summary(node: Node, lines: SourceLines) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if node.id:
        out["id"] = node.id
    out["type"] = node.type
    if isinstance(node, Directive):
        out["name"] = node.name
        out["attrs"] = {k: v for k, v in node.attrs.items() if k != "id"}
    if isinstance(node, Section):
        out["title"] = node.title
        out["level"] = node.level
    if node.aliases:
        out["aliases"] = list(node.aliases)
    out["childCount"] = len(node.children_nodes)
    out["lines"] = [node.line, node.end_line]
    out["patchable"] = bool(node.id)
    if node.id and node.end_line <= len(lines):
        out["hash"] = lines.block_hash(node.line, node.end_line)
    return out


def read_doc(ctx: ToolContext, file: str) -> dict[str, Any]:
    _path, source, state = ctx.load(file)
    doc, lines = state.doc, SourceLines(source.text)
    return {"blocks": [block_summary(node, lines) for node, _parent in doc.walk()]}


def list_ids(ctx: ToolContext, file: str) -> dict[str, Any]:
    _path, _source, state = ctx.load(file)
    idx = index(state.doc)
    return {"ids": idx.canonical, "aliases": dict(idx.alias_owner)}


def validate_doc(ctx: ToolContext, file: str) -> dict[str, Any]:
    _path, _source, state = ctx.load(file)
    diagnostics = state.diagnostics
    return {
        "ok": not any(d.severity == "error" for d in diagnostics),
        "diagnostics": [d.to_json() for d in diagnostics],
    }


def request_actor(actor: Any) -> tuple[Actor, PatchError | None]:
    """The caller's actor (B.6: ``{kind: "agent", name: "unknown"}`` when absent), or that
    default and the refusal of one that is not an actor: the op is still attempted, so it
    is refused *with a record* (§5.1), not before one."""
    if actor is None:
        return Actor("agent", "unknown"), None
    try:
        return Actor.from_json(actor), None
    except PatchError as exc:
        return Actor("agent", "unknown"), exc


def patch_block(
    ctx: ToolContext,
    file: str,
    op: Any,
    reason: str | None = None,
    expected_sha: str | None = None,
    actor: Any = None,
    base_sha256: str | None = None,
    parent_op_id: str | None = None,
    base_hash: str | None = None,
) -> dict[str, Any]:
    path = ctx.resolve(file)
    who, actor_error = request_actor(actor)
    refusal = actor_error
    if refusal is None and not isinstance(op, dict):
        refusal = PatchError("invalid_op", "op must be one patch op object")
    request = PatchRequest(
        ops=[op],
        actor=who,
        refusal=refusal,
        raw_actor=actor if actor_error is not None else None,
        reason=reason,
        expected_sha=expected_sha,
        base_sha256=base_sha256,
        parent_op_id=parent_op_id,
        base_hash=base_hash,
    )
    outcome = ctx.patch(path, request)
    if not outcome.ok:
        return {"ok": False, "error": outcome.error or "", "code": outcome.code}
    result: dict[str, Any] = {
        "ok": True,
        "post_validation": outcome.post_validation,
        "transcript_entry": outcome.records[-1],
        "diagnostics": [d.to_json() for d in outcome.post_diagnostics],
    }
    if outcome.advisories:
        result["advisories"] = outcome.advisories
    if outcome.recovery is not None:  # an interrupted earlier write was settled first
        result["recovery"] = outcome.recovery.to_json()
    return result
