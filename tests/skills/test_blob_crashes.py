"""Issue 29: a Skills runtime crash leaks neither disk nor quota.

Processes are really killed (SIGKILL) mid-write and mid-run. Before the fix a killed
``create_blob`` left its ``.pending-*`` file for good (not counted by the quota), and a
killed run left committed blobs no run record names, counted against the quota, that no
method could list or delete. Now the store's opening sweep removes what dead processes
left (and nothing a live one holds), and ``noma skills blobs`` lists, sweeps and deletes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core import cli
from core.skills_runtime.blob_store import LEDGER_NAME, PENDING_PREFIX, BlobStore

REPO = Path(__file__).resolve().parents[2]
KILLS = 20
CHUNK = "x" * (256 * 1024)

# A process that is killed with a blob half written: it says "ready" and waits.
WRITER = r"""
import sys
sys.path.insert(0, sys.argv[2])
from core.skills_runtime.blob_store import BlobStore
store = BlobStore(__import__("pathlib").Path(sys.argv[1]))
writer = store.open_writer("text/plain")
for _ in range(4):
    writer.write("x" * (256 * 1024))
print("ready", flush=True)
sys.stdin.read()
"""

# A "server" killed part-way through a run: the run service with a sandbox stand-in that
# commits blobs through the run's bridge (as the real sandbox's blob_write does), then
# hangs; the process dies before any record is returned.
RUNNER = r"""
import asyncio, sys
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from core.skills_runtime.blob_store import BlobStore
from core.skills_runtime.runs import RunService
from core.skills_runtime.wire import RunCodeParams

class HangingSandbox:
    async def run(self, job, bridge):
        for _ in range(3):
            writer = bridge.open_writer("text/plain")
            writer.write("y" * 100_000)
            writer.commit()
        writer = bridge.open_writer("text/plain")  # and one more, half written
        writer.write("z" * 100_000)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

