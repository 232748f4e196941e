"""What the app and its screens are to each other, as Protocols.

Screens and panes sit below the app class: they are handed what they need and post
messages up, so they never import `noma_tui.app`, not even for a type. `WorkbenchHost` is
the part of the app that screens read; `OpenEditor` and `ShownProof` are what the edit
pipeline (and the messages carrying an edit, `noma_tui.messages.Pending`) need from an
editor screen and from the proof screen. mypy checks that the real classes fit
(`noma_tui.app` assigns itself and its screens to these types).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast

from textual.message import Message
from textual.signal import Signal

from core.noma.api import Actor
from core.workspace import Workspace

from .config import WorkbenchConfig
from .document import LoadedDocument
from .merge import ConflictTexts
from .typeahead import KeyGate


class WorkbenchHost(Protocol):
    """The workbench as its screens see it (attributes down): the open workspace and
    document, the actor, the key gate and the drift signal. What screens ask of the app
    (an edit, undo, reload, a new document) goes up as messages (`noma_tui.messages`)."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def config(self) -> WorkbenchConfig: ...

    @property
    def loaded(self) -> LoadedDocument | None: ...

    @property
    def actor(self) -> Actor: ...

    @property
    def drift_signal(self) -> Signal[bool]: ...

    @property
    def gate(self) -> KeyGate: ...

    @property
    def panes_ready(self) -> bool: ...

    def start(self) -> None: ...


def workbench_of(app: object) -> WorkbenchHost:
    """The running app as a `WorkbenchHost`: screens and panes are only ever mounted in the
    workbench (`noma_tui.app` checks statically that it fits the Protocol)."""
    return cast(WorkbenchHost, app)


class OpenEditor(Protocol):
    """An editor screen with an edit on its way through proof and apply."""

    @property
    def STAYS_OPEN(self) -> bool: ...  # the editor class's constant, read on an instance

    @property
    def title_text(self) -> str: ...

    def resume(self) -> None: ...

    def advance(self, phase: str) -> None: ...

    def close(self) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def applied(self, loaded: LoadedDocument | None) -> None: ...

    def reload_block(self, loaded: LoadedDocument) -> None: ...

    def keep_editing(self, loaded: LoadedDocument) -> None: ...

    def conflict_texts(self, loaded: LoadedDocument) -> ConflictTexts | None: ...

    def take_merge(self, text: str, base: str) -> None: ...


class ShownProof(Protocol):
    """The proof screen, kept up while its edit is written."""

    def finish(self, then: Callable[[], None]) -> None: ...
