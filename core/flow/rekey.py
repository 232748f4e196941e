"""One-time move of a store written before actor hashes were keyed.

Stores from before `actor_key` hold ``sha256(actor id)``. On first open under the keyed
scheme, the workspace's own actor's rows (runs, their provenance, consents, proposals) are
rewritten to the keyed hash in one transaction, so that person's personal runs stay theirs;
then ``meta.actor_hash_scheme`` records the scheme and the check is one SELECT from then on.
Rows of other actors cannot be re-keyed without their names and stay as they were (they
remain invisible to everyone but the same name under the old scheme, i.e. to no one).
"""

from __future__ import annotations

from .ids import actor_hash, sha256_hex
from .store import RunStore

SCHEME = "hmac-sha256"


def rekey_workspace_actor(store: RunStore, actor_id: str, key: bytes) -> int:
    """Re-key ``actor_id``'s legacy rows; returns how many rows changed (0 once done)."""
    with store.read() as tx:
        row = tx.execute("SELECT value FROM meta WHERE key = 'actor_hash_scheme'").fetchone()
    if row is not None and row["value"] == SCHEME:
        return 0
    legacy, keyed = sha256_hex(actor_id), actor_hash(key, actor_id)
    changed = 0
    conn = store.connection()
    conn.execute("PRAGMA secure_delete=ON")  # the old hashes' bytes are zeroed, not freed
    try:
        changed = _rekey(store, legacy, keyed)
    finally:
        conn.execute("PRAGMA secure_delete=OFF")
    return changed


def _rekey(store: RunStore, legacy: str, keyed: str) -> int:
    changed = 0
    with store.write() as tx:
        row = tx.execute("SELECT value FROM meta WHERE key = 'actor_hash_scheme'").fetchone()
        if row is not None and row["value"] == SCHEME:
            return 0
        tables = (("runs", True), ("consents", False), ("proposals", True))
        for table, has_record in (*tables, ("flow_candidates", True)):
            record = ", record = replace(record, ?, ?)" if has_record else ""
            params = (keyed, legacy, keyed, legacy) if has_record else (keyed, legacy)
            cursor = tx.execute(
                f"UPDATE {table} SET actor_hash = ?{record} WHERE actor_hash = ?", params
            )
            changed += cursor.rowcount
        tx.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('actor_hash_scheme', ?)", (SCHEME,)
        )
    return changed
