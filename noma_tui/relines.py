"""The lines of a new version of a document, made from the shown version's lines.

An outside edit changes a few lines of a text that may hold 370,000 (20,000 sections).
Splitting the new text whole costs ~25 ms there, and finding which lines changed by
comparing the two line lists another ~20 ms; both grow with the document. The two texts
are compared instead (`core.noma.text_ends`, a chunk at a time in C), the line holding
the first difference and the line holding the start of the common tail are located, and
only the text between them is split: the lines before and after are the old version's
string objects, shared. The result is the same `SourceLines` a whole split gives, and the
changed line range is the one `noma_tui.versions.changed_lines` gives (a test holds both
equal on generated edits).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.noma.api import BOM, SourceLines, common_prefix, common_suffix

__all__ = ["Relined", "reline"]


@dataclass(frozen=True, slots=True)
class Relined:
    """A new version's lines and what changed: ``old.lines[a:old_end]`` became
    ``lines.lines[a:new_end]``, the rest equal (the common head and tail)."""

    lines: SourceLines
    changed: tuple[int, int, int]


def _raw(lines: SourceLines) -> list[str]:
    """``lines`` as ``body.split("\\n")`` gives them (a final empty string after a final
    line break, or for an empty text): a copy, never the shared list."""
    raw = list(lines.lines)
    if lines.final_newline or not raw:
        raw.append("")
    return raw


def reline(old: SourceLines, old_text: str, new_text: str) -> Relined | None:
    """The lines of ``new_text`` from ``old`` (the lines of ``old_text``), or None when the
    two do not share their byte-order mark (then the text is split whole)."""
    bom = old_text.startswith(BOM)
    if new_text.startswith(BOM) != bom or old.bom != bom:
        return None
    lo, ln = len(old_text), len(new_text)
    p = common_prefix(old_text, new_text)
    q = common_suffix(old_text, new_text, min(lo, ln) - p)
    # The first line that may differ, where it starts, and the first line break of the
    # common tail: lines after it are shared.
    a = old_text.count("\n", 0, p)
    start = max(old_text.rfind("\n", 0, p) + 1, 1 if bom else 0)
    end_old = old_text.find("\n", lo - q)
    raw = _raw(old)
    if end_old == -1:
        chunk = new_text[start:].split("\n")
        b = len(raw)
    else:
        chunk = new_text[start : end_old + ln - lo].split("\n")
        b = a + old_text.count("\n", start, end_old) + 1
    shared = len(raw) - b  # raw lines after the chunk: the old ones
    raw[a:b] = chunk
    final_newline = len(raw) > 1 and raw[-1] == ""
    if final_newline or raw == [""]:
        raw.pop()
    # A CR LF pair in the new text: in the chunk (a line followed by a break that ends in
    # a CR), or, only if the old text had one, anywhere in the shared lines.
    ended = chunk if end_old != -1 else chunk[:-1]
    crlf = any(s.endswith("\r") for s in ended) or (old.crlf and "\r\n" in new_text)
    lines = SourceLines.of_lines(raw, bom=bom, final_newline=final_newline, crlf=crlf)
    # The last shared raw line may be the final empty one both versions drop.
    return Relined(lines, _changed(old.lines, raw, a, max(shared - 1, 0)))


def _changed(old: list[str], new: list[str], a: int, shared: int) -> tuple[int, int, int]:
    """`core.noma.text_ends.common_ends` of ``old`` and ``new`` given that their first
    ``a`` and last ``shared`` lines are equal: both ends are walked on from there, in the
    size of the change."""
    limit = min(len(old), len(new))
    head = min(a, limit)
    while head < limit and old[head] == new[head]:
        head += 1
    room = limit - head
    tail = min(shared, room)
    while tail < room and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, len(old) - tail, len(new) - tail
