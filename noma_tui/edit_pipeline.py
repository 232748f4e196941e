"""One object owns every edit from the request to its end: propose → proof → apply →
done, or conflict, or backed out.

The app creates one `EditPipeline` and routes the edit messages to it (`ProposeEdit`,
`EditOpened` / `EditClosed`, and its own workers' `ProofReady`, `PatchDone`,
`RevertReady`); screens never call it, they post those messages up. Down, it moves an
editor through its phases (`OpenEditor.advance`: shown, applying, conflict; then closed),
pushes the proof and conflict screens, and tells the app what the status line and the
panes show (`PipelineHost.show_edit_state`, ``status_text``, `PipelineHost.take`).

One proof at a time: a request while another is being built, shown or written is a
no-op (the editor gets its fields back). Undo and redo are edits too: which record they
revert is `core.noma.undo_select`, with each record's kind known as data (this session's
writes, the undo journal, the causation chain).

Blocking work (the proof, the apply, an inverse, the undo journal) runs in thread
workers of the app that post messages back; failures reach the user as notifications
titled with their code, never as a traceback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.timer import Timer
from textual.worker import Worker

from core.noma.api import (
    REDO,
    REVERT,
    SHA_MISMATCH,
    Actor,
    DocumentCache,
    PatchOutcome,
    PatchRequest,
    build_proof,
    patch_file,
    promote_fresh,
    record_kinds,
    redo_target,
    transcript_path,
    undo_target,
)

from .document import LoadedDocument
from .errors import guarded
from .gc_policy import IdleCollector
from .merge import ConflictTexts, block_texts, merge3
from .messages import (
    KeepMine,
    PatchDone,
    Pending,
    ProofReady,
    ProposeEdit,
    RevertReady,
)
from .roles import OpenEditor
from .screens.conflict import Choice, ConflictScreen
from .screens.proof import ProofScreen
from .session import EditSession
from .transcript_view import TranscriptSnapshot, op_summary
from .typeahead import KeyGate
from .undo_journal import UndoJournal, step_between
from .undo_targets import own_records, selection_after
from .versions import Changes

PROOF_HINT_DELAY = 0.3  # seconds a proof may take before the status bar says it is coming
EDIT_GROUPS = ("proof", "apply")  # the workers of one edit (one at a time)


class PipelineHost(Protocol):
    """What the pipeline needs from the app: the open document and its versions, the
    Textual services it runs on, and the few load steps an apply ends with."""

    status_text: str  # the status line's message (the app shows it; one place)

    @property
    def doc_path(self) -> Path | None: ...

    @property
    def loaded(self) -> LoadedDocument | None: ...

    @property
    def transcript(self) -> TranscriptSnapshot | None: ...

    @property
    def cache(self) -> DocumentCache: ...

    @property
    def actor(self) -> Actor: ...

    @property
    def root(self) -> Path: ...

    @property
    def cursor_blink(self) -> bool: ...

    @property
    def versions(self) -> dict[str, str]: ...

    @property
    def own_writes(self) -> dict[Path, str]: ...

    @property
    def gate(self) -> KeyGate: ...

    @property
    def collector(self) -> IdleCollector: ...

    @property
    def panes_ready(self) -> bool: ...

    @property
    def drift_signal(self) -> Signal[bool]: ...

    @property
    def workers(self) -> Any: ...

    @property
    def log(self) -> Any: ...

    @property
    def is_headless(self) -> bool: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None: ...

    def push_screen(
        self, screen: Screen[Any], callback: Any = None, wait_for_dismiss: bool = False
    ) -> Any: ...

    def post_message(self, message: Any) -> bool: ...

    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Worker[Any]: ...

    def set_timer(self, delay: float, callback: Callable[[], object]) -> Timer: ...

    def call_after_refresh(self, callback: Callable[..., object], *args: Any) -> bool: ...

    def show_edit_state(self, editing: str, drift: bool) -> None: ...

    def applied_version(
        self, path: Path, outcome: PatchOutcome
    ) -> tuple[LoadedDocument | None, Changes | None]: ...

    def take(self, loaded: LoadedDocument, changes: Changes | None) -> None: ...

    def after_load(self, callback: Callable[[LoadedDocument], None]) -> None: ...

    def select_after_load(self, block_id: str | None) -> None: ...

    def start_load(self, path: Path, reason: str) -> object: ...

    def start_transcript(self, path: Path) -> object: ...

    def transcript_grew(self, path: Path, records: list[dict[str, Any]]) -> None: ...

    def reload(self) -> None: ...


class EditPipeline:
    """The edits of one app: the open sessions, the one edit in flight, undo and redo."""

    def __init__(self, host: PipelineHost) -> None:
        self.host = host
        self.sessions: list[EditSession] = []  # open edits (the status bar, drift)
        self.inflight: Pending | None = None
        self._proof_hint: Timer | None = None
        self._shown_proof: ProofScreen | None = None  # the proof up now (one at a time)
        self._journal_lock = threading.Lock()  # one journal read or write at a time
        self._kinds: dict[str, str] = {}  # op_id -> edit/revert/redo of this session's writes

    # What `errors.guarded` reports through: the app.
    @property
    def app(self) -> PipelineHost:
        return self.host

    @property
    def log(self) -> Any:
        return self.host.log

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None:
        self.host.notify(message, title=title, severity=severity, timeout=timeout)

    # -- sessions ------------------------------------------------------------------------

    def begin_session(self, session: EditSession) -> None:
        if session not in self.sessions:
            self.sessions.append(session)
        loaded = self.host.loaded
        if loaded is not None:
            session.observe(loaded, self.host.own_writes.get(loaded.path))
        self.refresh_edit_state()

    def end_session(self, session: EditSession) -> None:
        if session in self.sessions:
            self.sessions.remove(session)
        self.refresh_edit_state()

    def observe(self, loaded: LoadedDocument) -> None:
        """A version was shown: each open edit re-checks its drift against it."""
        for session in self.sessions:
            session.observe(loaded, self.host.own_writes.get(loaded.path))
        self.refresh_edit_state()

    @property
    def drift(self) -> bool:
        """True while an open edit was prepared against an older version of the file."""
        return any(s.drift for s in self.sessions)

    def refresh_edit_state(self) -> None:
        if not self.host.panes_ready:
            return
        last = self.sessions[-1] if self.sessions else None
        editing = f"{last.action} {last.target}" if last is not None else ""
        self.host.show_edit_state(editing, self.drift)

    # -- propose and proof ---------------------------------------------------------------

    def request(self, message: ProposeEdit) -> None:
        """The one intent of every edit surface: show the proof of these ops."""
        self.propose(message.session, message.ops, editor=message.editor, **message.options)

    def propose(
        self,
        session: EditSession,
        ops: list[dict[str, Any]],
        *,
        editor: OpenEditor | None = None,
        title: str | None = None,
        danger: bool = False,
        select_id: str | None = None,
        parent_op_id: str | None = None,
        reason_prefix: str | None = None,
        kind: str = "edit",
    ) -> None:
        """Show the proof for ``ops``; apply them if the writer confirms. One proof at a
        time: a request while another is being built or shown is a no-op."""
        path = self.host.doc_path
        if path is None or self.proof_busy:
            if editor is not None:
                editor.resume()
            self.host.gate.release()
            return
        if editor is None:
            self.begin_session(session)
        names = ", ".join(str(op.get("op")) for op in ops)
        pending = Pending(
            session,
            ops,
            path,
            title or (editor.title_text if editor is not None else names),
            editor,
            danger,
            select_id=select_id or selection_after(ops),
            parent_op_id=parent_op_id,
            reason_prefix=reason_prefix,
            kind=kind,
        )
        self.inflight = pending
        self._hint_proof(pending)
        self.host.run_worker(
            partial(self._build_proof, pending),
            thread=True,
            exclusive=True,
            exit_on_error=False,
            group="proof",
        )

    @property
    def proof_busy(self) -> bool:
        """True while a proof is being built, shown, or its edit written."""
        shown = self._shown_proof
        if shown is not None and shown.is_attached and not shown.dismissed:
            return True
        return any(w.group in EDIT_GROUPS and w.is_running for w in self.host.workers)

    def _hint_proof(self, pending: Pending | None) -> None:
        """Say "preparing the proof…" only if the proof is slow to come (``None`` ends it).

        A status change under a modal editor repaints the screens beneath it, and on a
        5,000-section document that repaint took the GIL from the proof's worker for ~40
        ms: most proofs are drawn before a person could read the word.
        """
        if self._proof_hint is not None:
            self._proof_hint.stop()
            self._proof_hint = None
        if pending is None:
            return

        def slow() -> None:
            self._proof_hint = None
            if self.inflight is pending and self.host.panes_ready:
                self.host.status_text = "preparing the proof…"

        self._proof_hint = self.host.set_timer(PROOF_HINT_DELAY, slow)

    def _request(self, pending: Pending) -> PatchRequest:
        session = pending.session
        reason = pending.reason
        if pending.reason_prefix:
            reason = f"{pending.reason_prefix}: {reason}" if reason else pending.reason_prefix
        return PatchRequest(
            ops=[session.stamp(op) for op in pending.ops],
            actor=self.host.actor,
            reason=reason,
            base_sha256=session.base_sha256,
            parent_op_id=pending.parent_op_id,
        )

    def _build_proof(self, pending: Pending) -> None:  # in a worker thread
        proof = build_proof(pending.path, self._request(pending), cache=self.host.cache)
        promote_fresh()  # the post-state just built: young GC passes while drawing are waste
        self.host.post_message(ProofReady(pending, proof))

    @guarded
    def proof_ready(self, message: ProofReady) -> None:
        host = self.host
        if not host.panes_ready:
            host.gate.release()
            return
        pending, proof = message.pending, message.proof
        self._hint_proof(None)
        host.status_text = ""
        if not proof.ok:
            host.gate.release()  # no proof to hand the keys to: they go where they go
            code = proof.outcome.code or "rejected"
            if code == SHA_MISMATCH:
                self._conflict(pending, proof.outcome.error or "")
            else:
                self.notify(proof.outcome.error or code, title=code, severity="error", timeout=10)
                self._drop(pending)
            return

        def decided(reason: str | None) -> None:
            if reason is None:  # back out (applying goes through `confirmed`)
                self._drop(pending)

        def confirmed(reason: str) -> None:
            pending.reason = reason or None
            pending.proof_screen = screen
            if pending.editor is not None:
                pending.editor.advance("applying")
            host.run_worker(
                partial(self._apply, pending),
                thread=True,
                exclusive=True,
                exit_on_error=False,
                group="apply",
            )

        host.collector.touched()  # the proof left garbage behind; the writer now reads
        screen = ProofScreen(
            proof,
            pending.session,
            f"Proof · {pending.title}",
            danger=pending.danger,
            cursor_blink=host.cursor_blink,
            on_confirm=confirmed,
        )
        self._shown_proof = screen
        if pending.editor is not None:
            pending.editor.advance("shown")
        host.push_screen(screen, decided)

    def _close_proof(self, pending: Pending, then: Callable[[], None]) -> None:
        """Close the proof that stayed up while ``pending`` was written, then ``then()``."""
        screen = pending.proof_screen
        pending.proof_screen = None
        if screen is None:
            then()
        else:
            screen.finish(then)

    def _drop(self, pending: Pending) -> None:
        """An edit without its own editor screen ends when its proof is abandoned; an
        editor gets its fields back."""
        if pending.editor is None:
            self.end_session(pending.session)
        else:
            pending.editor.resume()

    # -- apply -----------------------------------------------------------------------------

    def _apply(self, pending: Pending) -> None:  # in a worker thread
        outcome = patch_file(
            pending.path, self._request(pending), cache=self.host.cache, root=self.host.root
        )
        loaded, changes = (None, None)
        if outcome.ok:
            # Built here, not in another worker after the editor closed: the main screen
            # then comes back already showing the new version (one repaint, not two).
            loaded, changes = self.host.applied_version(pending.path, outcome)
        self.host.post_message(PatchDone(pending, outcome, loaded, changes))

    @guarded
    def patch_done(self, message: PatchDone) -> None:
        if not self.host.panes_ready:
            return
        # The records the engine appended (a rejected op is recorded too) reach the
        # transcript pane from the outcome; the file is not read again.
        self.host.transcript_grew(message.pending.path, message.outcome.records)
        self._close_proof(message.pending, partial(self._patch_done, message))

    @guarded
    def _patch_done(self, message: PatchDone) -> None:
        """The outcome of an apply, shown once its proof is closed (the editor is on top)."""
        host = self.host
        if not host.panes_ready:
            return
        pending, outcome = message.pending, message.outcome
        if outcome.ok:
            host.own_writes[pending.path] = outcome.post_sha256
            before = host.versions.get(outcome.pre_sha256)
            op_id = str(outcome.records[0].get("op_id") or "") if outcome.records else ""
            if op_id:
                self._kinds[op_id] = pending.kind
            if before is not None and message.loaded is not None:
                after = message.loaded.source.text
                host.call_after_refresh(
                    self.journal_step, pending.path, before, after, op_id, pending.kind
                )
            results = ", ".join(f"{r['op'].get('op')} {r['patch_result']}" for r in outcome.records)
            text = f"{results} · {outcome.pre_sha256[:8]} → {outcome.post_sha256[:8]}"
            if outcome.drift:
                text += " · base_sha_drift recorded"
            self.notify(text, title="Applied", timeout=4)
            if outcome.transcript_error:
                self.notify(outcome.transcript_error, title="transcript", severity="warning")
            editor = pending.editor
            if editor is not None and editor.STAYS_OPEN:
                host.after_load(editor.applied)
            else:
                # Done now: the status line stops saying "editing" before the panes
                # redraw, not when the editor's screen is finally unmounted.
                self.end_session(pending.session)
                if editor is not None:
                    editor.close()
            host.select_after_load(pending.select_id)
            if message.loaded is not None and message.loaded.path == host.doc_path:
                host.take(message.loaded, message.changes)
            else:
                host.start_load(pending.path, "applied")
        elif outcome.code == SHA_MISMATCH:
            self._conflict(pending, outcome.error or "")
        else:
            code = outcome.code or "rejected"
            self.notify(outcome.error or code, title=code, severity="error", timeout=10)
            self._drop(pending)

    def worker_failed(self, group: str | None) -> None:
        """A worker of an edit raised (the app has said so): the edit backs out."""
        if group in (*EDIT_GROUPS, "revert"):
            self.host.gate.release()
        if group in EDIT_GROUPS and self.inflight is not None:
            self._hint_proof(None)
            self._close_proof(self.inflight, partial(self._drop, self.inflight))

    # -- conflict --------------------------------------------------------------------------

    def _conflict(self, pending: Pending, message: str) -> None:
        session, editor = pending.session, pending.editor
        if editor is None:
            self.end_session(session)
            self.notify(
                f"{message} Nothing was written; look at the block again and retry.",
                title=SHA_MISMATCH,
                severity="error",
                timeout=10,
            )
            self.host.reload()
            return

        editor.advance("conflict")

        def show(loaded: LoadedDocument) -> None:
            texts = editor.conflict_texts(loaded) or self._block_texts(pending, loaded)
            screen = ConflictScreen(SHA_MISMATCH, message, session.target, texts)

            def chosen(choice: Choice | None) -> None:
                self._resolve(pending, loaded, texts, choice or "back")

            self.host.push_screen(screen, chosen)

        self.host.after_load(show)
        if self.host.doc_path is not None:
            self.host.start_load(self.host.doc_path, "conflict")

    def _block_texts(self, pending: Pending, loaded: LoadedDocument) -> ConflictTexts:
        session = pending.session
        block = session.current_block(loaded)
        theirs = loaded.block_text(block).replace("\r", "") if block is not None else ""
        base_doc = self.host.versions.get(session.base_sha256)
        return block_texts(base_doc, pending.ops, session.target, theirs or "(removed)")

    def _resolve(
        self, pending: Pending, loaded: LoadedDocument, texts: ConflictTexts, choice: Choice
    ) -> None:
        session, editor = pending.session, pending.editor
        assert editor is not None
        editor.resume()
        if choice == "back":
            return  # the editor, its text untouched; the next apply meets the conflict again
        if not session.rebase(loaded, keep_file_base=choice != "theirs"):
            self.notify(
                f"'{session.target}' is no longer in the document.",
                title="target_missing",
                severity="error",
            )
            editor.close()
            return
        self.refresh_edit_state()
        if choice == "theirs":
            editor.reload_block(loaded)
            self.notify("Took theirs: the editor shows the block as it is on disk.", timeout=4)
        elif choice == "mine":
            # The editor keeps its text and asks for the proof again (against theirs'
            # block hash) itself: a message down, never its submit action called from here.
            editor.post_message(KeepMine(loaded))
        else:
            merged, conflicts = merge3(texts.base, texts.mine, texts.theirs)
            editor.take_merge(merged, texts.theirs)
            note = (
                f"{conflicts} overlapping change(s) are marked <<<<<<< mine / >>>>>>> theirs: "
                "settle them, then ctrl+s."
                if conflicts
                else "Merged both changes: check the text, then ctrl+s."
            )
            self.notify(note, title="merge", timeout=8)

    # -- undo / redo -----------------------------------------------------------------------

    def own_records(self) -> list[dict[str, Any]]:
        """This actor's applied records in the open document, oldest first."""
        snapshot, doc = self.host.transcript, self.host.doc_path
        if snapshot is None or snapshot.path != transcript_path(doc or Path()):
            return []
        actor = self.host.actor
        return own_records(snapshot, {"kind": actor.kind, "name": actor.name})

    def record_kinds(self, own: list[dict[str, Any]]) -> dict[str, str]:
        """op_id -> edit / revert / redo, by data (the undo journal, this session's
        writes, the causation chain), never by the reason text."""
        snapshot = self.host.transcript
        journal = dict(snapshot.kinds) if snapshot is not None else {}
        return record_kinds(own, {**journal, **self._kinds})

    def undo_target(self) -> dict[str, Any] | None:
        own = self.own_records()
        return undo_target(own, self.record_kinds(own))

    def redo_target(self) -> dict[str, Any] | None:
        own = self.own_records()
        return redo_target(own, self.record_kinds(own))

    def undo(self) -> None:
        record = self.undo_target()
        if record is None:
            self.notify("No edit of yours in this document to undo.", title="undo")
            return
        self.revert(record, REVERT)

    def redo(self) -> None:
        record = self.redo_target()
        if record is None:
            self.notify("Nothing to redo (or a new edit came after the undo).", title="redo")
            return
        self.revert(record, REDO)

    def journal_step(self, path: Path, before: str, after: str, op_id: str, kind: str) -> None:
        """Keep the way back from ``after`` to ``before`` (undo after a restart)."""

        def write() -> None:
            with self._journal_lock:
                UndoJournal(path).add(step_between(before, after, op_id=op_id, kind=kind))

        self.host.run_worker(write, thread=True, exit_on_error=False, group="journal")

    def revert(self, record: dict[str, Any], kind: str = REVERT) -> None:
        """Show the proof of reverting ``record`` (a redo reverts a revert)."""
        loaded, path = self.host.loaded, self.host.doc_path
        if loaded is None or path is None:
            return
        pre = self.host.versions.get(str(record.get("pre_sha256")))
        self.host.status_text = f"preparing the {kind}…"
        self.host.gate.hold(record)  # keys typed after u wait for its proof
        self.host.run_worker(
            partial(self._inverse, record, kind, pre, loaded.source.text, path),
            thread=True,
            exclusive=True,
            exit_on_error=False,
            group="revert",
        )

    def _inverse(  # in a worker thread
        self, record: dict[str, Any], kind: str, pre: str | None, current: str, path: Path
    ) -> None:
        from core.noma.api import PRE_STATE_UNKNOWN, RevertError, inverse

        result: Any
        if pre is None:  # not seen by this session: walk the undo journal back to it
            with self._journal_lock:
                pre = UndoJournal(path).version(str(record.get("pre_sha256")), current)
        try:
            if pre is None:
                raise RevertError(
                    PRE_STATE_UNKNOWN,
                    f"The version before this edit ({str(record.get('pre_sha256'))[:8]}) is "
                    "neither in this session nor reachable through the undo journal (the "
                    "file was changed outside the app while it was closed, or the journal "
                    "was cleared), so its inverse cannot be computed.",
                )
            result = inverse(record, pre, current)
        except RevertError as exc:
            result = exc
        self.host.post_message(RevertReady(record, kind, result))

    @guarded
    def revert_ready(self, message: RevertReady) -> None:
        host = self.host
        if not host.panes_ready:
            return
        from core.noma.api import RevertError

        host.status_text = ""
        result, record = message.result, message.record
        what = f"{message.kind} of {op_summary(record.get('op'))}"
        if isinstance(result, RevertError):
            host.gate.release()
            hint = " Nothing was written." if result.code == SHA_MISMATCH else ""
            self.notify(result.message + hint, title=result.code, severity="error", timeout=10)
            return
        loaded = host.loaded
        if loaded is None:
            host.gate.release()
            return
        session = EditSession(message.kind, result.target, loaded.sha256, None)
        self.propose(
            session,
            result.ops,
            title=f"{what.capitalize()} → {result.summary}",
            parent_op_id=result.op_id or None,
            reason_prefix=f"{message.kind} {result.op_id}",
            kind=message.kind,
        )
