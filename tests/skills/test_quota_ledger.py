"""Issue 24 item 5: quotas shared across processes and whole.

The attacks: two processes together stored 16 MiB under a 10 MiB blob quota (each
reserved its bytes in its own memory, so neither saw the other's write in progress);
``create_skill`` stored 25 MB under a 1 MiB quota (created skills were counted by
nothing); 300 empty blobs made 602 files (an empty content file per blob).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.netauth.gate import CURRENT_CALLER, Caller
from core.skills_runtime.blob_store import BlobQuotaExceeded, BlobStore
from core.skills_runtime.errors import RpcError
from core.skills_runtime.service import SkillsRuntime
from tests.workspace_trust import trust_folder

MIB = 1024 * 1024
REPO = Path(__file__).resolve().parents[2]

# A writer in its own process: writes 6 MiB into a pending blob, says whether the write was
# admitted, then waits for the parent's "go" before committing. Both writers are mid-write
# at the same moment, with no sleep standing in for it.
WRITER = """
import sys
from pathlib import Path
from core.skills_runtime.blob_store import BlobQuotaExceeded, BlobStore

store = BlobStore(Path(sys.argv[1]), quota_bytes=10 * 1024 * 1024)
writer = store.open_writer("text/plain")
try:
    for _ in range(6):
        writer.write("x" * (1024 * 1024))
except BlobQuotaExceeded:
    print("refused", flush=True)
    sys.stdin.readline()
    sys.exit(0)
