"""Messages up to the app: what its workers found, and what a screen asks for.

Workers never touch widgets: they compute in a thread (parse, validate, proof, patch) and
post one of these; the app's handlers (and its `EditPipeline`) update the panes. Screens
never call the app either: each intent is one message (`ProposeEdit`, `UndoRequest`,
`ReloadRequest`, `WriteDocument`); `KeepMine` is the one that goes down, to an editor.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from threading import Event
from typing import Any

from textual.message import Message

from core.noma.api import PatchOutcome, Proof

from .document import LoadedDocument
from .roles import OpenEditor, ShownProof
from .session import EditSession
from .transcript_view import TranscriptSnapshot
from .versions import Changes


@dataclass(eq=False)
class Pending:
    """One proposed edit on its way through proof and apply."""

    session: EditSession
    ops: list[dict[str, Any]]
    path: Path
    title: str
    editor: OpenEditor | None = None
    danger: bool = False
    reason: str | None = None
    select_id: str | None = None
    parent_op_id: str | None = None  # a revert / redo: the record it reverts
    reason_prefix: str | None = None  # "revert <op_id>": always first in the reason
    kind: str = "edit"  # "revert" / "redo": what the undo journal records for it
    proof_screen: ShownProof | None = None  # the proof, kept up while the edit is written


class DocumentLoaded(Message):
    """A fresh version of the open document (``reason``: open, disk, applied, ...), with
    what changed against the version shown when the worker started (None: show it whole)."""

    def __init__(
        self,
        loaded: LoadedDocument,
        reason: str,
        changes: Changes | None = None,
        drawn: Event | None = None,
    ) -> None:
        super().__init__()
        self.loaded = loaded
        self.reason = reason
        self.changes = changes
        # Set once the version is on screen (or will not be shown): the worker that posted
        # a large document's early version waits for it before validating, so the first
        # frame of the tree does not share the interpreter with the validator.
        self.drawn = drawn


class TranscriptLoaded(Message):
    def __init__(self, doc_path: Path, snapshot: TranscriptSnapshot) -> None:
        super().__init__()
        self.doc_path = doc_path
        self.snapshot = snapshot


class FilesListed(Message):
    def __init__(self, paths: list[Path]) -> None:
        super().__init__()
        self.paths = paths


class DiskChanged(Message):
    """The watcher saw these paths change (documents or transcripts)."""

    def __init__(self, paths: set[Path], listing_changed: bool) -> None:
        super().__init__()
        self.paths = paths
        self.listing_changed = listing_changed


class ProofReady(Message):
    def __init__(self, pending: Pending, proof: Proof) -> None:
        super().__init__()
        self.pending = pending
        self.proof = proof


class PatchDone(Message):
    """An apply finished; when it wrote, ``loaded`` is the new version (from the engine's
    post-state) and ``changes`` how it differs from the version shown before."""

    def __init__(
        self,
        pending: Pending,
        outcome: PatchOutcome,
        loaded: LoadedDocument | None = None,
        changes: Changes | None = None,
    ) -> None:
        super().__init__()
        self.pending = pending
        self.outcome = outcome
        self.loaded = loaded
        self.changes = changes


class EditOpened(Message):
    """An editor screen opened an edit (it counts for drift and the status bar)."""

    def __init__(self, session: EditSession) -> None:
        super().__init__()
        self.session = session


class EditClosed(Message):
    """An editor screen closed; its edit no longer counts as open."""

    def __init__(self, session: EditSession) -> None:
        super().__init__()
        self.session = session


class RevertReady(Message):
    """The inverse of a record was computed (or refused with a code)."""

    def __init__(self, record: dict[str, Any], kind: str, result: Any) -> None:
        super().__init__()
        self.record = record
        self.kind = kind  # "revert" or "redo"
        self.result = result  # core.noma.revert.Revert, or a RevertError


class ProposeEdit(Message):
    """The one intent of every edit surface: show the proof of ``ops`` (applied if the
    writer confirms). An editor screen sends itself as ``editor`` (it gets its fields
    back if the proof is abandoned, and its phases follow the edit); a one-key edit
    sends none. Screens post this instead of calling the app; `EditPipeline` does the rest."""

    def __init__(
        self,
        session: EditSession,
        ops: list[dict[str, Any]],
        *,
        editor: OpenEditor | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        self.session = session
        self.ops = ops
        self.editor = editor
        self.options = options  # title, danger, select_id


class KeepMine(Message):
    """Sent down to an editor after a conflict resolved as "keep mine": it takes the block
    as it is now as its base and asks for the proof again itself."""

    def __init__(self, loaded: LoadedDocument) -> None:
        super().__init__()
        self.loaded = loaded


class UndoRequest(Message):
    """The writer asked to undo (``kind`` "revert") or redo ("redo") their last edit, or to
    revert one ``record`` of the transcript; the edit pipeline picks and proposes it."""

    def __init__(self, kind: str, record: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.kind = kind
        self.record = record


class ReloadRequest(Message):
    """Read the open document, its transcript and the file list again."""


class WriteDocument(Message):
    """Write a template: a new document ``name`` (``loaded`` None) or the first content of
    the empty document ``loaded``."""

    def __init__(self, text: str, *, name: str = "", loaded: LoadedDocument | None = None) -> None:
        super().__init__()
        self.text = text
        self.name = name
        self.loaded = loaded
