"""Reverting a recorded edit: the inverse op(s) of one transcript record.

Undo in the workbench is not a private snapshot restore: it is a new patch op, shown as a
proof and recorded like any edit (``parent_op_id`` = the reverted record's ``op_id``). This
module computes that op from the record and the document as it was before the record
(the *pre-state*, whose sha256 must be the record's ``pre_sha256``):

- the record's op is re-applied to the pre-state, which must reproduce ``post_sha256``
  exactly (so the inverse is built from what really happened, not from a guess);
- the block the op produced must be unchanged in the current document, else the revert is
  refused with ``sha_mismatch`` (someone edited it since; reverting would lose that);
- the inverse carries ``baseHash`` = that block's current hash, so the pipeline refuses it
  too if the block changes between this proof and the apply.

Inverses (each op's record, `ops_catalog.Inverse`): an edit inside one directive
(``replace_body``, attributes, comments resolved, table and dataset cells/rows/columns,
``replace_block``) is undone by ``replace_block`` with the block's previous source;
``update_heading`` by ``update_heading`` with the old title; an added block (``add_block``,
``add_comment``, notes, change requests) by ``delete_block``; ``delete_block`` by
``add_block`` at its old place; ``rename_id`` by renaming back; ``move_block`` by moving
back to the old parent and position.

Only public functions of `core.noma` are used, so the patch pipeline stays the one writer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .ids import index
from .nodes import Directive, Document, Node, Section
from .parser import parse
from .patch.engine import apply_ops_to_text
from .patch.errors import SHA_MISMATCH, PatchError
from .patch.ops_catalog import CATALOG, Inverse
from .patch.text import SourceLines
from .source import encode

NOT_APPLIED = "revert_not_applied"
PRE_STATE_UNKNOWN = "revert_pre_state_unknown"
UNSUPPORTED = "revert_unsupported"


class RevertError(PatchError):
    """The record cannot be reverted; ``code`` says why (``sha_mismatch`` when the block
    changed since the record, so reverting would discard someone's later edit)."""


@dataclass(frozen=True, slots=True)
class Revert:
    """The inverse ops, ready for `PatchRequest(ops=..., parent_op_id=op_id)`."""

    ops: list[dict[str, Any]]
    op_id: str  # the reverted record's op_id (the new record's parent_op_id)
    target: str  # the block the inverse applies to (its baseHash is on the op)
    summary: str  # one line for people: "replace_block risk-a (restores the previous source)"


def sha256_text(text: str) -> str:
    return hashlib.sha256(encode(text)).hexdigest()


class _Version:
    """One document version: its text, parse and id index, with block lookups."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.doc: Document = parse(text)
        self.idx = index(self.doc)
        self.lines = SourceLines(text)
        self._parents: dict[int, Node] = {}
        for child, parent in self.doc.walk():
            self._parents[id(child)] = parent

    def node(self, ident: str) -> Node | None:
        if self.idx.count.get(ident, 0) > 1:
            return None
        return self.idx.first.get(ident)

    def hash(self, ident: str) -> str | None:
        node = self.node(ident)
        if node is None or node.end_line > len(self.lines):
            return None
        return self.lines.block_hash(node.line, node.end_line)

    def source(self, node: Node) -> str:
        raw = self.lines.raw_block(node.line, min(node.end_line, len(self.lines)))
        return raw.replace("\r", "").rstrip("\n")

    def parent(self, node: Node) -> Node | None:
        parent = self._parents.get(id(node))
        return None if parent is None or parent is self.doc else parent

    def position(self, node: Node) -> int | None:
        parent = self._parents.get(id(node))
        if parent is None:
            return None
        kids = parent.children_nodes
        return next((i for i, kid in enumerate(kids) if kid is node), None)


def _op_of(record: Mapping[str, Any]) -> dict[str, Any]:
    op = record.get("op")
    if record.get("patch_result") != "applied" or not isinstance(op, dict):
        raise RevertError(NOT_APPLIED, "Only an applied edit can be reverted.")
    if record.get("pre_sha256") == record.get("post_sha256"):
        raise RevertError(NOT_APPLIED, "This edit changed nothing (a noop); nothing to revert.")
    return op


def _unchanged(current: _Version, post: _Version, ident: str) -> str:
    """The block's current hash, if it is still exactly what the record left."""
    now, then = current.hash(ident), post.hash(ident)
    if now is None:
        raise RevertError(
            SHA_MISMATCH,
            f"'{ident}' is no longer in the document (or is not unique), so this edit "
            "cannot be reverted.",
        )
    if now != then:
        raise RevertError(
            SHA_MISMATCH,
            f"'{ident}' changed after this edit (its hash is {now[:12]}…, the edit left "
            f"{(then or '')[:12]}…); reverting would discard the later change. Revert the "
            "later edit first, or edit the block by hand.",
        )
    return now


def _new_root_id(pre: _Version, post: _Version) -> str:
    """The id of the one block the op added (the outermost new id)."""
    added = [i for i in post.idx.first if i not in pre.idx.first]
    roots = []
    for ident in added:
        node = post.idx.first[ident]
        parent = post.parent(node)
        if parent is None or parent.id not in added:
            roots.append(ident)
    if len(roots) != 1:
        raise RevertError(UNSUPPORTED, "Could not tell which block this edit added.")
    return roots[0]


def inverse(record: Mapping[str, Any], pre_text: str, current_text: str) -> Revert:
    """The op(s) that undo ``record`` on ``current_text``; raises `RevertError`.

    ``pre_text`` is the document before the record (sha256 = ``record["pre_sha256"]``)."""
    op = _op_of(record)
    op_id = str(record.get("op_id") or "")
    if sha256_text(pre_text) != record.get("pre_sha256"):
        raise RevertError(
            PRE_STATE_UNKNOWN,
            "The version of the document before this edit is not available (its sha256 "
            "does not match the record's pre_sha256).",
        )
    try:
        post_text = apply_ops_to_text(pre_text, [op])
    except PatchError as exc:
        raise RevertError(PRE_STATE_UNKNOWN, f"Re-applying the record failed: {exc}") from exc
    if sha256_text(post_text) != record.get("post_sha256"):
        raise RevertError(
            PRE_STATE_UNKNOWN,
            "Re-applying the record does not reproduce its post_sha256; this record "
            "cannot be reverted safely.",
        )
    pre, post, current = _Version(pre_text), _Version(post_text), _Version(current_text)
    name = str(op.get("op"))
    entry = CATALOG.get(name)
    how = entry.inverse if entry is not None else None
    ops: list[dict[str, Any]]

    if how is Inverse.RESTORE_SOURCE:
        old_id = str(op["id"])
        old = pre.node(old_id)
        if not isinstance(old, Directive):
            raise RevertError(UNSUPPORTED, f"'{old_id}' was not a directive block.")
        new_id = old_id
        if name == "replace_block" and post.node(old_id) is None:
            new_id = _new_root_id(pre, post)  # the replacement carried a new id
        base = _unchanged(current, post, new_id)
        ops = [{"op": "replace_block", "id": new_id, "content": pre.source(old),
                "baseHash": base}]  # fmt: skip
        return Revert(ops, op_id, new_id, f"replace_block {new_id} (its previous source)")

    if how is Inverse.RETITLE:
        ident = str(op["id"])
        old = pre.node(ident)
        if not isinstance(old, Section):
            raise RevertError(UNSUPPORTED, f"'{ident}' was not a heading section.")
        base = _unchanged(current, post, ident)
        ops = [{"op": "update_heading", "id": ident, "title": old.title, "baseHash": base}]
        return Revert(ops, op_id, ident, f"update_heading {ident} back to '{old.title}'")

    if how is Inverse.DELETE_ADDED:
        ident = _new_root_id(pre, post)
        base = _unchanged(current, post, ident)
        ops = [{"op": "delete_block", "id": ident, "baseHash": base}]
        return Revert(ops, op_id, ident, f"delete_block {ident} (the block this edit added)")

    if how is Inverse.ADD_BACK:
        ident = str(op["id"])
        old = pre.node(ident)
        parent = pre.parent(old) if old is not None else None
        if not isinstance(old, Directive) or parent is None or parent.id is None:
            raise RevertError(
                UNSUPPORTED,
                f"'{ident}' was not a directive inside an addressable block; add_block "
                "cannot put it back.",
            )
        if current.node(ident) is not None:
            raise RevertError(SHA_MISMATCH, f"'{ident}' is back in the document already.")
        base = _unchanged(current, post, parent.id)
        position = pre.position(old)
        ops = [{"op": "add_block", "parent": parent.id, "content": pre.source(old)}]
        ops[0].update(position=position, baseHash=base)
        return Revert(ops, op_id, parent.id, f"add_block {ident} back into {parent.id}")

    if how is Inverse.RENAME_BACK:
        old_id, new_id = str(op["from"]), str(op["to"])
        base = _unchanged(current, post, new_id)
        ops = [{"op": "rename_id", "from": new_id, "to": old_id, "baseHash": base}]
        return Revert(ops, op_id, new_id, f"rename_id {new_id} back to {old_id}")

    if how is Inverse.MOVE_BACK:
        ident = str(op["id"])
        old = pre.node(ident)
        parent = pre.parent(old) if old is not None else None
        if old is None or parent is None or parent.id is None:
            raise RevertError(UNSUPPORTED, f"'{ident}' had no addressable parent to return to.")
        base = _unchanged(current, post, ident)
        ops = [{"op": "move_block", "id": ident, "parent": parent.id}]
        ops[0].update(position=pre.position(old), baseHash=base)
        return Revert(ops, op_id, ident, f"move_block {ident} back into {parent.id}")

    raise RevertError(UNSUPPORTED, f"Reverting {name} is not supported.")
