"""Table cells show ``\\|`` as the pipe it stands for (grid and preview); a code span keeps
its text as written; writing the shown text back escapes it again, unchanged."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from core.noma.patch.table_rows import escape_cell
from noma_tui.document import load_document
from noma_tui.preview import _table
from noma_tui.tables import shown_cell


def test_escaped_pipes_show_as_pipes() -> None:
    assert shown_cell(r"a \| b") == "a | b"
    assert shown_cell(r"`x \| y` \| z") == r"`x \| y` | z"
    assert shown_cell("plain") == "plain"


@settings(max_examples=200, derandomize=True)
@given(st.text(alphabet="ab |", max_size=12))
def test_a_typed_cell_shows_as_typed(text: str) -> None:
    cell = escape_cell(text)
    assert shown_cell(cell) == text.strip()
    assert escape_cell(shown_cell(cell)) == cell


def test_preview_table_shows_the_pipe(tmp_path: Path) -> None:
    path = tmp_path / "t.noma"
    path.write_text(
        '# T {#t}\n\n::table{id="tb"}\n| a | b |\n| --- | --- |\n| x \\| y | z |\n::\n',
        encoding="utf-8",
    )
    loaded = load_document(path, root=tmp_path)
    block = loaded.block_of_id("tb")
    assert block is not None
    table = _table(loaded, block)
    assert table is not None
    console = Console(width=60, record=True)
    console.print(table)
    out = console.export_text()
    assert "x | y" in out and "\\|" not in out
