"""Incremental re-parse: a new version of a document costs the size of the change.

`reparse(old_doc, old_text, new_text)` finds the lines that differ, widens them to a run of
sibling blocks inside the deepest heading section (or the document) whose parse state at
the run's start and end is known, parses only that run, and splices the result into a new
tree. Nothing in ``old_doc`` is mutated (architecture "Immutable trees"): containers on the
path to the run are copied, blocks before the run are shared, blocks after it are shared
when the line count did not change and copied with shifted spans when it did: lazily
(`nodes.shifted`: the blocks directly in a changed container now, what is below them when
first read) unless a heading in the run changed in a way that can move an id outside the
run. The block list, its lines and ids, the guard's outline, the id index (no line
moved), the slug counts and the validator's findings (`validate.kept_findings`) are
spliced with the tree, so a proof or the next op's lookup (`ids.find_block`) never reads
below a moved block. What the splice changed is handed back as a value (`revise`,
`core.noma.change.Change`, also ``Document.change``): readers of the two versions take the
run's lines, blocks and ids from it rather than comparing the versions again.

Ids: a run whose headings are unchanged keeps its ids. A run whose headings were added,
removed or retitled is planned alone when the document's slug counts (`ids.NameCounts`)
prove that no slug in the run is related to a slug outside it (`_ids_stay_outside`):
then no id outside the run can change, and the splice stays lazy. Otherwise ids and slug
suffixes are planned over the whole section list (cheap: strings only) and every later
block is copied now; a shared section whose id would change, or any case the checks
below cannot prove safe, falls back to a full parse. A slower correct path beats a wrong
fast one; the property test (`tests/noma/test_incremental_properties.py`) compares every
result with a full parse. `paths_taken` tells the tests which id path each splice took.

Why a run start is safe: the parser only looks forward (a paragraph or list item looks at
the next line, a table start at the line after). A run starts where nothing before it can
reach into it: right after the container's heading or the frontmatter, after a blank line
(when the block before is not a heading section, which blank lines do not close), after a
closed fence, directive or thematic break, or on an unchanged heading line. A run ends
where the next sibling starts afresh: before a heading line that closes every section the
run left open, after a blank line, or at the container's own end. Recovery (an unclosed
fence or directive) runs to the end of the file and is never spliced.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from . import paths_taken
from .change import Change, ChangeKind, Span, id_difference, same, whole
from .diagnostics import Diagnostic
from .ids import (
    NameCounts,
    blocks_in,
    built_index,
    id_lines_of,
    id_names_of,
    id_nodes_of,
    keep_index,
    keep_name_counts,
    name_counts_of,
    natural_slugs,
    plan_section_ids,
    suffix_base,
)
from .nodes import (
    Code,
    Directive,
    Document,
    ListNode,
    Node,
    Section,
    ThematicBreak,
    gc_paused,
    shifted,
)
from .parser import _Parser, parse
from .source import BOM, from_text, has_crlf, split_lines
from .text_ends import common_prefix, common_suffix

# Recovery notes that describe one line only (a ``::`` line read as text): safe to splice.
LOCAL_NOTES = frozenset(
    {"unmatched-directive-closer", "directive-depth-mismatch", "malformed-directive-opener"}
)
_MAX_EXTEND = 6  # how many following siblings a run may take in before widening


class Reparsed(NamedTuple):
    """A re-parse: the new version and what changed from the base (also ``doc.change``
    when the version is a new one)."""

    doc: Document
    change: Change


def reparse(
    old_doc: Document,
    old_text: str,
    new_text: str,
    new_lines: list[str] | None = None,
    span: tuple[int, int, int] | None = None,
    clean: bool = False,
) -> Document:
    """The parse of ``new_text``, reusing ``old_doc`` (the parse of ``old_text``); see
    `revise`, which also says what changed."""
    return revise(old_doc, old_text, new_text, new_lines, span, clean).doc


def revise(
    old_doc: Document,
    old_text: str,
    new_text: str,
    new_lines: list[str] | None = None,
    span: tuple[int, int, int] | None = None,
    clean: bool = False,
) -> Reparsed:
    """The parse of ``new_text``, reusing ``old_doc`` (the parse of ``old_text``), and the
    change from one to the other.

    ``new_lines`` is ``new_text`` already split as `SourceLines` splits it (what a patch op
    left), so a splice need not split the whole text again; it is only read. ``span`` is
    what the op says it changed (`SourceLines.changed_span`: lines kept at the head and
    the tail, the line count it started from) and ``clean`` that ``old_text`` is known to
    hold no CR, NUL or undecodable byte (`source.text_facts`): with both, only the changed
    lines are looked at, never the whole texts.
    """
    doc = try_reparse(old_doc, old_text, new_text, new_lines, span, clean)
    if doc is old_doc:
        return Reparsed(
            old_doc, same(old_doc.serial, old_doc.line_count, len(id_lines_of(old_doc)))
        )
    if doc is not None and doc.change is not None:
        return Reparsed(doc, doc.change)
    full = parse(new_text, chapter=old_doc.chapter)
    full.change = whole(
        old_doc.serial,
        full.serial,
        old_doc.line_count,
        full.line_count,
        id_names_of(old_doc),
        id_names_of(full),
    )
    return Reparsed(full, full.change)


def try_reparse(
    old_doc: Document,
    old_text: str,
    new_text: str,
    new_lines: list[str] | None = None,
    span: tuple[int, int, int] | None = None,
    clean: bool = False,
) -> Document | None:
    """The spliced parse of ``new_text``, or None when a full parse is needed."""
    if old_doc.chapter is not None or any(d.code not in LOCAL_NOTES for d in old_doc.notes):
        return None if old_text != new_text else old_doc
    if span is not None and clean and new_lines is not None and span[2] == old_doc.line_count:
        head, tail, base = span
        if head + tail >= base and len(new_lines) == base:
            return old_doc  # no line was touched
        if not _run_clean(new_lines[head : len(new_lines) - tail]):
            return None
        if paths_taken.observer is not None:
            paths_taken.observer["splice:by-span"] += 1
        with gc_paused(promote=True):
            return _Splice(old_doc, "", "", new_lines, (head, tail)).run()
    if old_text == new_text:
        return old_doc
    new_src = from_text(new_text)
    if new_src.invalid_utf8_at is not None or "\x00" in new_text:
        return None
    old_bom = old_text.startswith(BOM)
    old_crlf = has_crlf(old_text)
    if new_src.bom != old_doc.bom or new_src.bom != old_bom or new_src.crlf != old_crlf:
        return None
    old_body = old_text[1:] if old_bom else old_text
    if old_crlf:
        old_body = old_body.replace("\r\n", "\n")
    new_body = new_src.body
    if "\r" in old_body or "\r" in new_body:
        return None
    with gc_paused(promote=True):
        return _Splice(old_doc, old_body, new_body, new_lines).run()


def span_is_clean(lines: list[str], span: tuple[int, int, int]) -> bool:
    """The lines between ``span``'s kept head and tail are clean (see `_run_clean`)."""
    head, tail, _base = span
    return _run_clean(lines[head : len(lines) - tail])


