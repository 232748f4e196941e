"""At 80x24 the proof keeps its reason and its Apply / Back buttons on screen; the diff
scrolls to its last line instead of pushing them off."""

from __future__ import annotations

from pathlib import Path

from textual.geometry import Region
from textual.widgets import TextArea
from tui_helpers import make_app, ready, select, until

from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen


async def test_the_proof_fits_80x24(demo: Path) -> None:
    async with make_app(demo).run_test(size=(80, 24)) as pilot:
        app = await ready(pilot)
        await select(pilot, "note-method")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        lines = [f"line {i} [[missing-{i}]] changed" for i in range(30)]
        app.screen.query_one("#source", TextArea).text = "\n".join(lines)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await pilot.pause()
        proof = app.screen
        visible = Region(0, 0, 80, 23)  # above the footer
        for selector in ("#reason", "#apply", "#back"):
            region = proof.query_one(selector).region
            assert visible.contains_region(region), (selector, region)
        scroll = proof.query_one("#proof-diff-scroll")
        assert scroll.max_scroll_y > 0 and "missing-29" not in app.export_screenshot()
        scroll.scroll_end(animate=False)
        await until(pilot, lambda: scroll.scroll_y == scroll.max_scroll_y, "scrolled")
        await pilot.pause()
        assert "missing-29" in app.export_screenshot()  # the last + line, on screen
