"""Hub bearer tokens: created once, shown once, stored only as a hash.

A token is ``nhub_<token_id>_<secret>`` (32 random bytes of secret). The store keeps the
sha256 of the whole token, its name (the actor it speaks for), its scope and whether it is
a human's token; the token itself is printed by ``noma hub token create`` and never written
anywhere. A lookup hashes what the caller presented and finds the row by that hash, so a
stolen database gives no usable token, and a revoked row answers exactly like an unknown
one (the caller sees a bare 401 either way).

The table belongs to the hub that serves a workspace, not to a run store that several hubs
may share, and never to the folder itself: a folder may have been written by someone else,
and a ``.noma-workbench/hub.sqlite3`` shipped in it would hold the hash of a token its author
knows. So the table lives in the user's state dir, keyed by the folder's real path
(``$XDG_STATE_HOME/noma-workbench/hub-tokens/<sha256 of the path>.sqlite3``); one inside the
folder is never opened (`shipped_token_store` finds it so the surfaces can say so).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from ..user_dirs import state_home

DB_NAME = "hub.sqlite3"
TOKENS_DIR = "hub-tokens"
PREFIX = "nhub_"
TOKEN_RE = re.compile(r"^nhub_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}$")
TokenScope = Literal["personal", "project", "org"]
SCOPES: tuple[TokenScope, ...] = ("personal", "project", "org")

SCHEMA = """
CREATE TABLE IF NOT EXISTS hub_tokens (
    token_id TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    scope TEXT NOT NULL,
    human INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
)
"""


class TokenError(ValueError):
    """A create or revoke request that cannot be honoured (bad name, unknown id)."""


@dataclass(frozen=True, slots=True)
class HubToken:
    token_id: str
    name: str
    scope: TokenScope
    human: bool
    created_at: str
    revoked_at: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "token_id": self.token_id,
            "name": self.name,
            "scope": self.scope,
            "kind": "human" if self.human else "agent",
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


def token_store_path(root: Path) -> Path:
    """Where the tokens of the hub serving ``root`` live: the user's state dir, never
    ``root``. The folder is made 0700 (the table says who holds tokens)."""
    folder = state_home() / TOKENS_DIR
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return folder / f"{key}.sqlite3"


def shipped_token_store(root: Path) -> Path | None:
    """A token table inside the folder (the old place, or shipped with it): never used."""
    path = root / ".noma-workbench" / DB_NAME
    return path if path.exists() or path.is_symlink() else None


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class TokenStore:
    """The hub's token table; safe to share between threads (a connection per thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        # The file holds only hashes, but who holds tokens is the operator's business.
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))
        with self._tx() as conn:
            conn.execute(SCHEMA)

    @classmethod
    def for_workspace(cls, root: Path) -> TokenStore:
        """The token table of the hub serving ``root`` (a resolved folder)."""
        return cls(token_store_path(root))

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def create(
        self, name: str, scope: TokenScope = "personal", *, human: bool = False
    ) -> tuple[str, HubToken]:
        """A new token and its row; the token string exists only in the return value."""
        if not NAME_RE.match(name):
            raise TokenError(
                "a token name is 1-128 letters, digits or . _ @ + - (it names the actor)"
            )
        if scope not in SCOPES:
            raise TokenError(f"scope must be one of {', '.join(SCOPES)}")
        token_id = secrets.token_hex(6)
        token = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        row = HubToken(token_id, name, scope, human, _now(), None)
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO hub_tokens (token_id, token_sha256, name, scope, human, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (token_id, token_sha256(token), name, scope, int(human), row.created_at),
            )
        return token, row

    def list(self) -> list[HubToken]:
        rows = self._conn().execute(
            "SELECT token_id, name, scope, human, created_at, revoked_at FROM hub_tokens "
            "ORDER BY created_at, token_id"
        )
        return [_row(r) for r in rows]

    def revoke(self, token_id: str) -> HubToken:
        with self._tx() as conn:
            cur = conn.execute(
                "UPDATE hub_tokens SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL",
                (_now(), token_id),
            )
            if cur.rowcount == 0:
                exists = conn.execute(
                    "SELECT 1 FROM hub_tokens WHERE token_id = ?", (token_id,)
                ).fetchone()
                if exists is None:
                    raise TokenError("no such token")
            row = conn.execute(
                "SELECT token_id, name, scope, human, created_at, revoked_at FROM hub_tokens "
                "WHERE token_id = ?",
                (token_id,),
            ).fetchone()
        return _row(row)

    def active_count(self) -> int:
        row = (
            self._conn()
            .execute("SELECT COUNT(*) FROM hub_tokens WHERE revoked_at IS NULL")
            .fetchone()
        )
        return int(row[0])

    def verify(self, presented: str) -> HubToken | None:
        """The live token ``presented`` is, or None (malformed, unknown and revoked alike)."""
        if not TOKEN_RE.match(presented):
            return None
        row = (
            self._conn()
            .execute(
                "SELECT token_id, name, scope, human, created_at, revoked_at FROM hub_tokens "
                "WHERE token_sha256 = ?",
                (token_sha256(presented),),
            )
            .fetchone()
        )
        if row is None or row["revoked_at"] is not None:
            return None
        return _row(row)


def _row(row: sqlite3.Row) -> HubToken:
    scope = row["scope"]
    return HubToken(
        row["token_id"],
        row["name"],
        scope if scope in SCOPES else "personal",
        bool(row["human"]),
        row["created_at"],
        row["revoked_at"],
    )
