"""Evidence offers: pointers a surface can propose for the step in hand.

The pane offers the open document's latest transcript record as evidence: its ``op_id``
(an artifact pointer) and its ``post_sha256`` (a hash pointer). Only these pointers leave
the transcript; the document's content never does (§2.3: pointers only).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..noma.transcript import read_lines, transcript_path
from .ids import HASH_POINTER, POINTER


@dataclass(frozen=True, slots=True)
class EvidenceOffer:
    pointer_kind: str
    evidence_ref: str
    label: str


def pointer_kind_for(ref: str) -> str:
    """A best guess at a typed pointer's kind: sha256 -> hash, prop_ -> proposal, else artifact."""
    if HASH_POINTER.match(ref):
        return "hash"
    if ref.startswith("prop_"):
        return "proposal"
    return "artifact"


def transcript_offers(document: Path | None) -> list[EvidenceOffer]:
    """The latest transcript record's op_id and post_sha256, if the document has one."""
    if document is None:
        return []
    path = transcript_path(document)
    try:
        lines = read_lines(path)
    except OSError:
        return []
    for line in reversed(lines):
        record = line.record
        if not isinstance(record, dict):
            continue
        offers = []
        op_id = record.get("op_id")
        if isinstance(op_id, str) and POINTER.match(op_id):
            offers.append(EvidenceOffer("artifact", op_id, f"transcript op_id {op_id}"))
        post = record.get("post_sha256")
        if isinstance(post, str) and HASH_POINTER.match(post):
            offers.append(EvidenceOffer("hash", post, f"document post_sha256 {post[:12]}…"))
        if offers:
            return offers
    return []
