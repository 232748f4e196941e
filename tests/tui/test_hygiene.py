"""The app never draws a document's terminal escapes or markup raw (issue 23, output
hygiene). A workspace full of them — headings, ids, attribute values, aliases, comments,
a file name, transcript actors and reasons, flow titles and steps — is opened, every
pane visited and dialogs opened; after each step every rendered cell of the screen is
checked: no character a terminal acts on, and Rich/Textual markup shown literally.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList
from tui_helpers import make_app, select, until

from noma_tui.app import WorkbenchApp
from noma_tui.applicability import CONTROLS_IN_BLOCK
from noma_tui.panes.flow import FlowFrontierPane
from noma_tui.screens.form import MARKER_TYPED, FormScreen, InputFormScreen
from noma_tui.screens.message import MessageScreen
from noma_tui.screens.picker import PickerScreen
from noma_tui.screens.proof import ProofScreen
from noma_tui.screens.record import RecordScreen
from noma_tui.screens.table_grid import TableGridScreen
from tests.noma.hygiene_testlib import MARKUP, PAYLOADS, dangerous, evil_document

SIZE = (200, 60)
EVIL = "evil.noma"
ODD_NAME = "odd" + PAYLOADS["osc0-title"] + ".noma"  # a file name is workspace data too


def _record(n: int, actor: str, reason: str, ident: str) -> dict[str, Any]:
    return {
        "protocol_version": "1.0",
        "op_id": f"00000000-0000-4000-8000-00000000000{n}",
        "ts": "2026-11-21T15:39:11." + PAYLOADS["csi-erase-line"] + "Z",
        "actor": {"kind": "agent", "name": actor, "model": PAYLOADS["c1-osc"]},
        "pre_sha256": "0" * 64,
        "post_sha256": "0" * 64,
        "pre_sha": "00000000",
        "post_sha": PAYLOADS["bidi-override"],
        "op": {"op": "update_attribute" + PAYLOADS["bel"], "id": ident, "key": "k"},
        "patch_result": "rejected",
        "error": {"code": "sha_mismatch" + PAYLOADS["osc52-clipboard"], "message": reason},
        "reason": reason,
    }


EVIL_FLOW = """\
flow:
  schema: knowtation.flow/v0
  flow_id: flow_evil
  title: "Evil \\x9b2K\\x9d0;pwned\\x9c [bold red]x[/] [/] \\u202eexe.txt"
  version: 1.0.0
  scope: personal
  summary: "s"
  tags: []
  steps: [flow_evil#1]
  inputs:
    - {name: "url [/] \\u202etxt.exe", type: url, required: true}
  updated: "2026-06-20T12:00:00Z"
  truncated: false
steps:
  - schema: knowtation.flow_step/v0
    step_id: flow_evil#1
    flow_id: flow_evil
    ordinal: 1
    owned_job: "Job \\x9b31m [link=https://attacker.example]click[/link] \\u2066exe\\u2069"
    instruction: "Do \\e]52;c;cHduZWQ=\\a it."
    trigger: Always.
    when_not_to_run: "Never \\e]0;pwned\\a [/]"
    requires: []
    boundaries: []
    skill_refs: []
    inputs: []
    outputs: []
    output_shape: Nothing.
    verification:
      kind: human_review
      evidence_required: false
      description: A person looks.
    automatable: manual
"""


@pytest.fixture
def evil_workspace(demo: Path) -> Path:
    (demo / EVIL).write_text(evil_document(), encoding="utf-8")
    (demo / ODD_NAME).write_text("# Odd " + PAYLOADS["bidi-isolate"] + "\n", encoding="utf-8")
    lines = [
        _record(1, "bot" + PAYLOADS["osc0-title"], "why " + PAYLOADS["osc52-clipboard"], "c1"),
        _record(2, MARKUP, "reason " + MARKUP, "cm1" + PAYLOADS["c1-csi"]),
    ]
    (demo / (EVIL + ".patches")).write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8"
    )
    (demo / "flows" / "evil.flow.yaml").write_text(EVIL_FLOW, encoding="utf-8")
    return demo


def drawn(app: WorkbenchApp) -> str:
    """Every cell the current screen draws (the modal and what shows behind it, toasts)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


def clean(app: WorkbenchApp, where: str) -> str:
    text = drawn(app)
    assert dangerous(text) == [], f"{where}: raw terminal controls drawn"
    return text


async def opened(pilot: Pilot[Any]) -> WorkbenchApp:
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    await until(
        pilot,
        lambda: (
            app.loaded is not None
            and app.loaded.name == EVIL
            and app.transcript is not None
            and len(app.main.transcript.rows_shown) == 2
            and bool(app.documents)
        ),
        "the evil document, its transcript and the file list",
    )
    await pilot.pause()
    return app


async def test_every_pane_shows_escapes_as_markers_and_markup_literally(
    evil_workspace: Path,
) -> None:
    app = make_app(evil_workspace, document=evil_workspace / EVIL)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app = await opened(pilot)
        app.main.doc_tree.root.expand_all()
        await pilot.pause()
        text = clean(app, "tree, block view, diagnostics, transcript, file list")
        assert "Memo ⟨U+001B⟩]52;c;cHduZWQ=⟨U+0007⟩" in text  # the heading, in the tree
        assert "[bold red]x[/] [link=https://attacker" in text  # literal, not bold or a link
        assert "::claim c⟨U+001B⟩]0;pwned⟨U+0007⟩" in text  # an id
        assert 'aliases="al⟨U+001B⟩[2K"' in text  # an alias, in the block view
        assert "Evidence ding⟨U+0007⟩safe⟨U+0008⟩" in text  # BEL, BS: shown, not dropped
        assert "rm -rf /⟨U+000D⟩safe" in text  # a CR cannot overwrite the line
        assert "odd⟨U+001B⟩]0;pwned⟨U+0007⟩" in text  # a file name
        assert "agent:bot⟨U+001B⟩]0;pwne" in text  # a transcript actor (column cut)
        assert "agent:[bold red]x[/]" in text  # markup as an actor name: literal
        assert "update_attributeding⟨U+0007⟩" in text  # a transcript op
        assert "00000000→⟨U+202E⟩" in text  # a bidi override in a hash column
        assert 'for="missing⟨U+001B⟩]52;c;' in text  # a diagnostic quoting a value
        assert app.sub_title == "" and "⟨U+001B⟩" not in app.main.sub_title
        loaded = app.loaded
        assert loaded is not None
        for node in loaded.blocks:
            if node.id is None:
                continue
            await select(pilot, node.id)
            clean(app, f"block view of {node.id!r}")
        await pilot.press("p")  # the rendered preview, then every block again
        await until(pilot, lambda: app.main.preview.display, "the preview")
        for node in loaded.blocks:
            if node.id is not None:
                await select(pilot, node.id)
                clean(app, f"preview of {node.id!r}")
        await pilot.press("p")
        await pilot.press("3")  # diagnostics focused (and filtered by markup text)
        await pilot.press("slash", *"[/]", "enter")
        await pilot.pause()
        clean(app, "diagnostics filtered by '[/]'")
        await pilot.press("4", "enter")  # the last transcript record, whole
        await until(pilot, lambda: isinstance(app.screen, RecordScreen), "the record")
        text = clean(app, "record screen")
        assert '"message": "reason [bold red]x[/] [link=https://attacker' in text  # literal
        assert "Transcript line 2: update_attributeding⟨U+0007⟩ cm1⟨U+009B⟩31m" in text
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main, "back")


