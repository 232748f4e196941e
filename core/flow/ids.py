"""Id formats of Flow v0, fresh tokens, the clock, and pointer shapes.

Tokens and time come from the two functions here (`new_token`, `now`) so tests can pin them
and every surface mints ids the same way. Pointers (evidence refs, task refs) are checked by
shape only: short, no whitespace, never a body of text.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import UTC, datetime, timedelta

FLOW_ID = re.compile(r"^flow_[a-z0-9_]{1,64}$")
STEP_ID = re.compile(r"^(flow_[a-z0-9_]{1,64})#([1-9][0-9]{0,5})$")
RUN_ID = re.compile(r"^run_[a-z0-9_]{1,48}$")
CONSENT_ID = re.compile(r"^fcons_[a-z0-9_]{1,64}$")
EXECUTION_ID = re.compile(r"^fexec_[a-z0-9_]{1,64}$")
PROPOSAL_ID = re.compile(r"^prop_[a-z0-9_]{1,48}$")
CANDIDATE_ID = re.compile(r"^cand_[a-z0-9]{4,32}$")
# `flow.version` is strictly MAJOR.MINOR.PATCH (§1.2): no pre-release or build suffix.
SEMVER = re.compile(r"^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$")
# A pointer is an id or a hash: printable, no whitespace, bounded.
POINTER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:#/@+-]{0,199}$")
HASH_POINTER = re.compile(r"^(?:hash_|sha256:)?[0-9a-f]{64}$")


def new_token(nbytes: int = 10) -> str:
    """A random lowercase token for ids; tests replace this to get stable ids."""
    return secrets.token_hex(nbytes)


def now() -> datetime:
    """The engine's clock (UTC); tests replace this to get stable timestamps."""
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def later(moment: datetime, seconds: int) -> datetime:
    return moment + timedelta(seconds=seconds)


def run_id() -> str:
    return f"run_{new_token()}"


def consent_id() -> str:
    return f"fcons_{new_token(16)}"


def execution_id() -> str:
    return f"fexec_{new_token()}"


def proposal_id() -> str:
    return f"prop_{new_token()}"


def candidate_id() -> str:
    return f"cand_{new_token(8)}"


def step_id(flow_id: str, ordinal: int) -> str:
    return f"{flow_id}#{ordinal}"


def sha256_hex(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def actor_hash(key: bytes, actor_id: str) -> str:
    """Actor ids are stored only as this keyed hash (provenance.actor, consent.actor_hash):
    HMAC-SHA256 under the workspace's actor key (`actor_key`), so a name cannot be found
    by hashing guesses and the same actor hashes differently in another workspace."""
    return hmac.new(key, actor_id.encode("utf-8"), hashlib.sha256).hexdigest()


def semver_key(version: str) -> tuple[int, int, int]:
    """Sort key: numeric parts compared as numbers (``1.10.0`` after ``1.9.0``)."""
    match = SEMVER.match(version)
    if match is None:
        return (-1, -1, -1)
    major, minor, patch = match.groups()
    return (int(major), int(minor), int(patch))