print("written", flush=True)
sys.stdin.readline()
print(writer.commit(), flush=True)
"""


def _spawn(root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_processes_writing_at_once_cannot_pass_the_quota_together(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    BlobStore(root, quota_bytes=10 * MIB).close()
    first = _spawn(root)
    assert first.stdout is not None and first.stdin is not None
    assert first.stdout.readline().strip() == "written"  # 6 MiB admitted, not yet committed
    second = _spawn(root)
    assert second.stdout is not None and second.stdin is not None
    second_said = second.stdout.readline().strip()
    for proc in (first, second):
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    first_out, _ = first.communicate(timeout=60)
    second.communicate(timeout=60)
    assert first.returncode == 0 and second.returncode == 0
    assert first_out.strip().startswith("blob:")
    assert second_said == "refused"  # the first writer's bytes in progress count for it too
    store = BlobStore(root, quota_bytes=10 * MIB)
    assert store.usage() == 6 * MIB
    assert sum(b.size_bytes for b in store.blobs()) == 6 * MIB
    assert not [n for n in os.listdir(root) if n.startswith(".pending-")]


def test_a_pending_write_counts_in_the_shared_ledger(tmp_path: Path) -> None:
    """Another store on the folder (another process) sees bytes being written, and a
    sweep from it leaves that count alone while the writer lives."""
    one = BlobStore(tmp_path, quota_bytes=100)
    other = BlobStore(tmp_path, quota_bytes=100)
    writer = one.open_writer("text/plain")
    writer.write("a" * 70)
    assert other.usage() == 70
    other.sweep()
    assert other.usage() == 70
    with pytest.raises(BlobQuotaExceeded):
        other.create("b" * 31, "text/plain")
    writer.abort()
    assert other.usage() == 0
    other.create("b" * 31, "text/plain")
    assert one.usage() == 31


# ----------------------------------------------------------------------- empty blobs


def test_empty_blobs_cost_no_content_file(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    store = BlobStore(root)
    before = len(os.listdir(root))
    ids = [store.create("", "text/plain").blob_id for _ in range(300)]
    assert len(os.listdir(root)) == before + 300  # one sidecar each, no empty content file
    assert len(set(ids)) == 300
    again = BlobStore(root)  # the open sweep keeps them: an empty blob is whole
    for blob_id in ids[:5]:
        info = again.info(blob_id)
        assert (info.size_bytes, info.kind) == (0, "text/plain")
        for mode in ("full", "sample_head", "sample_tail"):
            view = again.read(blob_id, mode, 10)  # type: ignore[arg-type]
            assert (view.content, view.truncated, view.size_bytes) == ("", False, 0)
        assert "".join(again.read_chunks(blob_id, 4)) == ""
    assert len(again.blobs()) == 300 and again.usage() == 0
    again.delete(ids[0])
    assert not again.exists(ids[0]) and len(os.listdir(root)) == before + 299


def test_a_planted_empty_content_file_or_a_lying_sidecar_is_no_blob(tmp_path: Path) -> None:
    """A sidecar alone is a blob only if it says it is empty; one claiming bytes it has no
    content for is half a blob and the sweep removes it."""
    root = tmp_path / "blobs"
    store = BlobStore(root)
    lying = "ab" * 16
    (root / f"{lying}.json").write_text(json.dumps({"kind": "text/plain", "size_bytes": 5}))
    BlobStore(root)
    assert not store.exists(f"blob:{lying}")
    assert not (root / f"{lying}.json").exists()


# ----------------------------------------------------------------------- created skills


def _skill(name: str, size: int, version: str = "0.1.0") -> dict[str, Any]:
    return {
        "manifest": {
            "name": name,
            "version": version,
            "kind": "instruction",
            "description": "notes",
        },
        "skill_md": "# notes\n",
        "files": [{"path": "resources/data.txt", "content": "x" * size}],
    }


def _runtime(tmp_path: Path, config: str) -> SkillsRuntime:
    (tmp_path / "noma-workbench.toml").write_text(config)
    trust_folder(tmp_path)
    return SkillsRuntime(tmp_path)  # the sandbox is never started: no run happens here


def _create(runtime: SkillsRuntime, params: dict[str, Any]) -> dict[str, Any]:
    async def call() -> dict[str, Any]:
        token = CURRENT_CALLER.set(Caller("mallory", False, "personal"))
        try:
            return await runtime.create_skill(params)
        finally:
            CURRENT_CALLER.reset(token)

    return asyncio.run(call())


def _created(tmp_path: Path) -> list[str]:
    folder = tmp_path / ".noma-workbench" / "created-skills"
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_created_skills_count_against_the_workspace_quota(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, f"[skills]\nblob_quota_bytes = {MIB}\n")
    _create(runtime, _skill("user.mallory.a", 700_000))
    with pytest.raises(RpcError) as info:
        _create(runtime, _skill("user.mallory.b", 700_000))
    assert info.value.code == -32010
    data = info.value.data
    assert data["reason"] == "skill_quota_exceeded"
    assert data["quota_bytes"] == MIB and data["used_bytes"] > 700_000
    assert data["requested_bytes"] > 700_000
    assert _created(tmp_path) == ["user.mallory.a@0.1.0"]  # nothing half-written is left
    # The skill's bytes are the blobs' too: one ledger for everything agents store.
    with pytest.raises(BlobQuotaExceeded):
        runtime.blobs.create("y" * 400_000, "text/plain")
    runtime.blobs.create("y" * 100_000, "text/plain")


def test_created_skills_have_their_own_total_cap(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, "[skills]\ncreated_skills_quota_bytes = 300000\n")
    for n in range(2):
        _create(runtime, _skill(f"user.mallory.s{n}", 100_000))
    with pytest.raises(RpcError) as info:
        _create(runtime, _skill("user.mallory.s2", 100_000))
    assert info.value.code == -32010
    assert info.value.data["reason"] == "skill_quota_exceeded"
    assert info.value.data["quota_bytes"] == 300_000
    assert len(_created(tmp_path)) == 2
    # Blobs still have their own room: the created-skills cap limits skills only.
    runtime.blobs.create("z" * 500_000, "text/plain")


def test_an_untrusted_folder_cannot_raise_the_created_skills_cap(tmp_path: Path) -> None:
    from core.skills_runtime.ledger import DEFAULT_CREATED_SKILLS_QUOTA_BYTES

    (tmp_path / "noma-workbench.toml").write_text(
        "[skills]\ncreated_skills_quota_bytes = 999999999999\n"
    )
    runtime = SkillsRuntime(tmp_path)
    assert runtime.blobs.skills_quota_bytes == DEFAULT_CREATED_SKILLS_QUOTA_BYTES


def test_the_created_skills_ledger_survives_a_restart(tmp_path: Path) -> None:
    """Counted from the disk when the store opens: a new server process sees old skills."""
    config = "[skills]\ncreated_skills_quota_bytes = 250000\n"
    _create(_runtime(tmp_path, config), _skill("user.mallory.old", 200_000))
    fresh = _runtime(tmp_path, config)
    with pytest.raises(RpcError):
        _create(fresh, _skill("user.mallory.new", 100_000))
    assert _created(tmp_path) == ["user.mallory.old@0.1.0"]


def test_many_tiny_created_skills_are_not_free(tmp_path: Path) -> None:
    """Every file and folder a created skill makes costs something, so a flood of empty
    files cannot fill the disk's inodes under a byte quota."""
    runtime = _runtime(tmp_path, "[skills]\ncreated_skills_quota_bytes = 100000\n")
    made = 0
    with pytest.raises(RpcError) as info:
        for n in range(200):
            _create(runtime, _skill(f"user.mallory.t{n}", 0))
            made += 1
    assert info.value.data["reason"] == "skill_quota_exceeded"
    assert made < 50