def _run_clean(run: list[str]) -> bool:
    """The lines an op wrote hold no CR, NUL or lone surrogate (an undecodable byte): the
    facts a clean base version has everywhere else."""
    chunk = "".join(run)
    if "\r" in chunk or "\x00" in chunk:
        return False
    if not chunk.isascii():
        try:
            chunk.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


def _blank(line: str) -> bool:
    return not line or line.isspace()


def _start0(node: Node) -> int:
    return node.line - 1


def _line(node: Node) -> int:
    return node.line


class _Widen(Exception):
    """This container cannot hold the change; try its parent."""


class _Splice:
    """One incremental re-parse."""

    def __init__(
        self,
        old: Document,
        old_body: str,
        new_body: str,
        lines: list[str] | None = None,
        span: tuple[int, int] | None = None,
    ) -> None:
        self.old = old
        # `SourceLines` and `split_lines` agree on a text without CRs (checked above): the
        # same LF split, a final empty line dropped, the BOM apart
        self.lines = lines if lines is not None else split_lines(new_body)
        self.new_n = len(self.lines)
        self.old_n = old.line_count
        self.delta = self.new_n - self.old_n
        if span is not None:  # the op said which lines it kept at each end
            head, tail = span
            self.a = head
            self.old_b = max(self.old_n - tail, head)
            self.new_b = self.old_b + self.delta
            return
        p = common_prefix(old_body, new_body)
        q = common_suffix(old_body, new_body, min(len(old_body), len(new_body)) - p)
        self.a = old_body.count("\n", 0, p)  # first line that may differ (0-based)
        # Lines wholly inside the common suffix: from the first line break inside it on.
        self.old_b = self.old_n
        if q:
            t = old_body.find("\n", len(old_body) - q)
            if t != -1:
                self.old_b = old_body.count("\n", 0, t + 1)
        self.old_b = max(self.old_b, self.a)
        self.new_b = self.old_b + self.delta

    def run(self) -> Document | None:
        old, lines, a = self.old, self.lines, self.a
        if self.new_b < a or self.old_b > self.old_n:
            return None
        fm = old.frontmatter
        self.fm_end = fm.end_line if fm is not None else 0
        if a == 0 or a < self.fm_end:
            return None
        if fm is None and lines and lines[0].rstrip() == "---":
            return None  # an unterminated frontmatter opener: a later line could close it
        path: list[Document | Section] = [old]
        node: Document | Section = old
        while True:
            children = node.children
            k = bisect_right(children, a, key=_start0) - 1
            if k < 0:
                break
            child = children[k]
            if isinstance(child, Section) and child.line - 1 < a and child.end_line >= self.old_b:
                path.append(child)
                node = child
            else:
                break
        for depth in range(len(path) - 1, -1, -1):
            try:
                return self._attempt(path[: depth + 1])
            except _Widen:
                continue
        return None

    # -- choosing and parsing the run ----------------------------------------------------

    def _safe_start(self, container: Document | Section, k: int, lo_k: int) -> bool:
        children = container.children
        if k <= lo_k:
            return True
        node, prev = children[k], children[k - 1]
        x = node.line - 1
        if isinstance(node, Section) and x < self.a:
            return True  # an unchanged heading line closes what it closed before
        if isinstance(prev, Section):
            return False  # blank lines do not close a section
        if isinstance(prev, ThematicBreak) or (
            isinstance(prev, (Code, Directive)) and prev.closed and prev.end_line == x
        ):
            return True
        return _blank(self.lines[x - 1])

    def _attempt(self, path: list[Document | Section]) -> Document | None:
        container = path[-1]
        children = container.children
        is_doc = isinstance(container, Document)
        lo_k = 1 if isinstance(container, Document) and container.frontmatter is not None else 0
        content_start = self.fm_end if is_doc else container.line
        k0 = max(bisect_right(children, self.a, key=_start0) - 1, lo_k)
        k1 = max(bisect_left(children, self.old_b, key=_start0) - 1, k0)
        while not self._safe_start(container, k0, lo_k):
            k0 -= 1
        r0 = children[k0].line - 1 if k0 > lo_k else content_start
        if r0 <= 0 or r0 > self.a:
            raise _Widen
        end = container.end_line if isinstance(container, Section) else self.old_n
        for _ in range(_MAX_EXTEND):
            nxt = children[k1 + 1] if k1 + 1 < len(children) else None
            r1 = nxt.line - 1 if nxt is not None else end
            sub = self._parse_region(r0, r1 + self.delta, container)
            if sub is None:
                return None
            if self._end_safe(sub, nxt, r0, r1 + self.delta):
                return self._build(path, k0, k1, r0, r1, sub)
            k1 += 1
        raise _Widen

    def _parse_region(self, r0: int, nr1: int, container: Document | Section) -> _Parser | None:
        if nr1 < r0:
            return None
        sub = _Parser(self.lines, r0, nr1)
        sub.run()
        if any(d.code not in LOCAL_NOTES for d in sub.notes):
            return None  # recovery that runs to the end of the file
        if isinstance(container, Section):
            for section in sub.sections:
                if section.depth == 1 and section.level <= container.level:
                    raise _Widen  # the run closes its container
        return sub

    def _end_safe(self, sub: _Parser, nxt: Node | None, r0: int, nr1: int) -> bool:
        if nxt is None:
            return True
        open_sections = [s for s in sub.sections if not s.in_directive and s.end_line == nr1]
        if isinstance(nxt, Section):
            return all(s.level >= nxt.level for s in open_sections)
        if open_sections:
            return False
        return nr1 == r0 or _blank(self.lines[nr1 - 1])

    # -- the new tree --------------------------------------------------------------------

    def _build(
        self,
        path: list[Document | Section],
        k0: int,
        k1: int,
        r0: int,
        r1: int,
        sub: _Parser,
    ) -> Document | None:
        old, delta = self.old, self.delta
        container = path[-1]
        new_doc = Document(
            1,
            max(self.new_n, 1),
            children=[],
            meta=old.meta,
            frontmatter=old.frontmatter,
            bom=old.bom,
            line_count=self.new_n,
            chapter=old.chapter,
        )
        # Copies of the path: the document, then each enclosing section.
        copies: dict[int, Node] = {id(old): new_doc}
        path_copies: list[Document | Section] = [new_doc]
        for k, node in enumerate(path):
            nxt_on_path = path[k + 1] if k + 1 < len(path) else None
            if k == 0:
                copy: Document | Section = new_doc
            else:
                assert isinstance(node, Section)
                copy = _copy_section(node, node.line, node.end_line + delta)
                copies[id(node)] = copy
                path_copies.append(copy)
            if nxt_on_path is not None:
                idx = bisect_left(node.children, nxt_on_path.line, key=_line)
                copy.children = node.children[:idx]
            else:
                copy.children = node.children[:k0]
        depth_offset = container.depth
        stub = sub.doc
        for block in sub.flat_nodes:
            if isinstance(block, (Section, Directive)):
                block.depth += depth_offset
        old_lines = id_lines_of(old)
        j0 = bisect_left(old_lines, r0 + 1)
        j1 = bisect_left(old_lines, r1 + 1)
        run_ids: list[Node] = list(heapq.merge(sub.sections, sub.directives, key=_line))
        old_run_ids = blocks_in(container.children[k0 : k1 + 1])
        old_run = [n for n in old_run_ids if isinstance(n, Section)]
        same_headings = [_heading_key(n) for n in old_run] == [
            _heading_key(n) for n in sub.sections
        ]
        # Do the run's new headings provably move no id outside the run?
        counts = name_counts_of(old)  # None: not known without a walk
        local_ids = (
            not same_headings
            and counts is not None
            and _ids_stay_outside(counts, old_run, sub.sections)
        )
        # When lines moved but no id can change, the moved blocks are copied lazily
        # (`nodes.shifted`: one level now, what is below them when first read), and the
        # block list is made from the tree when first asked. A base version whose list was
        # not made yet passes that on rather than making it now.
        lazy = (same_headings or local_ids) and (delta != 0 or old._id_nodes is None)
        if paths_taken.observer is not None:
            paths_taken.observer[
                "splice:headings-local"
                if local_ids
                else "splice:same-headings"
                if same_headings
                else "splice:eager"
            ] += 1
        new_doc._id_lines = [
            *old_lines[:j0],
            *(n.line for n in run_ids),
            *(old_lines[j1:] if not delta else [line + delta for line in old_lines[j1:]]),
        ]
        # Children: each path copy gets its old children before the path (shared), the next
        # copy (or, innermost, the re-parsed run), then its old children after it: shared
        # when no line moved, else copied with shifted spans.
        fresh: set[int] = {id(n) for n in path_copies}
        fresh.update(id(n) for n in sub.sections)
        for k, node in enumerate(path):
            copy = path_copies[k]
            if k + 1 < len(path):
                copy.children.append(path_copies[k + 1])
                after = node.children[bisect_right(node.children, path[k + 1].line, key=_line) :]
            else:
                copy.children.extend(stub.children)
                after = node.children[k1 + 1 :]
            if delta == 0:
                copy.children.extend(after)
            elif lazy:
                copy.children.extend([shifted(child, delta) for child in after])
            else:
                for child in after:
                    copy.children.append(_shift_subtree(child, delta, copies, fresh))
        # The pre-order walk is rebuilt from the children when someone asks (`walk`).
        new_doc._flat = None

        # Ids: when the run holds the same headings (titles, levels, id and alias
        # attributes) as before, no id anywhere can change; when its slugs are unrelated
        # to every slug outside it, only the run's ids can, planned from the run alone;
        # else plan over every section, apply to fresh nodes and refuse to change shared
        # ones.
        id_nodes: list[Node] | None = None  # lazy: made from the tree when first asked
        if not lazy:
            old_ids = id_nodes_of(old)
            id_nodes = old_ids[:j0]
            for enclosing in path[1:]:
                at = bisect_left(id_nodes, enclosing.line, key=_line)
                id_nodes[at] = copies[id(enclosing)]
            id_nodes.extend(run_ids)
            if delta == 0:
                id_nodes.extend(old_ids[j1:])
            else:
                id_nodes.extend([copies[id(n)] for n in old_ids[j1:]])
        ids_moved = False  # did a copied section outside the run change id (scan owners)?
        if same_headings:
            for before, section in zip(old_run, sub.sections, strict=True):
                section.id = before.id
                section.aliases = before.aliases
        elif local_ids:
            # No slug in the run is related to one outside it, so the run's ids are what
            # planning the run alone gives (no root section in it: no frontmatter aliases).
            for section, (ident, aliases) in zip(
                sub.sections, plan_section_ids(old.meta, sub.sections, None), strict=True
            ):
                section.id = ident
                if aliases is not None:
                    section.aliases = aliases
        else:
            assert id_nodes is not None
            sections = [n for n in id_nodes if isinstance(n, Section)]
            for section, (ident, aliases) in zip(
                sections, plan_section_ids(old.meta, sections, None), strict=True
            ):
                if id(section) in fresh:
                    # None: the parser's default. A copy must drop aliases it no longer
                    # gets (the frontmatter's, when a level-1 heading before it became
                    # the root section).
                    own: Sequence[str] = aliases if aliases is not None else ()
                    moved = (section.id != ident or list(section.aliases) != list(own)) and (
                        section.line <= r0 or section.line > r1 + delta
                    )
                    ids_moved = ids_moved or moved
                    section.id = ident
                    section.aliases = own
                elif section.id != ident or list(section.aliases) != (aliases or []):
                    return None
        if ids_moved:  # a copy whose ids changed is no longer its origin moved (`origin`)
            for made in copies.values():
                if made is not new_doc:
                    made._lazy = None  # type: ignore[attr-defined]
        new_doc._id_nodes = id_nodes
        if counts is not None and (same_headings or local_ids):
            keep_name_counts(new_doc, counts.spliced(old_run_ids, run_ids))
        if lazy:  # ids of the blocks not made yet: what `ids.find_block` looks up
            old_names = id_names_of(old)
            new_doc._id_names = [*old_names[:j0], *(n.id for n in run_ids), *old_names[j1:]]

        if not ids_moved:
            # Blocks outside the run kept their ids and depths: the structure guard's
            # outline and (when no line moved) the id index are spliced too.
            _splice_outline(old, new_doc, j0, j1, run_ids)
            if delta == 0 and not lazy:
                keep_index(new_doc, _splice_index(old, path, copies, old_run_ids, run_ids, r0, r1))
        new_doc.notes = _splice_notes(old.notes, sub.notes, r0, r1, delta)
        new_doc.attr_problems = [
            *(p for p in old.attr_problems if p[0] <= r0),
            *sub.attr_problems,
            *((line + delta, g) for line, g in old.attr_problems if line > r1),
        ]
        new_doc.change = self._change(
            new_doc, path, (r0, r1), (j0, j1), old_run_ids, run_ids, id_nodes, ids_moved
        )
        if not ids_moved:
            from .validate.kept_findings import leave_recipes

            leave_recipes(
                old,
                new_doc,
                path,
                container.children[k0 : k1 + 1],
                sub.doc.children,
                old_run_ids,
                run_ids,
                new_doc.change,
            )
        return new_doc

    def _change(
        self,
        new_doc: Document,
        path: list[Document | Section],
        run: tuple[int, int],
        blocks: tuple[int, int],
        old_run_ids: list[Node],
        run_ids: list[Node],
        id_nodes: list[Node] | None,
        ids_moved: bool,
    ) -> Change:
        """The value that says what this splice changed (`core.noma.change`): a whole
        change when a copied section outside the run changed its id."""
        (r0, r1), (j0, j1), delta = run, blocks, self.delta
        if ids_moved:  # planning changed ids outside the run: any block may differ
            assert id_nodes is not None
            return whole(
                self.old.serial,
                new_doc.serial,
                self.old_n,
                self.new_n,
                id_names_of(self.old),
                [n.id for n in id_nodes],
            )
        gained, lost = id_difference((n.id for n in old_run_ids), (n.id for n in run_ids))
        return Change(
            ChangeKind.SPLICE,
            self.old.serial,
            new_doc.serial,
            tuple(s.line for s in path[1:]),
            Span(self.a, self.old_b),
            Span(self.a, self.new_b),
            Span(r0, r1),
            Span(r0, r1 + delta),
            delta,
            Span(j0, j1),
            Span(j0, j0 + len(run_ids)),
            gained,
            lost,
        )


