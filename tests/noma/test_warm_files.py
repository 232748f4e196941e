"""The warm path's stat check (`core.noma.warm_files`): an unchanged file costs a stat,
and no outside edit is missed, even one that keeps the size and the mtime.

Detection never depends on timing: a stat taken too close to a change is doubted and the
bytes are hashed. Tests that need the stat to be trusted wait on that condition (the
clock past the file's timestamp granule), or move the clock the code reads.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import core.noma.commit as commit_module
import core.noma.warm_files as warm
from core.mcp.tools import ToolContext, patch_block, validate_doc
from core.noma.patch.pipeline import Actor, DocumentCache, PatchRequest, patch_file
from core.noma.warm_files import READS, coarse_now, granule, settled

DOC = '# Notes\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n\n::claim{id="c2"}\nOther.\n::\n'


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wait_settled(path: Path) -> None:
    """Until the clock has left the granule of the file's ctime (a condition, at most one
    tick of the filesystem's clock): then a read of it is trusted."""
    ctime = os.stat(path).st_ctime_ns
    while not settled(ctime, coarse_now()):
        pass


def records(path: Path) -> list[dict[str, object]]:
    lines = path.with_name(path.name + ".patches").read_bytes().splitlines()
    return [json.loads(line) for line in lines]


def op(ident: str, value: object) -> dict[str, object]:
    return {"op": "update_attribute", "id": ident, "key": "seen", "value": value}


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "notes.noma"
    path.write_text(DOC)
    return path


