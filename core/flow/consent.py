"""Execution consent (`knowtation.flow_execution_consent/v0`): minting and checking.

A consent is the human's per-run "yes" to automatable execution, with a cost cap and an
expiry. It is bound to one run and one actor and is never an external-agent grant (SD-5/
SD-6): a grant bearer or any other string fails as "consent required". The store keys a
consent by the sha256 of its id; the id itself is handed out once, in the mint response.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field

from . import ids
from .context import FlowContext
from .errors import Problem, Refused
from .handlers import handler, require_automatable, visible_run
from .leases import settle_expired
from .posture import TTL_DEFAULT_SECONDS
from .records import CONSENT_SCHEMA
from .requests import MintConsent, Request, RunId, parse
from .store import StoredConsent, StoredRun, Tx


def consent_key(consent_id: str) -> str:
    return ids.sha256_hex(consent_id)


@handler
def mint_consent(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Mint a run-bound consent: lanes within policy, cap lowered to the policy max (§2.5)."""
    require_automatable(ctx)
    req = parse(MintConsent, request)
    policy = ctx.posture.policy
    if policy.automatable_forbidden:
        raise Refused("FLOW_EXECUTION_POLICY_FORBIDDEN")
    lanes = list(dict.fromkeys(req.allowed_lanes))
    if any(lane not in policy.allowed_lanes for lane in lanes):
        raise Refused("FLOW_EXECUTION_LANE_DENIED")
    now = ids.now()
    ttl = min(req.ttl_seconds or TTL_DEFAULT_SECONDS, policy.ttl_max)
    with ctx.store.write() as tx:
        stored = visible_run(ctx, tx, req.run_id)
        if stored.record["status"] not in ("in_progress", "blocked"):
            raise Refused("FLOW_RUN_NOT_IN_PROGRESS")
        consent_id = ids.consent_id()
        record = {
            "schema": CONSENT_SCHEMA,
            "consent_id": consent_id,
            "vault_id": ctx.vault_id,
            "scope": stored.scope,
            "run_id": req.run_id,
            "flow_id": stored.record["flow_id"],
            "flow_version": stored.record["flow_version"],
            "allowed_lanes": lanes,
            "cost_cap_units": min(req.cost_cap_units, policy.cost_cap_units),
            "cost_consumed_units": 0,
            "actor_hash": ctx.actor.hash,
            "expires_at": ids.iso(ids.later(now, ttl)),
            "revoked_at": None,
        }
        tx.insert_consent(consent_key(consent_id), record)
    return {"schema": "knowtation.flow_execution_consent_mint/v0", "consent": record}


def held_consent(ctx: FlowContext, tx: Tx, consent_id: str) -> StoredConsent:
    """The caller's own consent for this id, else "consent required" (nothing else leaks)."""
    if not ids.CONSENT_ID.match(consent_id):
        raise Refused("FLOW_EXECUTION_CONSENT_REQUIRED")
    consent = tx.load_consent(consent_key(consent_id))
    if consent is None or consent.actor_hash != ctx.actor.hash:
        raise Refused("FLOW_EXECUTION_CONSENT_REQUIRED")
    return consent


def check_consent(ctx: FlowContext, tx: Tx, consent_id: str, stored: StoredRun) -> StoredConsent:
    """Precondition 4: valid, unexpired, not revoked, bound to this run and this actor."""
    consent = held_consent(ctx, tx, consent_id)
    if consent.revoked_at is not None or consent.expires_at <= ids.iso(ids.now()):
        raise Refused("FLOW_EXECUTION_CONSENT_REQUIRED")
    if consent.run_id != stored.record["run_id"]:
        raise Refused("FLOW_EXECUTION_CONSENT_RUN_MISMATCH")
    return consent


# --------------------------------------------------------------- listing and revoking

CONSENT_REF = re.compile(r"^fcref_[0-9a-f]{64}$")


class ListConsents(Request):
    run_id: RunId


class RevokeConsent(Request):
    consent: Annotated[str, Field(min_length=1, max_length=200)]


def consent_ref(key: str) -> str:
    """How a listed consent is named: its store key (the id's sha256), never the id itself,
    which is the bearer and is shown once, at minting."""
    return f"fcref_{key}"


def consent_summary(consent: StoredConsent, now: str) -> dict[str, Any]:
    state = (
        "revoked"
        if consent.revoked_at is not None
        else "expired"
        if consent.expires_at <= now
        else "active"
    )
    return {
        "consent_ref": consent_ref(consent.consent_key),
        "run_id": consent.run_id,
        "flow_id": consent.flow_id,
        "flow_version": consent.flow_version,
        "allowed_lanes": list(consent.allowed_lanes),
        "cost_cap_units": consent.cost_cap_units,
        "cost_consumed_units": consent.cost_consumed_units,
        "cost_reserved_units": consent.cost_reserved_units,
        "expires_at": consent.expires_at,
        "revoked_at": consent.revoked_at,
        "state": state,
    }


@handler
def list_consents(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """The caller's own consents for a visible run (others' are never listed)."""
    req = parse(ListConsents, request)
    now = ids.iso(ids.now())
    with ctx.store.read() as tx:
        visible_run(ctx, tx, req.run_id)
        expired = bool(tx.expired_executions(req.run_id, now))
    if expired:  # a crashed execution's reservation reads as charged, not as held
        settle_expired(ctx, req.run_id)
    with ctx.store.read() as tx:
        consents = [c for c in tx.consents_for_run(req.run_id) if c.actor_hash == ctx.actor.hash]
    return {
        "schema": "noma.flow_consent_list/v0",
        "run_id": req.run_id,
        "consents": [consent_summary(c, now) for c in consents],
    }


@handler
def revoke_consent(ctx: FlowContext, request: Any) -> dict[str, Any]:
    """Revoke one of the caller's consents, named by its id or by its listed ``consent_ref``.

    Not behind the gates: withdrawing authority must always be possible. An execution in
    flight under it ends ``consent_denied`` and its output is not used.
    """
    req = parse(RevokeConsent, request)
    if ids.CONSENT_ID.match(req.consent):
        key = consent_key(req.consent)
    elif CONSENT_REF.match(req.consent):
        key = req.consent.removeprefix("fcref_")
    else:
        raise Refused("BAD_REQUEST", (Problem("consent", "not a consent id or ref"),))
    now = ids.iso(ids.now())
    with ctx.store.write() as tx:
        consent = tx.load_consent(key)
        if consent is None or consent.actor_hash != ctx.actor.hash:
            raise Refused("unknown_consent")
        tx.revoke_consent(key, now)
        after = tx.load_consent(key)
    assert after is not None
    return {"schema": "noma.flow_consent_revoke/v0", "consent": consent_summary(after, now)}
