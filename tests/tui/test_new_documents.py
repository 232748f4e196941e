"""Empty documents and new files: n on an empty document writes its first content from a
template (asked first; refused if the file changed meanwhile); N creates a new document
from a template, never replacing a file and never outside the workspace; e on an empty
document says what to do instead of nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from notify_record import record_notes
from tui_helpers import TERMINAL, make_app, ready, until

from core.noma.files import read_source
from noma_tui.newdoc import (
    EXISTS,
    INVALID_NAME,
    NewDocumentError,
    check_name,
    create_document,
    write_first_content,
)
from noma_tui.screens.confirm import ConfirmScreen
from noma_tui.screens.form import InputFormScreen
from noma_tui.screens.picker import PickerScreen


async def test_n_on_an_empty_document_writes_the_first_content(tmp_path: Path) -> None:
    path = tmp_path / "empty.noma"
    path.write_text("\n", encoding="utf-8")
    async with make_app(tmp_path, document=path, single_file=True).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot, "empty.noma")
        assert app.loaded is not None and not app.loaded.blocks
        notes = record_notes(app)
        await pilot.press("e")  # says what to do
        assert "press n" in (await notes.next_after(pilot, 0, "a message")).message
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "templates")
        await pilot.press("enter")  # notes
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await until(pilot, lambda: app.loaded is not None and bool(app.loaded.blocks), "load")
    assert path.read_text("utf-8") == '# Empty\n\n::note{id="note-1"}\nFirst note.\n::\n'


def test_first_content_is_refused_if_the_file_changed(tmp_path: Path) -> None:
    path = tmp_path / "empty.noma"
    path.write_text("", encoding="utf-8")
    sha = read_source(path).sha256
    path.write_text("# Someone else\n", encoding="utf-8")
    with pytest.raises(NewDocumentError) as caught:
        write_first_content(path, sha, "# Mine\n")
    assert caught.value.code == "sha_mismatch"
    assert path.read_text("utf-8") == "# Someone else\n"


async def test_capital_n_creates_a_new_document_from_a_template(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await pilot.press("N")
        await until(pilot, lambda: isinstance(app.screen, InputFormScreen), "the form")
        await pilot.press(*"research-memo", "enter")  # taken: refused in the form
        await pilot.press("ctrl+u", *"Q3 plan", "ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, InputFormScreen)
        assert "already exists" in str(app.screen.query_one("#form-error").render())
        await pilot.press("shift+tab", "ctrl+u", *"q3-plan", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "templates")
        await pilot.press("down", "enter")  # research
        await until(
            pilot, lambda: app.loaded is not None and app.loaded.name == "q3-plan.noma", "open"
        )
        assert app.loaded.count("error") == 0
    text = (demo / "q3-plan.noma").read_text("utf-8")
    assert text.startswith('---\ntitle: "Q3 plan"\nprofile: research\n---\n\n# Q3 plan\n')


@pytest.mark.parametrize(
    "name",
    ["../escape.noma", "/etc/passwd", ".hidden.noma", "a/../../b.noma", "", "missing/x.noma"],
)
def test_new_document_names_are_checked(tmp_path: Path, name: str) -> None:
    with pytest.raises(NewDocumentError) as caught:
        check_name(tmp_path, name)
    assert caught.value.code == INVALID_NAME


def test_create_never_replaces_a_file(tmp_path: Path) -> None:
    (tmp_path / "a.noma").write_text("keep", encoding="utf-8")
    with pytest.raises(NewDocumentError) as caught:
        create_document(tmp_path, "a", "# New\n")
    assert caught.value.code == EXISTS
    assert (tmp_path / "a.noma").read_text("utf-8") == "keep"
    path = create_document(tmp_path, "b", "# New\n")
    assert path.read_text("utf-8") == "# New\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.noma", "b.noma"]  # no temp left
