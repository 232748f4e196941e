"""The footer shows the keys of what has focus, and is rebuilt only when those change
(`noma_tui.footer`): Textual's own rebuilt it for every focus change and mount."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets._footer import FooterKey
from tui_helpers import make_app, ready, until

from noma_tui.footer import Footer


def dimmed(key: FooterKey) -> bool:
    """Shown disabled, as `FooterKey` marks it (its own flag, not the widget's)."""
    return key.has_class("-disabled")


def labels(footer: Footer) -> list[str]:
    return [key.description for key in footer.query(FooterKey)]


@pytest.fixture
def rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[Footer]:
    """Every footer rebuild (`Footer.recompose`) from here on, in order."""
    seen: list[Footer] = []
    recompose = Footer.recompose

    async def counted(self: Footer) -> None:
        seen.append(self)
        await recompose(self)

    monkeypatch.setattr(Footer, "recompose", counted)
    return seen


async def test_the_footer_follows_focus_and_skips_rebuilds_that_show_the_same_keys(
    demo: Path, rebuilds: list[Footer]
) -> None:
    async with make_app(demo).run_test(size=(120, 34)) as pilot:
        app = await ready(pilot)
        footer = app.main.query_one(Footer)
        await pilot.pause()
        assert "Body" in labels(footer) and "Start" not in labels(footer)
        started = len(rebuilds)
        assert started <= 3  # Textual's footer: one per focus change and mount (~15)

        for _ in range(5):  # the same keys asked for again and again: no rebuild
            footer.bindings_changed(app.main)
        await pilot.pause()
        await pilot.pause()
        assert len(rebuilds) == started

        await pilot.press("5")  # the flow pane: its own keys
        await until(pilot, lambda: "Start" in labels(footer), "the flow keys")
        assert "Body" not in labels(footer)
        await pilot.press("1")
        await until(pilot, lambda: "Body" in labels(footer), "the document keys")
        # the palette key keeps Textual's compact look; the others follow the footer
        compact = {key.description: key.has_class("-compact") for key in footer.query(FooterKey)}
        assert compact.pop("palette") is True and not any(compact.values())


async def test_a_change_of_only_which_keys_are_enabled_sets_them_in_place(
    demo: Path, rebuilds: list[Footer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same key widgets, now dimmed (a rebuild would unmount and style every key),
    marked exactly as a rebuild would mark them."""
    from noma_tui.screens.main import MainScreen

    def marks(footer: Footer) -> list[tuple[str, str, bool, bool]]:
        return [(k.key, k.action, dimmed(k), k._disabled) for k in footer.query(FooterKey)]

    def dimmed_actions(footer: Footer) -> set[str]:
        return {k.action for k in footer.query(FooterKey) if dimmed(k)}

    async with make_app(demo).run_test(size=(120, 34)) as pilot:
        app = await ready(pilot)
        footer = app.main.query_one(Footer)
        await pilot.pause()
        widgets = list(footer.query(FooterKey))
        assert dimmed_actions(footer) == set()
        started = len(rebuilds)

        real = MainScreen.check_action
        off = ("delete_block", "add_comment")

        def check(self: MainScreen, action: str, parameters: tuple[object, ...]) -> Any:
            return None if action in off else real(self, action, parameters)

        monkeypatch.setattr(MainScreen, "check_action", check)
        app.main.refresh_bindings()
        await until(pilot, lambda: dimmed_actions(footer) == set(off), "two keys dimmed")
        assert list(footer.query(FooterKey)) == widgets and len(rebuilds) == started
        in_place = marks(footer)

        footer._shown = None  # what a rebuild shows for the same bindings, asked for as
        footer.call_later(footer.bindings_changed, app.main)  # the screen's signal does
        await until(pilot, lambda: len(rebuilds) == started + 1, "a rebuild")
        await pilot.pause()
        assert marks(footer) == in_place

        monkeypatch.setattr(MainScreen, "check_action", real)
        app.main.refresh_bindings()
        await until(pilot, lambda: dimmed_actions(footer) == set(), "every key enabled")