async def test_notifications_show_escapes_and_markup_literally(evil_workspace: Path) -> None:
    app = make_app(evil_workspace, document=evil_workspace / EVIL)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app = await opened(pilot)
        before = drawn(app).count("[bold red]x[/]")
        app.notify("id " + PAYLOADS["osc52-clipboard"] + " " + MARKUP, title=MARKUP)
        app.main.notify("unbalanced [/] " + PAYLOADS["c1-csi"])  # a screen's own notify
        await until(pilot, lambda: "unbalanced [/]" in drawn(app), "the toasts")
        text = clean(app, "toasts")
        assert "id ⟨U+001B⟩]52;c;cHduZWQ=⟨U+0007⟩" in text  # (a toast wraps its lines)
        assert text.count("[bold red]x[/]") > before  # the toast's title/message: literal
        assert "unbalanced [/] ⟨U+009B⟩31m" in text


async def test_attribute_form_shows_markers_and_round_trips_the_real_value(
    evil_workspace: Path,
) -> None:
    path = evil_workspace / EVIL
    before = path.read_bytes()
    app = make_app(evil_workspace, document=path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app = await opened(pilot)
        await select(pilot, "cm1")
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, FormScreen), "the form")
        form = app.screen
        assert isinstance(form, FormScreen)
        value = form.query_one("#field-value", Input)
        assert "nope⟨U+001B⟩[1A⟨U+001B⟩[999D" in value.value  # shown, not raw
        clean(app, "attribute form")
        real = form.values()["value"]
        assert PAYLOADS["csi-cursor-up"] in real  # untouched: the exact value comes back
        assert not form.dirty()
        # A changed value still holding marker text is refused, clearly; nothing written.
        value.value = value.value + "x"
        assert form.build_ops() is None
        await until(pilot, lambda: "holds ⟨…⟩ marker text" in drawn(app), "the refusal")
        assert "'Value" in drawn(app) and MARKER_TYPED.split(":")[0][:20] in MARKER_TYPED
        clean(app, "refusal toast")
        # A fresh value (the field cleared and retyped) previews as usual.
        value.value = '"fine"'
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ProofScreen), "the proof")
        text = clean(app, "proof screen with the block's lines in its diff")
        assert 'parent="nope⟨U+001B⟩[1A' in text
        await pilot.press("escape")
    assert path.read_bytes() == before


