"""A large document's tree comes before its validation (issue 28: a usable tree at 20k).

From `EARLY_TREE_CHARS` a document opened cold is handed to the panes as soon as it is
parsed and arranged, and validated once that tree is on screen. Until then every pane that
counts diagnostics says "checking" instead of a count it does not have; afterwards the
panes hold exactly what a one-step load gives. The size is lowered here so the demo's
memo (which has diagnostics) takes that path."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import MEMO, TERMINAL, make_app, select, until

import noma_tui.document as document
from core.noma.api import DocumentCache
from noma_tui.app import WorkbenchApp
from noma_tui.document import LoadedDocument, load_document
from noma_tui.labels import label_for


class HeldValidation:
    """Replaces the loader's `analyse` so a test decides when the first validation
    (the one after the early tree) may run; records what the app showed when it began."""

    def __init__(self, real: Callable[..., Any], app: Callable[[], WorkbenchApp | None]):
        self.real = real
        self.app = app
        self.release = threading.Event()
        self.began = threading.Event()
        self.calls = 0
        self.shown_at_start: list[tuple[bool, bool]] = []  # (early version shown, rows drawn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            app = self.app()
            loaded = app.loaded if app is not None else None
            tree = app.main.doc_tree if app is not None else None
            self.shown_at_start.append(
                (
                    loaded is not None and not loaded.checked,
                    tree is not None and tree._painted.is_set() and bool(tree.root.children),
                )
            )
            self.began.set()
            assert self.release.wait(30), "the test never released the validation"
        return self.real(*args, **kwargs)


def _diagnostics(loaded: LoadedDocument) -> list[tuple[Any, bool, int | None]]:
    return [(r.diagnostic, r.parse_note, r.block) for r in loaded.diagnostics]


def test_the_early_version_is_the_parse_and_the_last_equals_a_one_step_load(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo / MEMO
    whole = load_document(path, root=demo, cache=DocumentCache())
    monkeypatch.setattr(document, "EARLY_TREE_CHARS", 1)
    early: list[LoadedDocument] = []
    last = load_document(path, root=demo, cache=DocumentCache(), early=early.append)
    assert len(early) == 1
    first = early[0]
    assert not first.checked and last.checked
    assert [r.parse_note for r in first.diagnostics] == [True] * len(first.diagnostics)
    # The tree is made once: the last version shares it and its arrangement.
    assert last.doc is first.doc and last.blocks is first.blocks
    assert _diagnostics(last) == _diagnostics(whole) and whole.diagnostics
    assert last.badges == whole.badges and last.names == whole.names
    assert last.lines is first.lines  # split once


def test_below_the_size_or_with_a_version_to_splice_from_there_is_one_step(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo / MEMO
    early: list[LoadedDocument] = []
    assert load_document(path, root=demo, cache=DocumentCache(), early=early.append).checked
    assert early == []  # the memo is far below the real size
    monkeypatch.setattr(document, "EARLY_TREE_CHARS", 1)
    cache = DocumentCache()
    shown = load_document(path, root=demo, cache=cache)
    path.write_text(path.read_text("utf-8") + "\nOne more line.\n", encoding="utf-8")
    assert load_document(path, root=demo, cache=cache, shown=shown, early=early.append).checked
    assert early == []  # spliced from the shown version: nothing to show early


async def test_the_tree_is_drawn_before_validation_and_counts_wait_for_it(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(document, "EARLY_TREE_CHARS", 1)
    app = make_app(demo, document=demo / MEMO)
    held = HeldValidation(document.analyse, lambda: app)
    monkeypatch.setattr(document, "analyse", held)
    async with app.run_test(size=TERMINAL) as pilot:
        await until(pilot, held.began.is_set, "the validation to begin")
        # It began only after the early version was shown and its rows drawn.
        assert held.shown_at_start == [(True, True)]
        loaded = app.loaded
        assert loaded is not None and not loaded.checked
        main = app.main
        assert "checking…" in main.status.render().plain
        assert "✖" not in main.status.render().plain
        assert "checking…" in main.doc_tree.root.label.plain
        assert "checking…" in str(main.diagnostics.border_subtitle)
        assert main.diagnostics.row_count == 0  # the memo parses cleanly: no notes
        rows = [n.label.plain for n in main.doc_tree._block_nodes.values()]
        assert rows and not any(label.startswith(("▲", "✖")) for label in rows)
        held.release.set()
        await until(pilot, lambda: app.loaded is not None and app.loaded.checked, "checked")
        await pilot.pause()
        checked = app.loaded
        assert checked is not None and checked.blocks is loaded.blocks
        whole = load_document(demo / MEMO, root=demo, cache=DocumentCache())
        assert _diagnostics(checked) == _diagnostics(whole)
        assert main.diagnostics.row_count == len(whole.diagnostics) > 0
        assert "checking" not in main.status.render().plain
        assert "checking" not in main.doc_tree.root.label.plain
        assert "checking" not in str(main.diagnostics.border_subtitle)
        # Every row drawn as a one-step load draws it (badges included).
        tree = main.doc_tree
        for block, node in tree._block_nodes.items():
            assert node.label.plain == label_for(whole, block, tree.palette).plain
        claim = await select(pilot, "small-tenant-noise")
        assert tree._block_nodes[claim].label.plain == "▲1 ::claim small-tenant-noise"


async def test_an_outside_edit_while_checking_wins_over_the_stale_check(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version read while the first one is still being validated is the one shown;
    the first validation, released afterwards, is dropped."""
    monkeypatch.setattr(document, "EARLY_TREE_CHARS", 1)
    path = demo / MEMO
    app = make_app(demo, document=path)
    held = HeldValidation(document.analyse, lambda: app)
    monkeypatch.setattr(document, "analyse", held)
    async with app.run_test(size=TERMINAL) as pilot:
        await until(pilot, held.began.is_set, "the validation to begin")
        text = path.read_text("utf-8")
        new = text.replace("confidence=0.55", "confidence=0.9", 1)
        assert new != text
        path.write_text(new, encoding="utf-8")
        app.reload()
        whole = load_document(path, root=demo, cache=DocumentCache())
        await until(
            pilot,
            lambda: app.loaded is not None and app.loaded.sha256 == whole.sha256,
            "the outside edit shown",
        )
        assert app.loaded is not None and app.loaded.checked
        held.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.loaded.sha256 == whole.sha256 and app.loaded.checked
        assert _diagnostics(app.loaded) == _diagnostics(whole)
        assert app.main.diagnostics.row_count == len(whole.diagnostics)
