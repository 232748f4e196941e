"""The help screen: every action with its key (after the user's keymap) and binding id.

Built from the one action registry (`noma_tui.keys`), which every screen and pane takes
its bindings from, so it cannot drift from what the keys do. The binding id is what
``[workbench.keymap]`` in ``noma-workbench.toml`` uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from ..footer import Footer
from ..keys import HELP_ACTIONS, bindings, display_key
from ..visible import line_text
from .mounted import composed
from .once import DismissOnce

EVERYWHERE = (  # Textual's own keys, the same in every screen
    ("enter", "Tree: expand or collapse · lists: open or jump"),
    ("tab / shift+tab", "Next / previous pane or field"),
    ("ctrl+p", "Command palette: every action by name"),
)


def help_table(keymap: Mapping[str, str]) -> Table:
    table = Table(box=None, expand=True, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("key", no_wrap=True, width=14)
    table.add_column("action", ratio=1)
    table.add_column("binding id", no_wrap=True, style="dim")
    group = None
    for spec in HELP_ACTIONS:
        if spec.group != group:
            group = spec.group
            table.add_row("", Text(group, style="bold underline"), "")
        keys = keymap.get(spec.id, spec.key)
        help_text = spec.help + (f"  ({spec.op})" if spec.op else "")
        # A keymap may come from the workspace's config: never markup, never controls.
        table.add_row(line_text(display_key(keys)), help_text, spec.id)
    table.add_row("", Text("Everywhere", style="bold underline"), "")
    for key, what in EVERYWHERE:
        table.add_row(key, what, "")
    return table


class HelpScreen(DismissOnce[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*bindings("help.close")]

    def __init__(self, keymap: Mapping[str, str]) -> None:
        super().__init__()
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help-dialog"):
            yield Static("Noma Workbench: keys", classes="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(help_table(self.keymap), id="help-table")
            yield Static(
                "Every edit is a patch op: you see its proof first, and it is recorded in the "
                "document's transcript as a human edit. esc closes.",
                classes="dialog-hint",
            )
        yield Footer()

    @composed
    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)
