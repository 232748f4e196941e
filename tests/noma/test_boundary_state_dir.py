"""Attack: a cloned ``.noma-workbench/`` that is a symlink (or holds symlinks) makes the CLI
and the servers write ``actor.key``, ``hub.sqlite3``, ``runs.sqlite3`` and blobs wherever it
points. Now a state folder must be a real directory owned by the user, and the stores in it
must be regular files; anything else is refused (``state_dir_refused``) before a byte is
written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from trust_testlib import run_noma

from core.workspace import STATE_DIR, StateDirError, Workspace
from tests.workspace_trust import trust_folder

CONFIG = "[workbench]\nactor = 'me'\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A clone the user trusted (for its gates, say): trust covers settings, not the
    files' shapes, so the boundary still applies to its state folder."""
    root = tmp_path / "clone"
    root.mkdir()
    (root / "noma-workbench.toml").write_text(CONFIG)
    (root / "flows").mkdir()
    trust_folder(root)
    return root


def test_a_symlinked_state_dir_is_refused_by_the_workspace(work: Path, outside: Path) -> None:
    (work / STATE_DIR).symlink_to(outside)
    with pytest.raises(StateDirError) as caught:
        _ = Workspace.open(work).state_dir
    assert caught.value.code == "state_dir_refused"
    assert list(outside.iterdir()) == []


def test_flow_context_writes_no_key_or_store_through_a_symlinked_state_dir(
    work: Path, outside: Path
) -> None:
    from core.flow.context import FlowContext

    (work / STATE_DIR).symlink_to(outside)
    with pytest.raises(StateDirError):
        FlowContext.open(Workspace.open(work))
    assert list(outside.iterdir()) == []


def test_an_untrusted_clone_with_a_symlinked_state_dir_gets_nothing_written(
    tmp_path: Path, outside: Path
) -> None:
    from core.flow.context import FlowContext

    root = tmp_path / "untrusted"
    root.mkdir()
    (root / "noma-workbench.toml").write_text(CONFIG)
    (root / STATE_DIR).symlink_to(outside)
    FlowContext.open(Workspace.open(root)).close()
    assert list(outside.iterdir()) == []


def test_hub_token_create_writes_nothing_through_a_symlinked_state_dir(
    work: Path, outside: Path
) -> None:
    """Hub tokens live in the user's state dir now (workspace trust), never the folder's:
    a symlinked state folder receives nothing either way."""
    (work / STATE_DIR).symlink_to(outside)
    run_noma("hub", "token", "create", "--name", "me", "--workspace", str(work), cwd=work)
    assert list(outside.iterdir()) == []


def test_skills_runtime_writes_no_blobs_through_a_symlinked_state_dir(
    work: Path, outside: Path
) -> None:
    from core.skills_runtime.service import SkillsRuntime

    (work / STATE_DIR).symlink_to(outside)
    with pytest.raises(StateDirError):
        SkillsRuntime(work)
    assert list(outside.iterdir()) == []


def test_a_symlinked_blobs_folder_is_refused(work: Path, outside: Path) -> None:
    from core.skills_runtime.service import SkillsRuntime

    (work / STATE_DIR).mkdir()
    (work / STATE_DIR / "blobs").symlink_to(outside)
    with pytest.raises(StateDirError):
        SkillsRuntime(work)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("name", ["runs.sqlite3", "runs.sqlite3-wal", "runs.sqlite3-journal"])
def test_a_planted_store_symlink_is_refused(work: Path, outside: Path, name: str) -> None:
    from core.flow.store import RunStore

    victim = outside / "victim"
    victim.write_bytes(b"precious")
    state = work / STATE_DIR
    state.mkdir()
    (state / name).symlink_to(victim)
    with pytest.raises(StateDirError):
        RunStore.open(state)
    assert victim.read_bytes() == b"precious"


def test_a_state_path_that_is_a_file_is_refused(work: Path) -> None:
    (work / STATE_DIR).write_text("not a folder")
    with pytest.raises(StateDirError) as caught:
        _ = Workspace.open(work).state_dir
    assert "not a directory" in caught.value.message


def test_a_state_dir_owned_by_someone_else_is_refused(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / STATE_DIR).mkdir()
    real = os.geteuid()
    # Seen from another user: the folder is not theirs (a shared drive, a planted clone).
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)
    with pytest.raises(StateDirError) as caught:
        _ = Workspace.open(work).state_dir
    assert "owned by uid" in caught.value.message


def test_a_real_state_dir_is_made_private(work: Path) -> None:
    path = Workspace.open(work).state_dir
    assert path.is_dir() and not path.is_symlink()
    assert path.stat().st_mode & 0o777 == 0o700


def test_the_blob_ledger_is_never_written_through_a_planted_symlink(
    work: Path, outside: Path
) -> None:
    """A cloned state folder with ``blobs/.usage.tmp -> ~/.bashrc``: the quota ledger's
    temp file used to be written by name, truncating the target."""
    from core.skills_runtime.blob_store import BlobStore

    victim = outside / "victim"
    victim.write_bytes(b"precious")
    blobs = work / STATE_DIR / "blobs"
    blobs.mkdir(parents=True)
    (blobs / ".usage.tmp").symlink_to(victim)
    (blobs / ".usage").symlink_to(victim)
    store = BlobStore(blobs)
    store.create("hello", "text")
    store.close()
    assert victim.read_bytes() == b"precious"
    assert not (blobs / ".usage").is_symlink()


def test_noma_flow_reports_a_refused_state_dir_in_one_line(work: Path, outside: Path) -> None:
    (work / STATE_DIR).symlink_to(outside)
    result = run_noma("flow", "list", "--root", str(work), cwd=work)
    assert result.returncode != 0
    assert "state_dir_refused" in result.stderr and "Traceback" not in result.stderr
    assert list(outside.iterdir()) == []