def same_size_edit(path: Path, old: bytes, new: bytes, *, keep_inode: bool = True) -> None:
    """An outside edit that keeps the size and restores atime and mtime (``touch -d``)."""
    assert len(old) == len(new) and old != new
    st = os.stat(path)
    if keep_inode:
        with open(path, "r+b") as fh:
            fh.write(new)
    else:
        other = path.with_name("other.tmp")
        other.write_bytes(new)
        os.replace(other, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_granule_and_settled_read_the_timestamps_conservatively() -> None:
    assert granule(1_700_000_000_123_456_789) == 1
    assert granule(1_700_000_000_120_000_000) == 10_000_000
    assert granule(1_700_000_000_000_000_000) == 2_000_000_000  # whole seconds: FAT's two
    assert not settled(1_000_000_123, 1_000_000_123)  # the same instant
    assert settled(1_000_000_123, 1_000_000_124)
    assert not settled(1_000_000_000_000_000_000, 1_000_000_001_500_000_000)  # same 2 s
    assert settled(1_000_000_000_000_000_000, 1_000_000_002_000_000_000)


def test_an_unchanged_file_is_served_from_a_stat_once_trusted(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    wait_settled(doc)
    first = validate_doc(ctx, str(doc))
    reads = dict(READS)
    for _ in range(3):
        assert validate_doc(ctx, str(doc)) == first
    assert READS["stat"] == reads.get("stat", 0) + 3
    assert READS["read"] == reads.get("read", 0)
    assert READS["hash"] == reads.get("hash", 0)


def test_a_doubted_stat_hashes_the_bytes_and_reuses_the_decoded_text(
    doc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm, "coarse_now", lambda: 0)  # the clock never leaves the tick
    cache = DocumentCache()
    ctx = ToolContext(doc.parent)
    ctx.cache = cache
    _path, source, _state = ctx.load(str(doc))
    reads = dict(READS)
    _path, again, _state = ctx.load(str(doc))
    assert READS["hash"] == reads.get("hash", 0) + 1 and READS["stat"] == reads.get("stat", 0)
    assert again is source


@pytest.mark.parametrize("keep_inode", [True, False], ids=["in-place", "renamed"])
def test_an_outside_edit_keeping_size_and_mtime_is_seen_after_a_trusted_read(
    doc: Path, keep_inode: bool
) -> None:
    ctx = ToolContext(doc.parent)
    wait_settled(doc)
    validate_doc(ctx, str(doc))
    validate_doc(ctx, str(doc))  # trusted: served from the stat
    old = doc.read_bytes()
    new = old.replace(b"The claim.", b"Him claim.")
    same_size_edit(doc, old, new, keep_inode=keep_inode)
    reads = dict(READS)
    result = patch_block(ctx, str(doc), op("c2", 1), base_sha256=sha(old))
    assert result["ok"], result
    assert READS["read"] == reads.get("read", 0) + 1  # the edit was read, not assumed
    (record,) = records(doc)
    assert record["pre_sha256"] == sha(new)
    assert any(d["code"] == "base_sha_drift" for d in record["diagnostics"])  # type: ignore[index, union-attr]
    assert b"Him claim." in doc.read_bytes()  # the outside edit was kept, not overwritten


def test_an_outside_edit_between_two_mcp_patches_is_detected(doc: Path) -> None:
    """Whatever the clock did around our own write (trusted or doubted), the next call
    sees an outside edit made after it, even one that keeps the size and the mtime."""
    ctx = ToolContext(doc.parent)
    first = patch_block(ctx, str(doc), op("c1", 1))
    assert first["ok"], first
    ours = doc.read_bytes()
    theirs = ours.replace(b"Other.", b"Their.")
    same_size_edit(doc, ours, theirs)
    second = patch_block(ctx, str(doc), op("c1", 2), base_sha256=sha(ours))
    assert second["ok"], second
    one, two = records(doc)
    assert one["post_sha256"] == sha(ours)
    assert two["pre_sha256"] == sha(theirs)  # drift: the chain says the file moved on
    assert any(d["code"] == "base_sha_drift" for d in two["diagnostics"])  # type: ignore[index, union-attr]
    assert b"Their." in doc.read_bytes() and b"seen=2" in doc.read_bytes()


def test_our_own_write_is_trusted_once_the_tick_is_over(
    doc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a commit the next patch reads nothing: the bytes are the ones written (the
    clock the code reads is moved a minute on, as if the patches came a minute apart)."""
    later = lambda: coarse_now() + 60_000_000_000  # noqa: E731
    monkeypatch.setattr(warm, "coarse_now", later)
    monkeypatch.setattr(commit_module, "coarse_now", later)
    cache = DocumentCache()
    request = PatchRequest(ops=[op("c1", 1)], actor=Actor("agent", "t"))
    first = patch_file(doc, request, cache=cache)
    assert first.ok and first.written
    reads = dict(READS)
    again = PatchRequest(ops=[op("c1", 2)], actor=Actor("agent", "t"))
    second = patch_file(doc, again, cache=cache)
    assert second.ok and second.written
    assert READS["stat"] == reads.get("stat", 0) + 1 and READS["read"] == reads.get("read", 0)
    before = doc.read_bytes().replace(b"seen=2", b"seen=1")
    assert second.pre_sha256 == first.post_sha256 == sha(before)
    assert second.post_sha256 == sha(doc.read_bytes())
    one, two = records(doc)
    assert two["pre_sha256"] == one["post_sha256"]


def test_a_commit_whose_file_was_touched_after_the_rename_is_doubted(
    doc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name no longer holds the inode the commit wrote (an editor saved over it right
    after): the stat is not trusted, so the next call reads the file."""
    cache = DocumentCache()
    real_replace = commit_module._replace

    def replace_then_edit(folder, name, temp, data):  # type: ignore[no-untyped-def]
        written = real_replace(folder, name, temp, data)
        other = doc.with_name("editor.tmp")
        other.write_bytes(data.replace(b"Other.", b"Their."))
        os.replace(other, doc)
        return written

    monkeypatch.setattr(commit_module, "_replace", replace_then_edit)
    later = lambda: coarse_now() + 60_000_000_000  # noqa: E731
    monkeypatch.setattr(warm, "coarse_now", later)
    assert patch_file(doc, PatchRequest(ops=[op("c1", 1)]), cache=cache).ok
    monkeypatch.setattr(commit_module, "_replace", real_replace)
    reads = dict(READS)
    outcome = patch_file(doc, PatchRequest(ops=[op("c1", 2)]), cache=cache)
    assert outcome.ok
    assert READS["read"] == reads.get("read", 0) + 1
    assert b"Their." in doc.read_bytes() and b"seen=2" in doc.read_bytes()


def test_a_deleted_or_symlinked_document_is_not_served_from_memory(doc: Path) -> None:
    ctx = ToolContext(doc.parent)
    wait_settled(doc)
    validate_doc(ctx, str(doc))
    validate_doc(ctx, str(doc))
    target = doc.with_name("elsewhere.noma")
    os.replace(doc, target)
    doc.symlink_to(target)
    with pytest.raises(Exception) as refused:
        validate_doc(ctx, str(doc))
    assert "symbolic link" in str(refused.value) or "symlink" in str(refused.value)
    doc.unlink()
    with pytest.raises(Exception) as missing:
        validate_doc(ctx, str(doc))
    assert "no such file" in str(missing.value)
