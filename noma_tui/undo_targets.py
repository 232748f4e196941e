"""Where the app goes after an edit: the records of the shown transcript that undo and redo
choose among (the choice itself is `core.noma.undo_select`), and which block the tree lands
on once an edit is written."""

from __future__ import annotations

from typing import Any

from core.noma.api import TARGET_FIELD, own_applied

from .transcript_view import TranscriptSnapshot


def own_records(snapshot: TranscriptSnapshot, actor: dict[str, str]) -> list[dict[str, Any]]:
    """``actor``'s applied records that changed the document, oldest first (the rows'
    records; which of them undo and redo pick is `core.noma.undo_select`)."""
    return own_applied((row.record for row in snapshot.rows if row.problem is None), actor)


def selection_after(ops: list[dict[str, Any]]) -> str | None:
    """The id the tree should land on after the edit (the new, renamed or moved block)."""
    if len(ops) != 1:
        return None
    op = ops[0]
    name = op.get("op")
    if name == "rename_id":
        return str(op.get("to"))
    if name == "add_comment":
        return str(op.get("id"))
    if name == "add_block":
        from core.noma.api import parse

        frag = parse(str(op.get("content", "")))
        first = frag.children[0] if frag.children else None
        return first.id if first is not None else None
    if name == "delete_block":
        return None
    target = op.get(TARGET_FIELD.get(str(name), "id"))
    return target if isinstance(target, str) else None
