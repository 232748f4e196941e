"""The app on the incremental engine (issue 14, item 5).

An outside change is spliced from the version on screen and diffed against it: only the
changed rows, badges, diagnostics and block view are redrawn, and the cursor, expansion
and scroll stay where the user left them. An edit the app applied itself is shown from the
engine's post-state, without reading or parsing the file again.

The watcher is off in these tests; they post the `DiskChanged` message the watcher posts,
right after writing the file (the watcher's own path is covered by ``test_live``).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from edit_generators import random_edit, unread_count
from textual.widgets import Input, TextArea
from tui_helpers import MEMO, TERMINAL, make_app, ready, records, select, until

import core.noma.incremental as incremental
import core.noma.parser as parser
import core.noma.patch.pipeline as pipeline
import noma_tui.document as document
from bench.generate import generate
from noma_tui.app import WorkbenchApp
from noma_tui.document import ROOT
from noma_tui.labels import label_for
from noma_tui.messages import DiskChanged
from noma_tui.screens.form import FormScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen
from noma_tui.versions import changed_lines

RISK = '::risk{id="risk-stale-prices" severity="high"}'
RISK_OWNED = '::risk{id="risk-stale-prices" severity="high" owner="ops"}'


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@asynccontextmanager
async def _big(tmp_path: Path, path: Path) -> AsyncIterator[Any]:
    """The app on a generated 300-section memo at ``path``, loaded, its tree filled."""
    path.write_text(generate(300), encoding="utf-8")
    async with make_app(tmp_path, document=path, single_file=True).run_test(size=TERMINAL) as pilot:
        app = pilot.app
        assert isinstance(app, WorkbenchApp)
        await until(pilot, lambda: app.loaded is not None, "loaded")
        await until(pilot, lambda: not app.main.doc_tree.filling, "the tree filled")
        yield pilot


async def write_outside(pilot: Any, path: Path, text: str) -> None:
    """Write ``text`` as another program would, tell the app as its watcher does, and
    wait until the panes show it."""
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    path.write_text(text, encoding="utf-8")
    app.post_message(DiskChanged({path.resolve()}, False))
    digest = sha(text)
    main = app.main
    await until(
        pilot,
        lambda: (
            app.loaded is not None
            and app.loaded.sha256 == digest
            and main.doc_tree.loaded is app.loaded
            and main.block_view.loaded is app.loaded
            and main.diagnostics.loaded is app.loaded
        ),
        "the outside edit shown",
    )
    await pilot.pause()


class FullParses:
    """Counts whole-document parses anywhere in the engine and the app's loader."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.reads = 0
        for module in (incremental, pipeline):
            monkeypatch.setattr(module, "parse", self._wrap(module.parse))
        monkeypatch.setattr(parser, "parse_source", self._wrap(parser.parse_source))
        real_read = document.read_source

        def read(path: Any) -> Any:
            self.reads += 1
            return real_read(path)

        monkeypatch.setattr(document, "read_source", read)

    def _wrap(self, real: Any) -> Any:
        def parse(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return real(*args, **kwargs)

        return parse


async def test_outside_edit_of_one_block_relabels_only_its_row(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        main = app.main
        tree = main.doc_tree
        risk = await select(pilot, "risk-stale-prices")
        assert tree._block_nodes[risk].label.plain.startswith("▲1 ")  # type: ignore[union-attr]
        assert main.diagnostics.row_count == 2
        before_nodes = dict(tree._block_nodes)
        before_labels = {b: n._label for b, n in before_nodes.items()}
        expanded = {b for b, n in before_nodes.items() if n.is_expanded}
        cursor_line, scroll_y = tree.cursor_line, tree.scroll_y
        rebuilds, relabelled = tree.rebuilds, tree.rows_relabelled
        parses = FullParses(monkeypatch)

        await write_outside(pilot, path, path.read_text("utf-8").replace(RISK, RISK_OWNED))

        assert parses.count == 0, "an outside edit of one block is spliced, not parsed whole"
        assert tree.rebuilds == rebuilds
        assert tree._block_nodes == before_nodes
        assert all(tree._block_nodes[b] is n for b, n in before_nodes.items())
        changed = {b for b, n in tree._block_nodes.items() if n._label is not before_labels[b]}
        assert changed == {risk}, "only the edited row gets a new label"
        # The risk row, its ancestors (their text changed) and nothing else was looked at.
        assert tree.rows_relabelled - relabelled <= 1 + len(app.loaded.ancestors(risk))  # type: ignore[union-attr]
        label = tree._block_nodes[risk].label.plain  # type: ignore[union-attr]
        assert label.startswith("::risk risk-stale-prices")
        assert main.diagnostics.row_count == 1
        assert 'owner="ops"' in "\n".join(main.block_view.lines)
        assert tree.cursor_line == cursor_line and tree.scroll_y == scroll_y
        assert tree.cursor_block() == risk
        assert {b for b, n in tree._block_nodes.items() if n.is_expanded} == expanded


async def test_outside_edit_elsewhere_does_not_redraw_the_selected_block(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        view = app.main.block_view
        await select(pilot, "warm-cache-p95")
        texts = view._texts
        note = "All numbers come from the staging fleet"
        await write_outside(pilot, path, path.read_text("utf-8").replace(note, note.upper()))
        assert view._texts is texts, "an unchanged block is not redrawn"
        assert view.loaded is app.loaded


async def test_outside_edit_that_adds_a_section_replaces_only_that_run_of_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "big.noma"
    async with _big(tmp_path, path) as pilot:
        app = pilot.app
        assert isinstance(app, WorkbenchApp)
        tree = app.main.doc_tree
        await select(pilot, "claim-40")
        loaded = app.loaded
        assert loaded is not None
        nodes = {loaded.blocks[b].id: n for b, n in tree._block_nodes.items()}
        open_ids = {loaded.blocks[b].id for b, n in tree._block_nodes.items() if n.is_expanded}
        scroll_y = tree.scroll_y
        assert scroll_y > 0
        cursor_row = tree.cursor_line - scroll_y
        rebuilds, splices = tree.rebuilds, tree.splices

        # A new section is inserted above the selected block (indexes after it shift).
        text = path.read_text("utf-8")
        anchor = "## Finding 10: "
        added = "## Added outside\n\nWritten by another editor.\n\n"
        await write_outside(pilot, path, text.replace(anchor, added + anchor, 1))

        now = app.loaded
        assert now is not None and now is not loaded
        assert (tree.rebuilds, tree.splices) == (rebuilds, splices + 1), "no rebuild"
        new_block = now.block_of_id("added-outside")
        assert new_block is not None and new_block in tree._block_nodes
        assert tree._block_nodes[new_block].label.plain.startswith("Added outside")  # type: ignore[union-attr]
        # Every row outside the re-parsed run (the new section and the one it ends) is
        # the same tree node, now holding its block's new index.
        replaced = set()
        for block, node in tree._block_nodes.items():
            assert node.data == block
            ident = now.blocks[block].id
            if node is not nodes.get(ident):
                replaced.add(ident)
        assert "added-outside" in replaced and len(replaced) <= 6, replaced
        assert all(i and i.endswith(("-9", "-9-retention-under-load", "added-outside"))
                   for i in replaced), replaced  # fmt: skip
        assert len(tree._block_nodes) == len(nodes) + 1
        cursor = tree.cursor_block()
        assert cursor is not None and now.blocks[cursor].id == "claim-40"
        assert app.main.block_view.block == cursor
        assert app.main.block_view.loaded is now
        expanded = {now.blocks[b].id for b, n in tree._block_nodes.items() if n.is_expanded}
        assert expanded == open_ids
        assert tree.cursor_line - tree.scroll_y == cursor_row, "the view did not jump"

        # Removed again: the row goes, the rest stays.
        await write_outside(pilot, path, text)
        assert (tree.rebuilds, tree.splices) == (rebuilds, splices + 2)
        assert app.loaded is not None and app.loaded.block_of_id("added-outside") is None
        assert len(tree._block_nodes) == len(nodes)
        kept = [n is nodes[app.loaded.blocks[b].id] for b, n in tree._block_nodes.items()]
        assert kept.count(False) <= 5
        cursor = tree.cursor_block()
        assert cursor is not None and app.loaded.blocks[cursor].id == "claim-40"
        assert tree.cursor_line - tree.scroll_y == cursor_row


async def test_outside_edit_that_removes_the_selected_block_moves_the_cursor_nearby(
    demo: Path,
) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        tree = app.main.doc_tree
        await select(pilot, "cev-cold-start")
        text = path.read_text("utf-8")
        start = text.index("::counterevidence{")
        end = text.index("::\n", start + 3) + 3
        await write_outside(pilot, path, text[:start] + text[end:])
        loaded = app.loaded
        assert loaded is not None and loaded.block_of_id("cev-cold-start") is None
        cursor = tree.cursor_block()
        assert cursor is not None
        assert app.main.block_view.block == cursor
        assert all(n.data == b for b, n in tree._block_nodes.items())
        assert set(tree._block_nodes) <= set(range(len(loaded.blocks)))


async def test_app_edit_is_shown_from_the_post_state_without_reading_or_parsing(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        before = len(records(path))
        tree = app.main.doc_tree
        rebuilds = tree.rebuilds
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        app.screen.query_one("#field-value", Input).value = "0.6"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        proof = app.screen.proof  # type: ignore[attr-defined]
        previewed = app.cache.prepared(path.resolve(), proof.outcome.post_sha256)
        assert previewed is not None, "the proof left its post-state for the apply"
        parses = FullParses(monkeypatch)
        builds = app.applied_builds
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == before + 1, "the record")
        digest = sha(path.read_text("utf-8"))
        await until(
            pilot,
            lambda: app.loaded is not None and app.loaded.sha256 == digest and not app.sessions,
            "the new version shown",
        )
        assert app.applied_builds == builds + 1
        assert parses.reads == 0, "the app did not read the file it had just written"
        assert parses.count == 0, "nobody parsed the whole document"
        assert tree.rebuilds == rebuilds
        assert app.loaded.doc is previewed.doc, "the version shown is the one the proof built"  # type: ignore[union-attr]
        node = app.main.block_view.loaded.blocks[app.main.block_view.block]  # type: ignore[union-attr,index]
        assert node.attrs["confidence"] == 0.6
        assert app.loaded.source.text == path.read_text("utf-8")  # type: ignore[union-attr]


async def test_drift_is_flagged_when_the_file_changes_under_an_open_edit(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        editor = app.screen
        await write_outside(pilot, path, path.read_text("utf-8").replace(RISK, RISK_OWNED))
        await until(
            pilot,
            lambda: app.main.status.drift and editor.has_class("-drift"),
            "the drift flag",
        )
        editor.query_one("#source", TextArea).text = "Staging numbers only."
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not app.sessions, "the edit applied")
    record = records(path)[-1]
    assert record["patch_result"] == "applied"
    assert "base_sha_drift" in [d["code"] for d in record["diagnostics"]]
    text = path.read_text("utf-8")
    assert RISK_OWNED in text and "Staging numbers only." in text


def test_changed_lines_finds_the_differing_run() -> None:
    rng = random.Random(14)
    for _ in range(400):
        old = [rng.choice("abc") for _ in range(rng.randrange(0, 30))]
        new = list(old)
        for _ in range(rng.randrange(0, 3)):
            i = rng.randrange(0, len(new) + 1)
            cut = rng.randrange(0, 3)
            new[i : i + cut] = [rng.choice("abcd") for _ in range(rng.randrange(0, 3))]
        a, old_end, new_end = changed_lines(old, new)
        assert old[:a] == new[:a]
        assert old[old_end:] == new[new_end:]
        assert old[:a] + new[a:new_end] + old[old_end:] == new
        assert a <= old_end and a <= new_end
        # The head and tail are as long as they can be (the change is minimal).
        if a < min(len(old), len(new)) and old_end > a and new_end > a:
            assert old[a] != new[a] or old[old_end - 1] != new[new_end - 1]


def _check_tree(app: WorkbenchApp) -> None:
    """Every row the tree holds is its block as the shown version has it: right index,
    label, parent and sibling order (what a full rebuild would show)."""
    tree = app.main.doc_tree
    loaded = app.loaded
    assert loaded is not None and tree.loaded is loaded
    palette = tree.palette
    for block, node in tree._block_nodes.items():
        assert node.data == block
        assert node.label.plain == label_for(loaded, block, palette).plain  # type: ignore[union-attr]
        parent = loaded.parents[block]
        assert node.parent is (tree.root if parent == ROOT else tree._block_nodes[parent])
    for block, count in tree._filled.items():
        kids = loaded.roots if block == ROOT else loaded.children[block]
        assert count == len(kids)
        parent_node = tree.root if block == ROOT else tree._block_nodes[block]
        assert [n.data for n in parent_node.children] == kids


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_outside_edits_leave_the_tree_as_a_rebuild_would(
    tmp_path: Path, seed: int
) -> None:
    path = tmp_path / "doc.noma"
    path.write_text(generate(30, seed=seed), encoding="utf-8")
    rng = random.Random(seed)
    async with make_app(tmp_path, document=path, single_file=True).run_test(size=TERMINAL) as pilot:
        app = pilot.app
        assert isinstance(app, WorkbenchApp)
        await until(pilot, lambda: app.loaded is not None, "loaded")
        tree = app.main.doc_tree
        await until(pilot, lambda: not tree.filling, "the tree filled")
        await select(pilot, "claim-3")
        await select(pilot, "claim-12")
        text = path.read_text("utf-8")
        for _ in range(14):
            text = random_edit(rng, text)
            await write_outside(pilot, path, text)
            await until(pilot, lambda: not tree.filling, "the tree filled")
            _check_tree(app)
        assert tree.rows_relabelled and tree.splices, "relabel and row splice both ran"


async def test_an_outside_edit_that_moves_every_later_block_reads_only_what_is_shown(
    tmp_path: Path,
) -> None:
    """A line added near the top moves every later block. The engine copies them lazily;
    the panes (tree rows, diagnostics, badges, the block view) refresh without making the
    copies below the moved blocks: only blocks a pane draws are read (issue 14: a refresh
    costs the size of the change). Everything shown is still right."""
    path = tmp_path / "big.noma"
    async with _big(tmp_path, path) as pilot:
        app = pilot.app
        assert isinstance(app, WorkbenchApp)
        await select(pilot, "risk-0")
        text = path.read_text("utf-8")
        body = "The effect may not hold for larger tenants.\n"
        await write_outside(pilot, path, text.replace(body, body + "Added outside.\n", 1))
        await pilot.pause()
        now = app.loaded
        assert now is not None
        assert unread_count(now.doc) > 250, "the refresh read the blocks below the moved ones"
        # What is shown is the new version: a later block, read now, has moved by a line.
        claim = now.block_of_id("claim-200")
        assert claim is not None
        fresh = document.from_state(
            path, now.source.text, now.sha256, pipeline.analyse(now.source.text, tmp_path, "x")
        )
        assert now.starts == fresh.starts and now.names == fresh.names
        assert now.blocks[claim].line == fresh.blocks[claim].line
        assert [(r.diagnostic.code, r.block) for r in now.diagnostics] == [
            (r.diagnostic.code, r.block) for r in fresh.diagnostics
        ]
        assert now.badges == fresh.badges
