"""One patch request against a file, end to end (architecture "Data flow"):

lock -> finish or drop an interrupted commit -> read bytes -> pre_sha256 -> parse ->
pre-validate -> wire schema -> preconditions -> apply the op list in memory (atomic) ->
post_sha256 -> post-validate -> structure guard -> records -> write-ahead commit (pending
record, new bytes, rename, transcript append; `core.noma.commit`).

Every attempted op gets one transcript record (§5.1), rejections included. An op that fails
the wire schema (``patch-op.schema.json``) is refused before it reaches the engine; its
record carries a schema-valid placeholder op and the op as received, bounded, on the failing
diagnostic (`refused`, docs/transcript-extensions.md). Only a request refused before its
document is identified (no such file, outside the root, not a document) has no transcript
to write to.

Every surface (CLI, MCP, TUI) calls `patch_file` so the same request gives the same record.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

from ..boundary import BoundaryError, Place, document_place
from ..commit import Recovery, TranscriptWriteError, commit, recover, temp_name
from ..diagnostics import Diagnostic, Summary, summarize
from ..files import DocumentIOError, is_book_manifest, read_source, read_source_at
from ..incremental import reparse, span_is_clean
from ..nodes import Document
from ..parser import parse
from ..source import Source, decode, encode, text_is_clean
from ..transcript import (
    PROTOCOL_VERSION,
    TOOL_VERSION,
    new_op_id,
    now_iso,
)
from ..warm_files import WarmFiles, Written
from .capabilities import op_advisories
from .catalog import canonical_op, check_op
from .engine import ListFailure, OpStep, apply_list
from .errors import (
    INVALID_OP,
    OP_LIST_ABORTED,
    PRE_VALIDATION_BLOCKED,
    SHA_MISMATCH,
    UNSUPPORTED_OP,
    PatchError,
)
from .guard import check_structure, outline_entries
from .limits import (
    CONTENT_TOO_LARGE,
    MAX_LIST_OPS,
    MAX_OP_BYTES,
    _string_bytes,
    check_request_size,
)
from .patterns import HASH_RE
from .refused import (
    MAX_RAW_CHARS,
    PLACEHOLDER_OP,
    RAW_ACTOR_FIELD,
    RAW_OP_FIELD,
    raw_text,
    recordable_op,
)
from .text import LineChange, SourceLines, line_change

ActorKind = Literal["human", "agent", "tool"]
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")


@dataclass(slots=True)
class Actor:
    kind: ActorKind
    name: str
    model: str | None = None
    version: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"kind": self.kind, "name": self.name}
        if self.model:
            out["model"] = self.model
        if self.version:
            out["version"] = self.version
        return out

    @classmethod
    def from_json(cls, data: Any) -> Actor:
        if not isinstance(data, dict) or data.get("kind") not in ("human", "agent", "tool"):
            raise PatchError(INVALID_OP, "actor.kind must be human, agent or tool.")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise PatchError(INVALID_OP, "actor.name must be a non-empty string.")
        extra = {k: data.get(k) for k in ("model", "version")}
        for key, value in extra.items():
            if value is not None and not isinstance(value, str):
                raise PatchError(INVALID_OP, f"actor.{key} must be a string.")
        return cls(data["kind"], name, extra["model"], extra["version"])


@dataclass(slots=True)
class PatchRequest:
    ops: list[Any]
    actor: Actor = field(default_factory=lambda: Actor("agent", "unknown"))
    reason: str | None = None
    expected_sha: str | None = None
    base_sha256: str | None = None
    parent_op_id: str | None = None
    strict: bool = False
    # Annex B.6's top-level ``base_hash``: the first op's target block precondition, the
    # same check as the op's own ``baseHash`` (both must hold when both are given).
    base_hash: str | None = None
    # A refusal the surface found before the request could be built whole (an actor that
    # is not one, ops that are not a list): every op is recorded rejected with it.
    refusal: PatchError | None = None
    # The actor argument as received when it was refused (kept, bounded, in the record).
    raw_actor: Any = None


@dataclass(slots=True)
class PatchOutcome:
    """What happened, for every surface to serialise its own way."""

    ok: bool
    records: list[dict[str, Any]]
    pre_sha256: str
    post_sha256: str
    pre_validation: Summary
    post_validation: Summary
    post_diagnostics: list[Diagnostic]
    pre_diagnostics: list[Diagnostic]
    written: bool = False
    code: str | None = None
    error: str | None = None
    transcript_error: str | None = None
    advisories: list[str] = field(default_factory=list)
    new_text: str | None = None
    # The text the ops ran on (what ``new_text`` is compared with in a proof's diff).
    pre_text: str | None = None
    # Where the ops changed it, in lines, when known: what a proof's diff reads (a dry
    # run's only; a write keeps no old lines for it).
    line_change: LineChange | None = None
    # The op of the list that failed (None when the request as a whole was refused).
    failed_index: int | None = None
    # What settling an interrupted earlier write found (`core.noma.commit.recover`).
    recovery: Recovery | None = None

    @property
    def drift(self) -> bool:
        return any(d.code == "base_sha_drift" for d in self.pre_diagnostics)


class DocumentState:
    """A parsed and validated document version; the warm path reuses it by sha256.

    ``text`` is kept so the next version of the same file is spliced from this one
    (`core.noma.incremental`) instead of parsed whole. ``day`` is when the diagnostics were
    made (``stale-citation`` depends on the date).
    """

    __slots__ = ("_lines", "clean", "day", "diagnostics", "doc", "sha256", "text")

    def __init__(
        self,
        sha256: str,
        doc: Document,
        diagnostics: list[Diagnostic],
        text: str | None = None,
        day: date | None = None,
    ) -> None:
        self.sha256 = sha256
        self.doc = doc
        self.diagnostics = diagnostics
        self.text = text
        self.day = day if day is not None else date.today()
        self._lines: SourceLines | None = None
        # ``text`` holds no CR, NUL or undecodable byte (None: not known yet). Carried from
        # version to version by the ops (`incremental.reparse`'s ``clean``), found by a
        # scan only for a version read from disk.
        self.clean: bool | None = None

    def is_clean(self) -> bool:
        if self.clean is None:
            self.clean = self.text is not None and text_is_clean(self.text)
        return self.clean

    def source_lines(self) -> SourceLines | None:
        """``text`` split into lines once (None without the text): each edit of this
        version copies them (`SourceLines.copy`) instead of splitting 2 MB again. Never
        mutate the result."""
        if self._lines is None and self.text is not None:
            self._lines = SourceLines(self.text)
        return self._lines

    def take_lines(self) -> SourceLines | None:
        """Give this version's lines away to a write that edits them in place
        (`SourceLines.adopt`); it splits ``text`` again if it ever needs them, unless they
        are handed back (`keep_lines`) after the edit was undone."""
        lines = self.source_lines()
        self._lines = None
        return lines

    def keep_lines(self, lines: SourceLines | None) -> None:
        """Hand over ``text``'s lines as an op left them (an `OpStep`'s, never mutated)."""
        if lines is not None and self._lines is None:
            self._lines = lines


class DocumentCache:
    """Keeps the last parsed + validated state per file (a long-lived engine's memory).

    States are immutable trees, so a caller may keep one while the cache moves on.
    """

    def __init__(self, *, exclusive: bool = False) -> None:
        self._states: dict[str, DocumentState] = {}
        self._prepared: dict[str, DocumentState] = {}
        self.files = WarmFiles()
        # No caller keeps a version's lines (`DocumentState.source_lines`) past a write of
        # it (the MCP server, which reads them within one call): a write of one op then
        # edits the cached version's lines in place instead of copying them. The app keeps
        # them on screen, so its cache is not exclusive.
        self.exclusive = exclusive

    def read_at(self, where: Place, shown: Path) -> tuple[Source, str]:
        """The file's content and sha256 (`warm_files.WarmFiles.read`: an unchanged file
        costs a stat); `DocumentIOError` when there is none."""
        try:
            found = self.files.read(where, shown)
        except BoundaryError:
            raise
        except PermissionError as exc:
            raise DocumentIOError(f"{shown}: permission denied") from exc
        except OSError as exc:
            raise DocumentIOError(f"{shown}: {exc.strerror or exc}") from exc
        if found is None:
            raise DocumentIOError(f"{shown}: no such file")
        return found

    def load_at(self, where: Place, shown: Path) -> tuple[Source, DocumentState]:
        """`load` of the file at a boundary place, read through `read_at`."""
        source, sha256 = self.read_at(where, shown)
        state = self.get(shown, sha256)
        if state is None:
            state = analyse(source.text, shown.parent, sha256, previous=self.latest(shown))
            self.put(shown, state)
        return source, state

    def get(self, path: Path, sha256: str) -> DocumentState | None:
        state = self._states.get(str(path))
        if state is None or state.sha256 != sha256:
            return None
        if state.day != date.today() or _reads_files(state.doc):
            # Same bytes, but what the validator reads besides them may have moved on.
            state = _revalidate(state, path.parent)
            self._states[str(path)] = state
        return state

    def latest(self, path: Path) -> DocumentState | None:
        """The last state kept for ``path`` whatever its hash (the base of a splice)."""
        return self._states.get(str(path))

    def put(self, path: Path, state: DocumentState) -> None:
        self._states[str(path)] = state

    def prepare(self, path: Path, state: DocumentState) -> None:
        """Keep the post-state a dry run built (a proof), so applying the same edit takes
        it instead of splicing and validating the same text again. One per file."""
        self._prepared[str(path)] = state

    def prepared(self, path: Path, sha256: str) -> DocumentState | None:
        """The post-state a dry run left for these bytes, while still valid: made today
        and not depending on other files (a ``::dataset`` ``src=``), as `get` checks."""
        state = self._prepared.get(str(path))
        if state is None or state.sha256 != sha256:
            return None
        if state.day != date.today() or _reads_files(state.doc):
            return None
        return state

    def load(self, path: Path, source: Source | None = None) -> tuple[Source, DocumentState]:
        """One read and one hash; an unchanged file is not parsed again, a changed one is
        spliced from the last version kept. ``source`` is the file's content when the
        caller has read it already (through the boundary)."""
        if source is None:
            source = read_source(path)
        sha256 = source.sha256
        state = self.get(path, sha256)
        if state is None:
            state = analyse(source.text, path.parent, sha256, previous=self.latest(path))
            self.put(path, state)
        return source, state


def _reads_files(doc: Document) -> bool:
    """Does validating ``doc`` look at other files (a ``::dataset`` ``src=``)?"""
    from ..validate.kept_findings import document_findings
    from ..validate.scan import scan_document

    known = document_findings(doc)
    if known is not None:
        return known.reads_files
    return any("src" in d.attrs for d in scan_document(doc).by_name.get("dataset", ()))


def _revalidate(state: DocumentState, base_dir: Path) -> DocumentState:
    from ..validate import validate

    doc = state.doc
    diagnostics = [*validate(doc, base_dir=base_dir), *doc.notes]
    return DocumentState(state.sha256, doc, diagnostics, state.text)


def analyse(
    text: str,
    base_dir: Path,
    sha256: str,
    *,
    previous: DocumentState | None = None,
    doc: Document | None = None,
) -> DocumentState:
    """Parse and validate: validator findings plus parser recovery notes (Tier 2 errors).

    ``doc`` is the parse when the caller has it; else ``previous`` (an earlier version of
    the same file, with its text) is spliced; else the text is parsed whole.
    """
    from ..incremental import reparse
    from ..validate import validate

    if doc is None:
        if previous is not None and previous.text is not None:
            doc = reparse(previous.doc, previous.text, text)
        else:
            doc = parse(text)
    return DocumentState(sha256, doc, [*validate(doc, base_dir=base_dir), *doc.notes], text)


def _phase(diagnostics: list[Diagnostic], phase: Literal["pre", "post"]) -> list[Diagnostic]:
    return [
        Diagnostic(d.severity, d.code, d.message, d.line, d.column, d.node_id, phase)
        for d in diagnostics
    ]


def _check_request(request: PatchRequest) -> None:
    if not isinstance(request.ops, list) or not request.ops:
        raise PatchError(INVALID_OP, "A patch needs at least one op.")
    if request.base_sha256 is not None and not _SHA256.match(request.base_sha256):
        raise PatchError(INVALID_OP, "base_sha256 must be 64 lowercase hex characters.")
    if request.parent_op_id is not None and not _UUID.match(request.parent_op_id):
        raise PatchError(INVALID_OP, "parent_op_id must be a UUID.")
    if request.expected_sha is not None and not HASH_RE.match(request.expected_sha):
        raise PatchError(INVALID_OP, "expected_sha must be 8 to 64 hex characters.")
    if request.base_hash is not None and not (
        isinstance(request.base_hash, str) and HASH_RE.match(request.base_hash)
    ):
        raise PatchError(INVALID_OP, "base_hash must be 8 to 64 hex characters.")


def patch_file(
    path: str | Path,
    request: PatchRequest,
    *,
    out_path: str | Path | None = None,
    write: bool = True,
    record: bool = True,
    cache: DocumentCache | None = None,
    root: str | Path | None = None,
) -> PatchOutcome:
    """Apply ``request`` to the document at ``path``.

    ``write=False`` computes everything (a preview) and touches no file. Rejections are
    outcomes (``ok=False`` with a §3.5 ``code``); only system faults raise
    (`DocumentIOError`, `PatchError(unsupported_op)` for a book manifest, `BoundaryError`
    for a file the document tools may not edit).

    Every file is reached through the boundary (`core.noma.boundary`): the document (and
    ``out_path``) must be a regular ``.noma`` file, reached from ``root`` without a symlink
    (without ``root``, the path's directory is trusted as typed); its transcript, pending
    and temp files are opened relative to that directory and never through a symlink.
    """
    doc_path = Path(path)
    if is_book_manifest(doc_path):
        raise PatchError(
            UNSUPPORTED_OP,
            f"{doc_path.name} is a book manifest; patch the chapter's .noma file instead (§2.3).",
        )
    target = Path(out_path) if out_path is not None else doc_path
    with _placed(doc_path, root) as source_place:
        if not write:
            return _patch_locked(doc_path, source_place, source_place, request, False, False, cache)
        if out_path is None:
            with source_place.folder.locked():
                return _patch_locked(
                    doc_path, source_place, source_place, request, True, record, cache
                )
        with _placed(target, root) as target_place, target_place.folder.locked():
            return _patch_locked(doc_path, source_place, target_place, request, True, record, cache)


def _placed(path: Path, root: str | Path | None) -> Place:
    """The document's place (`boundary.document_place`); a missing folder is the same
    fault as a missing file."""
    try:
        return document_place(path, root)
    except FileNotFoundError as exc:
        raise DocumentIOError(f"{path}: no such file") from exc


def _patch_locked(
    doc_path: Path,
    source_place: Place,
    target_place: Place,
    request: PatchRequest,
    write: bool,
    record: bool,
    cache: DocumentCache | None,
) -> PatchOutcome:
    started = time.perf_counter()
    target = target_place.path if target_place is not source_place else doc_path
    recovered = recover(target_place) if write else None
    if cache is not None:
        source, pre_sha256 = cache.read_at(source_place, doc_path)
    else:
        source = read_source_at(source_place, doc_path)
        pre_sha256 = source.sha256
    base_dir = doc_path.parent
    state = cache.get(doc_path, pre_sha256) if cache is not None else None
    if state is None:
        previous = cache.latest(doc_path) if cache is not None else None
        state = analyse(source.text, base_dir, pre_sha256, previous=previous)
        if cache is not None:
            cache.put(doc_path, state)
    pre = _phase(state.diagnostics, "pre")
    validator_pre = summarize(state.diagnostics)
    if request.base_sha256 is not None and request.base_sha256 != pre_sha256:
        pre.append(
            Diagnostic(
                "warning",
                "base_sha_drift",
                "The document changed after the caller read it (base_sha256 differs from "
                "pre_sha256); the patch was applied to the current text.",
                phase="pre",
            )
        )
    ops = request.ops if isinstance(request.ops, list) else [request.ops]
    request.ops = ops
    ctx = _Context(doc_path, target, target_place, request, pre_sha256, pre, started)
    ctx.recovery = recovered

    wire = _refusal(ops, request)
    if wire is not None:
        # Never reached the engine, but attempted: one record per attempted op (§5.1).
        bounced = ctx.refused(ops, wire[0], wire[1], state)
        return ctx.finish(bounced, record and write)
    ops = [canonical_op(op) for op in ops]
    request.ops = ops

    list_error: PatchError | None = None
    try:
        _check_request(request)
    except PatchError as exc:
        list_error = exc
    expected = request.expected_sha
    if list_error is None and expected is not None and not pre_sha256.startswith(expected.lower()):
        list_error = PatchError(
            SHA_MISMATCH,
            f"expected_sha {expected} does not match the document ({pre_sha256[:8]}); "
            "it changed since it was read.",
        )
    if list_error is None and request.strict and validator_pre == "error":
        list_error = PatchError(
            PRE_VALIDATION_BLOCKED,
            "Strict mode: the document already has validator errors, so the op list was "
            "not applied.",
        )
    if list_error is not None:
        outcome = ctx.rejected_all(ops, list_error, state)
        return ctx.finish(outcome, record and write)

    # A write of one op on the cached version edits its lines in place instead of a copy:
    # on success that version is replaced; on any refusal the edit is undone and the lines
    # handed back.
    owned = (
        write and cache is not None and cache.exclusive and len(ops) == 1 and state.text is not None
    )
    base_lines = state.take_lines() if owned else state.source_lines()
    try:
        steps = apply_list(
            source.text,
            ops,
            state.doc,
            base_hash=request.base_hash,
            lines=base_lines if state.text is not None else None,
            owned=owned,
        )
    except ListFailure as failure:
        state.keep_lines(base_lines)  # undone by apply_list
        outcome = ctx.rejected_list(ops, failure, state)
        return ctx.finish(outcome, record and write)

    final_text = steps[-1].after
    data: bytes | None = None
    if final_text != source.text:
        data = encode(final_text)
        post_sha256 = hashlib.sha256(data).hexdigest()
        ready = cache.prepared(doc_path, post_sha256) if cache is not None else None
        if ready is not None:
            post_state = ready  # the proof of this very edit built it
        else:
            last = steps[-1]  # the post-state is spliced from the parse the last op ran on
            post_doc = None
            span = last.source_lines.changed_span() if last.source_lines is not None else None
            clean = len(steps) == 1 and state.is_clean()
            if last.doc is not None:
                # The guard reads the old outline next: made first, the splice carries it
                # into the new version with a hint, so the guard compares only the run.
                outline_entries(last.doc)
                post_doc = reparse(last.doc, last.before, final_text, last.lines, span, clean)
            post_state = analyse(final_text, base_dir, post_sha256, doc=post_doc)
            post_state.keep_lines(last.source_lines)
            if clean and span is not None and last.lines is not None:
                post_state.clean = span_is_clean(last.lines, span)
            if cache is not None and not write:
                cache.prepare(doc_path, post_state)
        refused = _guard(steps, state.doc, post_state.doc)
        if refused is not None:
            if owned and base_lines is not None:
                base_lines.undo()
                state.keep_lines(base_lines)
            outcome = ctx.rejected_list(ops, refused, state)
            return ctx.finish(outcome, record and write)
    else:
        post_sha256 = pre_sha256
        post_state = state
        if owned and base_lines is not None:  # nothing changed: the version keeps its lines
            base_lines.undo()
            state.keep_lines(base_lines)
    outcome = ctx.applied(steps, post_state, post_sha256, written=data is not None and write)
    outcome.new_text = final_text
    outcome.pre_text = source.text
    if not write and base_lines is not None and state.text is not None:
        outcome.line_change = line_change(base_lines, [step.source_lines for step in steps])
    outcome.advisories = _advisories(doc_path, request, state.doc)
    if not write:
        return outcome
    target_pre = pre_sha256 if target_place is source_place else _current_sha256(target_place)
    written: Written | None = None
    try:
        written = ctx.commit(outcome, data, record, target_pre)
    except TranscriptWriteError as exc:
        outcome.transcript_error = f"transcript not written: {exc}"
    except OSError as exc:
        raise DocumentIOError(f"{target}: cannot write: {exc.strerror or exc}") from exc
    if owned and base_lines is not None and data is not None:
        base_lines.settle()  # the edit stands: its lines are the new version's
    if cache is not None and data is not None:
        cache.put(target, post_state)
        if target_place is source_place:  # the bytes just written: the next read is a stat
            # A clean version (no CR, NUL or undecodable byte) needs no scan to know so.
            clean = post_state.clean is True
            new_source = (
                Source(data, final_text, source.bom, False, None) if clean else decode(data)
            )
            cache.files.wrote(target_place, doc_path, new_source, post_sha256, written)
        else:
            cache.files.forget(target)
    return outcome


def _refusal(ops: list[Any], request: PatchRequest) -> tuple[int | None, PatchError] | None:
    """Why the request is refused before anything runs, with the failing op's index (None
    for the request as a whole), or None."""
    if request.refusal is not None:
        return None, request.refusal
    if len(ops) > MAX_LIST_OPS:
        return None, PatchError(
            INVALID_OP, f"At most {MAX_LIST_OPS} ops in one list; this one has {len(ops)}."
        )
    wire = _wire_error(ops, request)
    if wire is None:
        return None
    index, error = wire
    return index, PatchError(error.code, _bounded(error.message))


def _bounded(message: str) -> str:
    """An error message quoting hostile input (a 1 MiB op name) cut to a readable size."""
    return message if len(message) <= MAX_RAW_CHARS else message[: MAX_RAW_CHARS - 1] + "…"


def _wire_error(ops: list[Any], request: PatchRequest) -> tuple[int | None, PatchError] | None:
    """The first op that does not match the wire schema (with its index), or a request
    over the size caps (`limits`, index None), checked before anything runs."""
    try:
        check_request_size(ops, request.reason, request.actor.to_json())
    except PatchError as exc:
        return None, exc
    for i, op in enumerate(ops):
        try:
            check_op(op)
        except PatchError as exc:
            if len(ops) > 1:
                exc = PatchError(exc.code, f"op {i + 1} of {len(ops)}: {exc.message}")
            return i, exc
    return None


def _guard(steps: list[OpStep], pre_doc: Document, post_doc: Document) -> ListFailure | None:
    """Run the structure guard on every op that changed the text (see `guard`)."""
    changed = [k for k, step in enumerate(steps) if step.changed]
    for n, k in enumerate(changed):
        step = steps[k]
        before = step.doc if step.doc is not None else pre_doc
        if n + 1 < len(changed):
            nxt = steps[changed[n + 1]].doc
            after = nxt if nxt is not None else parse(step.after)
        else:
            after = post_doc
        error = check_structure(step.op, before, after)
        if error is not None:
            return ListFailure(k, error, steps[:k])
    return None


def _current_sha256(where: Place) -> str | None:
    data = where.folder.read_bytes(where.name)
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _advisories(doc_path: Path, request: PatchRequest, doc: Document) -> list[str]:
    if request.actor.kind != "agent":
        return []
    return op_advisories(doc_path, request.ops, doc)


class _Context:
    """Builds the transcript records and the outcome of one request."""

    def __init__(
        self,
        doc_path: Path,
        target: Path,
        place: Place,
        request: PatchRequest,
        pre_sha256: str,
        pre: list[Diagnostic],
        started: float,
    ) -> None:
        self.doc_path = doc_path
        self.target = target
        self.place = place
        self.request = request
        self.pre_sha256 = pre_sha256
        self.pre = pre
        self.started = started
        self.doc_uri = target.resolve().as_uri()
        self.recovery: Recovery | None = None

    def _record(
        self,
        op: Any,
        result: str,
        pre_sha: str,
        post_sha: str,
        diagnostics: list[Diagnostic],
        elapsed_ms: float,
        parent_op_id: str | None,
    ) -> dict[str, Any]:
        req = self.request
        pre_summary = summarize([d for d in diagnostics if d.phase == "pre"])
        post_summary = summarize([d for d in diagnostics if d.phase == "post"])
        record: dict[str, Any] = {
            "protocol_version": PROTOCOL_VERSION,
            "tool_version": TOOL_VERSION,
            "op_id": new_op_id(),
            "ts": now_iso(),
            "actor": req.actor.to_json(),
            "doc_uri": self.doc_uri,
            "pre_sha256": pre_sha,
            "post_sha256": post_sha,
            "pre_sha": pre_sha[:8],
            "post_sha": post_sha[:8],
            "op": op,
            "patch_result": result,
            "pre_validation": pre_summary,
            "post_validation": post_summary,
        }
        if isinstance(req.reason, str) and req.reason:
            record["reason"] = req.reason
            if _string_bytes(req.reason, MAX_OP_BYTES) > MAX_OP_BYTES:
                record["reason"] = _bounded(req.reason[: MAX_RAW_CHARS * 2])
        if parent_op_id and _UUID.match(parent_op_id):
            record["parent_op_id"] = parent_op_id
        if req.base_sha256 is not None and _SHA256.match(req.base_sha256):
            record["base_sha256"] = req.base_sha256
        record["diagnostics"] = [d.to_json() for d in diagnostics]
        # Whole milliseconds, as the reference emits them (its typed clients read an int).
        record["elapsed_ms"] = round(max(elapsed_ms, 0.0))
        record["signature"] = None
        return record

    def rejected_all(self, ops: list[Any], error: PatchError, state: DocumentState) -> PatchOutcome:
        post = _phase(state.diagnostics, "post")
        elapsed = (time.perf_counter() - self.started) * 1000
        records = []
        parent = self.request.parent_op_id
        for op in ops:
            failure = Diagnostic("error", error.code, error.message, phase="pre")
            rec = self._record(
                op,
                "rejected",
                self.pre_sha256,
                self.pre_sha256,
                [*self.pre, failure, *post],
                elapsed,
                parent,
            )
            parent = rec["op_id"]
            records.append(rec)
        return self._outcome(False, records, post, error=error)

    def refused(
        self, ops: list[Any], index: int | None, error: PatchError, state: DocumentState
    ) -> PatchOutcome:
        """Records for a request refused before the engine (`_refusal`): with ``index``,
        the ops up to it (earlier ones ``op_list_aborted``); without, every op with the
        error, or the list as one attempt when it is over `MAX_LIST_OPS` (one record, not
        a million). An op the schema cannot describe is recorded as the placeholder with
        its raw text beside it (`refused`)."""
        post = _phase(state.diagnostics, "post")
        elapsed = (time.perf_counter() - self.started) * 1000
        whole_list = index is None and len(ops) > MAX_LIST_OPS
        attempted: list[Any] = [ops] if whole_list else ops if index is None else ops[: index + 1]
        # A request refused for its size keeps only bounded text of each op, however small
        # some of them are: 9 MiB refused must not become 9 MiB of transcript.
        text_only = whole_list or (index is None and error.message == CONTENT_TOO_LARGE)
        req = self.request
        if _string_bytes(req.actor.to_json(), MAX_RAW_CHARS) > MAX_RAW_CHARS:
            req.actor = Actor(req.actor.kind, _bounded(req.actor.name[:MAX_RAW_CHARS]))
        records = []
        parent = req.parent_op_id
        for i, op in enumerate(attempted):
            shown, raw = (dict(PLACEHOLDER_OP), raw_text(op)) if text_only else recordable_op(op)
            if index is not None and i < index:
                failure = Diagnostic(
                    "error",
                    OP_LIST_ABORTED,
                    f"Refused: op {index + 1} of the list failed ({error.code}); "
                    "nothing was applied.",
                    phase="pre",
                )
            else:
                failure = Diagnostic("error", error.code, error.message, phase="pre")
            rec = self._record(
                shown,
                "rejected",
                self.pre_sha256,
                self.pre_sha256,
                [*self.pre, failure, *post],
                elapsed,
                parent,
            )
            mark = rec["diagnostics"][len(self.pre)]
            if raw is not None:
                mark[RAW_OP_FIELD] = raw
            if req.raw_actor is not None:
                mark[RAW_ACTOR_FIELD] = raw_text(req.raw_actor, 512)
            parent = rec["op_id"]
            records.append(rec)
        outcome = self._outcome(False, records, post, error=error)
        outcome.failed_index = index
        return outcome

    def rejected_list(
        self, ops: list[Any], failure: ListFailure, state: DocumentState
    ) -> PatchOutcome:
        post = _phase(state.diagnostics, "post")
        elapsed = (time.perf_counter() - self.started) * 1000
        records = []
        parent = self.request.parent_op_id
        for i, op in enumerate(ops[: failure.index + 1]):
            if i < failure.index:
                diag = Diagnostic(
                    "error",
                    OP_LIST_ABORTED,
                    f"Rolled back: op {failure.index + 1} of the list failed "
                    f"({failure.error.code}); no bytes were written.",
                    phase="pre",
                )
            else:
                diag = Diagnostic("error", failure.error.code, failure.error.message, phase="pre")
            rec = self._record(
                op,
                "rejected",
                self.pre_sha256,
                self.pre_sha256,
                [*self.pre, diag, *post],
                elapsed,
                parent,
            )
            parent = rec["op_id"]
            records.append(rec)
        outcome = self._outcome(False, records, post, error=failure.error)
        outcome.failed_index = failure.index
        return outcome

    def applied(
        self, steps: list[OpStep], post_state: DocumentState, post_sha256: str, written: bool
    ) -> PatchOutcome:
        post = _phase(post_state.diagnostics, "post")
        elapsed = (time.perf_counter() - self.started) * 1000
        records = []
        parent = self.request.parent_op_id
        hashes = [self.pre_sha256]
        for step in steps[:-1]:
            hashes.append(
                hashes[-1] if not step.changed else hashlib.sha256(encode(step.after)).hexdigest()
            )
        hashes.append(post_sha256)
        for i, step in enumerate(steps):
            result = "applied" if step.changed else "noop"
            before, after = hashes[i], hashes[i + 1]
            if not step.changed:
                after = before
            rec = self._record(
                step.op, result, before, after, [*self.pre, *post], elapsed / len(steps), parent
            )
            parent = rec["op_id"]
            records.append(rec)
        outcome = self._outcome(True, records, post, written=written)
        outcome.post_sha256 = post_sha256
        return outcome

    def _outcome(
        self,
        ok: bool,
        records: list[dict[str, Any]],
        post: list[Diagnostic],
        *,
        error: PatchError | None = None,
        written: bool = False,
    ) -> PatchOutcome:
        return PatchOutcome(
            ok=ok,
            records=records,
            pre_sha256=self.pre_sha256,
            post_sha256=self.pre_sha256,
            pre_validation=records[-1]["pre_validation"] if records else summarize(self.pre),
            post_validation=summarize(post),
            post_diagnostics=post,
            pre_diagnostics=list(self.pre),
            written=written,
            code=error.code if error else None,
            error=error.message if error else None,
            recovery=self.recovery,
        )

    def finish(self, outcome: PatchOutcome, record: bool) -> PatchOutcome:
        """Record a rejection (the document is not touched)."""
        if record and outcome.records:
            try:
                commit(
                    self.place,
                    None,
                    outcome.records,
                    pre_sha256=None,
                    post_sha256=_current_sha256(self.place) or self.pre_sha256,
                )
            except (OSError, TranscriptWriteError) as exc:  # §B.6: never fails the patch
                outcome.transcript_error = f"transcript not written: {exc}"
        return outcome

    def commit(
        self, outcome: PatchOutcome, data: bytes | None, record: bool, target_pre: str | None
    ) -> Written | None:
        """Write the new bytes and the records write-ahead (`core.noma.commit`)."""
        post = outcome.post_sha256 if data is not None else (target_pre or outcome.post_sha256)
        if record:
            return commit(
                self.place, data, outcome.records, pre_sha256=target_pre, post_sha256=post
            )
        if data is not None:
            self.place.folder.atomic_write(self.place.name, data, temp_name(self.place.name))
        return None
