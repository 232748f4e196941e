"""ctrl+e edits the block in $VISUAL/$EDITOR and the change goes through the proof
(replace_body when only the body changed, else replace_block); p toggles a rendered
preview (prose with emphasis and links, lists, quotes, tables as tables, code)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from notify_record import record_notes
from tui_helpers import MEMO, TERMINAL, make_app, ready, records, select, until

from noma_tui.external import external_op
from noma_tui.screens.proof import ProofScreen


def editor_script(tmp_path: Path, python: str) -> str:
    """A fake $EDITOR: a script that rewrites the file it is given."""
    script = tmp_path / "fake-editor.py"
    script.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\nt = p.read_text()\n" + python,
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    import sys

    return f"{sys.executable} {script}"


async def test_ctrl_e_body_change_is_replace_body(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo / MEMO
    count = len(records(path))
    monkeypatch.setenv(
        "VISUAL", editor_script(tmp_path, "p.write_text(t.replace('All numbers', 'All figures'))")
    )
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("ctrl+e")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == count + 1, "the record")
    record = records(path)[-1]
    assert record["op"]["op"] == "replace_body" and len(record["op"]["baseHash"]) == 64
    assert "All figures come from the staging fleet" in path.read_text("utf-8")


async def test_ctrl_e_attribute_change_is_replace_block(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo / MEMO
    count = len(records(path))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv(
        "EDITOR",
        editor_script(tmp_path, "p.write_text(t.replace('severity=\"high\"', 'severity=\"low\"'))"),
    )
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "risk-stale-prices")
        await pilot.press("ctrl+e")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == count + 1, "the record")
    assert records(path)[-1]["op"]["op"] == "replace_block"
    assert '::risk{id="risk-stale-prices" severity="low"}' in path.read_text("utf-8")


async def test_a_failing_editor_applies_nothing(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo / MEMO
    before = path.read_bytes()
    monkeypatch.setenv("VISUAL", editor_script(tmp_path, "p.write_text('junk'); sys.exit(3)"))
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        notes = record_notes(app)
        await pilot.press("ctrl+e")
        assert "exited with 3" in (await notes.next_after(pilot, 0, "the message")).message
        assert app.screen is app.main
    assert path.read_bytes() == before


def test_external_op_choice() -> None:
    before = '::note{id="n"}\nold\n::'
    assert external_op("n", before, '::note{id="n"}\nnew\nlines\n::\n')["op"] == "replace_body"
    assert external_op("n", before, '::note{id="n" x=1}\nold\n::')["op"] == "replace_block"


async def test_p_toggles_a_rendered_preview(demo: Path) -> None:
    async with make_app(demo).run_test(size=(200, 55)) as pilot:
        app = await ready(pilot)
        preview = app.main.preview
        assert not preview.shown
        await select(pilot, "summary")
        await pilot.press("p")
        await pilot.pause()
        assert preview.shown and preview.size.width > 20
        rendered = "\n".join(
            line.text
            for line in app.main.preview.query_one("#preview-body").render_lines(
                preview.query_one("#preview-body").region.reset_offset
            )
        )
        assert "Summary" in rendered and "warm-cache-p95" in rendered
        assert "[[" not in rendered  # the wikilink is a link now
        await pilot.press("p")
        await pilot.pause()
        assert not preview.shown


def test_preview_renders_tables_lists_quotes_and_code() -> None:
    import tempfile

    from rich.console import Console

    from noma_tui.document import load_document
    from noma_tui.preview import render_block
    from noma_tui.styles import DEFAULT_STYLES as DEFAULT_PALETTE

    text = (
        '# T\n\n::note{id="n"}\nSome *emphasis* and a [link](https://example.com).\n\n'
        "- one\n- two\n\n> quoted\n\n```python\nx = 1\n```\n::\n\n"
        '::table{id="tbl" header}\nA | B\n--- | ---\n1 | 2\n::\n'
    )
    with tempfile.TemporaryDirectory() as folder:
        doc = Path(folder) / "d.noma"
        doc.write_text(text, encoding="utf-8")
        loaded = load_document(doc)
    console = Console(width=60, record=True, color_system=None)
    console.print(render_block(loaded, loaded.block_of_id("n"), DEFAULT_PALETTE))
    out = console.export_text()
    assert "emphasis" in out and "*emphasis*" not in out
    assert "• one" in out and "x = 1" in out and "quoted" in out
    console = Console(width=60, record=True, color_system=None)
    console.print(render_block(loaded, loaded.block_of_id("tbl"), DEFAULT_PALETTE))
    table = console.export_text()
    assert "┃" in table or "│" in table  # drawn as a table, not pipes
    assert "A | B" not in table
