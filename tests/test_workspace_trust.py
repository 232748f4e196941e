"""The trust store (`core.trust`) and the `noma trust` / `noma untrust` commands.

Trust binds a folder's real path, its device and inode, and a hash of exactly the settings
trust covers; it lives in the user's config dir, refuses a file that is not safely the
user's, and is asked again when the settings change.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from core import cli
from core.trust import (
    TRUST_STORE_CORRUPT,
    TRUST_STORE_UNSAFE,
    TrustState,
    TrustStore,
    key_hashes,
    settings_sha256,
)
from core.user_dirs import config_home
from core.workspace import Workspace
from noma_tui.demo import DEMO_SOURCE, ensure_demo_copy

GATES_ON = "[gates]\nrun_writes_enabled = true\n"


def folder(tmp_path: Path, config: str = GATES_ON, name: str = "ws") -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "noma-workbench.toml").write_text(config, encoding="utf-8")
    return root


def trust(root: Path) -> None:
    ws = Workspace.open(root)
    TrustStore().trust(ws.root, ws.config)


def test_a_folder_is_untrusted_until_trusted_and_its_covered_settings_are_off(
    tmp_path: Path,
) -> None:
    root = folder(tmp_path, GATES_ON + '[workbench]\ntheme = "noma-light"\n')
    ws = Workspace.open(root)
    assert ws.trust.state is TrustState.UNTRUSTED and not ws.trusted
    assert ws.section("gates") == {} and ws.raw_section("gates") == {"run_writes_enabled": True}
    assert ws.section("workbench") == {"theme": "noma-light"}  # not covered: always applies
    trust(root)
    ws = Workspace.open(root)
    assert ws.trusted and ws.section("gates") == {"run_writes_enabled": True}


def test_changing_a_covered_setting_asks_again_and_names_the_key(tmp_path: Path) -> None:
    root = folder(tmp_path)
    trust(root)
    (root / "noma-workbench.toml").write_text(
        GATES_ON + 'automatable_execution_enabled = true\n[hub]\nurl = "http://x"\n'
    )
    ws = Workspace.open(root)
    assert ws.trust.state is TrustState.CHANGED and ws.section("gates") == {}
    assert ws.trust.changed == ("gates.automatable_execution_enabled", "hub.url")
    assert "settings changed since you trusted it" in ws.trust.reason


def test_settings_outside_trust_and_formatting_do_not_untrust(tmp_path: Path) -> None:
    root = folder(tmp_path)
    trust(root)
    (root / "noma-workbench.toml").write_text(
        '# a comment\n[workbench]\nactor = "me"\n\n[gates]\n  run_writes_enabled=true\n'
    )
    assert Workspace.open(root).trusted


def test_the_hash_distinguishes_types_and_dates() -> None:
    assert settings_sha256({"gates": {"a": True}}) != settings_sha256({"gates": {"a": "true"}})
    import datetime as dt

    d = dt.date(2026, 1, 2)
    assert settings_sha256({"policy": {"x": d}}) != settings_sha256({"policy": {"x": str(d)}})
    assert key_hashes({"secrets": {"grants": {"a.b": ["X"]}}}).keys() == {'secrets.grants."a.b"'}


def test_a_folder_replaced_at_the_same_path_is_not_trusted(tmp_path: Path) -> None:
    root = folder(tmp_path)
    trust(root)
    root.rename(tmp_path / "the-trusted-one")  # swapped out (still there: its inode too)
    root = folder(tmp_path)  # same path, same settings, another folder
    ws = Workspace.open(root)
    assert not ws.trusted and "replaced" in ws.trust.reason


def test_a_moved_folder_is_not_trusted_at_its_new_path(tmp_path: Path) -> None:
    root = folder(tmp_path)
    trust(root)
    moved = tmp_path / "moved"
    root.rename(moved)
    assert not Workspace.open(moved).trusted


def test_the_trust_file_is_written_atomically_and_private(tmp_path: Path) -> None:
    root = folder(tmp_path)
    trust(root)
    trust(folder(tmp_path, name="second"))
    path = config_home() / "trusted-folders.json"
    assert path.stat().st_mode & 0o777 == 0o600
    data = json.loads(path.read_text())
    assert [Path(e["path"]).name for e in data["folders"]] == ["ws", "second"]
    assert not [p for p in config_home().iterdir() if p.name.startswith(".trusted-folders.json")]


def test_a_store_url_password_is_never_copied_into_the_trust_file(tmp_path: Path) -> None:
    root = folder(tmp_path, '[store]\nurl = "postgresql://u:hunter2@db/x"\n')
    trust(root)
    assert Workspace.open(root).trusted
    assert "hunter2" not in (config_home() / "trusted-folders.json").read_text()


@pytest.mark.parametrize("attack", ["symlink", "world-writable", "other-owner", "corrupt"])
def test_an_unsafe_trust_file_is_refused_and_nothing_is_trusted(
    tmp_path: Path, attack: str
) -> None:
    root = folder(tmp_path)
    trust(root)
    path = config_home() / "trusted-folders.json"
    if attack == "symlink":  # someone points the file at one they control
        planted = tmp_path / "planted.json"
        shutil.copy(path, planted)
        path.unlink()
        path.symlink_to(planted)
    elif attack == "world-writable":
        path.chmod(0o666)
    elif attack == "other-owner":
        if os.geteuid() != 0:
            pytest.skip("changing a file's owner needs root (CI runs as root)")
        os.chown(path, 65534, 65534)
    else:
        path.write_text('{"format": 1, "folders": [{"path": 3}]}')
    ws = Workspace.open(root)
    code = TRUST_STORE_CORRUPT if attack == "corrupt" else TRUST_STORE_UNSAFE
    assert not ws.trusted and ws.trust.problem == code and ws.section("gates") == {}
    with pytest.raises(OSError):
        TrustStore().trust(ws.root, ws.config)  # and it is not written through either
    if attack == "symlink":
        assert path.is_symlink()


def test_noma_trust_shows_what_it_trusts_and_asks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = folder(tmp_path, GATES_ON + '[store]\nurl = "postgresql://u:hunter2@db:5/x"\n')
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert cli.main(["trust", str(root)]) == 1  # no terminal, no --yes: nothing recorded
    out, err = capsys.readouterr()
    assert "gates.run_writes_enabled = True" in out and "postgresql://db:5/x" in out
    assert "hunter2" not in out + err and "--yes" in err
    assert not Workspace.open(root).trusted
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert cli.main(["trust", str(root)]) == 1 and not Workspace.open(root).trusted
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert cli.main(["trust", str(root)]) == 0 and Workspace.open(root).trusted
    capsys.readouterr()
    assert cli.main(["trust", "--list"]) == 0
    assert f"{root.resolve()}  trusted" in capsys.readouterr().out
    assert cli.main(["untrust", str(root)]) == 0 and not Workspace.open(root).trusted
    assert cli.main(["untrust", str(root)]) == 1
    assert cli.main(["trust", "--yes", str(tmp_path / "missing")]) == 2


def test_a_command_using_an_untrusted_setting_names_the_trust_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = folder(tmp_path, GATES_ON)
    (root / "flows").mkdir()
    assert cli.main(["flow", "list", "--root", str(root)]) == 0
    err = capsys.readouterr().err
    assert "workspace_untrusted" in err and f"noma trust {root.resolve()}" in err
    assert "[gates] run_writes_enabled: off" in err


def test_a_folder_asking_for_nothing_gets_no_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = folder(tmp_path, '[workbench]\nactor = "me"\n')
    (root / "flows").mkdir()
    assert cli.main(["flow", "list", "--root", str(root)]) == 0
    assert "workspace_untrusted" not in capsys.readouterr().err


def test_the_product_s_demo_copy_is_trusted_and_a_hand_moved_copy_is_not(tmp_path: Path) -> None:
    demo = ensure_demo_copy(tmp_path / "demo")
    assert Workspace.open(demo).trusted
    assert Workspace.open(demo).section("gates")["run_writes_enabled"] is True
    by_hand = tmp_path / "by-hand"
    shutil.copytree(demo, by_hand)
    assert not Workspace.open(by_hand).trusted
    moved = tmp_path / "moved"
    demo.rename(moved)
    assert not Workspace.open(moved).trusted
    assert not Workspace.open(DEMO_SOURCE).trusted  # the package itself is never recorded


def test_an_edited_demo_copy_is_not_trusted_again_by_the_product(tmp_path: Path) -> None:
    demo = ensure_demo_copy(tmp_path / "demo")
    with (demo / "noma-workbench.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[hub]\nurl = "http://attacker.example"\n')
    ensure_demo_copy(demo)  # the next start of the app
    ws = Workspace.open(demo)
    assert ws.trust.state is TrustState.CHANGED and ws.section("hub") == {}


def test_a_deleted_trust_file_trusts_nothing_even_after_it_was_read(tmp_path: Path) -> None:
    root = folder(tmp_path)
    trust(root)
    assert Workspace.open(root).trusted  # read (and remembered) once
    (config_home() / "trusted-folders.json").unlink()
    assert not Workspace.open(root).trusted
