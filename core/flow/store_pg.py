"""The run store on PostgreSQL (psycopg 3): the SQLite store's interface and semantics.

Chosen by ``NOMA_RUN_STORE=postgresql://…`` or ``[store] url`` in ``noma-workbench.toml``
(`open_run_store`); SQLite stays the embedded default. Every handler talks to the store
through `Tx`, so this module changes only what differs:

- **Transactions.** SQLite's ``BEGIN IMMEDIATE`` serialises all writers. Here a write is a
  READ COMMITTED transaction whose row loads (`load_run`, `load_consent`, `load_proposal`)
  take ``SELECT … FOR UPDATE``: writers of the same run queue on its row lock and each sees
  the previous one's commit, so an unconditional write never loses an update or turns into
  a spurious conflict, while writers of different runs proceed in parallel (SQLite cannot).
  Locks are always taken run → consent → execution (`load_consent` locks the consent's
  run first), so two writers never wait on each other in a cycle.
  The counters (`reserve_units`, `settle_units`) stay single conditional UPDATEs, and the
  revision check in `update_run` stays, exactly as on SQLite. Reads are REPEATABLE READ
  READ ONLY snapshots, like SQLite's deferred read transactions.
- **Schema.** Versioned migrations (`MIGRATIONS`), applied in order under an advisory lock
  and recorded in ``schema_migrations``; a store is born with keyed actor hashes.
- **SQL dialect.** The shared statements use ``?`` placeholders and two SQLite spellings;
  `_translate` rewrites them (and nothing else) once per statement text.

The connection URL may hold a password: it is never logged or put in an error message.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from .store import CANDIDATES_SCHEMA, RunStore, StoredConsent, StoredRun, Tx

SCHEME_META = ("actor_hash_scheme", "hmac-sha256")

# (version, name, statements). Append only: a released migration is never edited.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "initial",
        """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE flow_snapshots (
    sha256 TEXT PRIMARY KEY, flow_id TEXT NOT NULL, version TEXT NOT NULL, bundle TEXT NOT NULL
);
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    flow_id TEXT NOT NULL,
    flow_version TEXT NOT NULL,
    flow_sha256 TEXT NOT NULL REFERENCES flow_snapshots(sha256),
    scope TEXT NOT NULL,
    actor_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    started TEXT NOT NULL,
    revision BIGINT NOT NULL,
    busy_step TEXT,
    busy_until TEXT,
    record TEXT NOT NULL
);
CREATE INDEX runs_by_started ON runs (started DESC, run_id DESC);
CREATE INDEX runs_by_flow ON runs (flow_id, started DESC, run_id DESC);
CREATE TABLE task_links (
    task_ref TEXT NOT NULL, run_id TEXT NOT NULL REFERENCES runs(run_id),
    PRIMARY KEY (task_ref, run_id)
);
CREATE TABLE run_inputs (
    run_id TEXT NOT NULL REFERENCES runs(run_id), name TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE consents (
    consent_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    flow_id TEXT NOT NULL,
    flow_version TEXT NOT NULL,
    scope TEXT NOT NULL,
    vault_id TEXT NOT NULL,
    actor_hash TEXT NOT NULL,
    allowed_lanes TEXT NOT NULL,
    cost_cap_units BIGINT NOT NULL,
    cost_consumed_units BIGINT NOT NULL DEFAULT 0,
    cost_reserved_units BIGINT NOT NULL DEFAULT 0,
    expires_at TEXT NOT NULL,
    revoked_at TEXT,
    CHECK (cost_consumed_units + cost_reserved_units <= cost_cap_units)
);
CREATE INDEX consents_by_run ON consents (run_id, expires_at);
CREATE TABLE executions (
    execution_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    step_id TEXT NOT NULL,
    consent_key TEXT NOT NULL REFERENCES consents(consent_key),
    status TEXT NOT NULL,
    model_lane TEXT NOT NULL,
    reserved_units BIGINT NOT NULL,
    cost_units BIGINT NOT NULL DEFAULT 0,
    evidence_ref TEXT,
    failure TEXT,
    started_at TEXT NOT NULL,
    lease_until TEXT NOT NULL,
    completed_at TEXT
);
CREATE UNIQUE INDEX one_live_execution
    ON executions (run_id, step_id, consent_key) WHERE status IN ('running', 'completed');
CREATE UNIQUE INDEX one_running_step ON executions (run_id, step_id) WHERE status = 'running';
CREATE INDEX running_executions ON executions (status, lease_until);
CREATE TABLE proposals (
    proposal_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    actor_hash TEXT NOT NULL,
    scope TEXT NOT NULL,
    created TEXT NOT NULL,
    record TEXT NOT NULL,
    payload TEXT
);
CREATE INDEX proposals_by_kind ON proposals (kind, status, created);
INSERT INTO meta (key, value) VALUES ('schema_version', '1');
INSERT INTO meta (key, value) VALUES ('actor_hash_scheme', 'hmac-sha256')
""",
    ),
    (
        2,
        "executions_by_run",
        "CREATE INDEX IF NOT EXISTS executions_by_run "
        "ON executions (run_id, started_at, execution_id)",
    ),
    (
        3,
        "flow_candidates",
        CANDIDATES_SCHEMA.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"),
    ),
)


class PgRow(dict[str, Any]):
    """A row by name (``row["run_id"]``, ``dict(row)``) or position (``row[0]``), as
    `sqlite3.Row` answers, so code and tests that read the store work on both."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            return list(self.values())[key]
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self.values()))  # like sqlite3.Row: a row unpacks to its values


