"""Opening things: a broken document, a single file, the demo copy, the command line;
plus the keymap, the command palette and the rule that `core` never imports `textual`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from notify_record import record_notes
from tui_helpers import MEMO, TERMINAL, make_app, ready, select, until

from core.noma.transcript import audit
from noma_tui import __main__ as cli
from noma_tui.demo import DEMO_SOURCE, demo_copy_dir, ensure_demo_copy
from noma_tui.keys import ALL_ACTIONS
from noma_tui.screens.help import HelpScreen, help_table
from noma_tui.screens.source_editor import SourceEditorScreen

BROKEN = """\
# Broken notes

::claim{id="c1"
A claim whose opener does not parse.

::evidence{id="e1" for="c1"}
Evidence that is never closed.

## Next

:::risk{id="r"}
Also unclosed.
"""

REPO = Path(__file__).resolve().parents[2]


def test_core_and_sandbox_never_import_textual() -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        "import core, sandbox\n"
        "for pkg in (core, sandbox):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "bad = sorted(n for n in sys.modules if n == 'textual' or n.startswith('textual.')\n"
        "             or n == 'noma_tui' or n.startswith('noma_tui.'))\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]


async def test_a_document_with_parse_errors_opens_and_shows_them(tmp_path: Path) -> None:
    path = tmp_path / "broken.noma"
    path.write_text(BROKEN, encoding="utf-8")
    app = make_app(tmp_path, document=path, single_file=True)
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot, "broken.noma")
        loaded = app.loaded
        assert loaded is not None and loaded.recovered
        notes = [r for r in loaded.diagnostics if r.parse_note]
        assert {r.diagnostic.code for r in notes} == {
            "malformed-directive-opener",
            "unclosed-directive",
        }
        table = app.main.diagnostics
        codes = [str(table.get_row_at(i)[2]) for i in range(table.row_count)]
        assert "unclosed-directive (parse)" in codes and "broken-reference" in codes
        assert "recovered" in app.main.doc_tree.root.label.plain  # type: ignore[union-attr]
        await select(pilot, "r")
        await pilot.press("e")  # editing still works on a recovered document
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")


async def test_a_missing_document_is_a_notification_not_a_crash(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        notes = record_notes(app)
        app.open_document(demo / "gone.noma")
        await notes.wait(pilot, lambda ns: "DocumentIOError" in ns.titles(), "the error")
        assert app.is_running


async def test_keymap_from_config_rebinds_by_binding_id(demo: Path) -> None:
    app = make_app(demo, keymap={"edit.body": "f2"})
    async with app.run_test(size=TERMINAL) as pilot:
        await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await pilot.pause()
        assert app.screen is app.main
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")


async def test_every_action_is_in_the_command_palette_and_the_help(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        titles = {c.title for c in app.get_system_commands(app.main)}
        assert {spec.help for spec in ALL_ACTIONS} <= titles
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        ids = list(help_table(app.config.keymap).columns[2].cells)
        assert {spec.id for spec in ALL_ACTIONS} <= set(ids)


async def test_palette_command_runs_the_action_or_says_why_not(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        notes = record_notes(app)
        app._run_command("edit_table")
        await notes.wait(pilot, lambda ns: "not available" in ns.titles(), "why not")
        app._run_command("edit_body")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")


async def test_theme_switches_at_run_time(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        assert app.theme == "noma-dark"
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.theme == "noma-light", "the light theme")
        tree = app.main.doc_tree

        def label_error_colour() -> str | None:
            styles = tree.palette  # read through the noma--error component class
            return styles.error.color.name if styles.error.color else None

        await until(pilot, lambda: label_error_colour() == "#b3261e", "light styles")
        # The panes redrew themselves with the new styles (restyle; no repaint walk).
        light_warning = "#8a5a00"
        await until(
            pilot,
            lambda: any(light_warning in str(sp.style) for sp in tree.root.label.spans),
            "the tree relabelled",
        )
        diagnostics = app.main.diagnostics
        await until(
            pilot,
            lambda: light_warning in str(diagnostics.get_cell_at((0, 0)).style),
            "the diagnostics redrawn",
        )


def test_shipped_demo_transcripts_verify() -> None:
    for transcript in DEMO_SOURCE.glob("*.noma.patches"):
        report = audit(transcript)
        assert report.ok, (transcript.name, report.problems)
    assert (DEMO_SOURCE / "research-memo.noma.capabilities.yml").is_file()
    assert (DEMO_SOURCE / "noma-workbench.toml").is_file()


def test_no_argument_opens_a_writable_demo_copy_in_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert demo_copy_dir() == tmp_path / "data" / "noma-workbench" / "demo"
    workspace, document, single = cli.resolve_target(None)
    assert workspace.root == (tmp_path / "data" / "noma-workbench" / "demo").resolve()
    assert document is None and not single
    assert (workspace.root / MEMO).read_bytes() == (DEMO_SOURCE / MEMO).read_bytes()
    assert not (workspace.root / "__init__.py").exists()
    assert workspace.actor_name == "ana"
    (workspace.root / MEMO).write_text("edited", encoding="utf-8")
    assert ensure_demo_copy() == workspace.root  # a second run keeps the user's copy
    assert (workspace.root / MEMO).read_text("utf-8") == "edited"


def test_path_argument_opens_a_folder_or_a_single_file(demo: Path, tmp_path: Path) -> None:
    workspace, document, single = cli.resolve_target(str(demo))
    assert workspace.root == demo.resolve() and document is None and not single
    workspace, document, single = cli.resolve_target(str(demo / MEMO))
    assert document == (demo / MEMO).resolve() and single
    assert cli.main([str(tmp_path / "missing.noma")]) == 2
