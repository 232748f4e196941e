"""The app on an untrusted folder: a restricted badge, a screen saying what is off and why,
and a keyboard action (in the one key registry) that trusts the folder after showing it."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
from tui_helpers import MEMO, TERMINAL, copy_demo, make_app, ready, until

from core.trust import TrustStore
from core.workspace import Workspace
from noma_tui.keys import BY_ID
from noma_tui.panes.flow import LOADING
from noma_tui.screens.help import help_table
from noma_tui.screens.trust import TrustScreen


def _listening_port() -> tuple[socket.socket, int]:
    """A port that is listening, so a connection attempt would be noticed by accept()."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    sock.setblocking(False)
    return sock, sock.getsockname()[1]


def _hostile_copy(tmp_path: Path, port: int) -> Path:
    """The demo, moved by hand to another folder, with a hub and a store of the attacker's."""
    trusted = copy_demo(tmp_path)
    root = tmp_path / "elsewhere"
    shutil.move(trusted, root)
    with (root / "noma-workbench.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[hub]\nurl = "http://127.0.0.1:{port}"\n')
    return root


def _nothing_connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


async def test_an_untrusted_folder_opens_restricted_and_says_why(tmp_path: Path) -> None:
    sock, port = _listening_port()
    root = _hostile_copy(tmp_path, port)
    app = make_app(root)
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot, MEMO)
        assert app.main.status.restricted
        assert "restricted" in app.title
        assert "[restricted]" in str(app.main.status.render())
        pane_header = str(app.main.query_one("#flow-header").render())
        assert "writes off" in pane_header and "restricted" in pane_header
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust screen")
        body = str(app.screen.query_one("#trust-body").render())
        assert "[gates]" in body and "off" in body  # the demo's gates, off here
        assert f"127.0.0.1:{port}" in body and "not contacted" in body
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TrustScreen), "closed")
        assert not Workspace.open(root).trusted  # Esc trusts nothing
    assert _nothing_connected(sock)
    sock.close()


async def test_trusting_from_the_app_turns_the_folder_s_settings_on(tmp_path: Path) -> None:
    trusted = copy_demo(tmp_path)
    root = tmp_path / "moved"
    shutil.move(trusted, root)  # a copy moved by hand: untrusted
    assert not Workspace.open(root).trusted
    app = make_app(root)
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot, MEMO)
        assert app.main.status.restricted
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust screen")
        await pilot.press("y")
        await until(pilot, lambda: not app.main.status.restricted, "the badge gone")
        assert app.workspace.trusted
        await until(
            pilot,
            lambda: "writes ON" in str(app.main.query_one("#flow-header").render()),
            "the demo's gates on in the flow pane",
        )
    assert Workspace.open(root).trusted
    assert [e.path for e in TrustStore().entries()].count(str(root.resolve())) == 1


async def test_the_product_s_demo_copy_opens_unrestricted(tmp_path: Path) -> None:
    app = make_app(copy_demo(tmp_path))
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot, MEMO)
        assert not app.main.status.restricted and "restricted" not in app.title
        assert "writes ON" in str(app.main.query_one("#flow-header").render())


async def test_a_config_open_path_outside_the_folder_is_not_opened(tmp_path: Path) -> None:
    outside = tmp_path / "private.noma"
    outside.write_text("# Private\n\nNot the folder's.\n", encoding="utf-8")
    root = tmp_path / "clone"
    root.mkdir()
    (root / "a.noma").write_text("# A\n\nHello.\n", encoding="utf-8")
    (root / "noma-workbench.toml").write_text('[workbench]\nopen = "../private.noma"\n')
    app = make_app(root)
    assert app.doc_path is None


def test_the_trust_action_is_in_the_key_registry_and_help() -> None:
    spec = BY_ID["app.trust"]
    assert spec.action == "workspace_trust" and spec.key == "T"
    ids = [str(cell) for cell in help_table({}).columns[2]._cells]
    assert "app.trust" in ids  # F1 lists it (and the palette lists every registry action)


def _tree(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*"))


async def test_opening_an_untrusted_clone_writes_nothing_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file in the user's dirs or the temp dir; no connection to the folder's hub."""
    import os
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    sock, port = _listening_port()
    root = _hostile_copy(tmp_path, port)
    user = [Path(os.environ[v]) for v in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")]
    before = [_tree(d) for d in (*user, scratch)]
    app = make_app(root)
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot, MEMO)
        pane = app.main.query_one("#flow-pane")
        await until(
            pilot,
            lambda: pane.busy == 0 and LOADING not in str(pane.query_one("#flow-status").render()),
            "the flow pane listed its runs (from the local store, not the hub)",
        )
    assert [_tree(d) for d in (*user, scratch)] == before
    assert _nothing_connected(sock)
    sock.close()


async def test_changed_settings_are_named_on_the_trust_screen(tmp_path: Path) -> None:
    root = copy_demo(tmp_path)  # trusted by the product
    with (root / "noma-workbench.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[store]\nurl = "postgresql://u:pw@db.example/x"\n')  # then a pull adds this
    app = make_app(root)
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot, MEMO)
        assert app.main.status.restricted
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust screen")
        body = str(app.screen.query_one("#trust-body").render())
        assert "settings changed since you trusted it (store.url)" in body
        assert "pw@" not in body and "db.example" in body


def test_a_folder_s_keymap_cannot_move_the_trust_key(tmp_path: Path) -> None:
    """A cloned `[workbench.keymap]` could put trusting under a key pressed all the time
    (`j`); the trust key stays `T` and the attempt is reported."""
    from noma_tui.config import WorkbenchConfig

    (tmp_path / "noma-workbench.toml").write_text(
        '[workbench.keymap]\n"app.trust" = "j"\n"edit.body" = "f2"\n', encoding="utf-8"
    )
    config = WorkbenchConfig.from_workspace(Workspace.open(tmp_path))
    assert config.keymap == {"edit.body": "f2"}
    assert any("app.trust" in p and "cannot be remapped" in p for p in config.problems)