def _row_factory(cursor: Any) -> Callable[[Any], PgRow]:
    names = [c.name for c in cursor.description or ()]
    return lambda values: PgRow(zip(names, values, strict=True))


class StoreUnavailable(OSError):
    """The PostgreSQL server cannot be reached or refused us (no URL in the message)."""


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


@lru_cache(maxsize=256)
def _translate(sql: str) -> str:
    """SQLite spellings of the shared statements, in PostgreSQL's."""
    out = sql.replace("%", "%%").replace("?", "%s")
    if out.lstrip().upper().startswith("INSERT OR IGNORE INTO"):
        out = re.sub(r"(?i)INSERT OR IGNORE INTO", "INSERT INTO", out, count=1)
        out += " ON CONFLICT DO NOTHING"
    elif out.lstrip().upper().startswith("INSERT OR REPLACE INTO META"):
        out = re.sub(r"(?i)INSERT OR REPLACE INTO", "INSERT INTO", out, count=1)
        out += " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
    return out


class PgTx(Tx):
    """`Tx` over a psycopg connection; row loads in a write transaction lock the row."""

    def __init__(self, store: RunStore, conn: Any, *, writing: bool) -> None:
        super().__init__(store, conn)
        self.writing = writing
        self._lock_next = False

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        text = _translate(sql)
        if self._lock_next:
            text += " FOR UPDATE"
            self._lock_next = False
        return self.conn.execute(text, params)

    def executescript_safe(self, script: str) -> None:
        for statement in script.split(";"):
            if statement.strip():
                self.conn.execute(statement)

    def _locked(self) -> None:
        self._lock_next = self.writing

    def load_run(self, run_id: str) -> StoredRun | None:
        self._locked()
        return super().load_run(run_id)

    def load_consent(self, key: str) -> StoredConsent | None:
        if self.writing:
            # Locks are taken run first, always: settling an execution reads its consent
            # before its run, so lock that run here (a consent-first order could deadlock
            # with an execute that holds the run and reserves against the consent).
            row = self.conn.execute(
                "SELECT run_id FROM consents WHERE consent_key = %s", (key,)
            ).fetchone()
            if row is not None:
                self.conn.execute(
                    "SELECT 1 FROM runs WHERE run_id = %s FOR UPDATE", (row["run_id"],)
                )
        self._locked()
        return super().load_consent(key)

    def load_proposal(self, proposal_id: str) -> tuple[dict[str, Any], str, Any] | None:
        self._locked()
        return super().load_proposal(proposal_id)

    def lock_candidate_quota(self, actor_hash: str) -> None:
        # READ COMMITTED lets two proposals of one session both count below the cap; this
        # transaction-scoped lock queues a proposer's writers behind each other.
        self.conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext(%s))", ("flow_candidates:" + actor_hash,)
        )

    def load_candidate(self, candidate_id: str) -> tuple[dict[str, Any], str, str] | None:
        self._locked()
        return super().load_candidate(candidate_id)


class PgRunStore(RunStore):
    """A PostgreSQL database (or one schema of it, via ``options=-csearch_path=…``)."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.path = Path("postgresql")  # no file; kept for callers that print where it is
        self.url = url
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[Any] = []
        self._trace: Callable[[str], None] | None = None
        self._snapshots = {}
        self._psycopg = psycopg
        self.migrate()

    def connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            try:
                conn = self._psycopg.connect(self.url, autocommit=True, row_factory=_row_factory)
            except self._psycopg.Error as exc:
                raise StoreUnavailable(
                    f"the PostgreSQL run store cannot be reached ({type(exc).__name__})"
                ) from None
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def set_trace(self, callback: Callable[[str], None] | None) -> None:
        self._trace = callback  # statement tracing is SQLite's; counted there

    def release(self) -> None:
        conn = getattr(self._local, "conn", None)
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
        conn = self.connection()
        conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        try:
            yield PgTx(self, conn, writing=True)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[Tx]:
        conn = self.connection()
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield PgTx(self, conn, writing=False)
        finally:
            conn.execute("COMMIT")

    def migrate(self) -> list[int]:
        """Apply the migrations this database lacks, one transaction each; the versions run."""
        conn = self.connection()
        applied: list[int] = []
        conn.execute("BEGIN")
        try:
            # One migrator per schema at a time; the others wait, then find nothing to do.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema()))")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                "name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            rows = conn.execute("SELECT version FROM schema_migrations").fetchall()
            done = {int(cast(dict[str, Any], r)["version"]) for r in rows}
            for version, name, script in MIGRATIONS:
                if version in done:
                    continue
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (version, name),
                )
                applied.append(version)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return applied


STORE_ENV = "NOMA_RUN_STORE"


def store_url(config_url: Any, environ: dict[str, str] | None = None) -> str | None:
    """The configured store: ``NOMA_RUN_STORE`` wins over ``[store] url``; None is SQLite."""
    import os

    env = os.environ if environ is None else environ
    url = env.get(STORE_ENV) or (config_url if isinstance(config_url, str) else None)
    if not url or url == "sqlite":
        return None
    if not is_postgres_url(url):
        raise StoreUnavailable(
            f"{STORE_ENV} / [store] url must be a postgresql:// URL (or 'sqlite')"
        )
    return url


def open_run_store(state_dir: Path, config_url: Any = None) -> RunStore:
    """The workspace's run store: PostgreSQL when configured, else SQLite in ``state_dir``."""
    url = store_url(config_url)
    return RunStore.open(state_dir) if url is None else PgRunStore(url)
