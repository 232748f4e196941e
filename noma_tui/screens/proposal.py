"""A proposal in full, for the human deciding it: what approval would write, then a or r.

For a bundle (an import or a proposed change) the screen shows the base version it
follows, the change summary (flow fields, steps added, removed and changed) and the
unified diff of the two definitions, additions and removals coloured; for a run outcome,
its run and intent. Every byte of it is the proposal's (untrusted) text: it is shown as
plain `Text`, never as markup, with control characters made visible. Approving is an
explicit key (``a``), never Enter, so a key meant for the list before cannot approve.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from core.noma.api import visible_line

from ..footer import Footer
from ..keys import bindings
from ..visible import line_text
from .mounted import composed
from .once import DismissOnce

DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def summary_lines(shown: dict[str, Any]) -> list[str]:
    """The proposal and its change summary as plain lines (also what tests read)."""
    p = shown["proposal"]
    lines = [
        f"{p['kind']}  {p['flow_id']}@{p['flow_version']}  {p['status']}",
        f"intent: {p.get('intent') or ''}",
    ]
    if p.get("run_id"):
        lines.append(f"run: {p['run_id']}")
    changes = shown.get("changes")
    if changes is None:
        return lines
    if changes["new_flow"]:
        lines.append("a new flow: every step below is added")
    else:
        lines.append(f"changes against {shown.get('base_version')}:")
    if changes["flow_fields"]:
        lines.append("  flow fields: " + ", ".join(changes["flow_fields"]))
    if changes["steps_added"] and not changes["new_flow"]:
        lines.append("  steps added: " + ", ".join(changes["steps_added"]))
    if changes["steps_removed"]:
        lines.append("  steps removed: " + ", ".join(changes["steps_removed"]))
    for step in changes["steps_changed"]:
        lines.append(f"  step {step['step_id']} changed: " + ", ".join(step["fields"]))
    if p.get("automatable_steps"):
        lines.append("  automatable steps: " + ", ".join(p["automatable_steps"]))
    return lines


def diff_text(diff: str) -> Text:
    """The unified diff as plain, coloured text (never markup)."""
    out = Text()
    for line in diff.splitlines():
        style = "bold" if line.startswith(("+++", "---")) else DIFF_STYLES.get(line[:1], "")
        out.append(visible_line(line) + "\n", style=style)
    return out


class ProposalReviewScreen(DismissOnce[bool | None]):
    """Dismisses with True (approve), False (reject) or None (decide later)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *bindings("review.approve", "review.reject", "review.back")
    ]

    def __init__(self, shown: dict[str, Any]) -> None:
        super().__init__()
        self.shown = shown

    @property
    def summary(self) -> list[str]:
        return summary_lines(self.shown)

    def compose(self) -> ComposeResult:
        p = self.shown["proposal"]
        with Vertical(classes="dialog message-dialog", id="proposal-dialog"):
            yield Static(line_text(f"Review {p['proposal_id']}"), classes="dialog-title")
            with VerticalScroll(id="proposal-scroll"):
                yield Static(
                    Text("\n".join(visible_line(line) for line in self.summary)),
                    id="proposal-summary",
                )
                if self.shown.get("diff"):
                    yield Static(diff_text(self.shown["diff"]), id="proposal-diff")
            yield Static("a approve · r reject · esc later", classes="dialog-hint")
        yield Footer()

    @composed
    def on_mount(self) -> None:
        self.query_one("#proposal-scroll").focus()

    def action_decide(self, approve: bool | None) -> None:
        self.dismiss(approve)