def _splice_outline(old: Document, new: Document, j0: int, j1: int, run: list[Node]) -> None:
    """The guard's outline (`patch.guard.outline`) of the new tree, and the hint that its
    entries before ``j0`` and from ``j1`` on (old numbering) are the old ones."""
    from .patch.guard import splice_outline

    splice_outline(old, new, j0, j1, run)


def _splice_index(
    old: Document,
    path: list[Document | Section],
    copies: dict[int, Node],
    old_run: list[Node],
    run: list[Node],
    r0: int,
    r1: int,
) -> Any:
    """The id index of the new tree when no line moved: the old one with the run's entries
    swapped; None (built on demand) when an alias or a duplicate makes that unsure."""
    from .ids import IdIndex

    idx = built_index(old)
    if idx is None or any(n.aliases for n in (*old_run, *run)):
        return None
    removed = [n for n in old_run if n.id is not None]
    added = [n for n in run if n.id is not None]
    # The run kept its ids (an attribute or body edit): the counts are the old ones, shared
    # (an index is never mutated once made), not copied (~175k entries at 50k sections).
    same_ids = [n.id for n in removed] == [n.id for n in added]
    new = IdIndex(
        entries=[],
        first=dict(idx.first),
        count=idx.count if same_ids else dict(idx.count),
        alias_owner=idx.alias_owner,
    )
    gone = {id(n) for n in removed}
    if not same_ids:
        for n in removed:
            ident = n.id
            assert ident is not None
            new.count[ident] -= 1
        for n in added:
            ident = n.id
            assert ident is not None
            new.count[ident] = new.count.get(ident, 0) + 1
    for ident in {n.id for n in removed} | {n.id for n in added}:
        assert ident is not None
        if new.count.get(ident, 0) <= 0:
            new.count.pop(ident, None)
            new.first.pop(ident, None)
            continue
        was = idx.first.get(ident)
        if was is not None and id(was) in gone:
            if new.count[ident] != sum(1 for n in added if n.id == ident):
                return None  # the first copy was in the run, another is elsewhere
            was = None
        first_new = next((n for n in added if n.id == ident), None)
        if was is None or (first_new is not None and first_new.line < was.line):
            assert first_new is not None
            new.first[ident] = first_new
        else:
            new.first[ident] = was
    for enclosing in path[1:]:
        ident = enclosing.id
        if ident is not None and new.first.get(ident) is enclosing:
            new.first[ident] = copies[id(enclosing)]
    # Entries, in document order: the old ones with the run's swapped and copies mapped.
    entries = idx.entries
    k0 = bisect_left(entries, r0 + 1, key=_entry_line)
    k1 = bisect_left(entries, r1 + 1, key=_entry_line)
    head = entries[:k0]
    for enclosing in path[1:]:
        if enclosing.id is not None:
            at = bisect_left(head, enclosing.line, key=_entry_line)
            head[at] = (enclosing.id, copies[id(enclosing)])
    new.entries = [*head, *[(n.id, n) for n in added if n.id is not None], *entries[k1:]]
    return new


