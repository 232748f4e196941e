"""The workbench app: loads documents, watches the disk, and runs every edit through the
engine.

Data flow (architecture.md): a key opens an editor holding an `EditSession`; its ops go to
`core.noma.proof.build_proof` (a dry run shown to the writer), then to
`core.noma.patch.pipeline.patch_file` with ``actor.kind = "human"``, the file's sha256 at
the time the edit opened and each op's block ``baseHash``. The apply worker then builds the
new version from the engine's post-state (the one the proof built; the file is not read
again), and the panes redraw what `noma_tui.versions.diff_versions` says changed. The
watcher does the same for changes made by anyone else: the new version is spliced from the
one on screen (`core.noma.incremental`), never parsed whole when a splice can do.

All blocking work is in thread workers that post messages back; failures reach the user as
notifications titled with their code, never as a traceback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.timer import Timer
from textual.worker import Worker, WorkerState, get_current_worker
from watchfiles import Change, DefaultFilter, awatch

from core.noma.api import (
    SHA_MISMATCH,
    Actor,
    DocumentCache,
    DocumentIOError,
    PatchOutcome,
    PatchRequest,
    build_proof,
    patch_file,
    promote_fresh,
    touch,
    transcript_path,
    visible,
)
from core.trust import TrustStore
from core.workspace import STATE_DIR, Workspace, WorkspaceError
from themes import DEFAULT_THEME, STYLESHEET, THEME_CYCLE, THEMES, VARIABLE_DEFAULTS

from .config import WorkbenchConfig
from .document import LoadedDocument, from_state
from .document import load_document as read_loaded
from .errors import error_code, error_text, guarded
from .gc_policy import IdleCollector
from .history import TranscriptSnapshot, load_transcript
from .keys import ALL_ACTIONS, APP_ACTIONS, FLOW_ACTIONS, display_key
from .merge import ConflictTexts, block_texts, merge3
from .messages import (
    DiskChanged,
    DocumentLoaded,
    EditClosed,
    EditOpened,
    EditProposed,
    FilesListed,
    PatchDone,
    Pending,
    ProofReady,
    ProposeEdit,
    RevertReady,
    TranscriptLoaded,
)
from .roles import OpenEditor, WorkbenchHost
from .screens.conflict import Choice, ConflictScreen
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .screens.proof import ProofScreen
from .screens.trust import TrustScreen, is_restricted
from .session import EditSession
from .typeahead import KeyGate
from .undo_journal import UndoJournal, own_kinds, step_between
from .undo_targets import own_records, redo_target, selection_after, undo_target
from .versions import Changes, diff_versions
from .visible import plain

WATCHED_SUFFIXES = (".noma", ".noma.patches")
PANE_IDS = "#files, #tree, #block, #diagnostics, #transcript, #status"
PROOF_HINT_DELAY = 0.3  # seconds a proof may take before the status bar says it is coming
WATCH_TICK_MS = 500  # the watcher reports "still watching" this often when idle


class _WorkspaceFilter(DefaultFilter):
    """Documents and transcripts only; never the state dir or temp files of atomic writes."""

    def __call__(self, change: Change, path: str) -> bool:
        if not path.endswith(WATCHED_SUFFIXES) or not super().__call__(change, path):
            return False
        return STATE_DIR not in Path(path).parts


class WorkbenchApp(App[None]):
    TITLE = "Noma Workbench"
    CSS_PATH = str(STYLESHEET)
    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in APP_ACTIONS]

    def __init__(
        self,
        workspace: Workspace,
        *,
        document: Path | None = None,
        config: WorkbenchConfig | None = None,
        single_file: bool = False,
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self.config = config or WorkbenchConfig.from_workspace(workspace)
        self.single_file = single_file
        self.doc_path: Path | None = document.resolve() if document is not None else None
        if self.doc_path is None and self.config.open:
            candidate = (workspace.root / self.config.open).resolve()
            # The folder's config names a document of the folder, never a file outside it.
            if candidate.is_file() and candidate.is_relative_to(workspace.root):
                self.doc_path = candidate
        self.cache = DocumentCache()
        self.loaded: LoadedDocument | None = None
        self.transcript: TranscriptSnapshot | None = None
        self.documents: list[Path] = []
        self.sessions: list[EditSession] = []
        self.loads = 0  # documents shown so far (tests and the bench wait on it)
        self.applied_builds = 0  # versions shown from an edit's post-state (tests read it)
        self.collector = IdleCollector(self)  # full GC passes wait for an idle moment
        self.watching = False  # True once the file watcher is in place
        self._after_load: list[Callable[[LoadedDocument], None]] = []
        self._select_after_load: str | None = None
        self._inflight: Pending | None = None
        self._proof_hint: Timer | None = None
        self._shown_proof: ProofScreen | None = None  # the proof up now (one at a time)
        # Every version of the open documents this session has seen, by sha256: the
        # pre-states undo needs (core.noma.revert). Bounded; the oldest go first.
        self.versions: dict[str, str] = {}
        # The sha256 of this app's last write of each document: the bytes an apply of
        # ours produced are never reported as drift (`EditSession.observe`).
        self.own_writes: dict[Path, str] = {}
        self._journal_lock = threading.Lock()  # one journal read or write at a time
        self._kinds: dict[str, str] = {}  # op_id -> edit/revert/redo of this session's writes
        self._main = MainScreen()
        # Published whenever the drift of the open edits may have changed; editor screens
        # subscribe (attributes down, signals across) instead of the app walking its stack.
        self.drift_signal: Signal[bool] = Signal(self, "drift")
        # Keys typed while a dialog opens or a proof is prepared wait here (type-ahead).
        self.gate = KeyGate(self._dispatch_key, self.call_later, self._still_waited_for)
        for theme in THEMES:
            self.register_theme(theme)
        self.theme = self.config.theme if self.get_theme(self.config.theme) else DEFAULT_THEME

    # -- set-up ------------------------------------------------------------------------------

    @property
    def actor(self) -> Actor:
        return Actor("human", self.config.actor or self.workspace.actor_name)

    @property
    def main(self) -> MainScreen:
        return self._main

    def get_default_screen(self) -> Screen[Any]:
        return self._main

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every toast (the app's, any screen's or widget's) shows its text literally: a
        message quoting an id or a value is neither markup nor terminal controls."""
        super().notify(
            visible(message), title=plain(title), severity=severity, timeout=timeout, markup=False
        )

    # -- keys ---------------------------------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and self.gate.intercepts():
            self.gate.keep(event)
            return
        await super().on_event(event)

    async def _dispatch_key(self, event: events.Key) -> None:
        if not self._exit:  # shutting down: a kept key has nowhere to go
            await super().on_event(event)

    def _still_waited_for(self, token: object) -> bool:
        """A held screen that left the stack before it was ready releases the keys."""
        if not isinstance(token, Screen):
            return True
        return token.is_attached and not getattr(token, "dismissed", False)

    def push_screen(  # type: ignore[override]
        self,
        screen: Screen[Any] | str,
        callback: Any = None,
        wait_for_dismiss: bool = False,
    ) -> Any:
        """Push ``screen``; keys typed from now on wait until it has focus (type-ahead)."""
        result = super().push_screen(screen, callback, wait_for_dismiss)  # type: ignore[call-overload]
        pushed = self.screen
        self.gate.hold(pushed)
        # Queued behind the screen's own resume (which focuses its first field).
        if not pushed.call_later(partial(self.gate.release, pushed)):
            self.gate.release(pushed)
        return result

    def on_unmount(self) -> None:
        self.collector.close()

    def start(self) -> None:
        """Theme, keymap, first load. Called by `MainScreen.on_mount` once every pane is
        mounted (not from the app's own mount), so no handler queries a missing pane."""
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        for problem in self.config.problems:
            self.notify(problem, title="noma-workbench.toml", severity="warning", timeout=10)
        self.main.status.message = f"workspace {self.workspace.root.name}"
        self.show_trust()
        if self.main.status.restricted:
            self.notify(
                f"{self.workspace.trust.reason}. What it asks for stays off: press "
                f"{display_key(self.config.keymap.get('app.trust', 'T'))} to see it and trust "
                "the folder.",
                title="restricted: untrusted folder",
                severity="warning",
                timeout=10,
            )
        self.refresh_files()
        if self.doc_path is not None:
            self.open_document(self.doc_path)
        if self.config.watch:
            self.watch_workspace()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "quit_app":
            return self.screen is self._main
        return True

    # -- documents ---------------------------------------------------------------------------

    def open_document(self, path: Path) -> None:
        path = path.resolve()
        self.doc_path = path
        self.main.files.set_files(self.documents, self.workspace.root, path)
        self.main.tell_flow_pane(path)
        self.main.status.message = f"opening {path.name}…"
        self.start_load(path, "open")
        self.start_transcript(path)

    def reload(self) -> None:
        if self.doc_path is not None:
            self.start_load(self.doc_path, "manual")
            self.start_transcript(self.doc_path)
        self.refresh_files()

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def start_load(self, path: Path, reason: str) -> None:
        if reason == "open":
            # Opening a document settles an edit a crash interrupted (write-ahead commit):
            # the new document gets its record, or the old one stays with none.
            try:
                recovery = touch(path, self.workspace.root)
            except OSError as exc:  # a refused path (BoundaryError) says why
                recovery = None
                self.call_from_thread(self.notify, f"{path.name}: {exc}", severity="error")
            if recovery is not None:
                self.call_from_thread(self.notify, f"{path.name}: {recovery.describe()}")
        shown = self._shown(path) if reason != "open" else None
        loaded = read_loaded(path, root=self.workspace.root, cache=self.cache, shown=shown)
        changes = diff_versions(shown, loaded) if shown is not None else None
        if not get_current_worker().is_cancelled:
            self.post_message(DocumentLoaded(loaded, reason, changes))

    def _shown(self, path: Path) -> LoadedDocument | None:
        """The version of ``path`` on screen: the base a new version is spliced from and
        diffed against (read from a worker: a reference, never mutated)."""
        shown = self.loaded
        return shown if shown is not None and shown.path == path else None

    def _applied_version(
        self, path: Path, outcome: PatchOutcome
    ) -> tuple[LoadedDocument | None, Changes | None]:
        """The version an edit of ours wrote, built in the apply worker: the engine's
        post-state (kept in the cache by `patch_file`) and the outcome's text, so the file
        is neither read again nor parsed. Without them (an evicted state, no text) it is
        loaded as usual; (None, None) if even that fails (the panes then load it later)."""
        self.applied_builds += 1
        shown = self._shown(path)
        text = outcome.new_text
        state = self.cache.get(path, outcome.post_sha256) if text is not None else None
        try:
            if text is None or state is None or (state.text is not None and state.text != text):
                loaded = read_loaded(path, root=self.workspace.root, cache=self.cache, shown=shown)
            else:
                loaded = from_state(
                    path, text, outcome.post_sha256, state, root=self.workspace.root, previous=shown
                )
        except DocumentIOError:
            return None, None
        return loaded, diff_versions(shown, loaded) if shown is not None else None

    @guarded
    def on_document_loaded(self, message: DocumentLoaded) -> None:
        if not self.panes_ready:
            return
        if message.loaded.path != self.doc_path:
            return
        self._take(message.loaded, message.changes)

    def _take(self, loaded: LoadedDocument, changes: Changes | None) -> None:
        """Make ``loaded`` the shown version: panes, open edits' drift, waiting callbacks."""
        previous = self.loaded
        select = self._select_after_load
        self._select_after_load = None
        unchanged = (
            previous is not None
            and previous.path == loaded.path
            and previous.sha256 == loaded.sha256
            and previous.read_only == loaded.read_only
        )
        if unchanged and previous is not None:
            # The same bytes again (the watcher seeing our own write, a touch): keep the
            # object the panes hold, so the next version is diffed against what they show.
            loaded = previous
        self.loaded = loaded
        self._remember(loaded)
        if (
            previous is not None
            and previous.path == loaded.path
            and previous.sha256 != loaded.sha256
            and self.own_writes.get(loaded.path) != loaded.sha256  # journaled with its op
        ):
            # After the frame that shows the version: the splice is not worth a late frame.
            self.call_after_refresh(
                self.journal_step, loaded.path, previous.source.text, loaded.source.text, "", ""
            )
        if not unchanged or select is not None:
            self.main.status.message = ""
            self.main.show_document(loaded, select_id=select, changes=changes)
            self.loads += 1
            self.collector.touched()
        for session in self.sessions:
            session.observe(loaded, self.own_writes.get(loaded.path))
        self._refresh_edit_state()
        callbacks, self._after_load = self._after_load, []
        for callback in callbacks:
            callback(loaded)

    @work(thread=True, exclusive=True, exit_on_error=False, group="transcript")
    def start_transcript(self, path: Path) -> None:
        snapshot = load_transcript(path)
        if not get_current_worker().is_cancelled:
            self.post_message(TranscriptLoaded(path, snapshot))

    @guarded
    def on_transcript_loaded(self, message: TranscriptLoaded) -> None:
        if not self.panes_ready:
            return
        if message.doc_path != self.doc_path:
            return
        self.transcript = message.snapshot
        self.main.transcript.show(message.snapshot)

    @work(thread=True, exclusive=True, exit_on_error=False, group="files")
    def refresh_files(self) -> None:
        root = self.workspace.root
        if self.single_file:
            paths = sorted(p.resolve() for p in root.glob("*.noma") if p.is_file())
        else:
            paths = [p.resolve() for p in self.workspace.documents()]
        self.post_message(FilesListed(paths))

    @guarded
    def on_files_listed(self, message: FilesListed) -> None:
        if not self.panes_ready:
            return
        self.documents = message.paths
        self.main.files.set_files(message.paths, self.workspace.root, self.doc_path)
        if self.doc_path is None:
            if message.paths:
                self.open_document(message.paths[0])
            else:
                self.main.status.message = f"No .noma documents in {self.workspace.root.name}"

    # -- watching the disk -------------------------------------------------------------------

    @work(exclusive=True, group="doc-watch", exit_on_error=False)
    async def watch_workspace(self) -> None:
        """Re-read what changed on disk, whoever changed it (editor, agent, git)."""
        async for changes in awatch(
            self.workspace.root,
            watch_filter=_WorkspaceFilter(),
            recursive=not self.single_file,
            debounce=400,
            step=25,
            rust_timeout=WATCH_TICK_MS,
            yield_on_timeout=True,
        ):
            self.watching = True  # the first tick proves the OS watch is in place
            if not changes:
                continue
            paths = {Path(p) for _change, p in changes}
            listing = any(
                change != Change.modified and p.endswith(".noma") for change, p in changes
            )
            self.post_message(DiskChanged(paths, listing))

    @guarded
    def on_disk_changed(self, message: DiskChanged) -> None:
        doc = self.doc_path
        if doc is not None:
            if doc in message.paths:
                self.start_load(doc, "disk")
            if transcript_path(doc) in message.paths:
                self.start_transcript(doc)
        if message.listing_changed:
            self.refresh_files()

    # -- edit sessions -----------------------------------------------------------------------

    def begin_session(self, session: EditSession) -> None:
        if session not in self.sessions:
            self.sessions.append(session)
        if self.loaded is not None:
            session.observe(self.loaded, self.own_writes.get(self.loaded.path))
        self._refresh_edit_state()

    def end_session(self, session: EditSession) -> None:
        if session in self.sessions:
            self.sessions.remove(session)
        self._refresh_edit_state()

    @property
    def panes_ready(self) -> bool:
        """False before the main screen's panes exist and while the app shuts down
        (messages still in flight then must not touch them)."""
        # At shutdown the panes go before the screen says so: all of them still there.
        ready = self._main.panes_mounted and not self._exit
        return ready and len(self._main.query(PANE_IDS)) == PANE_IDS.count("#")

    def _refresh_edit_state(self) -> None:
        if not self.panes_ready:
            return
        status = self.main.status
        status.editing = (
            f"{self.sessions[-1].action} {self.sessions[-1].target}" if self.sessions else ""
        )
        status.drift = any(s.drift for s in self.sessions)
        self.drift_signal.publish(status.drift)

    @guarded
    def on_edit_opened(self, message: EditOpened) -> None:
        self.begin_session(message.session)

    @guarded
    def on_edit_closed(self, message: EditClosed) -> None:
        self.end_session(message.session)

    @guarded
    def on_propose_edit(self, message: ProposeEdit) -> None:
        self.propose(message.session, message.ops, **message.options)

    @guarded
    def on_edit_proposed(self, message: EditProposed) -> None:
        self.propose(message.session, message.ops, editor=message.editor)

    @property
    def drift(self) -> bool:
        """True while an open edit was prepared against an older version of the file."""
        return any(s.drift for s in self.sessions)

    # -- proposing and applying edits ----------------------------------------------------------

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
        if self.doc_path is None or self.proof_busy:
            if editor is not None:
                editor.resume()
            self.gate.release()
            return
        if editor is None:
            self.begin_session(session)
        names = ", ".join(str(op.get("op")) for op in ops)
        pending = Pending(
            session,
            ops,
            self.doc_path,
            title or (editor.title_text if editor is not None else names),
            editor,
            danger,
            select_id=select_id or selection_after(ops),
            parent_op_id=parent_op_id,
            reason_prefix=reason_prefix,
            kind=kind,
        )
        self._inflight = pending
        self._hint_proof(pending)
        self.start_proof(pending)

    @property
    def proof_busy(self) -> bool:
        """True while a proof is being built, shown, or its edit written."""
        shown = self._shown_proof
        if shown is not None and shown.is_attached and not shown.dismissed:
            return True
        return any(w.group in ("proof", "apply") and w.is_running for w in self.workers)

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
            if self._inflight is pending and self.panes_ready:
                self.main.status.message = "preparing the proof…"

        self._proof_hint = self.set_timer(PROOF_HINT_DELAY, slow)

    def _request(self, pending: Pending) -> PatchRequest:
        session = pending.session
        reason = pending.reason
        if pending.reason_prefix:
            reason = f"{pending.reason_prefix}: {reason}" if reason else pending.reason_prefix
        return PatchRequest(
            ops=[session.stamp(op) for op in pending.ops],
            actor=self.actor,
            reason=reason,
            base_sha256=session.base_sha256,
            parent_op_id=pending.parent_op_id,
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="proof")
    def start_proof(self, pending: Pending) -> None:
        proof = build_proof(pending.path, self._request(pending), cache=self.cache)
        promote_fresh()  # the post-state just built: young GC passes while drawing are waste
        self.post_message(ProofReady(pending, proof))

    @guarded
    def on_proof_ready(self, message: ProofReady) -> None:
        if not self.panes_ready:
            self.gate.release()
            return
        pending, proof = message.pending, message.proof
        self._hint_proof(None)
        self.main.status.message = ""
        if not proof.ok:
            self.gate.release()  # no proof to hand the keys to: they go where they go
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
            self.start_apply(pending)

        self.collector.touched()  # the proof left garbage behind; the writer now reads
        screen = ProofScreen(
            proof,
            pending.session,
            f"Proof · {pending.title}",
            danger=pending.danger,
            cursor_blink=self.config.cursor_blink,
            on_confirm=confirmed,
        )
        self._shown_proof = screen
        if pending.editor is not None:
            pending.editor.advance("shown")
        self.push_screen(screen, decided)

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

    @work(thread=True, exclusive=True, exit_on_error=False, group="apply")
    def start_apply(self, pending: Pending) -> None:
        outcome = patch_file(
            pending.path, self._request(pending), cache=self.cache, root=self.workspace.root
        )
        loaded, changes = (None, None)
        if outcome.ok:
            # Built here, not in another worker after the editor closed: the main screen
            # then comes back already showing the new version (one repaint, not two).
            loaded, changes = self._applied_version(pending.path, outcome)
        self.post_message(PatchDone(pending, outcome, loaded, changes))

    @guarded
    def on_patch_done(self, message: PatchDone) -> None:
        if not self.panes_ready:
            return
        self.start_transcript(message.pending.path)  # a rejected op is recorded too
        self._close_proof(message.pending, partial(self._patch_done, message))

    @guarded
    def _patch_done(self, message: PatchDone) -> None:
        """The outcome of an apply, shown once its proof is closed (the editor is on top)."""
        if not self.panes_ready:
            return
        pending, outcome = message.pending, message.outcome
        if outcome.ok:
            self.own_writes[pending.path] = outcome.post_sha256
            before = self.versions.get(outcome.pre_sha256)
            op_id = str(outcome.records[0].get("op_id") or "") if outcome.records else ""
            if op_id:
                self._kinds[op_id] = pending.kind
            if before is not None and message.loaded is not None:
                after = message.loaded.source.text
                self.call_after_refresh(
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
                self._after_load.append(editor.applied)
            else:
                # Done now: the status line stops saying "editing" before the panes
                # redraw, not when the editor's screen is finally unmounted.
                self.end_session(pending.session)
                if editor is not None:
                    editor.close()
            self._select_after_load = pending.select_id
            if message.loaded is not None and message.loaded.path == self.doc_path:
                self._take(message.loaded, message.changes)
            else:
                self.start_load(pending.path, "applied")
        elif outcome.code == SHA_MISMATCH:
            self._conflict(pending, outcome.error or "")
        else:
            code = outcome.code or "rejected"
            self.notify(outcome.error or code, title=code, severity="error", timeout=10)
            self._drop(pending)

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
            self.reload()
            return

        editor.advance("conflict")

        def show(loaded: LoadedDocument) -> None:
            texts = editor.conflict_texts(loaded) or self._block_texts(pending, loaded)
            screen = ConflictScreen(SHA_MISMATCH, message, session.target, texts)

            def chosen(choice: Choice | None) -> None:
                self._resolve(pending, loaded, texts, choice or "back")

            self.push_screen(screen, chosen)

        self._after_load.append(show)
        if self.doc_path is not None:
            self.start_load(self.doc_path, "conflict")

    def _block_texts(self, pending: Pending, loaded: LoadedDocument) -> ConflictTexts:
        session = pending.session
        block = session.current_block(loaded)
        theirs = loaded.block_text(block).replace("\r", "") if block is not None else ""
        base_doc = self.versions.get(session.base_sha256)
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
        self._refresh_edit_state()
        if choice == "theirs":
            editor.reload_block(loaded)
            self.notify("Took theirs: the editor shows the block as it is on disk.", timeout=4)
        elif choice == "mine":
            editor.keep_editing(loaded)
            editor.action_submit()  # the proof, against theirs' block hash
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

    @guarded
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        self.notify(error_text(error), title=error_code(error), severity="error", timeout=10)
        if event.worker.group in ("proof", "apply", "revert"):
            self.gate.release()
        if event.worker.group in ("proof", "apply") and self._inflight is not None:
            self._hint_proof(None)
            self._close_proof(self._inflight, partial(self._drop, self._inflight))

    # -- empty and new documents -----------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="apply")
    def write_first_content(self, loaded: LoadedDocument, text: str) -> None:
        from .newdoc import write_first_content

        write_first_content(loaded.path, loaded.sha256, text)
        self.call_from_thread(self._written, loaded.path, f"First content of {loaded.name}")

    @work(thread=True, exclusive=True, exit_on_error=False, group="apply")
    def create_document(self, name: str, text: str) -> None:
        from .newdoc import create_document

        path = create_document(self.workspace.root, name, text)
        self.call_from_thread(self._written, path, f"Created {path.name}")

    def _written(self, path: Path, note: str) -> None:
        self.notify(note, title="Written", timeout=4)
        self.refresh_files()
        self.open_document(path)

    # -- undo / redo -----------------------------------------------------------------------------

    MAX_VERSIONS = 64

    def _remember(self, loaded: LoadedDocument) -> None:
        self.versions.pop(loaded.sha256, None)
        self.versions[loaded.sha256] = loaded.source.text
        while len(self.versions) > self.MAX_VERSIONS:
            self.versions.pop(next(iter(self.versions)))

    def own_records(self) -> list[dict[str, Any]]:
        """This actor's applied records in the open document, oldest first."""
        snapshot = self.transcript
        if snapshot is None or snapshot.path != transcript_path(self.doc_path or Path()):
            return []
        return own_records(snapshot, {"kind": self.actor.kind, "name": self.actor.name})

    def record_kinds(self, own: list[dict[str, Any]]) -> dict[str, str]:
        """op_id -> edit / revert / redo, by data (the undo journal, this session's
        writes, the causation chain), never by the reason text."""
        journal = dict(self.transcript.kinds) if self.transcript is not None else {}
        return own_kinds(own, {**journal, **self._kinds})

    def undo_target(self) -> dict[str, Any] | None:
        own = self.own_records()
        return undo_target(own, self.record_kinds(own))

    def redo_target(self) -> dict[str, Any] | None:
        own = self.own_records()
        return redo_target(own, self.record_kinds(own))

    @work(thread=True, exit_on_error=False, group="journal")
    def journal_step(self, path: Path, before: str, after: str, op_id: str, kind: str) -> None:
        """Keep the way back from ``after`` to ``before`` (undo after a restart)."""
        with self._journal_lock:
            UndoJournal(path).add(step_between(before, after, op_id=op_id, kind=kind))

    def revert(self, record: dict[str, Any], kind: str = "revert") -> None:
        """Show the proof of reverting ``record`` (a redo reverts a revert)."""
        loaded = self.loaded
        if loaded is None or self.doc_path is None:
            return
        pre = self.versions.get(str(record.get("pre_sha256")))
        self.main.status.message = f"preparing the {kind}…"
        self.gate.hold(record)  # keys typed after u wait for its proof
        self.start_revert(record, kind, pre, loaded.source.text, self.doc_path)

    @work(thread=True, exclusive=True, exit_on_error=False, group="revert")
    def start_revert(
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
        self.post_message(RevertReady(record, kind, result))

    @guarded
    def on_revert_ready(self, message: RevertReady) -> None:
        if not self.panes_ready:
            return
        from core.noma.api import RevertError

        self.main.status.message = ""
        result, record = message.result, message.record
        what = f"{message.kind} of {_op_line(record)}"
        if isinstance(result, RevertError):
            self.gate.release()
            hint = ""
            if result.code == SHA_MISMATCH:
                hint = " Nothing was written."
            self.notify(result.message + hint, title=result.code, severity="error", timeout=10)
            return
        loaded = self.loaded
        if loaded is None:
            self.gate.release()
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

    @guarded
    def action_undo(self) -> None:
        record = self.undo_target()
        if record is None:
            self.notify("No edit of yours in this document to undo.", title="undo")
            return
        self.revert(record, "revert")

    @guarded
    def action_redo(self) -> None:
        record = self.redo_target()
        if record is None:
            self.notify("Nothing to redo (or a new edit came after the undo).", title="redo")
            return
        self.revert(record, "redo")

    # -- app actions ---------------------------------------------------------------------------

    def show_trust(self) -> None:
        """The restricted badge follows the folder's trust (`core.trust`)."""
        restricted = is_restricted(self.workspace)
        self.main.status.restricted = restricted
        self.title = f"{self.TITLE} · restricted" if restricted else self.TITLE

    @guarded
    def action_workspace_trust(self) -> None:
        if isinstance(self.screen, TrustScreen):
            return
        self.push_screen(TrustScreen(self.workspace), self._trust_answered)

    def _trust_answered(self, yes: bool | None) -> None:
        if not yes:
            return
        try:
            TrustStore().trust(self.workspace.root, self.workspace.config)
            self.workspace = Workspace.open(self.workspace.root)
        except (OSError, WorkspaceError) as exc:
            code = getattr(exc, "code", "trust_store_unsafe")
            self.notify(str(exc), title=code, severity="error", timeout=10)
            return
        self.show_trust()
        self.main.reopen_flow_pane(self.workspace)
        self.notify(f"{self.workspace.root.name}: its settings apply now.", title="trusted")

    @guarded
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.config.keymap))

    @guarded
    def action_toggle_theme(self) -> None:
        names = THEME_CYCLE
        current = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(current + 1) % len(names)]

    @guarded
    def action_quit_app(self) -> None:
        self.exit()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for spec in ALL_ACTIONS:
            detail = plain(display_key(self.config.keymap.get(spec.id, spec.key)))
            if spec.op:
                detail += f" · patch op {spec.op}"
            flow = spec in FLOW_ACTIONS
            if flow:
                detail += " · flow runs"
            yield SystemCommand(spec.help, detail, partial(self._run_command, spec.action, flow))

    def _run_command(self, action: str, flow: bool = False) -> None:
        if action in {spec.action for spec in APP_ACTIONS}:
            self.call_later(self.run_action, action)
            return
        if flow:
            pane = self._main.query_one("#flow-pane")
            self._main.action_focus_pane("flow")
            self.call_later(pane.run_action, action)
            return
        main = self._main
        if not main.check_action(action, ()):
            self.notify(main.why_not(action), title="not available", severity="warning")
            return
        self.call_later(main.run_action, action)


def _op_line(record: dict[str, Any]) -> str:
    from .history import op_summary

    return op_summary(record.get("op"))


if TYPE_CHECKING:

    def _fits_host(app: WorkbenchApp) -> WorkbenchHost:
        """Never called: mypy checks here that the app is what its screens type it as."""
        return app
