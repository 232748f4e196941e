"""Importing flow bundles: validate, apply the §6 sandbox rules, park as an inert proposal.

An import never makes a flow runnable. It validates the bundle (every problem listed, with
its field path, as ``BAD_REQUEST``), checks its scope against the workspace policy (fails
closed with ``FLOW_IMPORT_SCOPE_DENIED``, nothing written), then applies the sandbox rules
in the spec's fixed order — undeclared ``external_tool`` refs first
(``FLOW_IMPORT_EXTERNAL_TOOL_DENIED``), then ``FLOW_IMPORT_AUTOMATABLE_DENIED`` when policy
forbids non-manual steps —
and records the bundle on a pending ``flow_import`` proposal. Only `review_import` with an
approval (rules re-checked against the policy of that moment) writes it into ``flows/``,
and even then automatable steps wait for the gates and the seven preconditions.

An external_tool ref counts as declared when the step also lists ``{kind: tool, id: <same
id>}`` under ``requires`` (the spec leaves the declaration form to 7A-L2).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from . import ids
from .bundle import BundleError, dump_bundle, parse_bundle, parse_bundle_text
from .catalog import CatalogEntry, bundle_sha256
from .context import FlowContext
from .enums import ProposalKind
from .errors import Problem, Refused
from .handlers import handler
from .models import FlowBundle
from .posture import Policy
from .records import PROPOSAL_SCHEMA

# Proposals that carry a bundle: approving one writes it into ``flows/``.
BUNDLE_KINDS: frozenset[str] = frozenset({"flow_import", "flow_change"})


def sandbox_check(bundle: FlowBundle, policy: Policy) -> None:
    """Import is scope-checked and fails closed; then the §6 rules, first violation wins:
    external_tool declarations, then the automatable policy."""
    if bundle.flow.scope not in policy.scopes:
        raise Refused("FLOW_IMPORT_SCOPE_DENIED")
    for step in bundle.steps:
        declared = {r.id for r in step.requires or () if r.kind == "tool"}
        for ref in step.skill_refs or ():
            if ref.kind == "external_tool" and ref.id not in declared:
                raise Refused("FLOW_IMPORT_EXTERNAL_TOOL_DENIED")
    if policy.automatable_forbidden and any(s.automatable != "manual" for s in bundle.steps):
        raise Refused("FLOW_IMPORT_AUTOMATABLE_DENIED")


def _bundle_from(text: str, fmt: str) -> FlowBundle:
    try:
        return parse_bundle_text(text, json_form=fmt == "json")
    except BundleError as exc:
        raise Refused("BAD_REQUEST", tuple(exc.problems)) from None


@handler
def import_flow(ctx: FlowContext, text: str, fmt: str = "yaml") -> dict[str, Any]:
    """Validate + sandbox a bundle and record it on a pending proposal (nothing activates).

    ``fmt`` is the bundle's format (``json`` or ``yaml``); an approved bundle is written and
    exported in it."""
    if fmt not in ("json", "yaml"):
        raise Refused("BAD_REQUEST", (Problem("format", "must be json or yaml"),))
    bundle = _bundle_from(text, fmt)
    sandbox_check(bundle, ctx.posture.policy)
    proposal = file_proposal(ctx, bundle, "flow_import", "import flow bundle", fmt)
    return {"schema": "noma.flow_import/v0", "proposal": proposal, "active": False}


def base_entry(ctx: FlowContext, flow_id: str) -> CatalogEntry | None:
    """The newest canonical version of ``flow_id`` the caller may see (what a proposal
    would replace), or None: a flow the caller cannot see reads as a new one (no leak)."""
    entry = ctx.catalog.find(flow_id)
    return entry if entry is not None and ctx.actor.can_see(entry.bundle.flow.scope) else None


def file_proposal(
    ctx: FlowContext, bundle: FlowBundle, kind: ProposalKind, intent: str, fmt: str
) -> dict[str, Any]:
    """Record ``bundle`` on a pending proposal (nothing in ``flows/`` changes). The
    additive ``base_version`` names the visible version it would follow (null: new)."""
    base = base_entry(ctx, bundle.flow_id)
    proposal = {
        "schema": PROPOSAL_SCHEMA,
        "proposal_id": ids.proposal_id(),
        "kind": kind,
        "status": "pending",
        "intent": intent,
        "flow_id": bundle.flow_id,
        "flow_version": bundle.version,
        "base_version": base.bundle.version if base is not None else None,
        "run_id": None,
        "external_ref": bundle_sha256(bundle),
        "evidence_refs": [],
        "automatable_steps": bundle.automatable_steps,
        "source_format": fmt,
        "actor_hash": ctx.actor.hash,
        "created": ids.iso(ids.now()),
    }
    with ctx.store.write() as tx:
        tx.insert_proposal(proposal, bundle.flow.scope, bundle.to_json())
    return proposal


@handler
def review_import(ctx: FlowContext, proposal_id: str, approve: bool) -> dict[str, Any]:
    """Approve (write into ``flows/``) or reject a pending import or proposed change."""
    if not ids.PROPOSAL_ID.match(proposal_id):
        raise Refused("BAD_REQUEST", (Problem("proposal_id", "not a proposal id"),))
    with ctx.store.write() as tx:
        found = tx.load_proposal(proposal_id)
        if found is None or found[0]["kind"] not in BUNDLE_KINDS:
            raise Refused("unknown_proposal")
        record, _scope, payload = found
        if record["status"] != "pending":
            raise Refused("BAD_REQUEST", (Problem("proposal_id", "already reviewed"),))
        if approve:
            bundle = parse_bundle(payload)
            sandbox_check(bundle, ctx.posture.policy)
            existing = ctx.catalog.find(bundle.flow_id, bundle.version)
            if existing is not None and existing.sha256 != bundle_sha256(bundle):
                raise Refused("FLOW_VERSION_CONFLICT")
            if existing is None:
                fmt = "json" if record.get("source_format") == "json" else "yaml"
                name = f"{bundle.flow_id}.{bundle.version}.flow.{fmt}"
                write_flow(ctx.root, ctx.catalog.flows_dir / name, dump_bundle(bundle, fmt))
        updated = {**record, "status": "approved" if approve else "rejected"}
        tx.set_proposal_status(proposal_id, updated["status"], updated)
    return {"schema": "noma.flow_review/v0", "proposal": updated, "active": approve}


def write_flow(root: Path | None, path: Path, text: str) -> None:
    """An approved bundle into ``flows/``, through the file boundary: a ``flows`` folder or
    a bundle name planted as a symlink is refused (`BoundaryError`), never followed."""
    from ..noma.boundary import write_file

    if root is None:
        write_atomic(path, text)
        return
    if not os.path.lexists(path.parent):
        os.mkdir(path.parent, 0o755)
    write_file(path, text.encode("utf-8"), root)


def write_atomic(path: Path, text: str) -> None:
    """Temp file + fsync + rename: a crash leaves the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
