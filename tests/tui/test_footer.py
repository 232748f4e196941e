"""The footer shows the keys of what has focus, and is rebuilt only when those change
(`noma_tui.footer`): Textual's own rebuilt it for every focus change and mount."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets._footer import FooterKey
from tui_helpers import make_app, ready, until

from noma_tui.footer import Footer


def labels(footer: Footer) -> list[str]:
    return [key.description for key in footer.query(FooterKey)]


async def test_the_footer_follows_focus_and_skips_rebuilds_that_show_the_same_keys(
    demo: Path, monkeypatch: Any
) -> None:
    rebuilds: list[Footer] = []
    recompose = Footer.recompose

    async def counted(self: Footer) -> None:
        rebuilds.append(self)
        await recompose(self)

    monkeypatch.setattr(Footer, "recompose", counted)
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
