"""The PostgreSQL run store's own mechanisms: store selection, versioned migrations (once,
under concurrent first opens), row locks instead of SQLite's one writer, and faults that
name no URL or password. The handler semantics on both stores are the rest of the flow
suite, parametrised (`both_stores`)."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from core import cli
from core.flow import FlowContext, run_action, to_json
from core.flow.store import RunStore
from core.flow.store_pg import (
    MIGRATIONS,
    PgRunStore,
    StoreUnavailable,
    open_run_store,
    store_url,
)
from core.workspace import Workspace
from tests.workspace_trust import trust_folder

from .conftest import make_workspace


def test_selection_env_wins_then_config_then_sqlite(tmp_path: Path) -> None:
    pg = "postgresql://hub@db.internal:5432/runs"
    assert store_url(None, {}) is None
    assert store_url("sqlite", {}) is None
    assert store_url(pg, {}) == pg
    assert store_url("postgresql://other/x", {"NOMA_RUN_STORE": pg}) == pg
    assert store_url(pg, {"NOMA_RUN_STORE": "sqlite"}) is None
    with pytest.raises(StoreUnavailable) as err:
        store_url("mysql://u:hunter2@h/db", {})
    assert "hunter2" not in str(err.value)
    store = open_run_store(tmp_path, None)
    try:
        assert type(store) is RunStore
    finally:
        store.close()


def test_an_unreachable_server_names_no_url_or_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "postgresql://hub:s3cret-pw@127.0.0.1:1/runs?connect_timeout=2"
    with pytest.raises(StoreUnavailable) as err:
        PgRunStore(url)
    assert "s3cret-pw" not in str(err.value) and "127.0.0.1" not in str(err.value)
    root = make_workspace(tmp_path / "ws")
    monkeypatch.setenv("NOMA_RUN_STORE", url)
    assert cli.main(["flow", "run", "list", "--root", str(root)]) == 2
    captured = capsys.readouterr()
    assert "s3cret-pw" not in captured.err + captured.out
    assert "cannot be reached" in captured.err


def test_config_url_selects_postgresql(
    tmp_path: Path, pg_cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOMA_RUN_STORE", raising=False)
    url = pg_cluster.new_schema_url()
    root = make_workspace(tmp_path / "ws")
    with (root / "noma-workbench.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[store]\nurl = "{url}"\n')
    trust_folder(root)  # a store URL applies once the user trusts the folder with it
    ctx = FlowContext.open(Workspace.open(root))
    try:
        assert isinstance(ctx.store, PgRunStore)
        started = to_json(
            run_action(ctx, "start", {"flow_id": "flow_weekly_review", "flow_version": "1.0.0"})
        )
        assert started["run"]["etag"] == "r1"
    finally:
        ctx.close()
    assert not (root / ".noma-workbench" / "runs.sqlite3").exists()


def test_migrations_are_versioned_and_applied_once_under_concurrent_opens(pg_cluster) -> None:
    url = pg_cluster.new_schema_url()
    stores: list[PgRunStore] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def open_one() -> None:
        try:
            s = PgRunStore(url)
            with lock:
                stores.append(s)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(stores) == 6
    try:
        assert stores[0].migrate() == []  # nothing left to apply
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert rows == [(v, n) for v, n, _ in MIGRATIONS]
        assert meta == {"schema_version": "1", "actor_hash_scheme": "hmac-sha256"}
    finally:
        for s in stores:
            s.close()


def test_writers_of_one_run_queue_on_its_row_lock(pg_cluster, tmp_path: Path) -> None:
    """A write holding the run's lock makes another writer wait (not fail, not lose)."""
    url = pg_cluster.new_schema_url()
    root = make_workspace(tmp_path / "ws")
    store = PgRunStore(url)
    ctx = FlowContext.open(Workspace.open(root))
    ctx.store.close()
    ctx.store = store
    try:
        rid = to_json(
            run_action(ctx, "start", {"flow_id": "flow_weekly_review", "flow_version": "1.0.0"})
        )["run"]["run_id"]
        holding = threading.Event()
        release = threading.Event()

        def hold() -> None:
            with store.write() as tx:
                assert tx.load_run(rid) is not None
                holding.set()
                assert release.wait(30)
            store.release()

        holder = threading.Thread(target=hold)
        holder.start()
        assert holding.wait(30)
        result: dict[str, object] = {}

        def write() -> None:
            result["out"] = to_json(
                run_action(
                    ctx,
                    "evidence",
                    {
                        "run_id": rid,
                        "step_id": "flow_weekly_review#1",
                        "evidence_ref": "op_1",
                        "pointer_kind": "artifact",
                    },
                )
            )
            store.release()

        writer = threading.Thread(target=write)
        writer.start()
        writer.join(0.5)
        assert writer.is_alive()  # queued behind the lock
        release.set()
        holder.join(30)
        writer.join(30)
        out = result["out"]
        assert isinstance(out, dict) and out["run"]["etag"] == "r2"
    finally:
        ctx.close()
