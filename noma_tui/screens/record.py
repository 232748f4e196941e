"""One transcript record in full: every field as JSON, plus the audit problem if any."""

from __future__ import annotations

import json
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static, TextArea

from ..history import TranscriptRow


class RecordScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="record.close")
    ]

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
            yield Static(title, classes="dialog-title")
            if row.problem:
                yield Static(f"audit: {row.problem}", classes="record-problem")
            yield TextArea(body, read_only=True, id="record-json", soft_wrap=True)
            yield Static("esc close", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#record-json", TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)
