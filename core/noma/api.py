"""The engine's public face: every name the app (and the coming language server) uses.

A client imports ``from core.noma.api import <name>`` and nothing else from ``core.noma``
(`tests/test_architecture.py` holds ``noma_tui`` to it), so the modules behind these names
can be split, merged or renamed without touching a client. Each name is imported on first
use (PEP 562 ``__getattr__``): importing this module costs nothing, and a client pays only
for what it touches, as it did when it imported the modules directly.

What each name is for is said beside it in `_NAMES`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .boundary import Folder
    from .change import Change, ChangeKind
    from .commit import touch
    from .diagnostics import SEVERITY_RANK, Diagnostic
    from .export import SUFFIXES, export
    from .files import DocumentIOError, read_document, read_source
    from .ids import IdIndex, index
    from .incremental import reparse, span_is_clean
    from .nodes import (
        Directive,
        Document,
        Node,
        Section,
        gc_paused,
        moved_from,
        moves,
        own_freezing,
        promote_fresh,
    )
    from .parser import code_spans, parse
    from .patch import models as patch_models
    from .patch.applicable import ops_for_kind
    from .patch.catalog import TARGET_FIELD
    from .patch.engine import apply_ops_to_text
    from .patch.errors import SHA_MISMATCH, PatchError
    from .patch.pipeline import (
        Actor,
        DocumentCache,
        DocumentState,
        PatchOutcome,
        PatchRequest,
        analyse,
        patch_file,
    )
    from .patch.state import OpState
    from .patch.tables import read_table
    from .patch.text import SourceLines
    from .proof import Proof, build_proof
    from .revert import PRE_STATE_UNKNOWN, RevertError, inverse
    from .source import BOM, Source, encode, from_text, text_is_clean
    from .storage import atomic_create, atomic_write, document_lock
    from .text_ends import common_ends, common_prefix, common_suffix
    from .transcript import (
        AuditReport,
        TranscriptLine,
        audit,
        encode_record,
        line_sha256,
        read_lines,
        record_problem,
        record_warnings,
        state_after,
        transcript_path,
    )
    from .undo_select import REDO, REVERT, own_applied, record_kinds, redo_target, undo_target
    from .visible import BYTE_MARKER, MARKERS, has_markers, is_visible, visible, visible_line

# name -> (the module that holds it, why a client needs it). A name whose module is its own
# value (``patch_models``) is that module.
_NAMES: dict[str, tuple[str, str]] = {
    # open and parse a document
    "Folder": (".boundary", "the file boundary every write under a workspace goes through"),
    "read_document": (".files", "open a .noma file: its bytes, decoded and parsed"),
    "read_source": (".files", "a file's text as the engine decodes it (BOM, UTF-8 checks)"),
    "DocumentIOError": (".files", "the one error a document read raises"),
    "parse": (".parser", "text to a Document"),
    "code_spans": (".parser", "where inline code runs lie (the editor's highlighting)"),
    "reparse": (".incremental", "the new Document after an edit, re-using the old tree"),
    "span_is_clean": (".incremental", "the changed lines of a clean text keep it clean"),
    "Document": (".nodes", "the parsed tree"),
    "Node": (".nodes", "any block of the tree"),
    "Section": (".nodes", "a heading and what it holds"),
    "Directive": (".nodes", "a ::: block with its name and attributes"),
    "gc_paused": (".nodes", "parse a large tree without cyclic-GC passes over fresh nodes"),
    "own_freezing": (".nodes", "who moves a fresh tree to the permanent generation"),
    "promote_fresh": (".nodes", "move a fresh tree out of the young GC generations"),
    "Source": (".source", "a document's text with its line table"),
    "from_text": (".source", "a Source from text the app holds"),
    "text_is_clean": (".source", "no CR, NUL or undecodable byte: a splice may skip them"),
    "encode": (".source", "text to the bytes the engine writes (BOM kept)"),
    "BOM": (".source", "the byte-order mark a document may start with"),
    "SourceLines": (".patch.text", "the document's lines as the patch engine sees them"),
    "common_ends": (".text_ends", "the span two texts differ in (the smallest re-parse)"),
    "common_prefix": (".text_ends", "how many leading characters two texts share"),
    "common_suffix": (".text_ends", "how many trailing characters two texts share"),
    # ids and validation
    "index": (".ids", "canonical ids, aliases and spans of a Document"),
    "IdIndex": (".ids", "what `index` returns"),
    "Diagnostic": (".diagnostics", "one validator finding"),
    "SEVERITY_RANK": (".diagnostics", "the order findings are shown in"),
    # propose, prove and apply a patch
    "patch_models": (".patch.models", "the typed op models a client builds ops from"),
    "ops_for_kind": (".patch.applicable", "which ops fit a block kind (the edit menu)"),
    "TARGET_FIELD": (".patch.catalog", "the field each op targets (what an editor edits)"),
    "apply_ops_to_text": (".patch.engine", "ops applied to text in memory (previews)"),
    "PatchError": (".patch.errors", "a refused op, with its code"),
    "SHA_MISMATCH": (".patch.errors", "the code for a file that changed under the edit"),
    "Actor": (".patch.pipeline", "who a transcript record names"),
    "PatchRequest": (".patch.pipeline", "ops, preconditions and actor for one apply"),
    "PatchOutcome": (".patch.pipeline", "what an apply wrote and its post-state"),
    "DocumentCache": (".patch.pipeline", "the parsed post-state kept between applies"),
    "DocumentState": (".patch.pipeline", "a document's text, tree and findings together"),
    "analyse": (".patch.pipeline", "a DocumentState from text (parse, index, validate)"),
    "patch_file": (".patch.pipeline", "apply ops to a file with its transcript record"),
    "OpState": (".patch.state", "an op's outcome in a proof"),
    "read_table": (".patch.tables", "a table block's cells (the table editor)"),
    "Proof": (".proof", "an edit's diff and findings delta, before it is applied"),
    "build_proof": (".proof", "the Proof of ops on a document"),
    "inverse": (".revert", "the ops that undo a transcript record"),
    "RevertError": (".revert", "a record that cannot be undone"),
    "PRE_STATE_UNKNOWN": (".revert", "the code for a record without its pre-state"),
    # transcripts and files
    "transcript_path": (".transcript", "where a document's .patches file lives"),
    "read_lines": (".transcript", "a transcript's records, one per line"),
    "TranscriptLine": (".transcript", "one transcript record as read"),
    "audit": (".transcript", "check a transcript's records and hash chain"),
    "AuditReport": (".transcript", "what `audit` found"),
    "touch": (".commit", "create a document file through the write-ahead commit"),
    "atomic_write": (".storage", "write a state file whole or not at all"),
    "document_lock": (".storage", "the lock one writer of a document holds"),
    # what changed, and undo
    "Change": (
        ".change",
        "what one re-parse changed: lines, blocks, ids (the arrangement reads it)",
    ),
    "ChangeKind": (".change", "same, splice or whole document"),
    "moved_from": (".nodes", "the block a shifted copy was made from (no private slot read)"),
    "moves": (".nodes", "where a shifted copy moved to"),
    "REDO": (".undo_select", "the record kind of a redo"),
    "REVERT": (".undo_select", "the record kind of an undo"),
    "record_kinds": (".undo_select", "each transcript record read as edit, revert or redo"),
    "undo_target": (".undo_select", "which record u reverts"),
    "redo_target": (".undo_select", "which revert U re-applies"),
    "own_applied": (".undo_select", "the records this actor applied"),
    "encode_record": (".transcript", "a record as the bytes of its transcript line"),
    "line_sha256": (".transcript", "the hash a record chains to"),
    "record_problem": (".transcript", "why a record is not valid, or None"),
    "record_warnings": (".transcript", "what a valid record should still fix"),
    "state_after": (".transcript", "the document hash a record leaves"),
    "atomic_create": (".storage", "create a new file whole, never over an existing name"),
    # exports and visible text
    "export": (".export", "a document to Markdown or HTML"),
    "SUFFIXES": (".export", "the file suffix of each export format"),
    "visible": (".visible", "hostile text made safe to show (controls as markers)"),
    "visible_line": (".visible", "the same, on one line"),
    "is_visible": (".visible", "whether text shows as it is"),
    "has_markers": (".visible", "whether text holds the markers `visible` adds"),
    "MARKERS": (".visible", "the markers `visible` uses"),
    "BYTE_MARKER": (".visible", "the marker for a byte that is not text"),
}

__all__ = [
    "BOM",
    "BYTE_MARKER",
    "MARKERS",
    "PRE_STATE_UNKNOWN",
    "REDO",
    "REVERT",
    "SEVERITY_RANK",
    "SHA_MISMATCH",
    "SUFFIXES",
    "TARGET_FIELD",
    "Actor",
    "AuditReport",
    "Change",
    "ChangeKind",
    "Diagnostic",
    "Directive",
    "Document",
    "DocumentCache",
    "DocumentIOError",
    "DocumentState",
    "Folder",
    "IdIndex",
    "Node",
    "OpState",
    "PatchError",
    "PatchOutcome",
    "PatchRequest",
    "Proof",
    "RevertError",
    "Section",
    "Source",
    "SourceLines",
    "TranscriptLine",
    "analyse",
    "apply_ops_to_text",
    "atomic_create",
    "atomic_write",
    "audit",
    "build_proof",
    "code_spans",
    "common_ends",
    "common_prefix",
    "common_suffix",
    "document_lock",
    "encode",
    "encode_record",
    "export",
    "from_text",
    "gc_paused",
    "has_markers",
    "index",
    "inverse",
    "is_visible",
    "line_sha256",
    "moved_from",
    "moves",
    "ops_for_kind",
    "own_applied",
    "own_freezing",
    "parse",
    "patch_file",
    "patch_models",
    "promote_fresh",
    "read_document",
    "read_lines",
    "read_source",
    "read_table",
    "record_kinds",
    "record_problem",
    "record_warnings",
    "redo_target",
    "reparse",
    "span_is_clean",
    "state_after",
    "text_is_clean",
    "touch",
    "transcript_path",
    "undo_target",
    "visible",
    "visible_line",
]


def __getattr__(name: str) -> Any:
    """Import ``name``'s module on first use and keep the value here."""
    home = _NAMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(home[0], __package__)
    value = module if name == "patch_models" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
