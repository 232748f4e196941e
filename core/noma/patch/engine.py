"""Apply an op list to document text in memory: in order, atomically (§3.2).

Each op sees the text the previous one left. ``baseHash`` is checked when its op runs
(the block's current source hash must start with it, §3.4). The first failure stops the
list; the caller decides what to record. Nothing here touches the disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..nodes import Document
from ..source import decode, encode
from .catalog import TARGET_FIELD, check_op
from .errors import SHA_MISMATCH, PatchError
from .registry import OPS
from .state import OpState


@dataclass(slots=True)
class OpStep:
    """What one op did: its text before and after (equal for a noop)."""

    op: Any
    before: str
    after: str
    doc: Document | None = None  # the parse of ``before`` the op ran on

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(slots=True)
class ListFailure(Exception):
    """The op at ``index`` failed with ``error``; ``steps`` are the ops that ran before it."""

    index: int
    error: PatchError
    steps: list[OpStep] = field(default_factory=list)


def block_hash(state: OpState, ident: str) -> str | None:
    node = state.idx.first.get(ident)
    if node is None or state.idx.count.get(ident, 1) > 1:
        return None
    return state.lines.block_hash(node.line, node.end_line)


def _check_base_hash(state: OpState, name: str, op: dict[str, Any]) -> None:
    want = op.get("baseHash")
    if want is None:
        return
    ident = op.get(TARGET_FIELD[name])
    got = block_hash(state, ident) if isinstance(ident, str) else None
    if got is not None and not got.startswith(want.lower()):
        raise PatchError(
            SHA_MISMATCH,
            f"Block '{ident}' changed since it was read: its source hash is {got[:12]}…, "
            f"the op expected {want[:12]}…. Re-read the block and retry.",
        )


def apply_one(text: str, op: Any, doc: Document | None = None) -> str:
    """Apply one op to ``text``; raises `PatchError`.

    A stale ``baseHash`` is refused before the op runs; an unknown or alias target has no
    hash to compare, so the op's own lookup refuses it (target_missing / parent_missing).
    """
    return _apply(text, op, doc)[0]


def _apply(text: str, op: Any, doc: Document | None) -> tuple[str, Document]:
    name = check_op(op)
    state = OpState(text, doc)
    _check_base_hash(state, name, op)
    before_doc = state.doc
    OPS[name](state, op)
    return state.lines.text(), before_doc


def apply_list(text: str, ops: list[Any], doc: Document | None = None) -> list[OpStep]:
    """Apply every op in order; raises `ListFailure` at the first that fails."""
    steps: list[OpStep] = []
    current = text
    current_doc = doc
    for i, op in enumerate(ops):
        try:
            after, before_doc = _apply(current, op, current_doc)
        except PatchError as exc:
            raise ListFailure(i, exc, steps) from exc
        steps.append(OpStep(op, current, after, before_doc))
        if after != current:
            current_doc = None  # re-parse lazily for the next op
        current = after
    return steps


def apply_ops_to_text(text: str, ops: list[Any]) -> str:
    """The final text after all ops; raises `PatchError` (the failing op's) on failure."""
    try:
        steps = apply_list(text, ops)
    except ListFailure as failure:
        raise failure.error from None
    return steps[-1].after if steps else text


def apply_ops_to_bytes(raw: bytes, ops: list[Any]) -> bytes:
    """Bytes in, bytes out: the conformance entry point (``patchSource``)."""
    source = decode(raw)
    return encode(apply_ops_to_text(source.text, ops))
