"""Workspace trust: what the open folder's settings would turn on, and the choice to trust it.

Shown by the ``app.trust`` action (``T``), and offered when a folder opens restricted. It
lists the covered settings as the folder has them (URLs without their user info), what is
off now and why, and what changed since the folder was last trusted. ``y`` records the trust
(`core.trust.TrustStore`, the user's config dir); ``n`` / Esc leaves everything off.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from core.trust import restrictions, summary
from core.workspace import Workspace

from ..footer import Footer
from ..keys import bindings
from ..visible import block_text, line_text, plain
from .mounted import composed
from .once import DismissOnce


def trust_title(workspace: Workspace) -> str:
    state = workspace.trust.state.value
    return f"Workspace trust · {workspace.root.name}: {state}"


def trust_body(workspace: Workspace) -> str:
    """The screen's text: the state and why, then `core.trust.summary`."""
    lines = [str(workspace.root), workspace.trust.reason, ""]
    if workspace.trusted:
        lines.append("Its hub, store, secrets, gates and skills apply.")
    else:
        lines.append(
            "Documents can be read, checked, exported and edited. Nothing in this folder's "
            "config or state reaches outside it until you trust it."
        )
    lines += ["", *summary(workspace.root, workspace.config, workspace.trust)]
    return "\n".join(plain(line) for line in lines)


def is_restricted(workspace: Workspace) -> bool:
    """Untrusted and asking for something trust keeps off (what the badge shows)."""
    return not workspace.trusted and bool(restrictions(workspace.root, workspace.config))


class TrustScreen(DismissOnce[bool]):
    """Dismisses True when the user trusts the folder (``y``), False otherwise."""

    BINDINGS: ClassVar[list[BindingType]] = [*bindings("trust.yes", "trust.no")]

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog message-dialog", id="trust-dialog"):
            yield Static(line_text(trust_title(self.workspace)), classes="dialog-title")
            with VerticalScroll(id="trust-scroll"):
                yield Static(block_text(trust_body(self.workspace)), id="trust-body")
            with Horizontal(classes="dialog-buttons"):
                if not self.workspace.trusted:
                    yield Button("Trust this folder (y)", id="yes", variant="warning")
                yield Button("Close (n)", id="no", variant="primary")
        yield Footer()

    @composed
    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # a stray Enter never trusts

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes and not self.workspace.trusted)
