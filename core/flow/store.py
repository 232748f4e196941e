"""The run store: SQLite in WAL mode in the workspace state dir.

Every write is one ``BEGIN IMMEDIATE`` transaction (`RunStore.write`), so a handler's reads
and its write see one consistent state and concurrent writers (threads or processes)
serialise on the database lock instead of losing updates. Each run row carries a revision
etag (``r<n>``) for optimistic concurrency between callers; `update_run` refuses a stale
one. Runs point at the exact flow bundle they started on (`flow_snapshots`, by sha256), so a
run finishes on its pinned version whatever happens to the file later.

Nothing secret is written: actors are keyed hashes (HMAC-SHA256 under the workspace's
`actor_key`, which never enters the DB), consents are keyed by the sha256 of their id,
executions keep a hash pointer and counters, never output.
"""

from __future__ import annotations

import base64
import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .models import FlowBundle

DB_NAME = "runs.sqlite3"
SCHEMA_VERSION = 1

# The flow-candidate table (§1.6): part of `SCHEMA`, and on its own PostgreSQL's migration 3
# (which spells the insertion-order key ``seq`` as BIGSERIAL: listing is oldest first).
CANDIDATES_SCHEMA = """
CREATE TABLE IF NOT EXISTS flow_candidates (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    actor_hash TEXT NOT NULL,
    session_key TEXT NOT NULL,
    status TEXT NOT NULL,
    confidence TEXT NOT NULL,
    created TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS candidates_by_session ON flow_candidates (actor_hash, session_key);
"""