async def test_source_editor_refuses_a_block_with_terminal_controls(
    evil_workspace: Path,
) -> None:
    app = make_app(evil_workspace, document=evil_workspace / EVIL)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app = await opened(pilot)
        await select(pilot, "cm1")
        await pilot.press("e")
        await until(pilot, lambda: "in-app editor cannot show them" in drawn(app), "refusal")
        assert app.screen is app.main
        assert CONTROLS_IN_BLOCK.startswith("This block holds characters a terminal acts on")
        clean(app, "refusal")


async def test_copying_an_id_with_terminal_controls_is_refused(evil_workspace: Path) -> None:
    app = make_app(evil_workspace, document=evil_workspace / EVIL)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app = await opened(pilot)
        await select(pilot, "c" + PAYLOADS["osc0-title"])
        await pilot.press("y")
        await until(pilot, lambda: "Not copied: the id" in drawn(app), "the refusal")
        assert app.clipboard == ""  # nothing a later paste could send to a shell
        clean(app, "copy refusal")
        await select(pilot, "cm1")
        await pilot.press("y")
        await until(pilot, lambda: app.clipboard.startswith("cm1 "), "an ordinary id copied")


async def test_table_grid_shows_cells_with_markers_and_round_trips_them(
    evil_workspace: Path,
) -> None:
    app = make_app(evil_workspace, document=evil_workspace / EVIL)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app = await opened(pilot)
        await select(pilot, "t1")
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TableGridScreen), "the grid")
        grid = app.screen
        assert isinstance(grid, TableGridScreen)
        text = clean(app, "table grid")
        assert "a⟨U+001B⟩]0;pwned⟨U+0007⟩" in text and "[bold]b[/] ⟨U+009B⟩31m" in text
        await pilot.press("down", "enter")  # the first body row, its first cell
        box = grid.query_one("#cell-value", Input)
        await until(pilot, lambda: box.value.startswith("a⟨U+001B⟩"), "the cell in the box")
        clean(app, "cell being edited")
        assert grid._typed() == "a" + PAYLOADS["osc0-title"] and not grid.dirty()
        box.value += "x"  # a changed value still holding marker text: refused, clearly
        assert grid.build_ops() is None
        await until(pilot, lambda: "holds ⟨…⟩ marker text" in drawn(app), "the refusal")


async def test_flow_pane_picker_and_detail_show_bundle_text_literally(
    evil_workspace: Path,
) -> None:
    app = make_app(evil_workspace, document=evil_workspace / EVIL)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app = await opened(pilot)
        pane = app.main.query_one(FlowFrontierPane)
        await pilot.press("5")
        await app.workers.wait_for_complete()
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "the flow picker")
        text = clean(app, "flow picker")
        assert "Evil ⟨U+009B⟩2K⟨U+009D⟩0;pwned⟨U+009C⟩ [bold red]x[/] [/]" in text  # wraps
        assert "⟨U+202E⟩exe.txt  (flow_evil@1.0.0)" in text
        choices = app.screen.query_one(OptionList)
        index = next(
            i
            for i in range(choices.option_count)
            if (choices.get_option_at_index(i).id or "").startswith("flow_evil")
        )
        choices.highlighted = index
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InputFormScreen), "the inputs")
        assert "url [/] ⟨U+202E⟩txt.exe" in clean(app, "run inputs form")
        await pilot.press(*"https://example.org/x", "ctrl+s")
        await until(pilot, lambda: bool(pane.runs) and not pane.busy, "the run")
        await until(pilot, lambda: pane.run is not None, "the run shown")
        await pilot.pause()
        text = clean(app, "flow pane with the run")
        assert "[link=https://attacker.example]click[/link]" in text
        assert "Never ⟨U+001B⟩]0;pwned⟨U+0007⟩ [/]" in text  # when_not_to_run, in the detail
        # A refusal from a hub quotes what it was sent: the status line and, behind o,
        # the whole message.
        pane.say("✗ refused " + PAYLOADS["osc8-hyperlink"], detail="line 1 [/]\n" + MARKUP)
        await pilot.pause()
        assert "✗ refused ⟨U+001B⟩]8;;https://attacker" in clean(app, "flow status line")
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, MessageScreen), "the message")
        text = clean(app, "message screen")
        assert "line 1 [/]" in text and "[bold red]x[/] [link=https://attacker" in text


def test_help_table_shows_a_hostile_keymap_literally() -> None:
    """A keymap may come from the workspace's config: its keys are text, not markup."""
    from rich.console import Console

    from noma_tui.screens.help import help_table

    console = Console(width=200, record=True, file=io.StringIO())
    console.print(help_table({"edit.body": "[/]" + PAYLOADS["osc0-title"]}))
    text = console.export_text()
    assert dangerous(text) == [] and "[/]⟨U+001B⟩" in text  # (the key column is narrow)
