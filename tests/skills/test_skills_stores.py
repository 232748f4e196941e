"""Skill store, blob store and contained reads, without a server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.skills_runtime.blob_store import BlobNotFound, BlobStore
from core.skills_runtime.manifest import ManifestError, parse_manifest, split_frontmatter
from core.skills_runtime.names import is_skill_name, version_key
from core.skills_runtime.safe_paths import UnsafePath, read_contained
from core.skills_runtime.skill_store import SHIPPED_DIR, SkillStore


def test_versions_sort_numerically_with_prereleases_first() -> None:
    versions = ["0.9.1", "0.10.0", "1.0.0-rc1", "1.0.0", "0.2.0"]
    assert sorted(versions, key=version_key) == ["0.2.0", "0.9.1", "0.10.0", "1.0.0-rc1", "1.0.0"]


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("salesforce.leads.sync", True),
        ("a", True),
        ("a.b_c.d1", True),
        ("../etc", False),
        ("a..b", False),
        ("a.class.b", False),
        ("1a.b", False),
        ("", False),
        ("a/b", False),
        ("é.x", False),
    ],
)
def test_skill_names_must_be_importable(name: str, ok: bool) -> None:
    assert is_skill_name(name) is ok


def test_action_manifest_needs_a_contained_entrypoint() -> None:
    base = 'name = "a.b"\nversion = "0.1.0"\ndescription = "d"\nkind = "action"\n'
    with pytest.raises(ManifestError, match="runtime"):
        parse_manifest(base)
    with pytest.raises(ManifestError, match="entrypoint"):
        parse_manifest(base + '[runtime]\nlanguage = "python"\nentrypoint = "../x.py"\n')
    manifest, raw = parse_manifest(
        base + 'updated = 2026-01-05\n[runtime]\nlanguage = "python"\nentrypoint = "code/main.py"\n'
    )
    assert manifest.runtime is not None and manifest.runtime.export == "main"
    assert raw["updated"] == "2026-01-05"  # dates are JSON-safe strings


def test_frontmatter_split() -> None:
    meta, body = split_frontmatter("---\nname: X\ntags: [a, b]\n---\n# Body\n")
    assert meta == {"name": "X", "tags": ["a", "b"]} and body == "# Body\n"
    assert split_frontmatter("# no frontmatter\n") == ({}, "# no frontmatter\n")
    assert split_frontmatter("---\n: : bad\n  - yaml\n---\nbody") == ({}, "body")


def test_shipped_skills_load_and_bad_dirs_are_reported(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "skill.toml").write_text("name = ")
    store = SkillStore([("shipped", SHIPPED_DIR), ("workspace", tmp_path)], writable_root=tmp_path)
    names = [s.name for s in store.skills()]
    assert {"skills.protocol.guide", "salesforce.leads.sync", "gdrive.sheets.read"} <= set(names)
    assert [p.path for p in store.problems] == [str(tmp_path / "broken")]


def test_contained_reads_refuse_symlinks_hardlinks_and_escapes(tmp_path: Path) -> None:
    root = tmp_path / "skill"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("inside")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside")
    os.symlink(outside, root / "docs" / "link.md")
    os.symlink(tmp_path, root / "up")
    os.link(outside, root / "hard.txt")
    os.mkfifo(root / "fifo")
    assert read_contained(root, "docs/a.md", 100) == (b"inside", 6)
    for rel in [
        "docs/link.md",
        "up/outside.txt",
        "hard.txt",
        "fifo",
        "../outside.txt",
        "/etc/passwd",
        "docs/../docs/a.md",
        "docs//a.md",
        "nope.md",
    ]:
        with pytest.raises(UnsafePath):
            read_contained(root, rel, 100)


def test_blob_store_round_trip_and_utf8_safe_sampling(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    info = store.create("ab€" * 10, "text/plain")
    assert info.size_bytes == 50
    head = store.read(info.blob_id, "sample_head", 4)
    assert head.content == "ab" and head.truncated  # '€' is 3 bytes: never split
    tail = store.read(info.blob_id, "sample_tail", 6)  # starts inside the previous '€'
    assert tail.content == "ab€" and tail.truncated
    assert store.read(info.blob_id, "full", 1).content == "ab€" * 10
    assert "".join(store.read_chunks(info.blob_id, 7)) == "ab€" * 10
    with pytest.raises(BlobNotFound):
        store.info("blob:../../etc/passwd")
    assert not [p for p in (tmp_path / "blobs").iterdir() if p.name.startswith(".pending")]


def test_aborted_blob_writes_leave_nothing(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    bookkeeping = sorted(p.name for p in (tmp_path / "blobs").iterdir())
    assert bookkeeping == [".count", ".quota.lock", ".usage"]  # the quota's lock and ledgers
    writer = store.open_writer("text/plain")
    writer.write("partial")
    writer.abort()
    assert sorted(p.name for p in (tmp_path / "blobs").iterdir()) == bookkeeping
    assert store.usage() == 0


# ------------------------------------------------------------------------- blob quota


def test_blob_quota_refuses_a_create_and_changes_nothing(tmp_path: Path) -> None:
    import pytest as _pytest

    from core.skills_runtime.blob_store import BlobQuotaExceeded

    store = BlobStore(tmp_path, quota_bytes=100)
    store.create("a" * 60, "text/plain")
    files, usage = sorted(os.listdir(tmp_path)), store.usage()
    with _pytest.raises(BlobQuotaExceeded) as err:
        store.create("b" * 41, "text/plain")
    assert err.value.details() == {"requested_bytes": 41, "used_bytes": 60, "quota_bytes": 100}
    assert sorted(os.listdir(tmp_path)) == files and store.usage() == usage == 60
    store.create("c" * 40, "text/plain")  # exactly up to the quota is fine
    assert store.usage() == 100 == store.disk_usage()
    # A fresh store (a restarted server) counts what is on disk.
    assert BlobStore(tmp_path, quota_bytes=100).usage() == 100


def test_concurrent_creates_never_pass_the_quota_together(tmp_path: Path) -> None:
    import threading

    from core.skills_runtime.blob_store import BlobQuotaExceeded

    store = BlobStore(tmp_path, quota_bytes=1000)
    made: list[str] = []
    refused: list[int] = []
    barrier = threading.Barrier(16)

    def create() -> None:
        barrier.wait()
        try:
            made.append(store.create("z" * 300, "text/plain").blob_id)
        except BlobQuotaExceeded:
            refused.append(1)

    threads = [threading.Thread(target=create) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 3 and len(refused) == 13
    assert store.usage() == 900 == store.disk_usage()
    assert len([n for n in os.listdir(tmp_path) if n.endswith(".json")]) == 3
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".pending-")]


def test_blob_quota_setting(tmp_path: Path) -> None:
    from core.skills_runtime.blob_store import DEFAULT_BLOB_QUOTA_BYTES, blob_quota_from

    assert blob_quota_from({}, {}) == DEFAULT_BLOB_QUOTA_BYTES == 1 << 30
    assert blob_quota_from({"blob_quota_bytes": 5000}, {}) == 5000
    assert blob_quota_from({"blob_quota_bytes": 5000}, {"NOMA_BLOB_QUOTA_BYTES": "7"}) == 7
    for bad in ("-1", "lots"):
        with pytest.raises(ValueError, match="blob quota"):
            blob_quota_from({}, {"NOMA_BLOB_QUOTA_BYTES": bad})
    with pytest.raises(ValueError, match="blob quota"):
        blob_quota_from({"blob_quota_bytes": True}, {})


def test_secret_store_grants_need_declaration_pins_and_a_private_values_file(
    tmp_path: Path,
) -> None:
    from core.skills_runtime.secret_store import SecretStore, skill_digest
    from core.skills_runtime.skill_store import load_skill

    skill_dir = tmp_path / "skills" / "acme.s"
    (skill_dir / "code").mkdir(parents=True)
    (skill_dir / "skill.toml").write_text(
        'name = "acme.s"\nversion = "1.0.0"\ndescription = "d"\nkind = "action"\n'
        '[runtime]\nlanguage = "python"\nentrypoint = "code/main.py"\n'
        '[permissions]\nsecrets = ["A", "B"]\n'
    )
    (skill_dir / "code" / "main.py").write_text("def main(a):\n    return 1\n")
    skill = load_skill(skill_dir, "workspace")
    values = tmp_path / ".noma-workbench" / "secrets.toml"
    values.parent.mkdir()
    values.write_text('A = "from-file"\nC = "c"\n')
    values.chmod(0o644)
    section = {"grants": {"acme.s": ["A", "C"]}, "from_env": {"B": "ENV_B"}}
    env = {"ENV_B": "b", "A": "env-a"}
    loose = SecretStore.from_config(tmp_path, section, env)
    assert loose.for_skill(skill) == {} and "0600" in " ".join(loose.problems)
    values.chmod(0o600)
    store = SecretStore.from_config(tmp_path, section, env)
    assert store.for_skill(skill) == {"A": "from-file"}  # C granted but not declared
    digest = skill_digest(skill_dir)
    pinned = SecretStore.from_config(
        tmp_path, {"grants": {f"acme.s@sha256:{digest}": ["B"]}, "from_env": {"B": "ENV_B"}}, env
    )
    assert pinned.for_skill(skill) == {"B": "b"}
    (skill_dir / "code" / "main.py").write_text("def main(a):\n    return 2\n")
    assert pinned.for_skill(skill) == {}  # the content changed: the digest pin no longer holds
    created = load_skill(skill_dir, "created")
    assert SecretStore.from_config(tmp_path, section, env).for_skill(created) == {}
    assert SecretStore.from_config(tmp_path, {}, {"A": "x"}).for_skill(skill) == {}


async def test_create_blob_over_the_quota_is_a_clear_json_rpc_error(tmp_path: Path) -> None:
    import json

    from core.skills_runtime.jsonrpc import Dispatcher
    from core.skills_runtime.service import SkillsRuntime
    from tests.workspace_trust import trust_folder

    (tmp_path / "noma-workbench.toml").write_text("[skills]\nblob_quota_bytes = 10\n")
    trust_folder(tmp_path)
    runtime = SkillsRuntime(tmp_path)  # the sandbox is never started: no run happens here
    assert runtime.blobs.quota_bytes == 10
    dispatcher = Dispatcher(runtime.methods)

    async def call(content: str) -> dict:
        body = {"jsonrpc": "2.0", "id": 1, "method": "create_blob"}
        body["params"] = {"content": content, "kind": "text/plain"}
        reply = await dispatcher.handle(json.dumps(body).encode())
        assert reply is not None
        return json.loads(reply)

    assert (await call("12345"))["result"]["size_bytes"] == 5
    blob_dir = tmp_path / ".noma-workbench" / "blobs"
    files, usage = sorted(os.listdir(blob_dir)), runtime.blobs.usage()
    reply = await call("123456")
    assert reply["error"]["code"] == -32010
    assert reply["error"]["data"] == {
        "reason": "blob_quota_exceeded",
        "requested_bytes": 6,
        "used_bytes": 5,
        "quota_bytes": 10,
    }
    assert "quota" in reply["error"]["message"]
    assert sorted(os.listdir(blob_dir)) == files and runtime.blobs.usage() == usage


def test_two_stores_on_one_folder_share_the_quota(tmp_path: Path) -> None:
    """Two processes (a flow lane in the CLI and a skills server) see each other's blobs."""
    from core.skills_runtime.blob_store import BlobQuotaExceeded

    server = BlobStore(tmp_path, quota_bytes=100)
    lane = BlobStore(tmp_path, quota_bytes=100)  # opened at the same time, its own lock fd
    server.create("s" * 60, "text/plain")
    with pytest.raises(BlobQuotaExceeded):
        lane.create("l" * 41, "text/plain")
    blob = lane.create("l" * 40, "text/plain")
    assert server.usage() == lane.usage() == 100 == server.disk_usage()
    server.delete(blob.blob_id)
    assert lane.usage() == 60
    # A stale or missing ledger (a crash) is rebuilt from the files when a store opens.
    (tmp_path / ".usage").write_text("0")
    assert BlobStore(tmp_path, quota_bytes=100).usage() == 60
    server.close()
    lane.close()
