"""Type-ahead (issue 25): a key that opens a dialog or the filter holds the keys that
follow until the dialog is ready, then hands them to it in order; nothing typed in the
same burst lands on the main screen behind it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notify_record import record_notes
from test_bursts import settled
from tui_helpers import (
    ADR,
    MEMO,
    TERMINAL,
    ProofLog,
    burst,
    copy_demo,
    make_app,
    ready,
    records,
    select,
    until,
)

from core.noma.files import read_source
from noma_tui.screens.form import FormScreen
from noma_tui.screens.picker import PickerScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.source_editor import SourceEditorScreen


async def test_attribute_dialog_keeps_the_keys_typed_with_its_key(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        keys = ["a", "ctrl+a", "ctrl+k", *"owner", "enter", "ctrl+a", "ctrl+k"]
        burst(app, [*keys, *'"pricing"', "enter", "ctrl+s"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        proof = app.screen
        assert isinstance(proof, ProofScreen)
        assert not any(isinstance(s, FormScreen) and s is app.screen for s in app.screen_stack)
        count = len(records(path))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == count + 1, "the record")
    op = records(path)[-1]["op"]
    assert op["op"] == "update_attribute"
    assert (op["key"], op["value"]) == ("owner", "pricing")
    assert 'owner="pricing"' in read_source(path).text


async def test_slash_then_c1_filters_instead_of_commenting(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        burst(app, ["slash", "c", "1"])
        await until(pilot, lambda: app.main.filter_bar.value == "c1", "the filter text")
        assert app.screen is app.main
        assert app.main.focused is app.main.filter_bar


async def test_keys_after_a_pickers_enter_go_to_the_editor_it_opens(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        burst(app, ["n", "enter", *"zq9", "end", *"xw"])  # the first template, then typing
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        await settled(pilot)
        editor = app.screen
        assert isinstance(editor, SourceEditorScreen)
        assert "zq9" in editor.text and "xw" in editor.text
        assert not any(isinstance(s, PickerScreen) for s in app.screen_stack)


async def test_keys_after_a_pickers_enter_answer_the_next_picker(demo: Path) -> None:
    target = demo / "research-memo.md"
    target.write_text("hand-written notes\n")
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        # markdown; then "down enter" answers "exists. Replace it?" with Replace, not the
        # format list (where they would choose html and leave the question unanswered).
        burst(app, ["ctrl+o", "enter", "down", "enter"])
        await until(pilot, lambda: target.read_text() != "hand-written notes\n", "replaced")
        await settled(pilot)
        assert app.screen is app.main
        assert not (demo / "research-memo.html").exists()


async def test_delete_then_y_goes_to_the_proof(demo: Path) -> None:
    path = demo / MEMO
    count = len(records(path))
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        notes = record_notes(app)
        burst(app, ["d", *"dup entry"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await until(pilot, lambda: "dup entry" in app.screen.reason_text(), "the reason")
        assert len(records(path)) == count  # the space did not delete
        assert "Copied id and block hash" not in notes.titles()


async def test_delete_dialog_focus_and_tab_order(demo: Path) -> None:
    path = demo / MEMO
    count = len(records(path))
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await select(pilot, "small-tenant-noise")
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        proof = app.screen
        assert isinstance(proof, ProofScreen) and proof.danger
        order = []
        for _ in range(3):
            order.append(proof.focused.id if proof.focused else None)
            await pilot.press("tab")
        assert order == ["reason", "back", "apply"]
        proof.set_focus(proof.query_one("#reason"))
        await pilot.press(*"dup entry")
        assert proof.reason_text() == "dup entry" and len(records(path)) == count
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(records(path)) == count + 1, "the delete")
    assert records(path)[-1]["reason"] == "dup entry"
    assert records(path)[-1]["op"]["op"] == "delete_block"


TYPED = ["enter", "tab", "ctrl+s", "escape", "y", "n", "a", "e", "d", "7", "space", "backspace"]
OPENERS = [  # (block, key) for every dialog a key opens on the main screen
    ("small-tenant-noise", "a"),  # attribute form
    ("risks", "h"),  # heading form
    ("small-tenant-noise", "e"),  # body editor (a TextArea)
    ("small-tenant-noise", "r"),  # rename form
    ("small-tenant-noise", "c"),  # comment form
    ("small-tenant-noise", "m"),  # move form
    ("small-tenant-noise", "d"),  # delete proof
    ("small-tenant-noise", "g"),  # go-to prompt
]


@pytest.mark.long(19)
@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    opener=st.sampled_from(OPENERS),
    keys=st.lists(st.sampled_from(TYPED), min_size=1, max_size=12),
)
async def test_random_bursts_from_the_main_screen(
    tmp_path_factory: Any, opener: tuple[str, str], keys: list[str]
) -> None:
    """The dialog's own key starts the burst (no wait for the dialog): no exception, never
    two proofs, and every write is the proof on screen when it was confirmed."""
    demo = copy_demo(tmp_path_factory.mktemp("typeahead"))
    path = demo / MEMO
    original = read_source(path).sha256
    earlier = len(records(path))
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        log = ProofLog(app)
        block, key = opener
        await select(pilot, block)
        burst(app, [key, *keys])
        await settled(pilot)
        burst(app, keys)
        await settled(pilot)
        assert app.is_running and not app.gate.holding
        log.check(path, original, earlier)


async def test_moves_typed_before_a_dialog_key_are_applied_first(demo: Path) -> None:
    """``j e`` edits the block the ``j`` moved to: the dialog key is a priority binding and
    used to run before the tree had handled the ``j`` still in its queue."""
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        block = await select(pilot, "small-tenant-noise")
        burst(app, ["j", "j", "k", "e"])
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        assert app.loaded is not None and app.main.selected() == block + 1
        assert app.screen.session.target == app.loaded.blocks[block + 1].id


async def test_keys_after_choosing_a_document_act_on_that_document(demo: Path) -> None:
    """Enter in the file list, then at once ``g``, an id of the chosen document, Enter and
    ``e``: the keys wait until that document is shown, and edit its block."""
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        burst(app, ["f", "home", "enter", "g", *"adr-014", "enter", "e"])
        await until(pilot, lambda: isinstance(app.screen, SourceEditorScreen), "the editor")
        assert app.loaded is not None and app.loaded.name == ADR
        assert app.screen.session.target == "adr-014"
