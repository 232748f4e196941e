"""The Export action (ctrl+o, the palette, F1): pick a format, the file appears beside the
document with the same bytes as ``noma export``; an existing file is replaced only on
request, and a symbolic link in its place is never followed."""

from __future__ import annotations

from pathlib import Path

from notify_record import record_notes
from tui_helpers import MEMO, TERMINAL, make_app, ready, until

from core.noma.export import export
from core.noma.files import read_document
from noma_tui.demo import DEMO_SOURCE
from noma_tui.keys import BY_ID
from noma_tui.screens.picker import PickerScreen


def _expected(path: Path, fmt: str) -> str:
    _source, doc = read_document(path)
    return export(doc, fmt, source_name=path.name)


async def test_export_each_format_beside_the_document(demo: Path) -> None:
    assert BY_ID["doc.export"].key == "ctrl+o"
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        notes = record_notes(app)
        for count, (steps, name, fmt) in enumerate(
            (
                ((), "research-memo.md", "markdown"),
                (("down",), "research-memo.html", "html"),
                (("down", "down"), "research-memo.llm.txt", "llm"),
            ),
            start=1,
        ):
            await pilot.press("ctrl+o")
            await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the format picker")
            await pilot.press(*steps, "enter")
            target = demo / name
            await until(pilot, target.exists, f"{name} written")
            await until(
                pilot,
                lambda n=count: (
                    [n.message for n in notes if n.title == "Exported"]
                    == [
                        f"Wrote {x}"
                        for x in ("research-memo.md", "research-memo.html", "research-memo.llm.txt")
                    ][:n]
                ),
                "the notification",
            )
            assert target.read_text() == _expected(demo / MEMO, fmt)
        assert (demo / MEMO).read_bytes() == (DEMO_SOURCE / MEMO).read_bytes()  # untouched


async def test_an_existing_file_is_kept_unless_replacing_is_chosen(demo: Path) -> None:
    target = demo / "research-memo.md"
    target.write_text("hand-written notes\n")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the format picker")
        await pilot.press("enter")  # markdown
        await until(
            pilot,
            lambda: isinstance(app.screen, PickerScreen) and "exists" in app.screen.title_text,
            "the replace question",
        )
        await pilot.press("enter")  # the first choice keeps the file
        await until(pilot, lambda: not isinstance(app.screen, PickerScreen), "the picker closed")
        await pilot.pause()
        assert target.read_text() == "hand-written notes\n"

        app._run_command("export_document")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the format picker")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the replace question")
        await pilot.press("down", "enter")  # replace
        await until(pilot, lambda: target.read_text() != "hand-written notes\n", "replaced")
        assert target.read_text() == _expected(demo / MEMO, "markdown")


async def test_a_symlink_in_the_way_is_not_followed(demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    (demo / "research-memo.html").symlink_to(outside)
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        notes = record_notes(app)
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the format picker")
        await pilot.press("down", "enter")  # html
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the replace question")
        await pilot.press("down", "enter")  # replace
        await notes.wait(pilot, lambda ns: "export failed" in ns.titles(), "the refusal")
        assert outside.read_text() == "keep me\n"
        assert (demo / "research-memo.html").is_symlink()
