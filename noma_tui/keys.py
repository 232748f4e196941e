"""Every user action in one registry: its binding id, default key, footer label and help.

Keys map to actions through this table only, so the main screen's bindings, the command
palette, the help screen and a user keymap (``[workbench.keymap]`` in
``noma-workbench.toml``, binding id -> keys) all agree. Rebinding is `App.set_keymap`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class ActionSpec:
    id: str  # binding id, the name a keymap uses
    action: str  # action method name (without ``action_``)
    key: str  # default key(s), comma separated
    label: str  # short footer label
    help: str  # one line for the help screen and the command palette
    group: str
    op: str | None = None  # the patch op this action sends, if it edits
    footer: bool = True
    # Keys that move focus are priority bindings: focus moves before the next key is
    # dispatched, so "5n" or "/need" typed in one burst never lands n on a document block.
    priority: bool = False

    def binding(self, *, priority: bool | None = None) -> Binding:
        return Binding(
            self.key,
            self.action,
            self.label,
            show=self.footer,
            tooltip=self.help,
            id=self.id,
            priority=self.priority if priority is None else priority,
        )


EDIT = "Edit the selected block"
NAVIGATE = "Navigate"
FLOW = "Flow runs"
APP = "App"

EDIT_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("edit.body", "edit_body", "e", "Body", "Edit the block's body", EDIT,
               "replace_body"),
    ActionSpec("edit.source", "edit_source", "E", "Source", "Edit the block's whole source",
               EDIT, "replace_block", footer=False),
    ActionSpec("edit.external", "external_editor", "ctrl+e", "$EDITOR", "Edit the block's "
               "source in $VISUAL / $EDITOR (the proof follows)", EDIT, "replace_block",
               footer=False),
    ActionSpec("edit.attribute", "set_attribute", "a", "Attr", "Set an attribute", EDIT,
               "update_attribute"),
    ActionSpec("edit.remove_attribute", "remove_attribute", "A", "Unset",
               "Remove an attribute", EDIT, "remove_attribute", footer=False),
    ActionSpec("edit.rename", "rename_id", "r", "Rename", "Rename the block's id "
               "(references follow)", EDIT, "rename_id"),
    ActionSpec("edit.heading", "edit_heading", "h", "Heading", "Edit a section heading", EDIT,
               "update_heading"),
    ActionSpec("edit.add", "add_block", "n", "New", "Add a block from a template", EDIT,
               "add_block"),
    ActionSpec("edit.delete", "delete_block", "d", "Delete", "Delete the block (asks first)",
               EDIT, "delete_block"),
    ActionSpec("edit.move", "move_block", "m", "Move", "Move the block under another parent",
               EDIT, "move_block", footer=False),
    ActionSpec("edit.comment", "add_comment", "c", "Comment", "Add a review comment", EDIT,
               "add_comment"),
    ActionSpec("edit.resolve", "resolve_comment", "x", "Resolve", "Resolve a comment", EDIT,
               "resolve_comment"),
    ActionSpec("edit.table", "edit_table", "t", "Table", "Edit table cells in a grid", EDIT,
               "update_table_cell"),
)  # fmt: skip

HISTORY = "Undo"
HISTORY_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("edit.undo", "undo", "u,ctrl+z", "Undo", "Undo: revert your latest edit in "
               "this document (shown as a proof, recorded as a new edit)", HISTORY),
    ActionSpec("edit.redo", "redo", "U", "Redo", "Redo: re-apply the edit you last undid",
               HISTORY, footer=False),
)  # fmt: skip

NAVIGATION_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("focus.files", "focus_pane('files')", "f", "Files", "Focus the file list",
               NAVIGATE, footer=False, priority=True),
    ActionSpec("file.new", "new_document", "N", "New file", "Create a new document from a "
               "template", NAVIGATE, footer=False),
    ActionSpec("focus.tree", "focus_pane('tree')", "1", "Tree", "Focus the document tree",
               NAVIGATE, footer=False, priority=True),
    ActionSpec("focus.block", "focus_pane('block')", "2", "Block", "Focus the block view",
               NAVIGATE, footer=False, priority=True),
    ActionSpec("focus.diagnostics", "focus_pane('diagnostics')", "3", "Diagnostics",
               "Focus the diagnostics", NAVIGATE, footer=False, priority=True),
    ActionSpec("focus.transcript", "focus_pane('transcript')", "4", "Transcript",
               "Focus the transcript", NAVIGATE, footer=False, priority=True),
    ActionSpec("focus.flow", "focus_pane('flow')", "5", "Flow", "Focus the flow runs pane",
               NAVIGATE, footer=False, priority=True),
    ActionSpec("search.filter", "filter", "slash", "Filter", "Search / filter the focused "
               "list: the tree by id, alias, title or text; the transcript by actor, op or "
               "result; the diagnostics by code or message", NAVIGATE, priority=True),
    ActionSpec("search.clear", "clear_filter", "escape", "Clear", "Clear the filter (Esc)",
               NAVIGATE, footer=False),
    ActionSpec("diagnostics.severity", "cycle_severity", "S", "Severity", "Diagnostics: one "
               "severity at a time (all → error → warning → info)", NAVIGATE, footer=False),
    ActionSpec("nav.down", "cursor('down')", "j", "Down", "Move down in the focused list",
               NAVIGATE, footer=False),
    ActionSpec("nav.up", "cursor('up')", "k", "Up", "Move up in the focused list", NAVIGATE,
               footer=False),
    ActionSpec("view.zoom", "zoom", "z", "Zoom", "Zoom: maximise the focused pane (z or Esc "
               "goes back)", NAVIGATE),
    ActionSpec("view.preview", "toggle_preview", "p", "Preview", "Preview: show the selected "
               "block rendered beside its source (again: hide)", NAVIGATE),
    ActionSpec("go.id", "goto_id", "g", "Go to", "Go to a block by id or alias", NAVIGATE,
               footer=False),
    ActionSpec("copy.ref", "copy_ref", "y", "Copy", "Copy the block's id and hash (also "
               "shown in a notification)", NAVIGATE, footer=False),
    ActionSpec("doc.reload", "reload", "ctrl+r", "Reload", "Re-read the document from disk",
               NAVIGATE, footer=False),
    ActionSpec("doc.export", "export_document", "ctrl+o", "Export", "Export as Markdown, HTML "
               "or an LLM context, beside the document", NAVIGATE, footer=False),
)  # fmt: skip

FLOW_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("flow.start", "start_run", "n", "Start", "Start a run of a flow (asks for its "
               "declared inputs)", FLOW),
    ActionSpec("flow.advance", "advance", "a", "Advance", "Advance the step (pending → in "
               "progress → done)", FLOW),
    ActionSpec("flow.approve", "approve", "v", "Approve", "Approve the step's evidence as "
               "the human reviewer (done)", FLOW),
    ActionSpec("flow.block", "block", "b", "Block", "Mark the step blocked (again: unblock)",
               FLOW),
    ActionSpec("flow.skip", "skip", "s", "Skip", "Skip the step: policy, not applicable or "
               "blocked dependency", FLOW),
    ActionSpec("flow.evidence", "evidence", "e", "Evidence", "Attach evidence (the open "
               "document's transcript, or a typed pointer)", FLOW),
    ActionSpec("flow.consent", "consent", "c", "Consent", "Consent to automatable execution "
               "(cost cap, time limit)", FLOW),
    ActionSpec("flow.dry_run", "dry_run", "X", "Dry run", "Check every gate for executing "
               "the step; nothing runs", FLOW),
    ActionSpec("flow.execute", "execute", "x", "Execute", "Execute the automatable step in "
               "the sandbox", FLOW),
    ActionSpec("flow.review", "submit_review", "r", "Review", "Submit the run's outcome to "
               "review", FLOW),
    ActionSpec("flow.proposals", "proposals", "P", "Proposals", "Review pending proposals: "
               "see what each changes, then approve or reject", FLOW, footer=False),
    ActionSpec("flow.consents", "consents", "C", "Consents", "List the run's consents (Enter "
               "revokes one)", FLOW, footer=False),
    ActionSpec("flow.message", "show_message", "o", "Message", "Show the last flow message "
               "in full", FLOW, footer=False),
    ActionSpec("flow.reload", "reload", "f5", "Reload", "Re-read the runs", FLOW,
               footer=False),
    ActionSpec("flow.runs", "toggle_runs", "l", "Runs", "Move between the runs list and the "
               "selected run's steps", FLOW, footer=False),
)  # fmt: skip

APP_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("app.help", "help", "f1,question_mark", "Help", "Show keys and what they do",
               APP),
    ActionSpec("app.trust", "workspace_trust", "T", "Trust", "Workspace trust: what this "
               "folder's settings would turn on (hub, store, secrets, gates, its skills), and "
               "trust it", APP, footer=False),
    ActionSpec("app.theme", "toggle_theme", "ctrl+t", "Theme", "Switch dark / light theme",
               APP, footer=False),
    ActionSpec("app.quit", "quit_app", "q", "Quit", "Quit the workbench", APP),
)  # fmt: skip

OPENS_DIALOG = frozenset(
    {spec.id for spec in EDIT_ACTIONS + HISTORY_ACTIONS} | {"file.new", "go.id", "doc.export"}
)
"""Actions that open a dialog (or a proof): priority bindings, so the action runs when its
key is dispatched and the keys typed after it wait for the dialog (`noma_tui.typeahead`)."""


def _opening(actions: tuple[ActionSpec, ...]) -> tuple[ActionSpec, ...]:
    return tuple(replace(s, priority=True) if s.id in OPENS_DIALOG else s for s in actions)


EDIT_ACTIONS = _opening(EDIT_ACTIONS)
HISTORY_ACTIONS = _opening(HISTORY_ACTIONS)
NAVIGATION_ACTIONS = _opening(NAVIGATION_ACTIONS)
# Every flow key opens a dialog or starts a call whose answer the next key acts on (the
# pane holds the keys until it is idle), so each runs when it is dispatched, before the
# next key is looked at. The pane holds no text field that could want these letters.
FLOW_ACTIONS = tuple(replace(s, priority=True) for s in FLOW_ACTIONS)
SCREEN_ACTIONS = EDIT_ACTIONS + HISTORY_ACTIONS + NAVIGATION_ACTIONS
ALL_ACTIONS = SCREEN_ACTIONS + FLOW_ACTIONS + APP_ACTIONS

EDITOR = "In an editor"
FORM = "In a form"
PROOF = "In the proof"
CONFLICT = "After a conflict (the block changed on disk)"
LISTS = "In a list, prompt or message"
QUESTION = "In a question"
DIALOG_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("editor.submit", "submit", "ctrl+s", "Preview & apply", "Show the proof of "
               "the edit", EDITOR, priority=True),
    ActionSpec("editor.cancel", "cancel", "escape", "Cancel", "Cancel the edit (asks first "
               "if you typed something)", EDITOR, priority=True),
    ActionSpec("form.next", "next_field", "enter", "Next", "Next field (in the last: the "
               "proof)", FORM, footer=False, priority=True),
    ActionSpec("form.tab", "next_field(False)", "tab", "Next", "Next field", FORM,
               footer=False, priority=True),
    ActionSpec("form.back", "previous_field", "shift+tab", "Back", "Previous field", FORM,
               footer=False, priority=True),
    ActionSpec("form.submit", "submit", "ctrl+s", "Submit", "Submit the form", FORM,
               priority=True),
    ActionSpec("form.cancel", "cancel", "escape", "Cancel", "Cancel the form", FORM,
               priority=True),
    ActionSpec("proof.apply", "apply", "ctrl+s", "Apply", "Apply the edit (a delete: "
               "delete); the reason field takes text, Tab goes to Cancel, then Delete",
               PROOF, priority=True),
    ActionSpec("proof.back", "back", "escape", "Back", "Back to the edit; nothing is "
               "written", PROOF, priority=True),
    ActionSpec("conflict.theirs", "choose('theirs')", "t", "Take theirs", "Take theirs: "
               "reload the block as it is on disk", CONFLICT),
    ActionSpec("conflict.mine", "choose('mine')", "m", "Keep mine", "Keep mine: apply your "
               "text over theirs (a new proof first)", CONFLICT),
    ActionSpec("conflict.merge", "choose('merge')", "e", "Edit merge", "Edit a three-way "
               "merge of both", CONFLICT),
    ActionSpec("conflict.back", "choose('back')", "escape", "Back", "Back to your edit, "
               "its text untouched", CONFLICT),
    ActionSpec("picker.choose", "choose", "enter", "Choose", "Choose the highlighted item "
               "(keys typed after it go to what it opens)", LISTS, footer=False, priority=True),
    ActionSpec("picker.cancel", "cancel", "escape", "Cancel", "Close the list without a "
               "choice", LISTS),
    ActionSpec("picker.down", "move('down')", "j", "Down", "Down in the list", LISTS,
               footer=False, priority=True),
    ActionSpec("picker.up", "move('up')", "k", "Up", "Up in the list", LISTS, footer=False,
               priority=True),
    ActionSpec("prompt.go", "go", "enter", "Go", "Go to what was typed (keys typed after it "
               "go to what it opens)", LISTS, footer=False, priority=True),
    ActionSpec("prompt.cancel", "cancel", "escape", "Cancel", "Close the prompt", LISTS),
    ActionSpec("record.close", "close", "escape,q", "Close", "Close the transcript record",
               LISTS),
    ActionSpec("record.revert", "revert", "R", "Revert this edit", "Revert this transcript "
               "record (a proof first)", LISTS),
    ActionSpec("message.close", "close", "escape,q,enter,o", "Close", "Close the message",
               LISTS),
    ActionSpec("help.close", "close", "escape,f1,question_mark,q", "Close", "Close this "
               "help", LISTS),
    ActionSpec("confirm.yes", "answer(True)", "y", "Yes", "Yes (discard, write…: what the "
               "question says)", QUESTION),
    ActionSpec("confirm.no", "answer(False)", "n,escape", "No", "No, go back", QUESTION),
    ActionSpec("review.approve", "decide(True)", "a", "Approve", "Approve the proposal "
               "shown (what it imports is listed)", QUESTION),
    ActionSpec("review.reject", "decide(False)", "r", "Reject", "Reject the proposal shown",
               QUESTION),
    ActionSpec("review.back", "decide(None)", "escape,q", "Back", "Back to the list; "
               "nothing decided", QUESTION),
    ActionSpec("trust.yes", "answer(True)", "y", "Trust", "Trust this folder", QUESTION),
    ActionSpec("trust.no", "answer(False)", "n,escape", "Not now", "Do not trust it now",
               QUESTION),
)  # fmt: skip

HELP_ACTIONS = ALL_ACTIONS + DIALOG_ACTIONS
"""Everything F1 lists: every binding of every screen and pane comes from here."""
BY_ACTION = {spec.action: spec for spec in SCREEN_ACTIONS + APP_ACTIONS}
FLOW_BY_ACTION = {spec.action: spec for spec in FLOW_ACTIONS}
BY_ID = {spec.id: spec for spec in HELP_ACTIONS}


def bindings(*ids: str) -> list[Binding]:
    """The bindings of a dialog, from the registry (so F1 lists exactly these)."""
    return [BY_ID[ident].binding() for ident in ids]


def display_key(key: str) -> str:
    """``f1,question_mark`` -> ``F1 / ?`` for the help screen."""
    names = {
        "question_mark": "?",
        "ctrl": "^",
        "escape": "Esc",
        "enter": "Enter",
        "slash": "/",
    }
    out = []
    for part in key.split(","):
        part = part.strip()
        if part in names:
            out.append(names[part])
        elif part.startswith("ctrl+"):
            out.append("^" + part[5:])
        elif len(part) > 1:
            out.append(part.upper() if part.startswith("f") and part[1:].isdigit() else part)
        else:
            out.append(part)
    return " / ".join(out)
