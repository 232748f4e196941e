"""Key bursts over the edit dialogs (issue 25): one proof at a time, keys in order.

A fast typist, an unbracketed paste or ``tmux send-keys`` delivers a whole burst before
the app has taken a turn. Once the proof is asked for, the fields are no longer the
writer's: keys after that go to the proof or are dropped, a second ask is a no-op, and
closing is idempotent. What is written is exactly what the last proof showed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.pilot import Pilot
from tui_helpers import (
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
from noma_tui.app import WorkbenchApp
from noma_tui.screens.confirm import ConfirmScreen
from noma_tui.screens.edit_base import EditScreen
from noma_tui.screens.form import FormScreen
from noma_tui.screens.proof import ProofScreen


def proofs_on_stack(app: WorkbenchApp) -> int:
    return sum(isinstance(s, ProofScreen) for s in app.screen_stack)


async def settled(pilot: Pilot[Any]) -> None:
    """Every worker done and every queued message handled: nothing more can happen by
    itself, so a second proof that was going to appear has appeared."""
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    await until(pilot, lambda: not any(w.is_running for w in app.workers), "workers done")
    await until(pilot, lambda: app.gate.idle, "every kept key handed on")
    await pilot.pause()
    await until(pilot, lambda: not any(w.is_running for w in app.workers), "workers done")
    await until(pilot, lambda: app.gate.idle, "every kept key handed on")


async def open_editor(pilot: Pilot[Any], app: WorkbenchApp, ident: str, key: str) -> EditScreen:
    await select(pilot, ident)
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
    editor = app.screen
    assert isinstance(editor, EditScreen)
    return editor


async def open_form(pilot: Pilot[Any], app: WorkbenchApp, ident: str, key: str) -> FormScreen:
    form = await open_editor(pilot, app, ident, key)
    assert isinstance(form, FormScreen)
    return form


async def apply_shown_proof(pilot: Pilot[Any], app: WorkbenchApp, path: Path) -> None:
    before = len(records(path))
    assert isinstance(app.screen, ProofScreen)
    await pilot.press("ctrl+s")
    await until(pilot, lambda: len(records(path)) == before + 1, "a new transcript record")
    sha = read_source(path).sha256
    await until(
        pilot,
        lambda: app.loaded is not None and app.loaded.sha256 == sha and not app.sessions,
        "the panes to show the new version",
    )


async def test_enter_then_ctrl_s_in_one_burst_shows_one_proof(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await open_form(pilot, app, "small-tenant-noise", "a")
        burst(app, ["enter", "ctrl+a", "ctrl+k", *"0.7", "enter", "ctrl+s"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await settled(pilot)
        assert proofs_on_stack(app) == 1
        assert isinstance(app.screen, ProofScreen)
        await apply_shown_proof(pilot, app, path)
        await settled(pilot)
        assert not isinstance(app.screen, EditScreen)  # the editor closed with its edit
        assert not app.drift and not app.main.status.drift  # no false base_sha_drift
        # another edit right away meets no conflict with the writer's own write
        await open_form(pilot, app, "small-tenant-noise", "a")
        burst(app, ["enter", "ctrl+a", "ctrl+k", *"0.8", "enter"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await apply_shown_proof(pilot, app, path)
    text = path.read_text("utf-8")
    assert '::claim{id="small-tenant-noise" confidence=0.8}' in text
    assert [r["patch_result"] for r in records(path)[-2:]] == ["applied", "applied"]


async def test_keys_after_the_proof_is_asked_never_reach_the_form(demo: Path) -> None:
    path = demo / MEMO
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        form = await open_form(pilot, app, "risks", "h")
        burst(app, ["end", *" and outlook", "enter", *"my reason", "ctrl+s"])
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        await settled(pilot)
        assert proofs_on_stack(app) <= 1
        assert form.query_one("#field-title").value == "Risks and outlook"  # type: ignore[attr-defined]
        if isinstance(app.screen, ProofScreen):
            assert app.screen.proof.outcome.records[0]["op"]["title"] == "Risks and outlook"
            await apply_shown_proof(pilot, app, path)
    text = path.read_text("utf-8")
    assert "## Risks and outlook {" in text or "## Risks and outlook\n" in text
    assert "my reason" not in text.split("## Risks and outlook", 1)[1].split("\n", 1)[0]


async def test_dismissing_an_editor_twice_is_harmless(demo: Path) -> None:
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        form = await open_form(pilot, app, "small-tenant-noise", "a")
        form.close()
        form.close()
        await until(pilot, lambda: not isinstance(app.screen, EditScreen), "the editor closed")
        await settled(pilot)
        form.close()
        assert app.is_running and not app.sessions


async def test_escape_y_y_discards_once_and_keeps_the_app(demo: Path) -> None:
    path = demo / MEMO
    before = path.read_bytes()
    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        await open_form(pilot, app, "small-tenant-noise", "a")
        burst(app, ["enter", *"9", "escape", "y", "y", "escape", "y", "ctrl+s"])
        await settled(pilot)
        assert app.is_running and proofs_on_stack(app) == 0
        # keys that beat the discard question to the screen are dropped, not typed
        assert sum(isinstance(s, ConfirmScreen) for s in app.screen_stack) <= 1
        if isinstance(app.screen, ConfirmScreen):
            await pilot.press("y", "y")
        await until(pilot, lambda: app.screen is app.main, "the editor closed")
        await settled(pilot)
        assert app.screen is app.main  # nothing below the editor was popped
        assert not app.sessions
    assert path.read_bytes() == before


DIALOG_KEYS = ["enter", "tab", "ctrl+s", "escape", "y", "n", "a", "7", "backspace"]
DIALOGS = [  # (block, key): attribute form, heading form, body editor (a TextArea)
    ("small-tenant-noise", "a"),
    ("risks", "h"),
    ("small-tenant-noise", "e"),
]


@pytest.mark.long(21)
@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    dialog=st.sampled_from(DIALOGS),
    keys=st.lists(st.sampled_from(DIALOG_KEYS), min_size=1, max_size=14),
)
async def test_random_bursts_never_crash_or_stack_proofs(
    tmp_path_factory: Any, dialog: tuple[str, str], keys: list[str]
) -> None:
    """Two bursts of dialog keys (the second lands wherever the first left the app):
    no exception, never two proofs on the stack, and every write is the proof on screen
    when it was confirmed (a proof drawn after the last write may be left unapplied: the
    burst's keys that would have applied it may have come while it was being prepared)."""
    demo = copy_demo(tmp_path_factory.mktemp("burst"))
    path = demo / MEMO
    original = read_source(path).sha256
    earlier = len(records(path))

    async with make_app(demo).run_test(size=TERMINAL) as pilot:
        app = await ready(pilot)
        log = ProofLog(app)
        await open_editor(pilot, app, *dialog)
        burst(app, keys)
        await settled(pilot)
        burst(app, keys)
        await settled(pilot)
        assert app.is_running
        log.check(path, original, earlier)