def _entry_line(entry: tuple[str, Node]) -> int:
    return entry[1].line


def _ids_stay_outside(counts: NameCounts, old_run: list[Section], new_run: list[Section]) -> bool:
    """Do the sections outside the run keep their ids and aliases when the run's headings
    go from ``old_run`` to ``new_run``? ``counts`` are the old version's.

    Planning (`ids.plan_section_ids`) gives a section with slug ``s`` the id ``s`` or
    ``s-k``, reading only which of those are taken and which ``s-k`` are natural slugs;
    explicit ids take no part. A run slug ``t`` can touch that only when ``t`` is ``s``,
    ``t`` is ``s-k`` (``s`` is its `suffix_base`) or ``s`` is ``t-k``. When no section
    outside the run has such a slug, by induction over the document order every outside
    section reads what it read before, and the run's own ids depend on the run alone. The
    first level-1 section carries the frontmatter's aliases: a run holding a level-1
    heading is never proven.
    """
    if any(s.level == 1 for s in old_run) or any(s.level == 1 for s in new_run):
        return False
    removed, added = natural_slugs(old_run), natural_slugs(new_run)
    slugs, bases = counts.slugs, counts.bases
    in_run = Counter(removed)  # subtracted: the counts are the old version's, run included
    run_bases = Counter(b for b in map(suffix_base, removed) if b is not None)
    for t in {*removed, *added}:
        if slugs.get(t, 0) - in_run[t] > 0 or bases.get(t, 0) - run_bases[t] > 0:
            return False
        base = suffix_base(t)
        if base is not None and slugs.get(base, 0) - in_run[base] > 0:
            return False
    return True


