"""The proof preview: what an edit would do, shown before anything is written.

It renders the engine's `Proof` (``core.noma.proof.build_proof``): the op results, the
sha256 change, the validation summary before and after, the diff of the touched lines and
the diagnostics that would appear or disappear. The writer may add a reason, which goes
into the transcript record. Applying is always explicit: ctrl+s or the Apply button, never
the Enter that ends the reason (Enter there only says how to apply). For a delete this
screen is also the confirmation: the reason field has focus (a reason typed at once, "dup
entry", stays text: no button has focus to be pressed by its space), Tab goes reason →
Cancel → Delete, and deleting takes ctrl+s, ``y`` outside the reason, or the button.

Given ``on_confirm``, the screen stays up after the writer confirms, saying "Applying…",
until the app closes it with the outcome (`finish`). Closing it at once showed the editor
beneath for the length of the write (a screen the writer had already left, drawn again
while the apply's worker wanted the GIL); the writer now goes from the proof straight to
the result. A write in flight cannot be taken back, so Esc does nothing meanwhile. The
outcome is shown only once this screen is on top again, so a screen opened over it during
the write (help, the palette) is never the one closed in the editor's place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Static

from core.noma.api import Diagnostic, Proof

from ..footer import Footer
from ..keyorder import OrderedInput, after_typed
from ..keys import bindings
from ..session import EditSession
from ..styles import SEVERITY_GLYPH, Styles, Themed
from ..visible import line_text, plain
from .mounted import composed
from .once import DismissOnce
from .size_classes import add_size_classes

MAX_DIFF_LINES = 400


def render_diff(proof: Proof, palette: Styles) -> Group:
    rows: list[Text] = []
    for line in proof.diff[:MAX_DIFF_LINES]:
        line = plain(line.rstrip("\n").rstrip("\r"))  # document lines: controls as markers
        if line.startswith(("+++", "---")):
            rows.append(Text(line, palette.muted, no_wrap=True))
        elif line.startswith("@@"):
            rows.append(Text(line, palette.hunk, no_wrap=True))
        elif line.startswith("+"):
            rows.append(Text(line, palette.added, no_wrap=True))
        elif line.startswith("-"):
            rows.append(Text(line, palette.removed, no_wrap=True))
        else:
            rows.append(Text(line, no_wrap=True))
    if len(proof.diff) > MAX_DIFF_LINES:
        rows.append(Text(f"… {len(proof.diff) - MAX_DIFF_LINES} more diff lines", palette.muted))
    if not proof.diff:
        rows.append(Text("(no change: the op is a noop)", palette.muted))
    return Group(*rows)


def _diagnostic_lines(title: str, items: list[Diagnostic], palette: Styles) -> list[Text]:
    if not items:
        return []
    out = [Text(title, style="bold")]
    for d in items:
        line = Text("  ")
        line.append(f"{SEVERITY_GLYPH[d.severity]} {d.severity:<7}", palette.severity(d.severity))
        line.append(f" {d.code}")
        if d.node_id:
            line.append(f" [{plain(d.node_id)}]", palette.muted)
        line.append(f"  {plain(d.message)}", palette.muted)
        out.append(line)
    return out


def render_summary(proof: Proof, session: EditSession, palette: Styles) -> Group:
    o = proof.outcome
    rows: list[Text] = []
    results = ", ".join(f"{r['op'].get('op')} {r['patch_result']}" for r in o.records)
    rows.append(Text(f"ops: {results}"))
    rows.append(Text(f"sha256: {o.pre_sha256[:8]} → {o.post_sha256[:8]}   "
                     f"validation: {o.pre_validation} → {o.post_validation}"))  # fmt: skip
    if o.drift or session.drift:
        rows.append(
            Text(
                "⚠ base_sha_drift: the file changed since this edit opened; applying records it.",
                palette.drift,
            )
        )
    appeared = _diagnostic_lines("Diagnostics that appear:", proof.appeared, palette)
    gone = _diagnostic_lines("Diagnostics that disappear:", proof.disappeared, palette)
    if not appeared and not gone:
        rows.append(Text("Diagnostics: no change.", palette.muted))
    rows.extend(appeared)
    rows.extend(gone)
    rows.extend(Text(plain(f"note: {note}"), palette.muted) for note in o.advisories)
    return Group(*rows)


class ProofScreen(Themed, DismissOnce[str | None]):
    """Dismisses with the reason text (possibly empty) to apply, or None to go back."""

    BINDINGS: ClassVar[list[BindingType]] = [*bindings("proof.apply", "proof.back")]
    # Below 30 rows the layout tightens (themes/workbench.tcss: ProofScreen.-short) so the
    # reason and the buttons always show; the summary and the diff scroll instead.
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [  # type: ignore[misc]
        (0, "-short"),
        (30, "-tall"),
    ]

    def __init__(
        self,
        proof: Proof,
        session: EditSession,
        title: str,
        *,
        danger: bool = False,
        cursor_blink: bool = True,
        on_confirm: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__()
        self.proof = proof
        self.session = session
        self.title_text = title
        self.danger = danger
        self.cursor_blink = cursor_blink
        self.on_confirm = on_confirm
        self.applying = False  # confirmed; the write is in flight
        self._then: Callable[[], None] | None = None  # the outcome, waiting to be shown

    def compose(self) -> ComposeResult:
        add_size_classes(self)  # -short/-tall before the dialog is styled, not after
        with Vertical(classes="dialog proof-dialog"):
            yield Static(line_text(self.title_text), classes="dialog-title")
            yield Static("", id="proof-summary")
            with VerticalScroll(id="proof-diff-scroll"):
                yield Static("", id="proof-diff")
            reason = OrderedInput(
                placeholder="reason (optional, recorded in the transcript)", id="reason"
            )
            reason.cursor_blink = self.cursor_blink
            yield reason
            with Horizontal(classes="dialog-buttons"):
                if self.danger:
                    yield Button("Cancel (esc)", id="back", variant="primary")
                    yield Button("Delete (ctrl+s)", id="apply", variant="error")
                else:
                    yield Button("Apply (ctrl+s)", id="apply", variant="primary")
                    yield Button("Back (esc)", id="back")
        yield Footer()

    def restyle(self) -> None:
        palette = self.palette
        summary = render_summary(self.proof, self.session, palette)
        self.query_one("#proof-summary", Static).update(summary)
        self.query_one("#proof-diff", Static).update(render_diff(self.proof, palette))

    @composed
    def on_mount(self) -> None:
        self.restyle()
        self.set_class(self.danger, "-danger")
        self.query_one("#reason", Input).focus()

    def reason_text(self) -> str:
        """The reason typed so far ("" until the field is mounted: the screen may be on
        the stack a moment before its children are)."""
        for field in self.query("#reason").results(Input):
            return field.value
        return ""

    def key_y(self) -> None:
        if self.danger and not isinstance(self.focused, Input):
            self.action_apply()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()  # the reason is done; applying is still a deliberate key
        what = "delete" if self.danger else "apply"
        self.notify(f"Press ctrl+s (or the button) to {what}; Esc goes back.", timeout=4)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "apply":
            self.action_apply()
        else:
            self.action_back()

    def action_apply(self) -> None:
        after_typed(self, self._apply_now)

    def _apply_now(self) -> None:
        if not self.is_attached or self.app.screen is not self or self.applying:
            return
        reason = self.query_one("#reason", Input).value.strip()
        if self.on_confirm is None:
            self.dismiss(reason)
            return
        self.applying = True
        button = self.query_one("#apply", Button)
        button.label = "Applying…"
        button.disabled = True
        self.query_one("#reason", Input).disabled = True
        self.on_confirm(reason)

    def finish(self, then: Callable[[], None]) -> None:
        """The outcome is in: close without a result, then ``then()`` (the app goes on from
        there: it closes the editor beneath, which must be on top by then). If a screen
        was opened on top meanwhile (help, the palette), both wait until it is closed."""
        if self.app.screen is self:
            self.pop_quietly()
            then()
        elif self.is_attached:
            self._then = then
        else:
            then()

    def on_screen_resume(self) -> None:
        then, self._then = self._then, None
        if then is not None:
            self.pop_quietly()
            then()

    def action_back(self) -> None:
        if not self.applying:
            self.dismiss(None)
