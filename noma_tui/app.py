"""The workbench app: loads documents, watches the disk, and hands every edit to its
`EditPipeline` (`noma_tui.edit_pipeline`).

Data flow (architecture.md): a key opens an editor holding an `EditSession`, or proposes a
one-key edit; `ProposeEdit` reaches the app, which routes it to the pipeline: the proof
(`core.noma.proof.build_proof`, a dry run shown to the writer), then
`core.noma.patch.pipeline.patch_file`. The pipeline hands back here the new version built
from the engine's post-state (the file is not read again) and the records the apply
appended (the transcript is not read again); the panes redraw what
`noma_tui.versions.diff_versions` says changed. The
watcher does the same for changes made by anyone else: the new version is spliced from the
one on screen (`core.noma.incremental`), never parsed whole when a splice can do.

All blocking work is in thread workers that post messages back; failures reach the user as
notifications titled with their code, never as a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import App, ScreenStackError, SystemCommand
from textual.binding import BindingType
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.signal import Signal
from textual.widget import Widget
from textual.worker import Worker, WorkerState, get_current_worker
from watchfiles import Change, DefaultFilter, awatch

from core.noma.api import (
    Actor,
    DocumentCache,
    DocumentIOError,
    PatchOutcome,
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
from .edit_pipeline import EditPipeline
from .errors import error_code, error_text, guarded
from .gc_policy import IdleCollector
from .keys import ALL_ACTIONS, APP_ACTIONS, FLOW_ACTIONS, display_key
from .messages import (
    DiskChanged,
    DocumentLoaded,
    EditClosed,
    EditOpened,
    FilesListed,
    PatchDone,
    ProofReady,
    ProposeEdit,
    ReloadRequest,
    RevertReady,
    TranscriptLoaded,
    UndoRequest,
    WriteDocument,
)
from .pane_presence import panes_present
from .panes.file_list import FileList
from .roles import WorkbenchHost
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .screens.trust import TrustScreen, is_restricted
from .session import EditSession
from .transcript_view import TranscriptSnapshot, extend, load_transcript
from .typeahead import KeyGate, Until, after_bubbled, priority_bound
from .versions import Changes, diff_versions
from .visible import plain

WATCHED_SUFFIXES = (".noma", ".noma.patches")
PANE_IDS = "#files, #tree, #block, #diagnostics, #transcript, #status"
WATCH_TICK_MS = 500  # the watcher reports "still watching" this often when idle
EARLY_DRAWN_WAIT = 2.0  # seconds a large document's validation waits for its tree's frame


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
    # The status line's message: the app and its edit pipeline set this, one attribute;
    # the watcher below is the one place that writes it to the status bar.
    status_text: reactive[str] = reactive("", always_update=True, init=False)

    def __init__(
        self,
        workspace: Workspace,
        *,
        document: Path | None = None,
        config: WorkbenchConfig | None = None,
        single_file: bool = False,
        read_transcript: Callable[[Path], TranscriptSnapshot] = load_transcript,
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
        self.loads = 0  # documents shown so far (tests and the bench wait on it)
        self.applied_builds = 0  # versions shown from an edit's post-state (tests read it)
        self.collector = IdleCollector(self)  # full GC passes wait for an idle moment
        self.watching = False  # True once the file watcher is in place
        self._after_load: list[Callable[[LoadedDocument], None]] = []
        self._select_after_load: str | None = None
        # Every version of the open documents this session has seen, by sha256: the
        # pre-states undo needs (core.noma.revert). Bounded; the oldest go first.
        self.versions: dict[str, str] = {}
        # The sha256 of this app's last write of each document: the bytes an apply of
        # ours produced are never reported as drift (`EditSession.observe`).
        self.own_writes: dict[Path, str] = {}
        self._main = MainScreen()
        # Published whenever the drift of the open edits may have changed; editor screens
        # subscribe (attributes down, signals across) instead of the app walking its stack.
        self.drift_signal: Signal[bool] = Signal(self, "drift")
        # Keys typed while a dialog opens or a proof is prepared wait here (type-ahead).
        self.gate = KeyGate(self._dispatch_key, self.call_later, self._still_waited_for)
        self._sent_to: Widget | None = None  # the last key forwarded went there
        self._opening: Until | None = None  # keys wait for the document chosen in the list
        # Every edit, from its proposal to its end (messages routed to it below).
        self.pipeline = EditPipeline(self)
        # How the transcript file is read (a test counts the reads by passing its own).
        self.read_transcript = read_transcript
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

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def cursor_blink(self) -> bool:
        return self.config.cursor_blink

    def watch_status_text(self, text: str) -> None:
        if self.panes_ready:
            self.main.status.message = text

    def show_edit_state(self, editing: str, drift: bool) -> None:
        """What the open edits are and whether one drifted: the status bar, and a signal
        for the editor screens (attributes down, signals across)."""
        status = self.main.status
        status.editing = editing
        status.drift = drift
        self.drift_signal.publish(drift)

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
        # A paste keeps its place among the keys: it waits behind keys that wait.
        if isinstance(event, (events.Key, events.Paste)):
            if not event.is_forwarded and self.gate.intercepts():
                self.gate.keep(event)
                return
            await self._dispatch_key(event)
            return
        await super().on_event(event)

    async def _dispatch_key(self, event: events.Key | events.Paste) -> None:
        """Hand ``event`` to Textual. A key that arrives while the app closes has no
        target (its screens may already be gone): it is dropped, never an error."""
        if self._exit:
            return
        try:
            if not event.is_forwarded and self._overtakes(event):
                return
            await super().on_event(event)
        except ScreenStackError:  # no screen left to take it (the app is closing)
            return

    def _overtakes(self, event: events.Key | events.Paste) -> bool:
        """True when ``event`` runs a priority binding while keys sent before it to a
        widget are still unhandled: it then waits for them (`typeahead.after_bubbled`)."""
        screen = self.screen
        if isinstance(event, events.Paste) or not priority_bound(screen, event.key):
            self._sent_to = self.focused or screen  # forwarded there, handled later
            return False
        sent, self._sent_to = self._sent_to, None
        if sent is None or not sent.is_attached:
            return False
        token = Until(lambda: sent.is_attached)
        self.gate.defer(event, token)
        after_bubbled(sent, partial(self.gate.release, token))
        return True

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
        self.status_text = f"workspace {self.workspace.root.name}"
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
        self.status_text = f"opening {path.name}…"
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
        worker = get_current_worker()
        first: list[LoadedDocument] = []

        def early(version: LoadedDocument) -> None:
            # A large document's tree, before its validation (`load_document`), which
            # waits until that tree is drawn. (The bound only guards against a lost
            # message: the app sets ``drawn`` whether or not it shows the version.)
            first.append(version)
            if not worker.is_cancelled:
                drawn = Event()
                self.post_message(DocumentLoaded(version, reason, None, drawn))
                drawn.wait(EARLY_DRAWN_WAIT)

        loaded = read_loaded(
            path, root=self.workspace.root, cache=self.cache, shown=shown, early=early
        )
        base = shown if shown is not None else (first[0] if first else None)
        changes = diff_versions(base, loaded) if base is not None else None
        if not worker.is_cancelled:
            self.post_message(DocumentLoaded(loaded, reason, changes))

    def _shown(self, path: Path) -> LoadedDocument | None:
        """The version of ``path`` on screen: the base a new version is spliced from and
        diffed against (read from a worker: a reference, never mutated)."""
        shown = self.loaded
        return shown if shown is not None and shown.path == path else None

    def applied_version(
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
        drawn = message.drawn
        if not self.panes_ready or message.loaded.path != self.doc_path:
            if drawn is not None:
                drawn.set()
            return
        try:
            self.take(message.loaded, message.changes)
        finally:
            self._opened()
            if drawn is not None:
                self.call_after_refresh(drawn.set)

    def after_load(self, callback: Callable[[LoadedDocument], None]) -> None:
        """Run ``callback`` with the next version shown (a conflict's screen, a grid)."""
        self._after_load.append(callback)

    def select_after_load(self, block_id: str | None) -> None:
        self._select_after_load = block_id

    def take(self, loaded: LoadedDocument, changes: Changes | None) -> None:
        """Make ``loaded`` the shown version: panes, open edits' drift, waiting callbacks."""
        previous = self.loaded
        select, self._select_after_load = self._select_after_load, None
        unchanged = (
            previous is not None
            and previous.path == loaded.path
            and previous.sha256 == loaded.sha256
            and previous.read_only == loaded.read_only
            and previous.checked == loaded.checked
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
                self.pipeline.journal_step,
                loaded.path,
                previous.source.text,
                loaded.source.text,
                "",
                "",
            )
        if not unchanged or select is not None:
            self.status_text = ""
            self.main.show_document(loaded, select_id=select, changes=changes)
            self.loads += 1
            self.collector.touched()
        self.pipeline.observe(loaded)
        callbacks, self._after_load = self._after_load, []
        for callback in callbacks:
            callback(loaded)

    @work(thread=True, exclusive=True, exit_on_error=False, group="transcript")
    def start_transcript(self, path: Path) -> None:
        snapshot = self.read_transcript(path)
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

    def transcript_grew(self, path: Path, records: list[dict[str, Any]]) -> None:
        """The records an apply of ours appended: added to the shown transcript without
        reading the file again; read whole only if they do not follow on from it."""
        shown = self.transcript
        grown = None
        if path == self.doc_path and shown is not None and shown.path == transcript_path(path):
            grown = extend(shown, records)
        if grown is None:
            self.start_transcript(path)
            return
        self.transcript = grown
        self.main.transcript.show(grown)

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
                self.status_text = f"No .noma documents in {self.workspace.root.name}"

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

    # -- the edit pipeline: messages routed to it ---------------------------------------------

    @property
    def panes_ready(self) -> bool:
        """False before the main screen's panes exist and while the app shuts down
        (messages still in flight then must not touch them)."""
        # At shutdown the panes go before the screen says so: all of them still there.
        ready = self._main.panes_mounted and not self._exit
        return ready and panes_present(self._main, PANE_IDS)  # cheap: asked per action

    @property
    def sessions(self) -> list[EditSession]:
        return self.pipeline.sessions

    @property
    def drift(self) -> bool:
        return self.pipeline.drift

    @guarded
    def on_edit_opened(self, message: EditOpened) -> None:
        self.pipeline.begin_session(message.session)

    @guarded
    def on_edit_closed(self, message: EditClosed) -> None:
        self.pipeline.end_session(message.session)

    @guarded
    def on_propose_edit(self, message: ProposeEdit) -> None:
        self.pipeline.request(message)

    def on_proof_ready(self, message: ProofReady) -> None:
        self.pipeline.proof_ready(message)

    def on_patch_done(self, message: PatchDone) -> None:
        self.pipeline.patch_done(message)

    def on_revert_ready(self, message: RevertReady) -> None:
        self.pipeline.revert_ready(message)

    @guarded
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if event.worker.group == "load":
            self._opened()
        self.notify(error_text(error), title=error_code(error), severity="error", timeout=10)
        self.pipeline.worker_failed(event.worker.group)

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

    def undo_target(self) -> dict[str, Any] | None:
        return self.pipeline.undo_target()

    def redo_target(self) -> dict[str, Any] | None:
        return self.pipeline.redo_target()

    def revert(self, record: dict[str, Any], kind: str = "revert") -> None:
        self.pipeline.revert(record, kind)

    @guarded
    def on_undo_request(self, message: UndoRequest) -> None:
        if message.record is not None:
            self.pipeline.revert(message.record, message.kind)
        elif message.kind == "redo":
            self.pipeline.redo()
        else:
            self.pipeline.undo()

    @guarded
    def on_reload_request(self, message: ReloadRequest) -> None:
        self.reload()

    @guarded
    def on_file_list_open(self, message: FileList.Open) -> None:
        self.open_document(message.path)
        self._opening = message.keys  # released once it is shown (or cannot be)

    def _opened(self) -> None:
        keys, self._opening = self._opening, None
        if keys is not None:
            self.gate.release(keys)

    @guarded
    def on_write_document(self, message: WriteDocument) -> None:
        if message.loaded is not None:
            self.write_first_content(message.loaded, message.text)
        else:
            self.create_document(message.name, message.text)

    @guarded
    def action_undo(self) -> None:
        self.pipeline.undo()

    @guarded
    def action_redo(self) -> None:
        self.pipeline.redo()

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


if TYPE_CHECKING:

    def _fits_host(app: WorkbenchApp) -> WorkbenchHost:
        """Never called: mypy checks here that the app is what its screens type it as."""
        return app
