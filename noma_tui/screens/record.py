"""One transcript record in full: every field as JSON, plus the audit problem if any; ``R``
(or the button) reverts it: the app computes the inverse (`core.noma.revert`), shows its
proof and records it with ``parent_op_id`` = this record's ``op_id``."""

from __future__ import annotations

import json
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static, TextArea

from core.noma.api import visible

from ..footer import Footer
from ..keys import bindings
from ..transcript_view import TranscriptRow
from ..visible import line_text
from .mounted import composed
from .once import DismissOnce


class RecordScreen(DismissOnce[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [*bindings("record.close", "record.revert")]

    def __init__(self, row: TranscriptRow) -> None:
        super().__init__()
        self.row = row

    def compose(self) -> ComposeResult:
        row = self.row
        title = f"Transcript line {row.number}: {row.op} · {row.result}"
        if row.record is not None:
            body = json.dumps(row.record, indent=2, ensure_ascii=False)
        else:
            body = row.raw.decode("utf-8", errors="replace")
        with Vertical(classes="dialog record-dialog"):
            yield Static(line_text(title), classes="dialog-title")
            if row.problem:
                yield Static(line_text(f"audit: {row.problem}"), classes="record-problem")
            # JSON escapes C0 itself; C1 and bidi controls it keeps: shown as markers here
            yield TextArea(visible(body), read_only=True, id="record-json", soft_wrap=True)
            if row.record is not None and row.record.get("patch_result") == "applied":
                with Horizontal(classes="dialog-buttons"):
                    yield Button("Revert this edit (R)", id="revert", variant="warning")
                    yield Button("Close (esc)", id="close")
            yield Static("R revert this edit (proof first) · esc close", classes="dialog-hint")
        yield Footer()

    @composed
    def on_mount(self) -> None:
        self.query_one("#record-json", TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_revert(self) -> None:
        record = self.row.record
        if record is None or record.get("patch_result") != "applied":
            self.notify("Only an applied edit can be reverted.", severity="warning")
            return
        self.dismiss("revert")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "revert":
            self.action_revert()
        else:
            self.action_close()
