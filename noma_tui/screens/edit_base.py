"""The base of every editor: a modal that owns one open `EditSession`.

While it is on screen the session counts as "an edit is open": the app marks its drift
live (banner here, flag in the status bar) as the file changes on disk. ``ctrl+s`` builds
the ops and hands them to the app, which shows the proof, applies, and calls back here:
`applied` after a successful write, `reload_block` / `keep_editing` after a conflict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from ..document import LoadedDocument
from ..session import EditSession

if TYPE_CHECKING:
    from ..app import WorkbenchApp

DRIFT_TEXT = (
    "⚠ base_sha_drift: the file changed on disk after this edit opened. Applying records "
    "the drift; if this block changed too you will be asked to reload it or keep editing."
)


class EditScreen(ModalScreen[None]):
    """Subclasses yield their fields in `compose_fields` and build ops in `build_ops`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Preview & apply", id="editor.submit", priority=True),
        Binding("escape", "cancel", "Cancel", id="editor.cancel", priority=True),
    ]

    HINT = "ctrl+s preview & apply · esc cancel"
    STAYS_OPEN = False  # True: stays after a successful apply and gets `applied(loaded)`

    def __init__(self, session: EditSession, title: str) -> None:
        super().__init__()
        self.session = session
        self.title_text = title

    @property
    def workbench(self) -> WorkbenchApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog edit-dialog"):
            yield Static(self.title_text, classes="dialog-title")
            yield Static(DRIFT_TEXT, id="drift-banner", classes="drift-banner")
            yield from self.compose_fields()
            yield Static(self.HINT, classes="dialog-hint")
        yield Footer()

    def compose_fields(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.workbench.begin_session(self.session)
        self.refresh_drift()

    def on_unmount(self) -> None:
        self.workbench.end_session(self.session)

    def refresh_drift(self) -> None:
        self.set_class(self.session.drift, "-drift")

    def build_ops(self) -> list[dict[str, Any]] | None:
        """The ops to propose, or None (after telling the user why) to stay open."""
        raise NotImplementedError

    def action_submit(self) -> None:
        ops = self.build_ops()
        if ops:
            self.workbench.propose(self.session, ops, editor=self)

    def action_cancel(self) -> None:
        self.dismiss(None)

    # -- callbacks from the app --------------------------------------------------------

    def applied(self, loaded: LoadedDocument | None) -> None:
        """The ops were written. Most editors close; the table grid stays open."""
        self.dismiss(None)

    def reload_block(self, loaded: LoadedDocument) -> None:
        """Conflict resolved by reloading: show the block as it is now on disk."""

    def keep_editing(self, loaded: LoadedDocument) -> None:
        """Conflict resolved by keeping the user's text against the new block hash."""
