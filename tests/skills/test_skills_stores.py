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
    writer = store.open_writer("text/plain")
    writer.write("partial")
    writer.abort()
    assert list((tmp_path / "blobs").iterdir()) == []
