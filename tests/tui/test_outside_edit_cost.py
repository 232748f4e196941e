"""An outside edit of a big document costs the size of the change (issue 28, item 5).

Pinned by what is made, never by time: the new version's lines come from the shown
version's (`noma_tui.relines`: the text is not split whole, the lines after the change are
the old string objects, the version diff reuses the changed range), the block arrangement
shares every list the edit left alone, and the tree neither rebuilds nor relabels more
than the changed rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_incremental_refresh import _big, write_outside
from tui_helpers import select

import core.noma.patch.text as text_module
from noma_tui.app import WorkbenchApp
from noma_tui.document import LoadedDocument

RISK = '::risk{id="risk-0" owner="team-0" severity="'
RISK_NO_OWNER = '::risk{id="risk-0" severity="'
BODY = "The effect may not hold for larger tenants.\n"


def _whole_splits(monkeypatch: pytest.MonkeyPatch, size: int) -> list[int]:
    """Records each `SourceLines` split of a text of at least ``size`` characters."""
    made: list[int] = []
    init = text_module.SourceLines.__init__

    def spy(self: Any, text: str) -> None:
        if len(text) >= size:
            made.append(len(text))
        init(self, text)

    monkeypatch.setattr(text_module.SourceLines, "__init__", spy)
    return made


def _shown(pilot: Any) -> LoadedDocument:
    app = pilot.app
    assert isinstance(app, WorkbenchApp) and app.loaded is not None
    return app.loaded


async def test_an_attribute_edit_outside_splits_no_text_and_shares_the_arrangement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.noma"
    async with _big(tmp_path, path) as pilot:
        await select(pilot, "risk-0")
        before = _shown(pilot)
        tree = pilot.app.main.doc_tree
        rebuilds, relabelled = tree.rebuilds, tree.rows_relabelled
        text = path.read_text("utf-8")
        splits = _whole_splits(monkeypatch, len(text) // 2)
        await write_outside(pilot, path, text.replace(RISK, RISK_NO_OWNER, 1))
        after = _shown(pilot)
        assert splits == []  # neither the engine nor the app split the new text whole
        assert after.relined is not None and after.relined[0] == before.sha256
        a, old_end, new_end = after.relined[1]
        assert (old_end - a, new_end - a) == (1, 1)  # the one line that changed
        assert after.lines.lines[-1] is before.lines.lines[-1]
        assert after.lines.lines[0] is before.lines.lines[0]
        # The same blocks in the same places: the lists the edit left alone are shared.
        assert after.parents is before.parents
        assert after.children is before.children
        assert after.starts is before.starts
        assert tree.rebuilds == rebuilds
        risk = after.block_of_id("risk-0")
        assert risk is not None
        assert tree.rows_relabelled - relabelled <= 1 + len(after.ancestors(risk))


async def test_a_line_added_outside_shifts_the_lines_and_shares_names_and_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.noma"
    async with _big(tmp_path, path) as pilot:
        before = _shown(pilot)
        tree = pilot.app.main.doc_tree
        rebuilds = tree.rebuilds
        text = path.read_text("utf-8")
        splits = _whole_splits(monkeypatch, len(text) // 2)
        await write_outside(pilot, path, text.replace(BODY, BODY + "One more line.\n", 1))
        after = _shown(pilot)
        assert splits == []
        assert after.relined is not None
        a, old_end, new_end = after.relined[1]
        assert (old_end - a, new_end - a) == (0, 1)  # one line inserted
        assert len(after.lines) == len(before.lines) + 1
        assert after.lines.lines[-1] is before.lines.lines[-1]
        # Every later block moved one line: starts are renumbered, the rest is shared.
        assert after.starts is not before.starts
        assert after.starts[-1] == before.starts[-1] + 1
        assert after.names is before.names and after.parents is before.parents
        assert after.spliced is not None
        assert tree.rebuilds == rebuilds  # the same shape: rows kept, none rebuilt