# A process creating one skill of 600 kB straight through the stores (as a second server on
# the folder would); prints "ok" or the refusal's reason.
CREATOR = """
import sys
from pathlib import Path
from core.skills_runtime.blob_store import BlobStore
from core.skills_runtime.ledger import SkillQuotaExceeded
from core.skills_runtime.skill_store import SkillStore

state, name = Path(sys.argv[1]), sys.argv[2]
blobs = BlobStore(state / "blobs", quota_bytes=1024 * 1024, skills_root=state / "created")
store = SkillStore([("created", state / "created")], state / "created", blobs.admit_skill)
sys.stdin.readline()
manifest = {"name": name, "version": "0.1.0", "kind": "instruction", "description": "d"}
try:
    store.create(manifest, "# d\\n", [("resources/x.txt", "x" * 600_000)], "user.mallory")
    print("ok", flush=True)
except SkillQuotaExceeded as exc:
    print(exc.setting, flush=True)
"""


def test_two_processes_creating_skills_at_once_share_the_quota(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CREATOR, str(tmp_path), f"user.mallory.p{n}"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    outs = [proc.communicate("go\n", timeout=60)[0].strip() for proc in procs]
    assert sorted(outs) == ["blob_quota_bytes", "ok"]
    assert len([n for n in os.listdir(tmp_path / "created") if not n.startswith(".")]) == 1
    assert not [n for n in os.listdir(tmp_path / "created") if n.startswith(".creating-")]
    blobs = BlobStore(tmp_path / "blobs", skills_root=tmp_path / "created")
    assert 600_000 < blobs.skills_usage() < MIB


def test_a_dead_creators_staging_folder_is_swept_and_uncounted(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, "")
    _create(runtime, _skill("user.mallory.kept", 1000))
    counted = runtime.blobs.skills_usage()
    created = tmp_path / ".noma-workbench" / "created-skills"
    leftover = created / ".creating-dead"
    (leftover / "resources").mkdir(parents=True)
    (leftover / "resources" / "big.txt").write_text("x" * 500_000)
    fresh = SkillsRuntime(tmp_path)
    assert not leftover.exists()
    assert fresh.blobs.skills_usage() == counted


def test_planted_ledgers_are_neither_believed_nor_written_through(tmp_path: Path) -> None:
    """A cloned state folder brings its own ledgers: a negative count, a symlink to a file
    of the attacker's choosing, a temp-name symlink to the user's files."""
    blobs = tmp_path / ".noma-workbench" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / ".usage").write_text("-99999999")
    outside = tmp_path / "outside.txt"
    outside.write_text("0")
    (blobs / ".skills-usage").symlink_to(outside)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (blobs / ".skills-usage.tmp").symlink_to(victim)
    runtime = _runtime(tmp_path, "[skills]\ncreated_skills_quota_bytes = 100000\n")
    _create(runtime, _skill("user.mallory.one", 50_000))
    assert victim.read_text() == "keep me" and outside.read_text() == "0"
    assert not (blobs / ".skills-usage").is_symlink()
    with pytest.raises(RpcError):
        _create(runtime, _skill("user.mallory.two", 50_000))
    assert runtime.blobs.usage() == runtime.blobs.skills_usage() > 50_000


def test_a_negative_ledger_is_recounted_from_the_disk(tmp_path: Path) -> None:
    store = BlobStore(tmp_path, quota_bytes=100)
    store.create("a" * 60, "text/plain")
    (tmp_path / ".usage").write_text("-1000")
    unswept = BlobStore(tmp_path, quota_bytes=100, sweep=False)
    with pytest.raises(BlobQuotaExceeded):
        unswept.create("b" * 50, "text/plain")


def test_a_lying_sidecar_cannot_shrink_the_ledger_on_delete(tmp_path: Path) -> None:
    store = BlobStore(tmp_path, quota_bytes=100)
    info = store.create("a" * 60, "text/plain")
    store.create("b" * 30, "text/plain")
    sidecar = tmp_path / f"{info.blob_id[5:]}.json"
    sidecar.write_text(json.dumps({"kind": "text/plain", "size_bytes": 10_000}))
    store.delete(info.blob_id)
    assert store.usage() == 30


def test_an_untrusted_clone_cannot_ship_a_skills_ledger(tmp_path: Path) -> None:
    """An untrusted folder's own count of its created skills is recounted, not believed:
    a huge one would refuse every blob, a tiny one would hide what is on disk."""
    blobs = tmp_path / ".noma-workbench" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / ".skills-usage").write_text(str(10**15))
    (tmp_path / "noma-workbench.toml").write_text("")
    runtime = SkillsRuntime(tmp_path)
    assert not runtime.trusted and runtime.blobs.skills_usage() == 0
    runtime.blobs.create("fine", "text/plain")


