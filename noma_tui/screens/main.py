"""The main screen: file list and flow runs on the left; the document tree and block view
above the diagnostics and transcript on the right; the status bar and footer below.

It owns the editing actions (their bindings come from `noma_tui.keys`), decides with
`check_action` which apply to the selected block (`noma_tui.applicability`: the footer
hides the ones that cannot and greys out the ones that are blocked), and opens the right
editor for each. What it asks of the app goes up as messages: an edit as `ProposeEdit`
to the app's edit pipeline (`noma_tui.edit_pipeline`), undo, reload, a new document.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Header, Input, Tree

from core.noma.api import Directive, PatchError, Section, index, is_visible

from .. import ops
from ..applicability import (
    NotAvailable,
    add_parent,
    applies,
    block_title,
    editable,
    editable_block,
    why_not,
    writable,
)
from ..document import ROOT, LoadedDocument
from ..errors import guarded
from ..external import external_op, run_external_editor
from ..footer import Footer
from ..keyorder import OrderedInput
from ..keys import BY_ACTION, EDIT_ACTIONS, HISTORY_ACTIONS, SCREEN_ACTIONS
from ..messages import ProposeEdit, ReloadRequest, UndoRequest, WriteDocument
from ..newdoc import DOCUMENT_BY_NAME, DOCUMENT_TEMPLATES, NewDocumentError, check_name
from ..ops import parse_attr_value, show_attr_value
from ..panes.block_view import BlockView
from ..panes.diagnostics import DiagnosticsPane
from ..panes.doc_tree import DocumentTree
from ..panes.file_list import FileList
from ..panes.flow import FlowFrontierPane
from ..panes.preview import PreviewPane
from ..panes.status_bar import StatusBar
from ..panes.transcript import TranscriptPane
from ..roles import WorkbenchHost, workbench_of
from ..session import EditSession
from ..tables import read_table
from ..templates import BY_NAME, TEMPLATES
from ..versions import Changes
from ..visible import plain
from .confirm import ConfirmScreen
from .form import Field, FormScreen, InputFormScreen
from .mounted import composed
from .picker import PickerScreen
from .prompt import PromptScreen
from .size_classes import add_size_classes
from .source_editor import SourceEditorScreen
from .table_grid import TableGridScreen

if TYPE_CHECKING:
    from core.workspace import Workspace


PANES = {
    "files": "#files",
    "tree": "#tree",
    "block": "#block",
    "diagnostics": "#diagnostics",
    "transcript": "#transcript",
    "flow": "#flow-pane",
}

DOCUMENT_ONLY = frozenset({spec.action for spec in EDIT_ACTIONS + HISTORY_ACTIONS} | {"copy_ref"})
"""Actions on the selected document block: inactive while the flow pane has focus, so its
keys (and any key it does not use, like d or y) never reach a document block."""


class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in SCREEN_ACTIONS]
    # The layout adapts (themes/workbench.tcss): narrow/normal/wide by width, short/normal/
    # tall by height, from 80x24 to 250x70. (The ignores: Textual annotates these
    # `ClassVar[...] | None`, which mypy reads as an instance variable.)
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [  # type: ignore[misc]
        (0, "-narrow"),
        (100, "-normal"),
        (170, "-wide"),
    ]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [  # type: ignore[misc]
        (0, "-short"),
        (28, "-mid"),
        (48, "-tall"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._footer_signature: tuple[bool | None, ...] = ()
        self.filter_target = "tree"  # the pane the `/` bar filters
        self.panes_mounted = False  # True from the end of on_mount until unmount
        self._filter_timer: Timer | None = None

    @property
    def workbench(self) -> WorkbenchHost:
        return workbench_of(self.app)

    def compose(self) -> ComposeResult:
        add_size_classes(self)  # before any pane is styled (~40 ms of the start otherwise)
        yield Header(show_clock=False, icon="◆")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield FileList(id="files")
                yield FlowFrontierPane(self.workbench.workspace)
            with Vertical(id="work"):
                search = OrderedInput(id="filter")
                search.display = False  # shown by `/`, at key time (inline, not a class)
                search.cursor_blink = self._blink()  # `cursor_blink` applies here too
                yield search
                with Horizontal(id="upper"):
                    yield DocumentTree(id="tree")
                    yield BlockView(id="block")
                    yield PreviewPane(id="preview")
                yield DiagnosticsPane(id="diagnostics")
                yield TranscriptPane(id="transcript")
        yield StatusBar(id="status")
        yield Footer()

    @guarded
    @composed
    def on_mount(self) -> None:
        titles = {
            "#files": "Files",
            "#tree": "1 Document",
            "#block": "2 Block",
            "#diagnostics": "3 Diagnostics",
            "#transcript": "4 Transcript",
            "#preview": "Preview (p)",
        }
        for selector, title in titles.items():
            self.query_one(selector).border_title = title
        flow = self.query_one("#flow-pane")
        if not flow.border_title:
            flow.border_title = "5 Flow runs"
        self.query_one("#tree").focus()
        if not self.panes_mounted:  # every pane exists now: the app may load into them
            self.call_after_refresh(self.workbench.start)
        self.panes_mounted = True  # until the app exits (`panes_ready`)

    # -- panes -----------------------------------------------------------------------------

    @property
    def doc_tree(self) -> DocumentTree:
        return self.query_one("#tree", DocumentTree)

    @property
    def block_view(self) -> BlockView:
        return self.query_one("#block", BlockView)

    @property
    def diagnostics(self) -> DiagnosticsPane:
        return self.query_one("#diagnostics", DiagnosticsPane)

    @property
    def transcript(self) -> TranscriptPane:
        return self.query_one("#transcript", TranscriptPane)

    @property
    def status(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    @property
    def files(self) -> FileList:
        return self.query_one("#files", FileList)

    def reopen_flow_pane(self, workspace: Workspace) -> None:
        """The folder's trust changed: the flow pane reopens with its effective settings."""
        pane = self.query_one("#flow-pane")
        reopen = getattr(pane, "reopen", None)
        if callable(reopen):
            reopen(workspace)

    def tell_flow_pane(self, path: Path) -> None:
        """The flow pane offers the open document's transcript as evidence pointers."""
        pane = self.query_one("#flow-pane")
        setter = getattr(pane, "set_open_document", None)
        if callable(setter):
            setter(path)

    def show_document(
        self,
        loaded: LoadedDocument,
        *,
        select_id: str | None = None,
        changes: Changes | None = None,
    ) -> None:
        """Refresh every pane from a new version of the open document.

        ``changes`` (made against the version the tree shows) limits the work to what can
        differ: the changed rows are relabelled, an unchanged selected block is not
        redrawn. Without it, or after a change of structure, the panes show it whole.
        """
        tree = self.doc_tree
        if changes is not None and changes.base is not tree.loaded:
            changes = None  # made against a version that is no longer shown
        if changes is not None and changes.same_structure:
            tree.update(loaded, changes.rows)
        elif (
            changes is None
            or changes.region is None
            or not tree.splice(loaded, changes.region, changes.rows)
        ):
            tree.show(loaded)  # whole: kept by id where the shape allows
        if select_id is not None:
            block = loaded.block_of_id(select_id)
            if block is not None:
                tree.reveal(block)
        self.diagnostics.show(loaded)
        cursor = tree.cursor_block()
        if changes is not None and select_id is None:
            changed = changes.block_changed(loaded, cursor)
            self.block_view.show_version(loaded, cursor, changed)
            self.preview.show_version(loaded, cursor, changed)
        else:
            self.block_view.show(loaded, cursor)
            self.preview.show(loaded, cursor)
        status = self.status
        status.doc_name = loaded.name
        status.read_only = loaded.read_only
        status.sha = loaded.sha256
        status.errors = loaded.count("error")
        status.warnings = loaded.count("warning")
        status.checking = not loaded.checked
        self.sub_title = plain(loaded.name)
        self.refresh_footer()

    @property
    def preview(self) -> PreviewPane:
        return self.query_one("#preview", PreviewPane)

    @guarded
    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[int]) -> None:
        self.block_view.show(self.workbench.loaded, event.node.data)
        self.preview.show(self.workbench.loaded, event.node.data)
        self.refresh_footer()

    @guarded
    def action_toggle_preview(self) -> None:
        self.preview.show(self.workbench.loaded, self.doc_tree.cursor_block())
        self.preview.toggle()

    def refresh_footer(self) -> None:
        """Re-check which actions apply, redrawing the footer only if that changed (a
        footer redraw re-runs the layout, too slow to do on every cursor move)."""
        signature = tuple(self.check_action(s.action, ()) for s in SCREEN_ACTIONS)
        if signature != self._footer_signature:
            self._footer_signature = signature
            self.refresh_bindings()

    @guarded
    def on_diagnostics_pane_jump(self, event: DiagnosticsPane.Jump) -> None:
        self.doc_tree.reveal(event.block)
        self.set_focus(self.doc_tree)  # now: the next key of a burst goes there

    @guarded
    def on_transcript_pane_show_record(self, event: TranscriptPane.ShowRecord) -> None:
        from .record import RecordScreen

        record = event.row.record

        def chosen(action: str | None) -> None:
            if action == "revert" and record is not None:
                self.post_message(UndoRequest("revert", record))

        self.app.push_screen(RecordScreen(event.row), chosen)

    @guarded
    def action_undo(self) -> None:
        self.post_message(UndoRequest("revert"))

    @guarded
    def action_redo(self) -> None:
        self.post_message(UndoRequest("redo"))

    # -- which actions apply -----------------------------------------------------------------

    def selected(self) -> int | None:
        block = self.doc_tree.cursor_block()
        return None if block is None or block == ROOT else block

    def applies(self, op: str) -> bool | None:
        """True: can run now; None: blocked here; False: does not fit (`applicability`)."""
        return applies(self.workbench.loaded, self.selected(), op)

    def flow_focused(self) -> bool:
        focused = self.focused
        return focused is not None and any(
            node.id == "flow-pane" for node in focused.ancestors_with_self
        )

    def on_descendant_focus(self) -> None:
        self.query_one("#sidebar").set_class(self.flow_focused(), "-flow")
        self.refresh_footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.workbench.panes_ready:
            return False  # before the panes mount or while the app shuts down
        spec = BY_ACTION.get(action)
        if isinstance(self.focused, Input) and (action == "focus_pane" or (spec and spec.priority)):
            return False  # priority keys are text while a field here has focus
        if action in DOCUMENT_ONLY and self.flow_focused():
            return False
        if action in ("filter", "clear_filter") and self.flow_focused():
            return False
        if action in ("undo", "redo"):
            return True if writable(self.workbench.loaded) else None
        if spec is None or spec.op is None:
            if action in ("copy_ref",):
                return True if self.selected() is not None else None
            return True
        return self.applies(spec.op)

    def why_not(self, action: str) -> str:
        if self.flow_focused() and action in DOCUMENT_ONLY:
            return "The flow pane has focus: press 1 or 2 to act on the document."
        return why_not(self.workbench.loaded, self.selected(), BY_ACTION[action].op)

    # -- helpers -------------------------------------------------------------------------

    def _loaded_block(self) -> tuple[LoadedDocument, int]:
        return editable_block(self.workbench.loaded, self.selected())

    def _blink(self) -> bool:
        return self.workbench.config.cursor_blink

    # -- editing actions -----------------------------------------------------------------

    @guarded
    def action_edit_body(self) -> None:
        loaded, block = self._loaded_block()
        session = EditSession.open("replace_body", loaded, block)
        ident = loaded.blocks[block].id or ""
        self.app.push_screen(
            SourceEditorScreen(
                session,
                block_title("replace_body", loaded, block),
                mode="replace_body",
                text=editable(loaded.body_text(block)),
                block_id=ident,
                cursor_blink=self._blink(),
            )
        )

    @guarded
    def action_edit_source(self) -> None:
        loaded, block = self._loaded_block()
        session = EditSession.open("replace_block", loaded, block)
        ident = loaded.blocks[block].id or ""
        self.app.push_screen(
            SourceEditorScreen(
                session,
                block_title("replace_block", loaded, block),
                mode="replace_block",
                text=editable(loaded.block_text(block).replace("\r", "")),
                block_id=ident,
                cursor_blink=self._blink(),
            )
        )

    @guarded
    def action_set_attribute(self) -> None:
        loaded, block = self._loaded_block()
        node = loaded.blocks[block]
        assert isinstance(node, Directive)
        ident = node.id or ""
        keys = [k for k in node.attrs if k != "id"]
        first = keys[0] if keys else ""
        session = EditSession.open("update_attribute", loaded, block)

        def build(values: dict[str, str]) -> list[dict[str, Any]]:
            key = values["key"].strip()
            if not key:
                raise ValueError("Name the attribute to set.")
            return [ops.update_attribute(ident, key, parse_attr_value(values["value"]))]

        self.app.push_screen(
            FormScreen(
                session,
                block_title("update_attribute", loaded, block),
                [
                    Field(
                        "key",
                        "Attribute",
                        first,
                        "name, e.g. confidence",
                        keys,
                        loads=lambda key: {
                            "value": show_attr_value(node.attrs[key.strip()])
                            if key.strip() in node.attrs and key.strip() != "id"
                            else ""
                        },
                    ),
                    Field(
                        "value",
                        'Value (true/false and numbers are typed; "quote" for text)',
                        show_attr_value(node.attrs[first]) if first else "",
                    ),
                ],
                build,
                cursor_blink=self._blink(),
            )
        )

    @guarded
    def action_remove_attribute(self) -> None:
        loaded, block = self._loaded_block()
        node = loaded.blocks[block]
        assert isinstance(node, Directive)
        ident = node.id or ""
        session = EditSession.open("remove_attribute", loaded, block)
        choices = [(k, f"{k} = {show_attr_value(v)}") for k, v in node.attrs.items() if k != "id"]

        def chosen(key: str | None) -> None:
            if key:
                self.post_message(
                    ProposeEdit(
                        session, [ops.remove_attribute(ident, key)], title=f"remove_attribute {key}"
                    )
                )

        self.app.push_screen(PickerScreen(f"Remove which attribute of {ident}?", choices), chosen)

    @guarded
    def action_rename_id(self) -> None:
        loaded, block = self._loaded_block()
        ident = loaded.blocks[block].id or ""
        session = EditSession.open("rename_id", loaded, block)

        def build(values: dict[str, str]) -> list[dict[str, Any]]:
            new = values["to"].strip()
            if not new or new == ident:
                raise ValueError("Type a new id.")
            return [ops.rename_id(ident, new)]

        self.app.push_screen(
            FormScreen(
                session,
                block_title("rename_id", loaded, block)
                + " (for=, parent=, dataset= and [[links]] follow; aliases do not)",
                [Field("to", "New id", ident)],
                build,
                cursor_blink=self._blink(),
            )
        )

    @guarded
    def action_edit_heading(self) -> None:
        loaded, block = self._loaded_block()
        node = loaded.blocks[block]
        assert isinstance(node, Section)
        ident = node.id or ""
        session = EditSession.open("update_heading", loaded, block)

        def build(values: dict[str, str]) -> list[dict[str, Any]]:
            title = values["title"].strip()
            if not title:
                raise ValueError("A heading needs a title.")
            return [ops.update_heading(ident, title)]

        self.app.push_screen(
            FormScreen(
                session,
                block_title("update_heading", loaded, block) + " (the id stays)",
                [Field("title", "Heading", node.title)],
                build,
                cursor_blink=self._blink(),
            )
        )

    @guarded
    def action_add_block(self) -> None:
        loaded = self.workbench.loaded
        if loaded is not None and not loaded.blocks:
            self._first_content(loaded)
            return
        loaded, block = self._loaded_block()
        where = add_parent(loaded, block)
        assert where is not None
        parent, position = where
        parent_id = loaded.blocks[parent].id or ""
        node = loaded.blocks[block]
        claim = node.id if isinstance(node, Directive) and node.name == "claim" else None
        colons = 2
        parent_node = loaded.blocks[parent]
        if isinstance(parent_node, Directive):
            colons = parent_node.colons + 1
        choices = [(t.name, f"::{t.name:<16} {t.help}") for t in TEMPLATES]

        def chosen(name: str | None) -> None:
            if not name:
                return
            template = BY_NAME[name]
            text = template.render(index(loaded.doc), claim=claim, colons=colons)
            session = EditSession.open("add_block", loaded, parent)
            spot = "at the end" if position is None else f"at position {position}"
            self.app.push_screen(
                SourceEditorScreen(
                    session,
                    f"add_block · new ::{name} in {parent_id} ({spot})",
                    mode="add_block",
                    text=text,
                    block_id=parent_id,
                    position=position,
                    cursor_blink=self._blink(),
                )
            )

        self.app.push_screen(PickerScreen(f"Add which block to {parent_id}?", choices), chosen)

    def _propose(self, message: ProposeEdit) -> None:
        """A proof of an edit with no editor: keys typed after this wait for it."""
        self.workbench.gate.hold(message.session)
        self.post_message(message)

    @guarded
    def action_delete_block(self) -> None:
        loaded, block = self._loaded_block()
        node = loaded.blocks[block]
        ident = node.id or ""
        inside = len(loaded.descendants(block))
        session = EditSession.open("delete_block", loaded, block)
        what = f"::{node.name}" if isinstance(node, Directive) else "block"
        extra = f" and the {inside} block(s) inside it" if inside else ""
        parent = loaded.parents[block]
        self._propose(
            ProposeEdit(
                session,
                [ops.delete_block(ident)],
                title=f"Delete {what} {ident}{extra}?",
                danger=True,
                select_id=loaded.blocks[parent].id if parent != ROOT else None,
            )
        )

    @guarded
    def action_move_block(self) -> None:
        loaded, block = self._loaded_block()
        ident = loaded.blocks[block].id or ""
        excluded = loaded.descendants(block) | {block, loaded.parents[block]}
        parents = [loaded.blocks[i].id or "" for i in loaded.containers() if i not in excluded]
        session = EditSession.open("move_block", loaded, block)

        def build(values: dict[str, str]) -> list[dict[str, Any]]:
            parent = values["parent"].strip()
            if not parent:
                raise ValueError("Name the new parent block.")
            raw = values["position"].strip()
            if raw and not raw.isdigit():
                raise ValueError("Position is a number (0 = first child) or empty (= last).")
            return [ops.move_block(ident, parent, int(raw) if raw else None)]

        self.app.push_screen(
            FormScreen(
                session,
                block_title("move_block", loaded, block),
                [
                    Field(
                        "parent",
                        "New parent id (completes as you type)",
                        "",
                        "a section or directive id",
                        parents,
                    ),
                    Field("position", "Position among its children (empty: last)", ""),
                ],
                build,
                cursor_blink=self._blink(),
            )
        )

    @guarded
    def action_add_comment(self) -> None:
        loaded, block = self._loaded_block()
        target = loaded.blocks[block].id or ""
        comment_id = ops.free_id(index(loaded.doc), "cm")
        session = EditSession.open("add_comment", loaded, block)
        author = self.workbench.actor.name

        def build(values: dict[str, str]) -> list[dict[str, Any]]:
            text = values["content"].strip()
            new_id = values["id"].strip()
            if not text:
                raise ValueError("A comment needs text.")
            return [ops.add_comment(new_id, target, text, author)]

        self.app.push_screen(
            FormScreen(
                session,
                block_title("add_comment", loaded, block) + f" (as {author})",
                [
                    Field("content", "Comment", "", "what should change, or a question"),
                    Field("id", "Comment id", comment_id),
                ],
                build,
                cursor_blink=self._blink(),
            )
        )

    @guarded
    def action_resolve_comment(self) -> None:
        loaded, block = self._loaded_block()
        ident = loaded.blocks[block].id or ""
        session = EditSession.open("resolve_comment", loaded, block)
        self._propose(
            ProposeEdit(
                session,
                [ops.resolve_comment(ident, self.workbench.actor.name)],
                title=f"resolve_comment · {ident}",
            )
        )

    @guarded
    def action_edit_table(self) -> None:
        loaded, block = self._loaded_block()
        try:
            cells = read_table(loaded, block)
        except PatchError as exc:
            self.notify(exc.message, title=exc.code, severity="error")
            return
        session = EditSession.open("update_table_cell", loaded, block)
        self.app.push_screen(
            TableGridScreen(
                session,
                block_title("update_table_cell", loaded, block),
                cells,
                cursor_blink=self._blink(),
            )
        )

    @guarded
    def action_external_editor(self) -> None:
        loaded, block = self._loaded_block()
        node = loaded.blocks[block]
        ident = node.id or ""
        session = EditSession.open("replace_block", loaded, block)  # hashes from now
        before = loaded.block_text(block).replace("\r", "")
        after = run_external_editor(self.app, before, ident)
        if after is None:
            return
        after = after.rstrip("\n")
        if after == before.rstrip("\n"):
            self.notify("No change.", title="$EDITOR", timeout=3)
            return
        if not after.strip():
            self.notify("The block source is empty; nothing to apply.",
                        title="invalid_content", severity="error")  # fmt: skip
            return
        ops_out = [external_op(ident, before, after)]
        session.action = str(ops_out[0]["op"])
        self._propose(
            ProposeEdit(session, ops_out, title=f"{ops_out[0]['op']} · {ident} ($EDITOR)")
        )

    # -- empty and new documents ---------------------------------------------------------

    def _template_picker(self, title: str, chosen: Any) -> None:
        choices = [(t.name, f"{t.name:<10} {t.help}") for t in DOCUMENT_TEMPLATES]
        self.app.push_screen(PickerScreen(title, choices), chosen)

    def _first_content(self, loaded: LoadedDocument) -> None:
        if loaded.read_only:
            raise NotAvailable(self.why_not("add_block"))
        title = Path(loaded.name).stem.replace("-", " ").replace("_", " ").capitalize()

        def chosen(name: str | None) -> None:
            if not name:
                return
            text = DOCUMENT_BY_NAME[name].render(title)

            def answered(write: bool | None) -> None:
                if write:
                    self.post_message(WriteDocument(text, loaded=loaded))

            self.app.push_screen(
                ConfirmScreen(
                    f"{loaded.name} is empty: write this as its first content?",
                    text + "\n(No patch op can add a top-level block, so the first content "
                    "is written whole; every later edit is a recorded patch op.)",
                    yes="Write",
                    no="Cancel",
                ),
                answered,
            )

        self._template_picker(f"Start {loaded.name} from which template?", chosen)

    @guarded
    def action_new_document(self) -> None:
        root = self.workbench.workspace.root

        def check(values: dict[str, str]) -> str | None:
            try:
                check_name(root, values["name"])
            except NewDocumentError as exc:
                return exc.message
            return None

        def named(values: dict[str, str] | None) -> None:
            if values is None:
                return

            def chosen(template: str | None) -> None:
                if template:
                    text = DOCUMENT_BY_NAME[template].render(values["title"])
                    self.post_message(WriteDocument(text, name=values["name"]))

            self._template_picker("New document from which template?", chosen)

        self.app.push_screen(
            InputFormScreen(
                f"New document in {root.name}/",
                [
                    Field("name", "File name (.noma is added)", "", "notes.noma"),
                    Field("title", "Title", "Untitled"),
                ],
                check,
            ),
            named,
        )

    # -- navigation ----------------------------------------------------------------------

    @guarded
    def action_focus_pane(self, pane: str) -> None:
        selector = PANES.get(pane)
        if not selector:
            return
        widget = self.query_one(selector)
        target = getattr(widget, "focus_target", None)
        # set_focus, not focus(): the next key in a burst must already go to the pane.
        self.set_focus(target() if callable(target) else widget)

    # -- search and filters ------------------------------------------------------------

    FILTER_HINTS: ClassVar[dict[str, str]] = {
        "tree": "filter the document: id, alias, title or text · enter keep · esc clear",
        "transcript": "filter the transcript: actor, op or result · enter keep · esc clear",
        "diagnostics": "filter the diagnostics: code, message or id · enter keep · esc clear",
    }

    def _filter_pane(self, target: str) -> Any:
        return {"tree": self.doc_tree, "transcript": self.transcript,
                "diagnostics": self.diagnostics}[target]  # fmt: skip

    @property
    def filter_bar(self) -> Input:
        return self.query_one("#filter", Input)

    @guarded
    def action_filter(self) -> None:
        focused = self.focused
        if isinstance(focused, TranscriptPane):
            self.filter_target = "transcript"
        elif isinstance(focused, DiagnosticsPane):
            self.filter_target = "diagnostics"
        elif focused is not self.filter_bar:
            self.filter_target = "tree"
        bar = self.filter_bar
        bar.placeholder = self.FILTER_HINTS[self.filter_target]
        bar.value = self._filter_pane(self.filter_target).filter_text
        bar.display = True  # now, not at the next style pass: focus must move at key time
        self.set_focus(bar)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "filter":
            return
        event.stop()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        value = event.value
        self._filter_timer = self.set_timer(0.12, lambda: self._apply_filter(value))

    def _apply_filter(self, value: str) -> None:
        count = self._filter_pane(self.filter_target).set_filter(value)
        if value.strip():
            self.status.message = f"/{value.strip()}: {count} shown"
        else:
            self.status.message = ""

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "filter":
            return
        event.stop()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._apply_filter(event.value)
        bar = self.filter_bar
        bar.display = False
        self.set_focus(self._filter_pane(self.filter_target))

    @guarded
    def action_clear_filter(self) -> None:
        bar = self.filter_bar
        in_bar = self.focused is bar
        if self._filter_timer is not None:
            self._filter_timer.stop()
        target = self.filter_target
        if not in_bar:
            focused = self.focused
            target = next(
                (name for name in ("tree", "transcript", "diagnostics")
                 if self._filter_pane(name) is focused),
                "",
            )  # fmt: skip
            if not target or not self._filter_pane(target).filter_text:
                return
        self._filter_pane(target).set_filter("")
        bar.value = ""
        bar.display = False
        self.status.message = ""
        self.set_focus(self._filter_pane(target))

    @guarded
    def action_cycle_severity(self) -> None:
        severity = self.diagnostics.cycle_severity()
        self.notify(f"Diagnostics: {severity or 'all'} shown", timeout=2)

    @guarded
    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused
        if focused is None:
            return
        target = focused
        if self.flow_focused():
            target = self.query_one("#flow-pane")
        self.maximize(target, container=False)

    @guarded
    def action_cursor(self, direction: str) -> None:
        move = getattr(self.focused, f"action_cursor_{direction}", None)
        if callable(move):
            move()

    @guarded
    def action_goto_id(self) -> None:
        loaded = self.workbench.loaded
        if loaded is None:
            return
        idx = index(loaded.doc)
        names = [*idx.first, *idx.alias_owner]

        def chosen(ident: str | None) -> None:
            if not ident:
                return
            block = loaded.block_of_id(ident)
            if block is None:
                self.notify(
                    f"No block with id or alias '{ident}'.",
                    title="target_missing",
                    severity="error",
                )
                return
            self.doc_tree.reveal(block)
            self.set_focus(self.doc_tree)  # now: the next key of a burst goes there

        self.app.push_screen(
            PromptScreen("Go to id or alias", names, cursor_blink=self._blink()), chosen
        )

    @guarded
    def action_copy_ref(self) -> None:
        loaded = self.workbench.loaded
        block = self.selected()
        if loaded is None or block is None:
            return
        ident = loaded.blocks[block].id or "(no id)"
        digest = loaded.block_hash(block) or ""
        text = f"{ident} {digest}".strip()
        if not is_visible(text, single_line=True):
            # Pasted into a shell, an ESC or bidi control would act there (pastejacking).
            raise NotAvailable(
                f"Not copied: the id {plain(ident)} holds characters a terminal acts on "
                "(shown as ⟨U+…⟩ markers); pasting it would send them to a terminal."
            )
        self.app.copy_to_clipboard(text)
        self.notify(text, title="Copied id and block hash", timeout=8)

    @guarded
    def action_reload(self) -> None:
        self.post_message(ReloadRequest())

    @guarded
    def action_export_document(self) -> None:
        from ..export import start_export

        start_export(self)