# A store written before one execution per step was enforced may hold two running rows for
# one step; all but the newest are closed as interrupted so the unique index can be built.
SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS flow_snapshots (
    sha256 TEXT PRIMARY KEY, flow_id TEXT NOT NULL, version TEXT NOT NULL, bundle TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    flow_id TEXT NOT NULL,
    flow_version TEXT NOT NULL,
    flow_sha256 TEXT NOT NULL REFERENCES flow_snapshots(sha256),
    scope TEXT NOT NULL,
    actor_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    started TEXT NOT NULL,
    revision INTEGER NOT NULL,
    busy_step TEXT,
    busy_until TEXT,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_started ON runs (started DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS runs_by_flow ON runs (flow_id, started DESC, run_id DESC);
CREATE TABLE IF NOT EXISTS task_links (
    task_ref TEXT NOT NULL, run_id TEXT NOT NULL REFERENCES runs(run_id),
    PRIMARY KEY (task_ref, run_id)
);
CREATE TABLE IF NOT EXISTS run_inputs (
    run_id TEXT NOT NULL REFERENCES runs(run_id), name TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS consents (
    consent_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    flow_id TEXT NOT NULL,
    flow_version TEXT NOT NULL,
    scope TEXT NOT NULL,
    vault_id TEXT NOT NULL,
    actor_hash TEXT NOT NULL,
    allowed_lanes TEXT NOT NULL,
    cost_cap_units INTEGER NOT NULL,
    cost_consumed_units INTEGER NOT NULL DEFAULT 0,
    cost_reserved_units INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT NOT NULL,
    revoked_at TEXT,
    CHECK (cost_consumed_units + cost_reserved_units <= cost_cap_units)
);
CREATE INDEX IF NOT EXISTS consents_by_run ON consents (run_id, expires_at);
CREATE TABLE IF NOT EXISTS executions (
    execution_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    step_id TEXT NOT NULL,
    consent_key TEXT NOT NULL REFERENCES consents(consent_key),
    status TEXT NOT NULL,
    model_lane TEXT NOT NULL,
    reserved_units INTEGER NOT NULL,
    cost_units INTEGER NOT NULL DEFAULT 0,
    evidence_ref TEXT,
    failure TEXT,
    started_at TEXT NOT NULL,
    lease_until TEXT NOT NULL,
    completed_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS one_live_execution
    ON executions (run_id, step_id, consent_key) WHERE status IN ('running', 'completed');
CREATE INDEX IF NOT EXISTS running_executions ON executions (status, lease_until);
CREATE INDEX IF NOT EXISTS executions_by_run
    ON executions (run_id, started_at, execution_id);
UPDATE executions SET status = 'failed', failure = 'interrupted', completed_at = started_at
    WHERE status = 'running' AND rowid NOT IN (
        SELECT MAX(rowid) FROM executions WHERE status = 'running' GROUP BY run_id, step_id
    );
CREATE UNIQUE INDEX IF NOT EXISTS one_running_step
    ON executions (run_id, step_id) WHERE status = 'running';
CREATE TABLE IF NOT EXISTS proposals (
    proposal_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    actor_hash TEXT NOT NULL,
    scope TEXT NOT NULL,
    created TEXT NOT NULL,
    record TEXT NOT NULL,
    payload TEXT
);
CREATE INDEX IF NOT EXISTS proposals_by_kind ON proposals (kind, status, created);
"""
    + CANDIDATES_SCHEMA
)


class StoreConflict(Exception):
    """The row changed since it was read (etag mismatch)."""


@dataclass(frozen=True, slots=True)
class StoredRun:
    record: dict[str, Any]
    flow_sha256: str
    actor_hash: str
    scope: str
    revision: int
    busy_step: str | None
    busy_until: str | None

    @property
    def etag(self) -> str:
        return etag_for(self.revision)


@dataclass(frozen=True, slots=True)
class StoredConsent:
    consent_key: str
    run_id: str
    flow_id: str
    flow_version: str
    scope: str
    vault_id: str
    actor_hash: str
    allowed_lanes: tuple[str, ...]
    cost_cap_units: int
    cost_consumed_units: int
    cost_reserved_units: int
    expires_at: str
    revoked_at: str | None

    @property
    def remaining_units(self) -> int:
        return self.cost_cap_units - self.cost_consumed_units - self.cost_reserved_units


@dataclass(frozen=True, slots=True)
class StoredExecution:
    execution_id: str
    run_id: str
    step_id: str
    consent_key: str
    status: str
    model_lane: str
    reserved_units: int
    cost_units: int
    evidence_ref: str | None
    failure: str | None
    started_at: str
    lease_until: str
    completed_at: str | None

    def record(self) -> dict[str, Any]:
        return {
            "execution_id": self.execution_id,
            "step_id": self.step_id,
            "status": self.status,
            "evidence_ref": self.evidence_ref,
            "cost_units": self.cost_units,
            "model_lane": self.model_lane,
            "completed_at": self.completed_at,
            "failure": self.failure,
        }


WAL_RETRY_SECONDS = 30.0


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch a (possibly brand-new) database to WAL, safe under concurrent first use.

    Changing the journal mode needs an exclusive lock and SQLite does not apply the busy
    timeout to it, so two processes opening a fresh store at the same instant (CLI + MCP
    server) could see "database is locked". Once one of them has switched, the mode is
    persistent and everyone else only reads it; until then, retry with jitter.
    """
    deadline = time.monotonic() + WAL_RETRY_SECONDS
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if ("locked" not in text and "busy" not in text) or time.monotonic() > deadline:
                raise
            time.sleep(0.005 + random.random() * 0.02)


def etag_for(revision: int) -> str:
    return f"r{revision}"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class RunStore:
    """One database file; a connection per thread; `write()` for every mutation."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._trace: Callable[[str], None] | None = None
        self._snapshots: dict[str, FlowBundle] = {}
        conn = self.connection()
        _enable_wal(conn)
        with self.write() as tx:
            tx.executescript_safe(SCHEMA)
            tx.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )

    @classmethod
    def open(cls, state_dir: Path) -> RunStore:
        from ..workspace import state_store_file

        return cls(state_store_file(state_dir / DB_NAME))

    # ---------------------------------------------------------------- connections

    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            name = str(self.path)
            conn = sqlite3.connect(  # a ``file:`` URI: the lazy store's empty in-memory store
                name,
                timeout=60.0,
                isolation_level=None,
                check_same_thread=False,
                uri=name.startswith("file:"),
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            if self._trace is not None:
                conn.set_trace_callback(self._trace)
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def set_trace(self, callback: Callable[[str], None] | None) -> None:
        """Count or log every statement (tests assert bounded work per handler with it)."""
        self._trace = callback
        with self._lock:
            for conn in self._connections:
                conn.set_trace_callback(callback)

    def release(self) -> None:
        """Close this thread's connection (worker threads call it before they end)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._lock:
            if conn in self._connections:
                self._connections.remove(conn)
        conn.close()

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    @contextmanager
    def write(self) -> Iterator[Tx]:
        """One transaction: taken with BEGIN IMMEDIATE, committed on success, else rolled back."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield Tx(self, conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[Tx]:
        """A consistent read snapshot (deferred transaction, never takes the write lock)."""
        conn = self.connection()
        conn.execute("BEGIN")
        try:
            yield Tx(self, conn)
        finally:
            conn.execute("COMMIT")

    def cached_snapshot(self, sha256: str) -> FlowBundle | None:
        return self._snapshots.get(sha256)

    def remember_snapshot(self, sha256: str, bundle: FlowBundle) -> None:
        self._snapshots[sha256] = bundle


class Tx:
    """Statements inside one transaction; handlers only ever talk to the store through this."""

    def __init__(self, store: RunStore, conn: sqlite3.Connection) -> None:
        self.store = store
        self.conn = conn

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def executescript_safe(self, script: str) -> None:
        """Run DDL statement by statement (``executescript`` would commit our transaction)."""
        for statement in script.split(";"):
            if statement.strip():
                self.conn.execute(statement)

    # ------------------------------------------------------------------ snapshots

    def put_snapshot(self, sha256: str, bundle: FlowBundle) -> None:
        self.execute(
            "INSERT OR IGNORE INTO flow_snapshots (sha256, flow_id, version, bundle) "
            "VALUES (?, ?, ?, ?)",
            (sha256, bundle.flow_id, bundle.version, _dumps(bundle.to_json())),
        )
        self.store.remember_snapshot(sha256, bundle)

    def snapshot(self, sha256: str) -> FlowBundle:
        cached = self.store.cached_snapshot(sha256)
        if cached is not None:
            return cached
        row = self.execute(
            "SELECT bundle FROM flow_snapshots WHERE sha256 = ?", (sha256,)
        ).fetchone()
        from .bundle import parse_bundle  # the models cost ~0.5 s to build: not for a bare open

        bundle = parse_bundle(json.loads(row["bundle"]))
        self.store.remember_snapshot(sha256, bundle)
        return bundle

    # ----------------------------------------------------------------------- runs

    def insert_run(self, record: dict[str, Any], flow_sha256: str, actor_hash: str) -> None:
        body = {k: v for k, v in record.items() if k != "etag"}
        self.execute(
            "INSERT INTO runs (run_id, flow_id, flow_version, flow_sha256, scope, actor_hash, "
            "status, started, revision, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
            (
                record["run_id"],
                record["flow_id"],
                record["flow_version"],
                flow_sha256,
                record["scope"],
                actor_hash,
                record["status"],
                record["started"],
                _dumps(body),
            ),
        )
        if record.get("task_ref"):
            self.execute(
                "INSERT INTO task_links (task_ref, run_id) VALUES (?, ?)",
                (record["task_ref"], record["run_id"]),
            )

    def put_run_inputs(self, run_id: str, values: dict[str, str]) -> None:
        """The flow-input values given at start (for `flow.inputs.<name>` references)."""
        for name, value in sorted(values.items()):
            self.execute(
                "INSERT INTO run_inputs (run_id, name, value) VALUES (?, ?, ?)",
                (run_id, name, value),
            )

    def run_inputs(self, run_id: str) -> dict[str, str]:
        rows = self.execute("SELECT name, value FROM run_inputs WHERE run_id = ?", (run_id,))
        return {row["name"]: row["value"] for row in rows}

    def load_run(self, run_id: str) -> StoredRun | None:
        row = self.execute(
            "SELECT record, flow_sha256, actor_hash, scope, revision, busy_step, busy_until "
            "FROM runs WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            return None
        record = json.loads(row["record"])
        record["etag"] = etag_for(row["revision"])
        return StoredRun(
            record,
            row["flow_sha256"],
            row["actor_hash"],
            row["scope"],
            row["revision"],
            row["busy_step"],
            row["busy_until"],
        )

    def update_run(
        self,
        stored: StoredRun,
        record: dict[str, Any],
        *,
        busy_step: str | None = None,
        busy_until: str | None = None,
    ) -> dict[str, Any]:
        """Write ``record`` if the row is still at ``stored``'s revision; return it + new etag."""
        revision = stored.revision + 1
        body = {k: v for k, v in record.items() if k != "etag"}
        cursor = self.execute(
            "UPDATE runs SET status = ?, revision = ?, busy_step = ?, busy_until = ?, record = ? "
            "WHERE run_id = ? AND revision = ?",
            (
                record["status"],
                revision,
                busy_step,
                busy_until,
                _dumps(body),
                record["run_id"],
                stored.revision,
            ),
        )
        if cursor.rowcount != 1:
            raise StoreConflict(record["run_id"])
        return {**body, "etag": etag_for(revision)}

    def list_runs(
        self,
        *,
        scopes: frozenset[str],
        actor_hash: str,
        flow_id: str | None,
        status: str | None,
        task_ref: str | None,
        after: tuple[str, str] | None,
        limit: int,
    ) -> list[dict[str, Any]]:
        """Visible runs, newest first. Visibility is in the WHERE clause, never after the fact."""
        where = [
            f"r.scope IN ({','.join('?' * len(scopes))})",
            "(r.scope != 'personal' OR r.actor_hash = ?)",
        ]
        params: list[Any] = [*sorted(scopes), actor_hash]
        source = "runs r"
        if task_ref is not None:
            source = "task_links t JOIN runs r ON r.run_id = t.run_id"
            where.append("t.task_ref = ?")
            params.append(task_ref)
        if flow_id is not None:
            where.append("r.flow_id = ?")
            params.append(flow_id)
        if status is not None:
            where.append("r.status = ?")
            params.append(status)
        if after is not None:
            where.append("(r.started, r.run_id) < (?, ?)")
            params.extend(after)
        sql = (
            f"SELECT r.record, r.revision FROM {source} WHERE {' AND '.join(where)} "
            "ORDER BY r.started DESC, r.run_id DESC LIMIT ?"
        )
        params.append(limit)
        out = []
        for row in self.execute(sql, tuple(params)):
            record = json.loads(row["record"])
            record["etag"] = etag_for(row["revision"])
            out.append(record)
        return out

    # ------------------------------------------------------------------- consents

    def insert_consent(self, key: str, consent: dict[str, Any]) -> None:
        self.execute(
            "INSERT INTO consents (consent_key, run_id, flow_id, flow_version, scope, vault_id, "
            "actor_hash, allowed_lanes, cost_cap_units, cost_consumed_units, expires_at, "
            "revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                consent["run_id"],
                consent["flow_id"],
                consent["flow_version"],
                consent["scope"],
                consent["vault_id"],
                consent["actor_hash"],
                _dumps(consent["allowed_lanes"]),
                consent["cost_cap_units"],
                consent["cost_consumed_units"],
                consent["expires_at"],
                consent["revoked_at"],
            ),
        )

    def load_consent(self, key: str) -> StoredConsent | None:
        row = self.execute("SELECT * FROM consents WHERE consent_key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = dict(row)
        data["allowed_lanes"] = tuple(json.loads(data["allowed_lanes"]))
        return StoredConsent(**data)

    def reserve_units(self, key: str, units: int) -> bool:
        """Atomically reserve ``units`` against the cap; False if the cap does not cover them."""
        cursor = self.execute(
            "UPDATE consents SET cost_reserved_units = cost_reserved_units + ? "
            "WHERE consent_key = ? AND cost_cap_units - cost_consumed_units "
            "- cost_reserved_units >= ?",
            (units, key, units),
        )
        return cursor.rowcount == 1

    def settle_units(self, key: str, reserved: int, consumed: int) -> None:
        """Release a reservation and charge what the run measured (never more than reserved)."""
        self.execute(
            "UPDATE consents SET cost_reserved_units = cost_reserved_units - ?, "
            "cost_consumed_units = cost_consumed_units + ? WHERE consent_key = ?",
            (reserved, min(consumed, reserved), key),
        )

    def revoke_consent(self, key: str, when: str) -> bool:
        cursor = self.execute(
            "UPDATE consents SET revoked_at = ? WHERE consent_key = ? AND revoked_at IS NULL",
            (when, key),
        )
        return cursor.rowcount == 1

    # ----------------------------------------------------------------- executions

    def live_execution(self, run_id: str, step_id: str, consent_key: str) -> StoredExecution | None:
        row = self.execute(
            "SELECT * FROM executions WHERE run_id = ? AND step_id = ? AND consent_key = ? "
            "AND status IN ('running', 'completed')",
            (run_id, step_id, consent_key),
        ).fetchone()
        return StoredExecution(**dict(row)) if row is not None else None

    def running_execution(self, run_id: str, step_id: str) -> StoredExecution | None:
        """The execution of this step that is in flight, whatever consent started it."""
        row = self.execute(
            "SELECT * FROM executions WHERE run_id = ? AND step_id = ? AND status = 'running'",
            (run_id, step_id),
        ).fetchone()
        return StoredExecution(**dict(row)) if row is not None else None

    def consents_for_run(self, run_id: str) -> list[StoredConsent]:
        rows = self.execute(
            "SELECT * FROM consents WHERE run_id = ? ORDER BY expires_at", (run_id,)
        ).fetchall()
        out = []
        for row in rows:
            data = dict(row)
            data["allowed_lanes"] = tuple(json.loads(data["allowed_lanes"]))
            out.append(StoredConsent(**data))
        return out

    def load_execution(self, execution_id: str) -> StoredExecution | None:
        row = self.execute(
            "SELECT * FROM executions WHERE execution_id = ?", (execution_id,)
        ).fetchone()
        return StoredExecution(**dict(row)) if row is not None else None

    def insert_execution(self, execution: StoredExecution) -> None:
        self.execute(
            "INSERT INTO executions (execution_id, run_id, step_id, consent_key, status, "
            "model_lane, reserved_units, cost_units, started_at, lease_until) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                execution.execution_id,
                execution.run_id,
                execution.step_id,
                execution.consent_key,
                execution.status,
                execution.model_lane,
                execution.reserved_units,
                execution.cost_units,
                execution.started_at,
                execution.lease_until,
            ),
        )

    def finish_execution(
        self,
        execution_id: str,
        *,
        status: str,
        cost_units: int,
        evidence_ref: str | None,
        failure: str | None,
        completed_at: str,
    ) -> bool:
        cursor = self.execute(
            "UPDATE executions SET status = ?, cost_units = ?, evidence_ref = ?, failure = ?, "
            "completed_at = ? WHERE execution_id = ? AND status = 'running'",
            (status, cost_units, evidence_ref, failure, completed_at, execution_id),
        )
        return cursor.rowcount == 1

    def executions_for_run(self, run_id: str) -> list[StoredExecution]:
        rows = self.execute(
            "SELECT * FROM executions WHERE run_id = ? ORDER BY started_at, execution_id",
            (run_id,),
        ).fetchall()
        return [StoredExecution(**dict(r)) for r in rows]

    def expired_executions(self, run_id: str, now: str) -> list[StoredExecution]:
        rows = self.execute(
            "SELECT * FROM executions WHERE run_id = ? AND status = 'running' AND lease_until < ?",
            (run_id, now),
        ).fetchall()
        return [StoredExecution(**dict(r)) for r in rows]

    # ------------------------------------------------------------------ proposals

    def insert_proposal(
        self, record: dict[str, Any], scope: str, payload: dict[str, Any] | None = None
    ) -> None:
        self.execute(
            "INSERT INTO proposals (proposal_id, kind, status, actor_hash, scope, created, record, "
            "payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record["proposal_id"],
                record["kind"],
                record["status"],
                record["actor_hash"],
                scope,
                record["created"],
                _dumps(record),
                _dumps(payload) if payload is not None else None,
            ),
        )

    def load_proposal(self, proposal_id: str) -> tuple[dict[str, Any], str, Any] | None:
        row = self.execute(
            "SELECT record, scope, payload FROM proposals WHERE proposal_id = ?", (proposal_id,)
        ).fetchone()
        if row is None:
            return None
        payload = json.loads(row["payload"]) if row["payload"] is not None else None
        return json.loads(row["record"]), row["scope"], payload

    def set_proposal_status(self, proposal_id: str, status: str, record: dict[str, Any]) -> None:
        self.execute(
            "UPDATE proposals SET status = ?, record = ? WHERE proposal_id = ?",
            (status, _dumps(record), proposal_id),
        )

    def list_proposals(
        self, kind: str, status: str | None = None
    ) -> list[tuple[dict[str, Any], str]]:
        sql = "SELECT record, scope FROM proposals WHERE kind = ?"
        params: list[Any] = [kind]
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        rows = self.execute(sql + " ORDER BY created, proposal_id", tuple(params)).fetchall()
        return [(json.loads(r["record"]), r["scope"]) for r in rows]

    # ---------------------------------------------------------------- candidates

    def insert_candidate(
        self, record: dict[str, Any], actor_hash: str, session_key: str, created: str
    ) -> None:
        self.execute(
            "INSERT INTO flow_candidates (candidate_id, scope, actor_hash, session_key, status, "
            "confidence, created, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record["candidate_id"],
                record["scope_hint"],
                actor_hash,
                session_key,
                record["status"],
                record["confidence"],
                created,
                _dumps(record),
            ),
        )

    def load_candidate(self, candidate_id: str) -> tuple[dict[str, Any], str, str] | None:
        """The record, its scope and its proposer's actor hash."""
        row = self.execute(
            "SELECT record, scope, actor_hash FROM flow_candidates WHERE candidate_id = ?",
            (candidate_id,),
        ).fetchone()
        if row is None:
            return None
        return json.loads(row["record"]), row["scope"], row["actor_hash"]

    def set_candidate_status(self, candidate_id: str, record: dict[str, Any]) -> None:
        self.execute(
            "UPDATE flow_candidates SET status = ?, record = ? WHERE candidate_id = ?",
            (record["status"], _dumps(record), candidate_id),
        )

    def lock_candidate_quota(self, actor_hash: str) -> None:
        """Serialise one proposer's count-then-insert (the caps). A write here already holds
        SQLite's one write lock; PostgreSQL's store takes a lock per proposer."""

    def count_candidates(self, actor_hash: str, *, session_key: str | None = None) -> int:
        """Candidates of one proposer: in one session, or (no session) still pending."""
        if session_key is not None:
            sql = "SELECT COUNT(*) FROM flow_candidates WHERE actor_hash = ? AND session_key = ?"
            params: tuple[Any, ...] = (actor_hash, session_key)
        else:
            sql = (
                "SELECT COUNT(*) FROM flow_candidates WHERE actor_hash = ? "
                "AND status = 'pending_review'"
            )
            params = (actor_hash,)
        return int(self.execute(sql, params).fetchone()[0])

    def list_candidates(
        self,
        *,
        scopes: frozenset[str],
        actor_hash: str,
        status: str | None,
        confidences: tuple[str, ...],
        limit: int,
    ) -> list[dict[str, Any]]:
        """Visible candidates, oldest first; visibility is in the WHERE clause."""
        if not scopes:
            return []
        where = [
            f"scope IN ({','.join('?' * len(scopes))})",
            "(scope != 'personal' OR actor_hash = ?)",
            f"confidence IN ({','.join('?' * len(confidences))})",
        ]
        params: list[Any] = [*sorted(scopes), actor_hash, *confidences]
        if status == "merged_into":
            where.append("status LIKE 'merged!_into:%' ESCAPE '!'")
        elif status is not None:
            where.append("status = ?")
            params.append(status)
        sql = f"SELECT record FROM flow_candidates WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?"
        params.append(limit)
        return [json.loads(row["record"]) for row in self.execute(sql, tuple(params))]


def encode_cursor(started: str, run_id: str) -> str:
    raw = json.dumps([started, run_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str] | None:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        started, run_id = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, TypeError):
        return None
    if not isinstance(started, str) or not isinstance(run_id, str):
        return None
    return started, run_id
