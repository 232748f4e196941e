"""What one re-parse changed, as a value (tree-sitter's edit and changed ranges in one).

`core.noma.incremental` finds the change once, while it splices, and hands it back with the
new tree (`Reparsed`); every reader of two versions (the structure guard, the validator's
incremental path, the app's block arrangement and its row diff) reads this value instead of
comparing the versions again.

Numbering: lines are 0-based half-open ranges (``old[start:end]`` of the line list); blocks
are indexes in the pre-order list of sections and directives (`ids.id_nodes_of`, which is
also the structure guard's outline and the app's block arrangement). Everything outside the
ranges is equal in both versions: the lines, and each block's kind, id, aliases and depth
(its lines moved by ``line_delta`` when it lies after the range).

A change says which version it leads from and to by their serials (`Document.serial`), so a
reader holding two versions knows whether the value describes that pair without keeping the
base version alive.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class ChangeKind(Enum):
    """How the new version was made."""

    SAME = "same"  # no line changed: the new version is the base itself
    SPLICE = "splice"  # one run of sibling blocks re-parsed inside one container
    WHOLE = "whole"  # parsed whole: the ranges cover both documents


@dataclass(frozen=True, slots=True)
class Span:
    """A 0-based half-open range ``[start, end)`` (of lines or of blocks)."""

    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Change:
    """The difference between two versions of one document."""

    kind: ChangeKind
    base: int  # `Document.serial` of the version changed from
    version: int  # and of the version made
    # The 1-based first lines of the sections holding the re-parsed run, outermost first
    # (empty: the document itself). They start before the run, so both versions agree.
    container: tuple[int, ...]
    edited_old: Span  # the lines that differ (a superset when found from the texts)
    edited_new: Span
    old_lines: Span  # the lines re-parsed: the edit widened to whole sibling blocks
    new_lines: Span
    line_delta: int  # how far every line after the run moved
    old_blocks: Span  # the blocks whose kind, id, aliases or depth may differ
    new_blocks: Span
    gained: tuple[str, ...]  # canonical ids the new version has more of (sorted, repeated)
    lost: tuple[str, ...]  # and those it has fewer of

    @property
    def whole(self) -> bool:
        return self.kind is ChangeKind.WHOLE

    def leads(self, base: int, version: int) -> bool:
        """Does this value describe the step from version ``base`` to ``version``?"""
        return self.base == base and self.version == version


def id_difference(
    old: Iterable[str | None], new: Iterable[str | None]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(gained, lost): the canonical ids ``new`` has more of than ``old``, and fewer of."""
    before = Counter(i for i in old if i is not None)
    after = Counter(i for i in new if i is not None)
    return tuple(sorted((after - before).elements())), tuple(sorted((before - after).elements()))


def same(serial: int, line_count: int, blocks: int) -> Change:
    """No line changed: the version is its own base."""
    lines, run = Span(line_count, line_count), Span(blocks, blocks)
    return Change(ChangeKind.SAME, serial, serial, (), lines, lines, lines, lines, 0, run, run,
                  (), ())  # fmt: skip


def whole(
    base: int,
    version: int,
    old_count: int,
    new_count: int,
    old_ids: list[str | None],
    new_ids: list[str | None],
) -> Change:
    """A version parsed whole: every line and block is in the range."""
    old_lines, new_lines = Span(0, old_count), Span(0, new_count)
    gained, lost = id_difference(old_ids, new_ids)
    return Change(
        ChangeKind.WHOLE,
        base,
        version,
        (),
        old_lines,
        new_lines,
        old_lines,
        new_lines,
        new_count - old_count,
        Span(0, len(old_ids)),
        Span(0, len(new_ids)),
        gained,
        lost,
    )
