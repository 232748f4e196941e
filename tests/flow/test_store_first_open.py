"""Tier 4 — stress, SQLite store: separate processes opening a fresh store at once.

A mechanism of the SQLite store (its WAL switch on first use), so it has no PostgreSQL
variant; the PostgreSQL store's concurrent use is in ``test_stress.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

OPENER = """
import os, sys
from pathlib import Path
from core.flow.store import RunStore
print("up", flush=True)
os.read(int(sys.argv[2]), 1)  # EOF once every opener is up: then they all race
store = RunStore.open(Path(sys.argv[1]))
with store.write() as tx:
    tx.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, 'x')", (sys.argv[3],))
print(store.connection().execute("PRAGMA journal_mode").fetchone()[0])
"""


def test_many_processes_open_a_fresh_store_at_the_same_instant(tmp_path):
    """Concurrent first use: every opener succeeds (no "database is locked" on the WAL
    switch), the store ends in WAL mode, and every opener's write is there. The openers
    wait, blocked, on one pipe until all are up; closing it releases them at once."""
    rounds, count = 3, 12
    for round_ in range(rounds):
        state = tmp_path / f"state{round_}"
        state.mkdir()
        gate, release = os.pipe()
        try:
            procs = [
                subprocess.Popen(
                    [sys.executable, "-c", OPENER, str(state), str(gate), f"p{i}"],
                    cwd=REPO,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    pass_fds=(gate,),
                )
                for i in range(count)
            ]
        finally:
            os.close(gate)
        try:
            for proc in procs:
                assert proc.stdout is not None
                if proc.stdout.readline().strip() != "up":
                    pytest.fail(f"an opener did not start: {proc.communicate()[1]}")
        finally:
            os.close(release)
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            assert out.strip() == "wal"
        from core.flow.store import RunStore

        store = RunStore.open(state)
        try:
            keys = {r[0] for r in store.connection().execute("SELECT key FROM meta")}
            assert {f"p{i}" for i in range(count)} <= keys
        finally:
            store.close()
