"""The flow-run frontier pane. Placeholder until the Flow runs issue fills it in.

Owned by the Flow issue; the app mounts `FlowFrontierPane` and never edits this file.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from core.workspace import Workspace


class FlowFrontierPane(Vertical):
    """Runs of the workspace's flows and the current frontier step."""

    DEFAULT_CSS = """
    FlowFrontierPane { height: auto; min-height: 3; }
    """

    def __init__(self, workspace: Workspace, *, id: str | None = "flow-pane") -> None:
        super().__init__(id=id)
        self.workspace = workspace

    def compose(self) -> ComposeResult:
        yield Static("Flow runs: not available yet.", id="flow-placeholder")
