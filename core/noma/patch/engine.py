"""Apply an op list to document text in memory: in order, atomically (§3.2).

Each op sees the text the previous one left. ``baseHash`` is checked when its op runs
(the block's current source hash must start with it, §3.4). The first failure stops the
list; the caller decides what to record. Nothing here touches the disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ids import find_block
from ..incremental import reparse
from ..nodes import Document
from ..source import decode, encode
from .catalog import check_op
from .errors import SHA_MISMATCH, PatchError
from .ops_catalog import TARGET_FIELD
from .registry import OPS
from .state import OpState
from .text import SourceLines


@dataclass(slots=True)
class OpStep:
    """What one op did: its text before and after (equal for a noop)."""

    op: Any
    before: str
    after: str
    doc: Document | None = None  # the parse of ``before`` the op ran on
    # ``after``'s lines as `split_lines` reads them (`SourceLines.as_split`): the splice of
    # the next version reads them instead of splitting 2 MB again
    lines: list[str] | None = None
    # ``after`` as the op left it in `SourceLines` (never mutated again): the next edit of
    # this version copies it rather than splitting the text (`DocumentState.source_lines`)
    source_lines: SourceLines | None = None

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
    """The §6.3 span hash of block ``ident`` (what ``read_doc`` reports)."""
    hashes = block_hashes(state, ident)
    return hashes[0] if hashes else None


def block_hashes(state: OpState, ident: str) -> tuple[str, ...]:
    """The hashes a ``baseHash`` prefix may match: the §6.3 span's, and, when the span ends
    in blank lines, the same lines without them (what the reference's tools hash for a
    heading section). Empty for an unknown or ambiguous id."""
    node, count = find_block(state.doc, ident)
    if node is None or count > 1:
        return ()
    start, end = node.line, node.end_line
    span = state.lines.block_hash(start, end)
    trimmed_end = end
    while trimmed_end > start and state.lines.is_blank(trimmed_end):
        trimmed_end -= 1
    if trimmed_end == end:
        return (span,)
    return span, state.lines.block_hash(start, trimmed_end)


def _check_base_hash(state: OpState, name: str, op: dict[str, Any], want: Any) -> None:
    if want is None:
        return
    ident = op.get(TARGET_FIELD[name])
    got = block_hashes(state, ident) if isinstance(ident, str) else ()
    prefix = str(want).lower()
    if got and not any(h.startswith(prefix) for h in got):
        raise PatchError(
            SHA_MISMATCH,
            f"Block '{ident}' changed since it was read: its source hash is {got[0][:12]}…, "
            f"the op expected {prefix[:12]}…. Re-read the block and retry.",
        )


def apply_one(text: str, op: Any, doc: Document | None = None) -> str:
    """Apply one op to ``text``; raises `PatchError`.

    A stale ``baseHash`` is refused before the op runs; an unknown or alias target has no
    hash to compare, so the op's own lookup refuses it (target_missing / parent_missing).
    """
    return _apply(text, op, doc)[0]


def _apply(
    text: str,
    op: Any,
    doc: Document | None,
    base_hash: str | None = None,
    lines: SourceLines | None = None,
) -> tuple[str, Document, SourceLines]:
    name = check_op(op)
    state = OpState(text, doc, lines)
    _check_base_hash(state, name, op, op.get("baseHash"))
    _check_base_hash(state, name, op, base_hash)
    before_doc = state.doc
    OPS[name](state, op)
    return state.lines.text(), before_doc, state.lines


def apply_list(
    text: str,
    ops: list[Any],
    doc: Document | None = None,
    *,
    base_hash: str | None = None,
    lines: SourceLines | None = None,
    owned: bool = False,
) -> list[OpStep]:
    """Apply every op in order; raises `ListFailure` at the first that fails.

    ``base_hash`` (a request's top-level precondition, Annex B.6) is checked against the
    first op's target block, in addition to that op's own ``baseHash``. ``lines``: the
    text already split (`SourceLines` of ``text``; copied, never mutated). ``owned``: the
    caller gives ``lines`` away for a one-op list (`SourceLines.adopt`: edited in place,
    not copied); a failed op leaves them as they were (undone).
    """
    steps: list[OpStep] = []
    current = text
    current_doc = doc
    current_lines = lines
    owned = owned and len(ops) == 1 and lines is not None
    for i, op in enumerate(ops):
        if current_doc is None and steps:
            # The next op sees the splice of the last one's change (`core.noma.incremental`).
            last = steps[-1]
            if last.doc is not None:
                current_doc = reparse(last.doc, last.before, last.after, last.lines)
        given: SourceLines | None = None
        if current_lines is not None:
            given = current_lines.adopt() if owned else current_lines.copy()
        try:
            after, before_doc, source = _apply(
                current, op, current_doc, base_hash if i == 0 else None, given
            )
        except PatchError as exc:
            if owned and given is not None:
                given.undo()
            raise ListFailure(i, exc, steps) from exc
        except BaseException:
            if owned and given is not None:
                given.undo()
            raise
        steps.append(OpStep(op, current, after, before_doc, source.as_split(), source))
        current_lines = source
        if after != current:
            current_doc = None
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
