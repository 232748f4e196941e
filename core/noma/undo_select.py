"""Which transcript record undo reverts and which redo re-applies, as a pure function of the
records and their kinds.

A record's kind (an ordinary ``edit``, a ``revert`` of an earlier record, a ``redo`` of a
revert) is data: the writer's own word for the records it wrote (a surface's journal, the
records of its session) and, for the rest, the causation chain (a record whose
``parent_op_id`` names an edit reverts it; one that names a revert redoes it). The
free-text ``reason`` is never read: a writer may type anything there.

Every surface that offers undo (the workbench's ``u`` / ``U``, and any editor built on the
engine later) asks these functions, so they agree on what "the last edit" is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

EDIT: Final = "edit"
REVERT: Final = "revert"
REDO: Final = "redo"
KINDS: Final = frozenset({EDIT, REVERT, REDO})

Record = dict[str, Any]


def own_applied(records: Iterable[Record | None], actor: Mapping[str, str]) -> list[Record]:
    """``actor``'s applied records that changed the document (``kind`` and ``name`` both
    match), oldest first; malformed entries and rejected or no-op records are skipped."""
    out: list[Record] = []
    for record in records:
        if not isinstance(record, dict) or record.get("patch_result") != "applied":
            continue
        if record.get("pre_sha256") == record.get("post_sha256"):
            continue
        who = record.get("actor")
        if isinstance(who, dict) and all(who.get(k) == actor.get(k) for k in ("kind", "name")):
            out.append(record)
    return out


def record_kinds(records: Iterable[Record], known: Mapping[str, str]) -> dict[str, str]:
    """op_id -> edit / revert / redo for ``records`` (oldest first). ``known`` is the
    writer's own word by op_id (an unknown word counts as an edit); the rest follow the
    causation chain."""
    kinds: dict[str, str] = {}
    for record in records:
        op_id = str(record.get("op_id") or "")
        kind = known.get(op_id)
        if kind is None:
            parent = kinds.get(str(record.get("parent_op_id") or ""))
            kind = EDIT if parent is None else REDO if parent == REVERT else REVERT
        kinds[op_id] = kind if kind in KINDS else EDIT
    return kinds


def _kind(kinds: Mapping[str, str], record: Record) -> str:
    return kinds.get(str(record.get("op_id") or ""), EDIT)


def undo_target(records: list[Record], kinds: Mapping[str, str]) -> Record | None:
    """The latest record that is not a revert and has not been reverted."""
    reverted = {r.get("parent_op_id") for r in records if _kind(kinds, r) == REVERT}
    for record in reversed(records):
        if _kind(kinds, record) != REVERT and record.get("op_id") not in reverted:
            return record
    return None


def redo_target(records: list[Record], kinds: Mapping[str, str]) -> Record | None:
    """The latest revert not yet redone, provided no new edit came after it."""
    redone = {r.get("parent_op_id") for r in records if _kind(kinds, r) == REDO}
    for record in reversed(records):
        kind = _kind(kinds, record)
        if kind == REVERT:
            if record.get("op_id") not in redone:
                return record
            continue
        if kind != REDO:
            return None  # a new edit since: nothing to redo
    return None
