"""The block-level conflict: the engine refused the op with ``sha_mismatch`` because the
target block changed on disk after the edit opened (its ``baseHash`` no longer matches).

Nothing was written. The writer chooses: reload the block (drop the typed text, start
again from what is on disk) or keep editing (keep the text; the block's new hash becomes
the base, so the next apply replaces the other change knowingly and records the drift).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

Choice = Literal["reload", "keep"]


class ConflictScreen(ModalScreen[Choice]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('reload')", "Reload the block", id="conflict.reload"),
        Binding("k,escape", "choose('keep')", "Keep editing", id="conflict.keep"),
    ]

    def __init__(self, code: str, message: str, target: str) -> None:
        super().__init__()
        self.code = code
        self.message = message
        self.target = target

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog conflict-dialog"):
            yield Static(f"{self.code}: '{self.target}' changed on disk", classes="dialog-title")
            yield Static(self.message, id="conflict-message")
            yield Static(
                "Nothing was written. Reload the block to start again from the version on "
                "disk, or keep editing your text against it (applying then replaces the other "
                "change and records base_sha_drift).",
                classes="dialog-hint",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reload the block (r)", id="reload", variant="primary")
                yield Button("Keep editing (k)", id="keep")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#reload", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss("reload" if event.button.id == "reload" else "keep")

    def action_choose(self, choice: Choice) -> None:
        self.dismiss(choice)