def _heading_key(s: Section) -> tuple[Any, ...]:
    """What a heading contributes to id planning."""
    attrs = s.attrs
    return (
        s.slug,
        s.level,
        "id" in attrs,
        attrs.get("id"),
        "aliases" in attrs,
        attrs.get("aliases"),
    )


def _shift_subtree(root: Node, delta: int, copies: dict[int, Node], fresh: set[int]) -> Node:
    """A copy of ``root`` and everything below it, every span moved by ``delta``, made now
    (ids are about to be planned over every section); blocks (sections, directives) are
    recorded in ``copies`` (old id -> copy) and ``fresh``."""
    new_root = _made_now(root, delta)
    if isinstance(root, (Section, Directive)):
        copies[id(root)] = new_root
        fresh.add(id(new_root))
    if not isinstance(root, (Section, Directive, ListNode)):
        return new_root
    stack: list[tuple[Node, Node]] = [(root, new_root)]
    while stack:
        old, new = stack.pop()
        if isinstance(old, ListNode):
            new.items = [shifted(item, delta) for item in old.items]  # type: ignore[attr-defined]
            continue
        kids = old.children  # type: ignore[attr-defined]
        if not kids:
            continue
        out = new.children  # type: ignore[attr-defined]
        for kid in kids:
            copy = _made_now(kid, delta)
            out.append(copy)
            kind = type(kid)
            if kind is Section or kind is Directive:
                copies[id(kid)] = copy
                fresh.add(id(copy))
                stack.append((kid, copy))
            elif kind is ListNode:
                stack.append((kid, copy))
    return new_root


