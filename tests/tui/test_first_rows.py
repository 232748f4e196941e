"""Opening a long document draws the first rows of the tree before the rest are added
(issue 28, item 5: a usable tree at 20,000 sections without waiting for every row).

Pinned by frames, never by time: the app's ``_display`` (where a terminal gets the bytes)
is watched, and some frame must show the tree with rows while it is still filling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_helpers import TERMINAL, make_app, until

from bench.generate import generate
from noma_tui.app import WorkbenchApp
from noma_tui.panes.doc_tree import FIRST_CHUNK
from noma_tui.screens.main import MainScreen


async def test_the_first_rows_are_drawn_before_the_tree_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.noma"
    path.write_text(generate(FIRST_CHUNK + 150), encoding="utf-8")
    app = make_app(tmp_path, document=path, single_file=True)
    assert isinstance(app, WorkbenchApp)
    partial: list[int] = []  # rows on screen in frames drawn while the tree was filling
    display = app._display

    def spy(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if renderable is None or not isinstance(screen, MainScreen):
            return
        tree = app.main.doc_tree
        if tree.loaded is not None and tree.filling and tree.root.children:
            partial.append(tree.last_line + 1)

    app._display = spy  # type: ignore[method-assign]
    async with app.run_test(size=TERMINAL) as pilot:
        await until(pilot, lambda: app.loaded is not None, "loaded")
        await until(pilot, lambda: not app.main.doc_tree.filling, "the tree filled")
        tree = app.main.doc_tree
        whole = tree.last_line + 1
    assert partial, "no frame showed the tree before every row was added"
    assert max(partial) < whole
    assert whole > FIRST_CHUNK + 150  # the root, the top heading and its sections
