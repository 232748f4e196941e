"""Where the app goes after an edit: which record ``u`` reverts and which ``U`` redoes (from
the transcript and the records' kinds, edit / revert / redo, by data:
`noma_tui.undo_journal.own_kinds`), and which block the tree lands on once it is written."""

from __future__ import annotations

from typing import Any

from core.noma.api import TARGET_FIELD

from .history import TranscriptSnapshot


def own_records(snapshot: TranscriptSnapshot, actor: dict[str, str]) -> list[dict[str, Any]]:
    """``actor``'s applied records that changed the document, oldest first."""
    return [
        row.record
        for row in snapshot.rows
        if row.record is not None
        and row.problem is None
        and row.record.get("patch_result") == "applied"
        and row.record.get("pre_sha256") != row.record.get("post_sha256")
        and isinstance(row.record.get("actor"), dict)
        and {k: row.record["actor"].get(k) for k in ("kind", "name")} == actor
    ]


def _kind(kinds: dict[str, str], record: dict[str, Any]) -> str:
    return kinds.get(str(record.get("op_id") or ""), "edit")


def undo_target(own: list[dict[str, Any]], kinds: dict[str, str]) -> dict[str, Any] | None:
    """The latest edit that is not a revert and not reverted."""
    reverted = {r.get("parent_op_id") for r in own if _kind(kinds, r) == "revert"}
    record: dict[str, Any]  # mypy types reversed(list) as Any
    for record in reversed(own):
        if _kind(kinds, record) != "revert" and record.get("op_id") not in reverted:
            return record
    return None


def redo_target(own: list[dict[str, Any]], kinds: dict[str, str]) -> dict[str, Any] | None:
    """The latest revert not yet redone, if no new edit came after it."""
    redone = {r.get("parent_op_id") for r in own if _kind(kinds, r) == "redo"}
    record: dict[str, Any]
    for record in reversed(own):
        kind = _kind(kinds, record)
        if kind == "revert":
            if record.get("op_id") not in redone:
                return record
            continue
        if kind != "redo":
            return None  # a new edit since: nothing to redo
    return None


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
