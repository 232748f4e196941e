"""Which editing actions apply to the selected block, and why not when they do not: pure
functions of the shown version and the selected block, so the main screen's footer, its
`check_action`, the palette and a refusal all give the same answer.

Which ops fit which kind of block is core's rule (`core.noma.patch.applicable`); this adds
what the app knows besides: a read-only file or bytes that are not UTF-8 block every edit,
``add_block`` adds beside the selected block in its parent (or inside a section), and the
in-app editor refuses text a terminal would act on.
"""

from __future__ import annotations

from core.noma.api import Directive, Section, is_visible, ops_for_kind

from .document import ROOT, LoadedDocument

CONTROLS_IN_BLOCK = (
    "This block holds characters a terminal acts on (ESC, C1 or bidi controls, shown as "
    "⟨U+001B⟩-style markers in the block view): the in-app editor cannot show them. Edit it "
    "with $EDITOR (ctrl+e) or in another editor."
)

GENERAL_OPS = frozenset(
    {"replace_body", "update_attribute", "rename_id", "add_block", "delete_block", "add_comment"}
)
"""Shown greyed in the footer while no block is selected; the rest only when they fit."""


class NotAvailable(Exception):
    """An action that cannot run here; the message says what to do instead."""

    code = "not_available"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def writable(loaded: LoadedDocument | None) -> bool:
    """True when edits can be applied to the shown version at all."""
    return loaded is not None and not loaded.read_only and loaded.source.invalid_utf8_at is None


def add_parent(loaded: LoadedDocument, block: int) -> tuple[int, int | None] | None:
    """Where ``add_block`` puts a new block: inside a selected section (at its end), else
    right after the selected block in its parent. (parent, position)"""
    node = loaded.blocks[block]
    if isinstance(node, Section) and not node.in_directive:
        return block, None
    parent = loaded.parents[block]
    if parent == ROOT:
        return None
    siblings = loaded.blocks[parent].children_nodes
    position = next((i for i, n in enumerate(siblings) if n is node), None)
    return parent, (position + 1 if position is not None else None)


def applies(loaded: LoadedDocument | None, block: int | None, op: str) -> bool | None:
    """True: can run now; None: applies to this block but is blocked; False: does not
    apply to this kind of block (hidden from the footer)."""
    if loaded is not None and block is None and op in GENERAL_OPS:
        # Runs, and says what to do: select a block, or (empty document) press n.
        return True
    if loaded is None or block is None or not writable(loaded):
        return None if op in GENERAL_OPS else False
    node = loaded.blocks[block]
    if op == "add_block":  # the app adds beside the selected block, in its parent
        fits = add_parent(loaded, block) is not None or isinstance(node, Section)
    elif op == "add_comment":
        fits = True
    else:  # which ops fit which block is core's rule (`applicable_ops`)
        fits = op in ops_for_kind(node)
    if not fits:
        return False
    if op == "add_block":
        parent = add_parent(loaded, block)
        return True if parent is not None and loaded.patchable(parent[0]) else None
    return True if loaded.patchable(block) and loaded.span_ok(block) else None


def why_not(loaded: LoadedDocument | None, block: int | None, op: str | None) -> str:
    """What stops ``op`` on ``block``, in words that say what to do instead."""
    if loaded is None:
        return "No document is open."
    if loaded.read_only:
        return f"{loaded.name} is read-only (no write permission): nothing can be applied."
    if loaded.source.invalid_utf8_at is not None:
        line, column = loaded.source.invalid_utf8_at
        return (
            f"{loaded.name} has invalid UTF-8 at line {line}, column {column} (shown as "
            "⟨XX⟩); fix the bytes in another editor first."
        )
    if block is None:
        return "Select a block in the document tree first."
    node = loaded.blocks[block]
    if node.id is None:
        return "This block has no id, so no patch can address it (§2.1)."
    if node.id in loaded.duplicate_ids:
        return f"'{node.id}' is a duplicate id; fix that first (§2.1)."
    return f"{op} does not apply to this block."


def editable_block(loaded: LoadedDocument | None, block: int | None) -> tuple[LoadedDocument, int]:
    """The shown version and the selected block, if an edit can start there; else
    `NotAvailable` saying why."""
    if loaded is None:
        raise NotAvailable("No document is open.")
    if block is None:
        if not loaded.blocks:
            raise NotAvailable(f"{loaded.name} is empty: press n to start it from a template.")
        raise NotAvailable("Select a block in the document tree first (1, then j/k).")
    if not writable(loaded):
        raise NotAvailable(why_not(loaded, block, "replace_body"))
    return loaded, block


def editable(text: str) -> str:
    """The in-app editor shows text as it is; text a terminal would act on is refused
    (never drawn raw, never silently rewritten as marker letters)."""
    if not is_visible(text):
        raise NotAvailable(CONTROLS_IN_BLOCK)
    return text


def block_title(op: str, loaded: LoadedDocument, block: int) -> str:
    node = loaded.blocks[block]
    what = f"::{node.name}" if isinstance(node, Directive) else "section"
    return f"{op} · {what} {node.id}"
