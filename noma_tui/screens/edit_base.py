"""The base of every editor: a modal that owns one open `EditSession`.

While it is on screen the session counts as "an edit is open": the app marks its drift
live (banner here, flag in the status bar) as the file changes on disk. ``ctrl+s`` builds
the ops and posts them up (`ProposeEdit`; the screen never calls the app); the app's
`EditPipeline` shows the proof, applies, and calls back here: `applied` after a successful
write, `reload_block` / `take_merge` or the `KeepMine` message after a conflict. Drift
reaches it through the app's ``drift_signal``. Apply and cancel read the fields only after
every key typed before them has landed (`noma_tui.keyorder`); Esc with unsaved text asks
first.

The screen owns its edit's phase (`Phase`), and a key is handled by the phase it arrives
in: once the proof is asked for (or the discard question), the fields lose focus at once,
so keys later in the same burst never land in a field the writer has left; they go to the
proof once it is up, and until then are dropped with a hint. A second ask is a no-op, and
closing is idempotent (`close`): a burst cannot stack two proofs or dismiss twice.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from ..document import LoadedDocument
from ..footer import Footer
from ..keyorder import after_typed
from ..keys import bindings
from ..merge import ConflictTexts
from ..messages import EditClosed, EditOpened, KeepMine, ProposeEdit
from ..roles import WorkbenchHost, workbench_of
from ..session import EditSession
from ..typeahead import decide_after_typed
from ..visible import line_text
from .confirm import ConfirmScreen
from .mounted import composed
from .once import DismissOnce

DRIFT_TEXT = (
    "⚠ base_sha_drift: the file changed on disk after this edit opened. Applying records "
    "the drift; if this block changed too, a three-way view shows both versions first."
)


class Phase(Enum):
    """Where an edit is; only EDITING lets keys reach the fields.

    editing → pending (proof asked for) → shown (the proof is up) → applying → closed
    (done), or back to editing (proof abandoned or refused), or conflict (the block changed:
    the conflict screen decides, then editing). Cancel: editing → asking → closed/editing.
    The app moves an edit along (`advance`); keys arriving meanwhile are handled by the
    phase they arrive in: while pending they are dropped with a hint, once shown they go
    to the proof (it is the top screen), never to a field.
    """

    EDITING = "editing"  # the fields are the writer's
    PENDING = "pending"  # proof asked for, being built
    SHOWN = "shown"  # the proof is up: keys are the proof's
    APPLYING = "applying"  # confirmed: the write is in flight
    CONFLICT = "conflict"  # the engine refused with sha_mismatch: the conflict screen
    ASKING = "asking"  # cancel asked for: the discard question decides
    CLOSED = "closed"  # dismissed, or about to be once it is on top again


PROPOSED = frozenset({Phase.PENDING, Phase.SHOWN, Phase.APPLYING, Phase.CONFLICT})


DROPPED_HINT = "Keys typed while the proof is prepared are not used; it shows in a moment."


class EditScreen(DismissOnce[None]):
    """Subclasses yield their fields in `compose_fields` and build ops in `build_ops`."""

    BINDINGS: ClassVar[list[BindingType]] = [*bindings("editor.submit", "editor.cancel")]

    HINT = "ctrl+s preview & apply · esc cancel"
    STAYS_OPEN = False  # True: stays after a successful apply and gets `applied(loaded)`

    def __init__(self, session: EditSession, title: str) -> None:
        super().__init__()
        self.session = session
        self.title_text = title
        self.phase = Phase.EDITING
        self._refocus: Widget | None = None  # the field to give back on `resume`
        self._hinted = False

    @property
    def workbench(self) -> WorkbenchHost:
        return workbench_of(self.app)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog edit-dialog"):
            yield Static(line_text(self.title_text), classes="dialog-title")
            yield Static(DRIFT_TEXT, id="drift-banner", classes="drift-banner")
            yield from self.compose_fields()
            yield Static(self.HINT, classes="dialog-hint")
        yield Footer()

    def compose_fields(self) -> ComposeResult:
        yield from ()

    @composed
    def on_mount(self) -> None:
        self.post_message(EditOpened(self.session))
        self.workbench.drift_signal.subscribe(self, self._drift_changed)
        self.refresh_drift()

    def on_unmount(self) -> None:
        self.workbench.drift_signal.unsubscribe(self)
        self.app.post_message(EditClosed(self.session))

    def _drift_changed(self, _drift: bool) -> None:
        self.refresh_drift()

    def refresh_drift(self) -> None:
        self.set_class(self.session.drift, "-drift")

    def dirty(self) -> bool:
        """True while the fields hold text the user typed and has not applied."""
        return False

    def build_ops(self) -> list[dict[str, Any]] | None:
        """The ops to propose, or None (after telling the user why) to stay open."""
        raise NotImplementedError

    # -- the edit's phase ----------------------------------------------------------------

    @property
    def fields_live(self) -> bool:
        return self.phase is Phase.EDITING

    def _leave_fields(self, phase: Phase) -> None:
        """Enter ``phase`` now, at key time: later keys of the burst find no field."""
        self.phase = phase
        self._refocus = self.focused
        self._hinted = False
        self.set_focus(None)

    def advance(self, phase: str) -> None:
        """The app moved this edit on: "shown" (the proof is up), "applying" (the write
        started) or "conflict" (a `Phase` value: the app does not import this module)."""
        if self.phase in PROPOSED:
            self.phase = Phase(phase)

    def resume(self) -> None:
        """The proof was abandoned or refused, or the conflict settled: edit again."""
        if self.phase is Phase.CLOSED or not self.is_attached:
            return
        self.phase = Phase.EDITING
        target, self._refocus = self._refocus, None
        if target is not None and target.is_attached and target.screen is self:
            self.set_focus(target)
        else:
            self.focus_next()

    def close(self) -> None:
        """Close the editor, once; if another screen is on top, as soon as it is not."""
        if self.phase is Phase.CLOSED and (self.dismissed or not self.is_attached):
            return
        self.phase = Phase.CLOSED
        self.dismiss(None)

    def on_screen_resume(self) -> None:
        if self.phase is Phase.CLOSED:
            self.dismiss(None)

    def on_key(self, event: events.Key) -> None:
        """A key with no field to go to (the proof is coming): dropped, never a command
        (stopped here, it never reaches the app's bindings: ``?``, ``T``, Tab)."""
        if self.fields_live:
            return
        event.stop()
        event.prevent_default()
        if self.phase is Phase.PENDING and not self._hinted:
            self._hinted = True
            self.notify(DROPPED_HINT, timeout=3)

    def action_submit(self) -> None:
        if not self.fields_live:
            return  # a proof is already asked for (or the editor is closing)
        after_typed(self, self._submit_now)
        self._leave_fields(Phase.PENDING)

    def _submit_now(self) -> None:
        if not self.is_attached or self.phase is not Phase.PENDING:
            return
        ops = self.build_ops()
        if ops:
            self.post_message(ProposeEdit(self.session, ops, editor=self))
        else:
            self.resume()

    def action_cancel(self) -> None:
        if not self.fields_live:
            return
        # The keys typed after Esc wait for its outcome: the question "Discard?" or the
        # editor closed; never the fields it is leaving.
        decide_after_typed(self, self._cancel_now)
        self._leave_fields(Phase.ASKING)

    def _cancel_now(self) -> None:
        if not self.is_attached or self.phase is not Phase.ASKING:
            return
        if not self.dirty():
            self.close()
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.close()
            else:
                self.resume()

        self.app.push_screen(
            ConfirmScreen(
                "Discard the text you typed?",
                "Nothing has been applied yet. y discards it; n (or Esc) goes back to it.",
            ),
            answered,
        )

    # -- callbacks from the app --------------------------------------------------------

    def applied(self, loaded: LoadedDocument | None) -> None:
        """The ops were written. Most editors close; the table grid stays open."""
        self.close()

    def reload_block(self, loaded: LoadedDocument) -> None:
        """Conflict resolved by reloading: show the block as it is now on disk."""

    def keep_editing(self, loaded: LoadedDocument) -> None:
        """Conflict resolved by keeping the user's text against the new block hash."""

    def on_keep_mine(self, message: KeepMine) -> None:
        """ "Keep mine" after a conflict: the text stays, the proof is asked for again."""
        message.stop()
        self.keep_editing(message.loaded)
        self.action_submit()

    def conflict_texts(self, loaded: LoadedDocument) -> ConflictTexts | None:
        """Base / mine / theirs in the editor's own terms (None: the app shows the block)."""
        return None

    def take_merge(self, text: str, base: str) -> None:
        """Conflict resolved by editing a merge: the editor now holds ``text``."""
