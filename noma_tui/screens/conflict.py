"""The block-level conflict: the engine refused the op with ``sha_mismatch`` because the
target block changed on disk after the edit opened (its ``baseHash`` no longer matches).

Nothing was written. The view shows the block three ways, side by side: *base* (as the
edit opened it), *mine* (with the edit) and *theirs* (on disk now), the lines each side
changed marked with ``▌``. The writer chooses:

- ``t`` take theirs: drop the edit; the editor shows the block as it is on disk;
- ``m`` keep mine: apply the edit against theirs' block hash (it replaces their change,
  knowingly; the drift is recorded);
- ``e`` edit the merge (text editors only): both sides' changes combined, overlapping ones
  marked ``<<<<<<< mine`` / ``>>>>>>> theirs``, to settle in the editor and apply as
  usual against theirs' block hash;
- Esc: back to the editor with the typed text as it was.

Typed text is never dropped without being shown here first.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from ..footer import Footer
from ..keys import bindings
from ..merge import ConflictTexts, marked_lines
from ..styles import Styles, Themed
from ..visible import block_text, line_text, plain
from .mounted import composed
from .once import DismissOnce

Choice = Literal["theirs", "mine", "merge", "back"]


def side(title: str, text: str, base: str, style: str | Style, palette: Styles) -> Text:
    out = Text(title + "\n", style="bold")
    for line, changed in marked_lines(text, base):
        out.append("▌" if changed else " ", style=style if changed else palette.muted)
        out.append(plain(line) + "\n", style=style if changed else "")
    return out


class ConflictScreen(Themed, DismissOnce[Choice]):
    BINDINGS: ClassVar[list[BindingType]] = [
        *bindings("conflict.theirs", "conflict.mine", "conflict.merge", "conflict.back")
    ]

    def __init__(
        self,
        code: str,
        message: str,
        target: str,
        texts: ConflictTexts,
    ) -> None:
        super().__init__()
        self.code = code
        self.message = message
        self.target = target
        self.texts = texts

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog conflict-dialog"):
            yield Static(
                line_text(f"{self.code}: '{self.target}' changed on disk"), classes="dialog-title"
            )
            yield Static(block_text(self.message), id="conflict-message")
            with Horizontal(id="conflict-sides"):
                with VerticalScroll(classes="conflict-side"):
                    yield Static("", id="conflict-base")
                with VerticalScroll(classes="conflict-side"):
                    yield Static("", id="conflict-mine")
                with VerticalScroll(classes="conflict-side"):
                    yield Static("", id="conflict-theirs")
            yield Static(
                "Nothing was written. ▌ marks the lines each side changed from base. Keep "
                "mine applies the edit against the block on disk (their change is replaced "
                "and the drift recorded).",
                classes="dialog-hint",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Take theirs (t)", id="theirs")
                yield Button("Keep mine (m)", id="mine", variant="warning")
                if self.texts.mergeable:
                    yield Button("Edit merge (e)", id="merge", variant="primary")
                yield Button("Back (esc)", id="back")
        yield Footer()

    def restyle(self) -> None:
        t, p = self.texts, self.palette
        self.query_one("#conflict-base", Static).update(
            side("base (when the edit opened)", t.base, t.base, "", p)
        )
        self.query_one("#conflict-mine", Static).update(
            side("mine (with the edit)", t.mine, t.base, p.added, p)
        )
        self.query_one("#conflict-theirs", Static).update(
            side("theirs (on disk now)", t.theirs, t.base, p.removed, p)
        )

    @composed
    def on_mount(self) -> None:
        self.restyle()
        self.query_one("#merge" if self.texts.mergeable else "#back", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_choose(str(event.button.id))

    def action_choose(self, choice: str) -> None:
        if choice == "merge" and not self.texts.mergeable:
            self.notify("This edit is not text: take theirs or keep mine.", severity="warning")
            return
        if choice in ("theirs", "mine", "merge", "back"):
            self.dismiss(choice)  # type: ignore[arg-type]