def _made_now(node: Node, delta: int) -> Node:
    """`nodes.shifted`, with a container's children list started empty (filled by the
    caller) instead of left to be made on first read. The copy keeps its origin (`origin`):
    its subtree is the origin's moved, unless planning changes an id in it (then the caller
    drops it)."""
    new = shifted(node, delta)
    kind = type(new)
    if kind is Section or kind is Directive:
        new.children = []  # type: ignore[attr-defined]
    elif kind is ListNode:
        new.items = []  # type: ignore[attr-defined]
    return new


def _splice_notes(
    old: list[Diagnostic], new: list[Diagnostic], r0: int, r1: int, delta: int
) -> list[Diagnostic]:
    out = [d for d in old if d.line is not None and d.line <= r0]
    out.extend(new)
    for d in old:
        if d.line is not None and d.line > r1:
            out.append(
                Diagnostic(
                    d.severity, d.code, d.message, d.line + delta, d.column, d.node_id, d.phase
                )
            )
    return out


def _copy_section(s: Section, line: int, end_line: int) -> Section:
    return Section(
        line,
        end_line,
        id=s.id,
        aliases=s.aliases,
        depth=s.depth,
        level=s.level,
        title=s.title,
        children=[],
        attrs=s.attrs,
        slug=s.slug,
        in_directive=s.in_directive,
    )
