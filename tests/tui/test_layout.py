"""Responsive layout: panes and columns adapt from 80x24 to 250x70; z zooms the focused
pane and back; the transcript's op column shows the whole op summary when there is room;
the diagnostics message and the transcript result stay on screen at 100 columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tui_helpers import make_app, ready

from noma_tui.panes import diagnostics as diagnostics_pane
from noma_tui.panes import transcript as transcript_pane
from noma_tui.panes.columns import Col, widths


def test_widths_share_the_spare_room_and_respect_limits() -> None:
    cols = [Col("a", 5, 5), Col("b", 4, 10), Col("c", 6, None, weight=3)]
    out = widths(40, cols, padding=2)
    assert out["a"] == 5 and out["b"] <= 10
    assert sum(out.values()) + 2 * len(cols) == 40
    tight = widths(10, cols, padding=2)
    assert tight == {"a": 5, "b": 4, "c": 6}  # never below the minimum


def right_edge(table, key: str) -> int:  # type: ignore[no-untyped-def]
    """The last cell of column ``key``, relative to the table's content region."""
    edge = 0
    for column in table.ordered_columns:
        edge += column.get_render_width(table)
        if column.key.value == key:
            return edge
    raise AssertionError(key)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 55), (250, 70)])
async def test_key_columns_stay_on_screen(demo: Path, size: tuple[int, int]) -> None:
    async with make_app(demo).run_test(size=size) as pilot:
        app = await ready(pilot)
        await pilot.pause()
        diagnostics, transcript = app.main.diagnostics, app.main.transcript
        room_d = diagnostics.scrollable_content_region.width
        room_t = transcript.scrollable_content_region.width
        assert right_edge(diagnostics, "message") <= room_d
        if size[0] >= 100:
            assert right_edge(transcript, "result") <= room_t
        else:
            assert right_edge(transcript, "op") <= room_t
        if size[0] >= 200:  # the whole op summary fits
            longest = max(len(row.op) for row in transcript.shown_rows)
            op = next(c for c in transcript.ordered_columns if c.key.value == "op")
            assert op.width >= longest
        screen_classes = app.main.classes
        expected = "-narrow" if size[0] < 100 else "-normal" if size[0] < 170 else "-wide"
        assert expected in screen_classes


async def test_z_zooms_the_focused_pane_and_back(demo: Path) -> None:
    async with make_app(demo).run_test(size=(100, 30)) as pilot:
        app = await ready(pilot)
        transcript = app.main.transcript
        await pilot.press("4")
        small = transcript.size.height
        await pilot.press("z")
        await pilot.pause()
        assert app.main.maximized is transcript
        assert transcript.size.height > small * 2
        await pilot.press("z")
        await pilot.pause()
        assert app.main.maximized is None and transcript.size.height == small
        await pilot.press("5", "z")  # the flow pane zooms whole, Esc restores
        await pilot.pause()
        assert app.main.maximized is app.main.query_one("#flow-pane")
        await pilot.press("escape")
        await pilot.pause()
        assert app.main.maximized is None


def test_column_specs_name_real_columns() -> None:
    assert [c.key for c in diagnostics_pane.COLUMNS] == ["sev", "line", "code", "message", "id"]
    assert [c.key for c in transcript_pane.COLUMNS] == [
        "time", "drift", "actor", "op", "result", "sha",
    ]  # fmt: skip


def class_changes(monkeypatch: pytest.MonkeyPatch, screen_type: type[Any]) -> list[frozenset[str]]:
    """Every change of a ``screen_type`` screen's classes, as the classes after it."""
    changed: list[frozenset[str]] = []
    real = screen_type.update_classes

    def update_classes(self: Any, classes: Any, *args: Any, **kwargs: Any) -> Any:
        before = frozenset(self.classes)
        out = real(self, classes, *args, **kwargs)
        if frozenset(self.classes) != before:
            changed.append(frozenset(self.classes))
        return out

    monkeypatch.setattr(screen_type, "update_classes", update_classes)
    return changed


async def test_the_size_classes_are_there_before_the_panes_are_styled(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The main screen is born with its size classes, so the first resize restyles no
    widget; a later resize still moves them."""
    from noma_tui.screens.main import MainScreen

    changed = class_changes(monkeypatch, MainScreen)
    async with make_app(demo).run_test(size=(120, 34)) as pilot:
        app = await ready(pilot)
        assert changed == []
        assert app.main.has_class("-normal") and app.main.has_class("-mid")
        await pilot.resize_terminal(90, 24)
        await pilot.pause()
        assert changed == [frozenset({"-narrow", "-short"})]


@pytest.mark.parametrize(("size", "expected"), [((120, 34), "-tall"), ((100, 24), "-short")])
async def test_the_proof_is_born_with_its_size_class(
    demo: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], expected: str
) -> None:
    """The proof's -short/-tall class is there when its dialog is first styled, so the
    first resize restyles none of it."""
    from test_dialog_paint import open_form
    from textual.widgets import Input
    from tui_helpers import until

    from noma_tui.screens.proof import ProofScreen

    changed = class_changes(monkeypatch, ProofScreen)
    async with make_app(demo).run_test(size=size) as pilot:
        app = await ready(pilot)
        form = await open_form(pilot, app)
        form.query_one("#field-value", Input).value = "0.7"
        await pilot.press("ctrl+s")
        await until(
            pilot,
            lambda: isinstance(app.screen, ProofScreen) and app.screen.focused is not None,
            "the proof",
        )
        await pilot.pause()
        assert app.screen.has_class(expected)
        assert changed == []
