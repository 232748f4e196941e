"""An editable view of a document's source lines that writes every untouched byte back.

Lines keep their raw form (a CRLF line keeps its ``\\r``); new lines take the document's
line ending; a missing final newline stays missing; the BOM is held apart and restored.
Line numbers are the parser's (1-based), because CRLF folding never changes line count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..source import BOM, encode, has_crlf
from .errors import INVALID_CONTENT, PatchError


def _one_line(content: str) -> None:
    """Every op writes whole lines: a line break inside one would make structure nobody
    asked for (the last guard, behind each op's own value checks)."""
    if "\n" in content or "\r" in content:
        raise PatchError(
            INVALID_CONTENT,
            "A value holds a line break where the document needs one line; nothing was written.",
        )


# A run of lines: (first, end) 0-based end-exclusive, and ``"\n".join(lines[first:end])``.
Chunk = tuple[int, int, str]
_CHUNK = 2048  # lines per run


def _make_chunks(lines: list[str], start: int, end: int) -> list[Chunk]:
    out: list[Chunk] = []
    for s in range(start, end, _CHUNK):
        e = min(s + _CHUNK, end)
        out.append((s, e, "\n".join(lines[s:e])))
    return out


class SourceLines:
    def __init__(self, text: str) -> None:
        self.bom = text.startswith(BOM)
        body = text[1:] if self.bom else text
        self.crlf = has_crlf(body)
        lines = body.split("\n")
        self.final_newline = len(lines) > 1 and lines[-1] == ""
        if self.final_newline or lines == [""]:
            lines.pop()
        self.lines = lines
        # Which lines the edits since `copy` touched (see `changed_span`); a view split from
        # text knows no base, so it tracks nothing.
        self._base_len: int | None = None
        self._head = 0
        self._tail = 0
        # ``lines`` joined a run at a time (`text`), and the base copy's runs: an edit's
        # text re-joins only the runs it touched and copies the others whole.
        self._chunks: list[Chunk] | None = None
        self._base_chunks: list[Chunk] | None = None
        # Set by `adopt`: how to put every edit back (first line, the lines that were
        # there, how many lines are there now), and the final-newline flag before them.
        self._undo: list[tuple[int, list[str], int]] | None = None
        self._undo_final = False

    @classmethod
    def of_lines(
        cls, lines: list[str], *, bom: bool, final_newline: bool, crlf: bool
    ) -> SourceLines:
        """The lines a whole split of some text gives, built by the caller (the app splits
        only what an outside edit changed): an untracked view, like one split from text."""
        new = cls.__new__(cls)
        new.bom, new.crlf, new.final_newline, new.lines = bom, crlf, final_newline, lines
        new._base_len = None
        new._head = new._tail = 0
        new._chunks = new._base_chunks = None
        new._undo = None
        new._undo_final = False
        return new

    def __len__(self) -> int:
        return len(self.lines)

    def copy(self) -> SourceLines:
        """An independent copy (ops mutate ``lines``): a pointer copy of the list, not a
        split of the text (~0.5 ms against ~8 ms for 2 MB)."""
        new = SourceLines.__new__(SourceLines)
        new.bom, new.crlf, new.final_newline = self.bom, self.crlf, self.final_newline
        new.lines = list(self.lines)
        # Joined once per version and shared by every copy (a proof repeated, each op of
        # a list): a copy's text then joins only the runs it touched.
        new._chunks = self._current_chunks()
        new._undo = None
        new._undo_final = False
        new._track()
        return new

    def adopt(self) -> SourceLines:
        """These lines themselves, edited in place from now on, every edit tracked (as a
        copy's) and kept in an undo log (`undo`): what a write that owns the version it
        edits uses instead of a copy (on 24 MB, a copy and later freeing a list of 900k
        lines cost ~15 ms). The caller must own them: nothing else may read them while
        they are edited, and a failed edit must be undone."""
        self._current_chunks()  # joined before the edit, so the edit's text reuses them
        self._track()
        self._undo = []
        self._undo_final = self.final_newline
        return self

    def undo(self) -> None:
        """Put back the lines as `adopt` found them (no-op when not adopted)."""
        log = self._undo
        if log is None:
            return
        for first, old, now in reversed(log):
            self.lines[first : first + now] = old
        self.final_newline = self._undo_final
        self._chunks = self._base_chunks
        self._undo = None
        self._track()

    def settle(self) -> None:
        """The edits since `adopt` stand: forget how to undo them."""
        self._undo = None

    def _track(self) -> None:
        """Start tracking edits against the lines as they are now (see `changed_span`)."""
        n = len(self.lines)
        # Tracked only when the lines are the parser's lines (see `as_split`).
        self._base_len = n if not (n and self.lines[-1] == "" and not self.final_newline) else None
        self._head, self._tail = n, n
        self._base_chunks = self._chunks if self._base_len is not None else None
        self._chunks = None

    def changed_span(self) -> tuple[int, int, int] | None:
        """``(head, tail, base)``: how many leading and trailing lines every edit since
        `copy` left alone, and how many lines the copy started with, so the next parse can
        be spliced at the change without comparing two texts. None when not known: a view
        split from text, or one whose lines are not the parser's (a final empty line
        without a final newline, see `as_split`)."""
        n = len(self.lines)
        if self._base_len is None or (n and self.lines[-1] == "" and not self.final_newline):
            return None
        head = min(self._head, n, self._base_len)
        return head, min(self._tail, n - head, self._base_len - head), self._base_len

    def _touch(self, a: int, b: int) -> None:
        """Lines ``a:b`` (0-based, current numbering) are about to change."""
        self._head = min(self._head, a)
        self._tail = min(self._tail, max(len(self.lines) - b, 0))
        self._chunks = None

    def text(self) -> str:
        """The whole text. Joined from runs of lines (`_chunks`): after an edit of a copy
        only the runs it touched are joined again, the rest are copied as strings (on 24 MB,
        ~4 ms against ~20 ms for a join of every line)."""
        pieces = [chunk[2] for chunk in self._current_chunks()]
        if self.final_newline and self.lines:
            pieces.append("")  # the final line break, without copying the text again
        if self.bom:
            if not pieces:
                return BOM
            pieces[0] = BOM + pieces[0]
        return "\n".join(pieces)

    def _current_chunks(self) -> list[Chunk]:
        if self._chunks is not None:
            return self._chunks
        lines = self.lines
        n = len(lines)
        base = self._base_chunks
        span = self.changed_span() if base is not None else None
        if base is None or span is None:
            chunks = _make_chunks(lines, 0, n)
        else:
            head, tail, base_len = span
            delta = n - base_len
            keep_from = base_len - tail
            before = [c for c in base if c[1] <= head]
            after = [(s + delta, e + delta, t) for s, e, t in base if s >= keep_from]
            mid_start = before[-1][1] if before else 0
            mid_end = after[0][0] if after else n
            chunks = [*before, *_make_chunks(lines, mid_start, mid_end), *after]
        self._chunks = chunks
        return chunks

    def as_split(self) -> list[str]:
        """The lines as `source.split_lines` reads `text()` (for a text without CRs): a
        splice that ended the file with a line break but left ``final_newline`` unset has
        an empty last line that the split does not make. Shares the list when it can."""
        lines = self.lines
        if lines and lines[-1] == "" and not self.final_newline:
            return lines[:-1]
        return lines

    def get(self, lineno: int) -> str:
        """Line ``lineno`` (1-based) without its line ending."""
        line = self.lines[lineno - 1]
        return line.rstrip("\r") if line.endswith("\r") else line

    def raw_block(self, start: int, end: int) -> str:
        """Lines ``start..end`` joined with ``\\n``, each as written (``\\r`` kept)."""
        return "\n".join(self.lines[start - 1 : end])

    def block_hash(self, start: int, end: int) -> str:
        return hashlib.sha256(encode(self.raw_block(start, end))).hexdigest()

    def is_blank(self, lineno: int) -> bool:
        return 1 <= lineno <= len(self.lines) and not self.lines[lineno - 1].strip()

    def set(self, lineno: int, content: str) -> None:
        """Rewrite one line in place, keeping its line ending."""
        _one_line(content)
        old = self.lines[lineno - 1]
        self._touch(lineno - 1, lineno)
        if self._undo is not None:
            self._undo.append((lineno - 1, [old], 1))
        self.lines[lineno - 1] = content + "\r" if old.endswith("\r") else content

    def splice(self, start: int, end: int, contents: list[str]) -> None:
        """Replace lines ``start..end`` (1-based inclusive; ``end = start - 1`` inserts
        before ``start``) with ``contents``, given without line endings."""
        a, b = start - 1, end
        for content in contents:
            _one_line(content)
        lines = self.lines
        # One line more at the head: the line before may lose or gain its CR below.
        first = max(a - 1, 0)
        self._touch(first, b)
        before = lines[first:b] if self._undo is not None else None
        count = len(lines)
        new = [c + "\r" for c in contents] if self.crlf else list(contents)
        if b >= len(lines) and not self.final_newline:
            # The last line of a file with no final newline carries no line ending.
            if new:
                new[-1] = contents[-1]
                if a == b and a > 0 and self.crlf and not lines[a - 1].endswith("\r"):
                    lines[a - 1] += "\r"
            elif a > 0 and lines[a - 1].endswith("\r"):
                lines[a - 1] = lines[a - 1][:-1]
        lines[a:b] = new
        if not lines:
            self.final_newline = False
        if self._undo is not None and before is not None:
            self._undo.append((first, before, len(before) + len(lines) - count))

    def insert(self, before: int, contents: list[str]) -> None:
        """Insert lines so that the first new line becomes line ``before``."""
        self.splice(before, before - 1, contents)

    def delete(self, start: int, end: int) -> None:
        self.splice(start, end, [])


@dataclass(frozen=True, slots=True)
class LineChange:
    """Where an op list changed a text, in lines: the version's lines ``before`` and
    ``after`` it (never mutated again), and how many leading (``head``) and trailing
    (``tail``) lines every op of the list left alone. A proof's diff reads the change here
    instead of comparing two texts of possibly 24 MB to find it."""

    before: SourceLines
    after: SourceLines
    head: int
    tail: int


def line_change(base: SourceLines, edited: Sequence[SourceLines | None]) -> LineChange | None:
    """The change an op list made, from ``base`` (the lines it started from) and each op's
    edited copy in order (each a `SourceLines.copy` of the one before). Lines that no op
    touched keep their place from either end, so the list leaves alone the fewest any op
    left. None when some op's lines or span are not known (`SourceLines.changed_span`)."""
    head = tail = -1
    count = len(base)
    last = base
    for lines in edited:
        span = lines.changed_span() if lines is not None else None
        if lines is None or span is None or span[2] != count:
            return None
        head = span[0] if head < 0 else min(head, span[0])
        tail = span[1] if tail < 0 else min(tail, span[1])
        count = len(lines)
        last = lines
    if head < 0:
        return None
    return LineChange(base, last, head, tail)