def test_a_flood_of_empty_blobs_stops_at_the_blob_count_limit(tmp_path: Path) -> None:
    """Bytes alone would let zero-byte blobs fill the disk's inodes: their number is capped
    too, counted in the shared ledger (in progress included) and recounted at open."""
    store = BlobStore(tmp_path, blob_count_limit=5)
    other = BlobStore(tmp_path, blob_count_limit=5)  # another process on the folder
    ids = [store.create("", "text/plain").blob_id for _ in range(3)]
    pending = other.open_writer("text/plain")  # a write in progress holds its place
    other.create("x", "text/plain")
    with pytest.raises(BlobQuotaExceeded) as info:
        store.create("", "text/plain")
    assert info.value.details()["blob_count_limit"] == 5
    assert "blobs" in str(info.value)
    pending.abort()
    store.create("", "text/plain")
    store.delete(ids[0])
    store.create("", "text/plain")
    assert len(BlobStore(tmp_path, blob_count_limit=5).blobs()) == 5
    with pytest.raises(BlobQuotaExceeded):
        BlobStore(tmp_path, blob_count_limit=5).create("", "text/plain")


def test_blob_count_limit_setting(tmp_path: Path) -> None:
    from core.skills_runtime.blob_store import DEFAULT_BLOB_COUNT_LIMIT, blob_count_limit_from

    assert blob_count_limit_from({}) == DEFAULT_BLOB_COUNT_LIMIT == 100_000
    assert blob_count_limit_from({"blob_count_limit": 7}) == 7
    for bad in (True, -1, "many"):
        with pytest.raises(ValueError, match="blob_count_limit"):
            blob_count_limit_from({"blob_count_limit": bad})
    (tmp_path / "noma-workbench.toml").write_text("[skills]\nblob_count_limit = 1\n")
    assert SkillsRuntime(tmp_path).blobs.blob_count_limit == DEFAULT_BLOB_COUNT_LIMIT
    trust_folder(tmp_path)
    assert SkillsRuntime(tmp_path).blobs.blob_count_limit == 1


def test_a_cloned_created_skills_folder_cannot_break_the_count(tmp_path: Path) -> None:
    """Counting a hostile clone's created skills follows no link (one to / costs one
    entry) and survives nesting deeper than Python's recursion limit."""
    created = tmp_path / ".noma-workbench" / "created-skills"
    created.mkdir(parents=True)
    (created / "root").symlink_to("/")
    deep = created / "deep"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)
    try:
        for _ in range(sys.getrecursionlimit() + 200):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    (tmp_path / "noma-workbench.toml").write_text("")
    try:
        runtime = SkillsRuntime(tmp_path)
        used = runtime.blobs.skills_usage()
    finally:  # pytest's own clean-up recurses: rm does not
        subprocess.run(["rm", "-rf", str(deep)], check=True)
    assert 4096 * (sys.getrecursionlimit() + 200) < used < 4096 * (sys.getrecursionlimit() + 210)


def test_a_missing_count_ledger_is_recounted_once(tmp_path: Path) -> None:
    """A store opened without a sweep on a folder whose count ledger is gone counts each
    blob once, the one being written included."""
    store = BlobStore(tmp_path, blob_count_limit=3)
    store.create("a", "text/plain")
    (tmp_path / ".count").unlink()
    unswept = BlobStore(tmp_path, blob_count_limit=3, sweep=False)
    unswept.create("b", "text/plain")
    unswept.create("c", "text/plain")
    with pytest.raises(BlobQuotaExceeded):
        unswept.create("d", "text/plain")
    assert len(unswept.blobs()) == 3


def test_a_run_over_the_blob_count_fails_the_way_it_fails_over_bytes(tmp_path: Path) -> None:
    """The sandbox stops a run on `BlobQuotaError` (in-band ``BlobQuotaExceeded``): the
    count limit raises that too, and the run's blobs go when it fails."""
    from sandbox.bridge import BlobQuotaError

    store = BlobStore(tmp_path, blob_count_limit=2)
    store.create("kept", "text/plain")
    with pytest.raises(BlobQuotaError), store.for_run("run_" + "0" * 16) as run:
        writer = run.open_writer("text/plain")
        writer.write("one")
        writer.commit()
        run.open_writer("text/plain")
    assert [b.size_bytes for b in store.blobs()] == [4]
    assert store.usage() == 4
