"""Opening writes nothing, and a file the app cannot (or should not) write says so.

- a folder opened with the gates off gets no ``.noma-workbench/`` state dir, however much
  is browsed (the flow pane included); one with the gates on gets one only when a run is
  started on purpose;
- a read-only file opens read-only, with a badge and every edit key blocked;
- bytes that are not UTF-8 show as a visible ``⟨XX⟩`` marker with a hint, never as a raw
  ``\\udcff`` escape;
- the package metadata uses an SPDX license string (no setuptools deprecation warning).
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

from tui_helpers import MEMO, TERMINAL, make_app, ready, select, until

from core.workspace import STATE_DIR
from noma_tui.panes.flow import FlowFrontierPane
from noma_tui.screens.source_editor import SourceEditorScreen

REPO = Path(__file__).resolve().parents[2]
DOC = '# Notes\n\n::claim{id="c1" confidence=0.5}\nA claim.\n::\n'


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def test_opening_a_folder_with_the_gates_off_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "notes.noma").write_text(DOC, encoding="utf-8")
    (root / "flows").mkdir()  # a flows folder, but no config: the gates are off
    before = snapshot(root)
    async with make_app(root).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot, "notes.noma")
        await select(pilot, "c1")
        await pilot.press("5")  # the flow pane, and its start key (refused: gates off)
        await pilot.press("n")
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert not (root / STATE_DIR).exists()
    assert snapshot(root) == before


async def test_demo_with_the_gates_on_writes_only_when_a_run_starts(demo: Path) -> None:
    assert not (demo / STATE_DIR).exists()
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        await until(pilot, lambda: pane.backend is not None, "the flow pane")
        await app.workers.wait_for_complete()
        assert not (demo / STATE_DIR).exists()  # browsing: nothing yet
        pane.focus_steps()
        await pilot.press("n")
        await until(pilot, lambda: app.screen is not app.main, "the flow picker")
        await pilot.press("down", "enter")  # flow_weekly_review: no inputs to give
        await until(pilot, lambda: bool(pane.runs), "a run")
    assert (demo / STATE_DIR / "runs.sqlite3").is_file()


async def test_a_read_only_file_opens_read_only_with_a_badge(tmp_path: Path) -> None:
    path = tmp_path / "notes.noma"
    path.write_text(DOC, encoding="utf-8")
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    try:
        async with make_app(tmp_path, document=path, single_file=True).run_test(
            size=TERMINAL
        ) as pilot:
            app = await ready(pilot, "notes.noma")
            assert app.loaded is not None and app.loaded.read_only
            await select(pilot, "c1")
            assert app.main.status.read_only
            assert "[read-only]" in app.main.status.render().plain
            assert any("read-only" in line for line in app.main.block_view.lines)
            await pilot.press("e")
            await pilot.pause()
            assert not isinstance(app.screen, SourceEditorScreen)
            assert app.main.check_action("edit_body", ()) is None  # greyed, not hidden
            assert "read-only" in app.main.why_not("edit_body")
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert path.read_text("utf-8") == DOC


async def test_invalid_bytes_show_as_a_marker_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "bytes.noma"
    path.write_bytes(b'# Notes \xff\n\n::claim{id="c1"}\nBad \xfe byte.\n::\n')
    async with make_app(tmp_path, document=path, single_file=True).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot, "bytes.noma")
        await select(pilot, "c1")
        lines = app.main.block_view.lines
        assert any("Bad ⟨FE⟩ byte." in line for line in lines), lines
        assert any("invalid UTF-8" in line and "line 1" in line for line in lines), lines
        assert not any("\udcfe" in line or "\\udc" in line for line in lines)
        tree_labels = [str(n.label) for n in app.main.doc_tree.root.children]
        assert any("⟨FF⟩" in label for label in tree_labels), tree_labels
        assert app.main.check_action("edit_body", ()) is None
        assert "invalid UTF-8" in app.main.why_not("edit_body")


def test_license_is_an_spdx_string() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert not any("License ::" in c for c in project.get("classifiers", []))
    build = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["build-system"]
    assert any(r.replace(" ", "").startswith("setuptools>=77") for r in build["requires"])


def test_read_only_detection_is_by_permission_bits_even_for_root(tmp_path: Path) -> None:
    from noma_tui.document import is_read_only

    path = tmp_path / "x.noma"
    path.write_text("x", encoding="utf-8")
    assert not is_read_only(path)
    path.chmod(0o444)
    assert is_read_only(path)
    path.chmod(0o644)
    assert is_read_only(tmp_path / "missing.noma")
    assert os.access(path, os.W_OK)


__all__ = ["MEMO"]