store = BlobStore(Path(sys.argv[1]))
service = RunService(None, store, HangingSandbox(), lambda: None)
asyncio.run(service.run_code(RunCodeParams(language="python", code="def main(args):\n    pass\n")))
"""


def spawn(script: str, root: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(root), str(REPO)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line == "ready\n", (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc


def kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def pending(root: Path) -> list[str]:
    return sorted(n for n in os.listdir(root) if n.startswith(PENDING_PREFIX))


def ledger(root: Path) -> int:
    return int((root / LEDGER_NAME).read_text())


def sidecars(root: Path) -> set[str]:
    return {"blob:" + n[:32] for n in os.listdir(root) if len(n) == 37 and n.endswith(".json")}


class FinishingSandbox:
    """A run that completes: its blobs are named by its record and must stay."""

    async def run(self, job: Any, bridge: Any) -> Any:
        from sandbox import Outcome

        writer = bridge.open_writer("text/plain")
        writer.write("done" * 1000)
        blob_id = writer.commit()
        return Outcome("completed", "namespaces", 5, output={}, output_blobs=(blob_id,))


async def completed_run(store: BlobStore) -> tuple[str, list[str]]:
    from core.skills_runtime.runs import RunService
    from core.skills_runtime.wire import RunCodeParams

    service = RunService(None, store, FinishingSandbox(), lambda: None)  # type: ignore[arg-type]
    result = await service.run_code(
        RunCodeParams(language="python", code="def main(args):\n    pass\n")
    )
    return result.run_id, list(result.output_blobs)


def test_killed_blob_writes_leave_no_temp_file(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    BlobStore(root).close()
    for _ in range(KILLS):  # each start-up sweeps what the previous crash left
        kill(spawn(WRITER, root))
    assert len(pending(root)) == 1  # the last crash's 1 MiB
    store = BlobStore(root)  # start-up
    try:
        assert pending(root) == []
        assert store.last_sweep is not None and len(store.last_sweep.pending_files) == 1
        assert store.last_sweep.freed_bytes == 4 * len(CHUNK)
        assert ledger(root) == store.disk_usage() == 0
    finally:
        store.close()


def test_a_live_writer_is_never_swept(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    BlobStore(root).close()
    proc = spawn(WRITER, root)
    try:
        BlobStore(root).close()  # another process starts while the write is in flight
        assert len(pending(root)) == 1
    finally:
        kill(proc)
    BlobStore(root).close()
    assert pending(root) == []


@pytest.mark.long(11)
async def test_killed_runs_leave_only_owned_blobs_and_the_ledger_equals_the_disk(
    tmp_path: Path,
) -> None:
    root = tmp_path / "blobs"
    store = BlobStore(root)
    kept = {store.create("by the caller", "text/plain").blob_id}
    run_id, named = await completed_run(store)
    kept |= set(named)
    store.close()
    for _ in range(KILLS):  # each start-up sweeps what the previous crash left
        kill(spawn(WRITER, root))
        kill(spawn(RUNNER, root))
    assert len(sidecars(root)) == len(kept) + 3  # the last crash's, not yet swept
    assert len(pending(root)) == 1 and len(os.listdir(root / ".runs")) == 1
    store = BlobStore(root)  # the next start-up
    try:
        assert sidecars(root) == kept
        assert pending(root) == [] and os.listdir(root / ".runs") == []
        assert {b.owner for b in store.blobs()} == {"caller", f"run:{run_id}"}
        assert ledger(root) == store.disk_usage() == sum(store.info(b).size_bytes for b in kept)
    finally:
        store.close()


async def test_a_run_that_raises_keeps_none_of_its_blobs(tmp_path: Path) -> None:
    from core.skills_runtime.runs import RunService
    from core.skills_runtime.wire import RunCodeParams

    class Exploding:
        async def run(self, job: Any, bridge: Any) -> Any:
            writer = bridge.open_writer("text/plain")
            writer.write("partial")
            writer.commit()
            raise RuntimeError("the sandbox fell over")

    store = BlobStore(tmp_path / "blobs")
    service = RunService(None, store, Exploding(), lambda: None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        await service.run_code(RunCodeParams(language="python", code="def main(args):\n    pass\n"))
    assert store.blobs() == [] and store.usage() == 0
    store.close()


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = cli.main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if "--json" in argv else out


def test_the_operator_lists_sweeps_and_deletes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    root = ws / ".noma-workbench" / "blobs"
    store = BlobStore(root)
    mine = store.create("keep me", "text/plain").blob_id
    store.close()
    legacy = "blob:" + "a" * 32  # written before blobs had owners: listed as unknown
    (root / ("a" * 32)).write_text("old")
    (root / (("a" * 32) + ".json")).write_text('{"kind": "text/plain", "size_bytes": 3}')
    kill(spawn(WRITER, root))
    kill(spawn(RUNNER, root))  # its start-up swept the writer's temp file; it left its own
    w = str(ws)
    code, listed = run_cli(
        capsys, "skills", "blobs", "list", "--unowned", "--workspace", w, "--json"
    )
    assert code == 0 and len(listed["unowned_blobs"]) == 3 and len(listed["pending_files"]) == 1
    code, dry = run_cli(capsys, "skills", "blobs", "gc", "--dry-run", "--workspace", w, "--json")
    assert code == 0 and dry["dry_run"] and len(sidecars(root)) == 5  # nothing removed
    code, done = run_cli(capsys, "skills", "blobs", "gc", "--workspace", w, "--json")
    assert code == 0 and done["freed_bytes"] == dry["freed_bytes"] > 0
    assert sidecars(root) == {mine, legacy} and pending(root) == []
    code, every = run_cli(capsys, "skills", "blobs", "list", "--workspace", w, "--json")
    owners = {b["blob_id"]: b["owner"] for b in every["blobs"]}
    assert owners == {mine: "caller", legacy: None}
    assert every["ledger_bytes"] == len("keep me") + 3
    assert run_cli(capsys, "skills", "blobs", "delete", legacy, "--workspace", w)[0] == 0
    assert sidecars(root) == {mine} and ledger(root) == len("keep me")
    assert run_cli(capsys, "skills", "blobs", "delete", legacy, "--workspace", w)[0] == 1


SLOW_WRITER_CODE = (
    "import time\n"
    "from runtime import blobs\n"
    "def main(args):\n"
    "    for _ in range(3):\n"
    "        blobs.write_text('w' * 200000)\n"
    "    time.sleep(120)\n"
)


def test_a_killed_skills_server_leaves_no_run_blobs_after_restart(tmp_path: Path) -> None:
    """The issue's case on the real server and sandbox: ``skills serve`` killed while a
    ``run_code`` has committed blobs and is still running; the restart reclaims them."""
    import threading
    import time

    from skills_testlib import IS_ROOT, build_workspace, start_server, stop_server

    if not IS_ROOT:
        pytest.skip("needs root: the sandbox drops runs to per-slot uids (CI runs as root)")
    ws = tmp_path / "ws"
    build_workspace(ws)
    server = start_server(ws)
    root = ws / ".noma-workbench" / "blobs"
    mine = server.result("create_blob", {"content": "keep", "kind": "text/plain"})["blob_id"]
    params = {"language": "python", "code": SLOW_WRITER_CODE}
    threading.Thread(target=lambda: _swallow(server.rpc, "run_code", params), daemon=True).start()
    deadline = time.monotonic() + 60
    while len(sidecars(root)) < 4:
        assert time.monotonic() < deadline, "the run never wrote its blobs"
        time.sleep(0.05)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(30)
    server.client.close()
    assert len(sidecars(root)) == 4
    again = start_server(ws)
    try:
        assert sidecars(root) == {mine}
        store = BlobStore(root, sweep=False)
        assert ledger(root) == store.disk_usage() == len("keep")
        store.close()
    finally:
        stop_server(again)


def _swallow(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # the server is killed under the request: no answer is expected
        return


def test_a_planted_store_never_stops_the_sweep_or_reaches_outside(tmp_path: Path) -> None:
    """The blob folder is in the workspace (untrusted): what someone planted there is
    swept or skipped, never followed, and never stops the store from opening."""
    root = tmp_path / "blobs"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    (root / f"{PENDING_PREFIX}link").symlink_to(outside)
    (root / f"{PENDING_PREFIX}dir").mkdir()
    os.mkfifo(root / f"{PENDING_PREFIX}fifo")
    (root / ("b" * 32)).mkdir()  # a directory with a blob's name
    (root / (("c" * 32) + ".json")).write_text("[1, 2]")  # a sidecar that is not an object
    (root / ".runs").write_text("not a folder")
    store = BlobStore(root)
    try:
        assert outside.read_text() == "not yours"
        assert not (root / f"{PENDING_PREFIX}link").is_symlink()
        assert (root / f"{PENDING_PREFIX}dir").is_dir()  # not ours: left alone
        assert store.blobs() == [] and ledger(root) == store.disk_usage() == 0
        assert store.create("ok", "text/plain").size_bytes == 2
    finally:
        store.close()


def test_a_full_quota_sweeps_before_it_refuses(tmp_path: Path) -> None:
    """A long-running server whose quota was filled by another process's crashed run
    reclaims those blobs when a write would not fit, instead of refusing for good."""
    root = tmp_path / "blobs"
    server = BlobStore(root, quota_bytes=400_000)
    try:
        kill(spawn(RUNNER, root))  # another process: 300 kB committed by a run, then killed
        assert len(sidecars(root)) == 3
        info = server.create("z" * 200_000, "text/plain")  # fits only once they are gone
        assert sidecars(root) == {info.blob_id}
        assert ledger(root) == server.disk_usage() == 200_000
    finally:
        server.close()
