"""The app's read model of one document version, built off the UI thread.

`load_document` reads the file through `core` (bytes, parse, ids, validation, parser
notes) and arranges what the engine returned the way the panes need it: the addressable
blocks (sections and directives) in document order with their parent/child links, each
diagnostic tied to the block it is about, and a badge per block. Nothing here decides what
a document means; it only indexes the engine's records so a 5,000-section document can be
shown lazily and a cursor move costs a dictionary lookup.

A new version of the document on screen is never parsed whole: the engine splices it from
the shown one (`core.noma.incremental.reparse`), and an edit the app applied itself comes
from the engine's post-state without reading the file (`from_state`). `diff_versions`
then says which tree rows can differ, so the panes redraw those and nothing else.
"""

from __future__ import annotations

import bisect
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core.noma.api import (
    SEVERITY_RANK,
    Diagnostic,
    Directive,
    Document,
    DocumentCache,
    DocumentState,
    Section,
    Source,
    SourceLines,
    analyse,
    from_text,
    gc_paused,
    index,
    parse,
    read_source,
    reparse,
    span_is_clean,
    text_is_clean,
)

from .arrangement import ROOT, Arrangement, Blocks, Region, arrange, splice
from .relines import Relined, reline

__all__ = [
    "EARLY_TREE_CHARS",
    "ROOT",
    "Badge",
    "DiagnosticRow",
    "LoadedDocument",
    "from_state",
    "load_document",
]

# From this size a document opened cold is shown before it is validated: at ~4 MB (some
# 8,500 sections) validation takes a few hundred milliseconds, which the tree need not
# wait for. Smaller documents come whole, in one step.
EARLY_TREE_CHARS = 4_000_000


@dataclass(slots=True)
class DiagnosticRow:
    """One diagnostic as listed: a validator finding or a parser recovery note."""

    diagnostic: Diagnostic
    parse_note: bool
    block: int | None  # the block it is about, if any


@dataclass(slots=True)
class Badge:
    """The worst severity and the count of diagnostics on one block."""

    severity: str
    count: int


@dataclass(slots=True)
class LoadedDocument:
    """One parsed, validated version of a document, indexed for the panes."""

    path: Path
    name: str
    source: Source
    doc: Document
    lines: SourceLines
    blocks: Blocks
    parents: list[int]
    children: list[list[int]]
    roots: list[int]
    starts: list[int]  # each block's first line: a block is found by line without reading it
    names: list[str | None]  # each block's canonical id
    diagnostics: list[DiagnosticRow]
    badges: dict[int, Badge]
    duplicate_ids: set[str]
    load_ms: float = 0.0
    read_only: bool = False  # no write bit, or the user may not write it (or its folder)
    _first: dict[str, int] | None = field(default=None, repr=False)  # id -> first block
    _haystacks: list[str] | None = field(default=None, repr=False)
    _sha256: str = field(default="", repr=False)
    # Spliced from the version with this sha256: where the block list differs from it.
    spliced: tuple[str, Region] | None = field(default=None, repr=False)
    # Relined from the version with this sha256 (`noma_tui.relines`): its changed lines.
    relined: tuple[str, tuple[int, int, int]] | None = field(default=None, repr=False)
    # False for the tree-first version of a large document (`load_document`'s ``early``):
    # parsed and arranged, its validator findings still being made. Only the parser's
    # recovery notes are in ``diagnostics`` then; the panes say "checking" meanwhile.
    checked: bool = True
    # The text holds no CR, NUL or undecodable byte (None: not looked at yet): the engine
    # state's fact (`DocumentState.clean`, carried by its ops and by outside edits). Known,
    # it lets the next version be spliced at the lines an outside edit changed without the
    # engine comparing or scanning the two whole texts again.
    clean: bool | None = field(default=None, repr=False)

    @property
    def sha256(self) -> str:
        """Hashed once per version (2.3 MB take ~5 ms; the app asks on every refresh)."""
        if not self._sha256:
            self._sha256 = self.source.sha256
        return self._sha256

    def arrangement(self) -> Arrangement:
        return Arrangement(
            self.blocks, self.parents, self.children, self.roots, self.starts, self.names
        )

    def state(self) -> DocumentState:
        """This version as the engine's splice base (the diagnostics are not needed)."""
        return DocumentState(self.sha256, self.doc, [], self.source.text)

    def is_clean(self) -> bool:
        """`clean`, looked at once per version when not carried from the one before."""
        if self.clean is None:
            self.clean = text_is_clean(self.source.text)
        return self.clean

    @property
    def recovered(self) -> bool:
        """Tier 2: the parser needed recovery, so spans are hints only (§6.2)."""
        return self.doc.recovered

    def first(self) -> dict[str, int]:
        """Each canonical id's first block (never mutate: versions share it)."""
        first = self._first
        if first is None:
            first = self._first = first_blocks(self.names)
        return first

    def block_of_id(self, ident: str) -> int | None:
        """The block with canonical id (or alias) ``ident``, first one if duplicated."""
        first = self.first()
        block = first.get(ident)
        if block is not None:
            return block
        # An alias: the engine's index knows them (it reads every block: rare, and cached).
        canonical = index(self.doc).resolve(ident)
        return first.get(canonical) if canonical is not None else None

    def patchable(self, block: int) -> bool:
        """A block can be a patch target: it has a canonical id that is not ambiguous."""
        ident = self.names[block]
        return ident is not None and ident not in self.duplicate_ids

    def span_ok(self, block: int) -> bool:
        return self.blocks[block].end_line <= len(self.lines)

    def block_hash(self, block: int) -> str | None:
        """The block's source hash as the engine computes it for ``baseHash`` (§3.4)."""
        node = self.blocks[block]
        if not self.span_ok(block):
            return None
        return self.lines.block_hash(node.line, node.end_line)

    def block_text(self, block: int) -> str:
        node = self.blocks[block]
        return self.lines.raw_block(node.line, min(node.end_line, len(self.lines)))

    def body_text(self, block: int) -> str:
        """The lines between a directive's fences, as written."""
        node = self.blocks[block]
        end = min(node.end_line - 1, len(self.lines))
        if end < node.line + 1:
            return ""
        return self.lines.raw_block(node.line + 1, end).replace("\r", "")

    def ancestors(self, block: int) -> list[int]:
        """The block's ancestors, outermost first."""
        out = []
        parent = self.parents[block]
        while parent != ROOT:
            out.append(parent)
            parent = self.parents[parent]
        return out[::-1]

    def descendants(self, block: int) -> set[int]:
        out: set[int] = set()
        stack = list(self.children[block])
        while stack:
            b = stack.pop()
            out.add(b)
            stack.extend(self.children[b])
        return out

    def structure(self) -> tuple[list[int], list[str | None]]:
        """What the tree's shape depends on: two versions with equal structures can keep
        their tree nodes and only relabel them."""
        return self.parents, self.names

    def containers(self) -> list[int]:
        """Blocks that can take child blocks (add_block / move_block parents)."""
        out = []
        for i, node in enumerate(self.blocks):
            if not self.patchable(i):
                continue
            if isinstance(node, Directive) or (isinstance(node, Section) and not node.in_directive):
                out.append(i)
        return out

    def search(self, query: str) -> list[int]:
        """Blocks whose id, alias, title or text contains ``query`` (case-insensitive), in
        document order. A section is searched by its heading (its text is its children's);
        a directive by its whole source."""
        needle = query.strip().lower()
        if not needle:
            return []
        if self._haystacks is None:
            self._haystacks = [self._haystack(i) for i in range(len(self.blocks))]
        return [i for i, hay in enumerate(self._haystacks) if needle in hay]

    def _haystack(self, block: int) -> str:
        node = self.blocks[block]
        parts = [node.id or "", *node.aliases]
        if isinstance(node, Section):
            parts.append(node.title)
        elif self.span_ok(block):
            parts.append(self.block_text(block))
        return "\n".join(parts).lower()

    def count(self, severity: str) -> int:
        return sum(1 for r in self.diagnostics if r.diagnostic.severity == severity)


def first_blocks(names: list[str | None]) -> dict[str, int]:
    """Each canonical id's first block (the one an op addressing it means)."""
    n = len(names)
    first = dict(zip(reversed(names), range(n - 1, -1, -1), strict=True))
    first.pop(None, None)
    return first  # type: ignore[return-value]


def repeated(names: list[str | None], first: dict[str, int] | None = None) -> set[str]:
    """The canonical ids more than one block carries. Given ``first`` (`first_blocks` of
    ``names``), the common answer, none, costs one count in C: as many ids as named blocks."""
    if first is not None and len(first) == len(names) - names.count(None):
        return set()
    present = [n for n in names if n is not None]
    if len(set(present)) == len(present):
        return set()
    seen: set[str] = set()
    out: set[str] = set()
    for name in present:
        if name in seen:
            out.add(name)
        seen.add(name)
    return out


def _innermost(blocks: Blocks, parents: list[int], starts: list[int], line: int) -> int | None:
    """The deepest block whose span holds ``line`` (blocks are in pre-order)."""
    k = bisect.bisect_right(starts, line) - 1
    while k >= 0 and blocks[k].end_line < line:
        k = parents[k]
    return k if k >= 0 else None


def arrange_diagnostics(
    doc: Document,
    validator: list[Diagnostic],
    arranged: Arrangement,
    first: dict[str, int],
) -> tuple[list[DiagnosticRow], dict[int, Badge]]:
    """Tie each diagnostic to its block: the first one with its ``node_id``, else the
    innermost one holding its line. ``first`` is `first_blocks` of the arrangement."""
    blocks, parents, starts = arranged.blocks, arranged.parents, arranged.starts
    rows: list[DiagnosticRow] = []
    tagged = [(d, False) for d in validator] + [(d, True) for d in doc.notes]
    for d, note in tagged:
        block: int | None = None
        if d.node_id is not None:
            block = first.get(d.node_id)
        if block is None and d.line is not None:
            block = _innermost(blocks, parents, starts, d.line)
        rows.append(DiagnosticRow(d, note, block))
    rows.sort(key=lambda r: (r.diagnostic.line or 0, -SEVERITY_RANK[r.diagnostic.severity]))
    badges: dict[int, Badge] = {}
    for row in rows:
        if row.block is None:
            continue
        badge = badges.get(row.block)
        sev = row.diagnostic.severity
        if badge is None:
            badges[row.block] = Badge(sev, 1)
        else:
            badge.count += 1
            if SEVERITY_RANK[sev] > SEVERITY_RANK[badge.severity]:
                badge.severity = sev
    return rows, badges


def load_document(
    path: Path,
    *,
    root: Path | None = None,
    cache: DocumentCache | None = None,
    shown: LoadedDocument | None = None,
    early: Callable[[LoadedDocument], None] | None = None,
) -> LoadedDocument:
    """Read, parse and validate ``path``.

    The engine's cached state is reused when the file's sha256 is unchanged; otherwise
    the new tree is spliced from ``shown`` (the version on screen, when it is this file)
    or from the cache's last version, and parsed whole only when there is neither. Raises
    `core.noma.files.DocumentIOError` when the file cannot be read. A document with parse
    errors still loads: the parser recovers and its notes become diagnostics.

    Given ``early``, a document of `EARLY_TREE_CHARS` or more that has to be parsed whole
    (nothing to splice it from) is handed to ``early`` as soon as it is parsed and
    arranged (``checked`` False), then validated; the version returned shares its tree
    and arrangement.
    """
    started = time.perf_counter()
    source = read_source(path)
    sha = source.sha256
    state = cache.get(path, sha) if cache is not None else None
    relined: Relined | None = None
    if shown is not None and shown.path == path and shown.sha256 != sha:
        # The new lines from the shown ones, split where they differ only.
        relined = reline(shown.lines, shown.source.text, source.text)
    if state is None:
        if shown is not None and shown.path == path:
            base: DocumentState | None = shown.state()
            assert base is not None and base.text is not None
            new_lines = relined.lines.lines if relined is not None else None
            span = _span(shown, relined)
            if span is not None and new_lines is not None and shown.is_clean():
                # The engine is told which lines changed (it need not find them again)
                # and that the rest is clean; the new text is clean if those lines are.
                doc = reparse(base.doc, base.text, source.text, new_lines, span, True)
                state = analyse(source.text, path.parent, sha, doc=doc)
                state.clean = span_is_clean(new_lines, span)
            else:
                doc = reparse(base.doc, base.text, source.text, new_lines)
                state = analyse(source.text, path.parent, sha, doc=doc)
        else:
            base = cache.latest(path) if cache is not None else None
            if base is None and early is not None and len(source.text) >= EARLY_TREE_CHARS:
                doc = parse(source.text)
                parsed = DocumentState(sha, doc, [], source.text)
                first = from_state(path, source, sha, parsed, root=root, started=started)
                first.checked = False
                early(first)
                state = analyse(source.text, path.parent, sha, doc=doc)
                state.keep_lines(first.lines)
                if cache is not None:
                    cache.put(path, state)
                return from_state(
                    path, source, sha, state, root=root, started=started, previous=first
                )
            state = analyse(source.text, path.parent, sha, previous=base)
        if cache is not None:
            cache.put(path, state)
    if relined is not None:
        state.keep_lines(relined.lines)
    loaded = from_state(path, source, sha, state, root=root, started=started, previous=shown)
    if relined is not None and shown is not None and loaded.lines is relined.lines:
        loaded.relined = (shown.sha256, relined.changed)
    return loaded


def _span(shown: LoadedDocument, relined: Relined | None) -> tuple[int, int, int] | None:
    """What ``relined`` changed in the engine's terms (`SourceLines.changed_span`: lines
    kept at the head and the tail, the line count before), or None when not known."""
    if relined is None:
        return None
    new = relined.lines
    if new.lines and new.lines[-1] == "" and not new.final_newline:
        return None  # lines that are not the parser's (see `SourceLines.changed_span`)
    a, old_end, _new_end = relined.changed
    n = len(shown.lines.lines)
    return a, n - old_end, n


def from_state(
    path: Path,
    source: Source | str,
    sha256: str,
    state: DocumentState,
    *,
    root: Path | None = None,
    started: float | None = None,
    previous: LoadedDocument | None = None,
) -> LoadedDocument:
    """Index an engine state for the panes. ``source`` may be the text alone (the post-state
    of an edit the app applied: nothing is read from disk then). ``previous`` (an earlier
    version of the same file) lets the block arrangement be spliced rather than rebuilt."""
    if started is None:
        started = time.perf_counter()
    if isinstance(source, str):
        source = from_text(source)
    doc = state.doc
    note_ids = {id(n) for n in doc.notes}
    validator = [d for d in state.diagnostics if id(d) not in note_ids]
    # Tens of thousands of small lists, no cycles: young GC passes over them (and over the
    # engine's tree just made) are waste, so they are promoted past them at the end.
    with gc_paused(promote=True):
        arranged = None
        region: Region | None = None
        if previous is not None and previous.path == path:
            spliced = splice(previous.arrangement(), previous.doc, doc)
            if spliced is not None:
                arranged, region = spliced
        if arranged is None:
            arranged = arrange(doc)
        same = previous is not None and previous.path == path
        if same and previous is not None and previous.names == arranged.names:
            # The same ids in the same places (a body or attribute edit): so are these.
            first, duplicates = previous.first(), previous.duplicate_ids
        else:
            first = first_blocks(arranged.names)
            duplicates = repeated(arranged.names, first)
        rows, badges = arrange_diagnostics(doc, validator, arranged, first)
    if same and previous is not None:
        name = previous.name  # resolving paths costs an lstat per component
    else:
        name = path.name
        if root is not None:
            try:
                name = path.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                name = path.name
    return LoadedDocument(
        path=path,
        name=name,
        source=source,
        doc=doc,
        # The engine's split of this version when it has one (shared: never mutated).
        lines=state.source_lines() or SourceLines(source.text),
        blocks=arranged.blocks,
        parents=arranged.parents,
        children=arranged.children,
        roots=arranged.roots,
        starts=arranged.starts,
        names=arranged.names,
        diagnostics=rows,
        badges=badges,
        duplicate_ids=duplicates,
        load_ms=(time.perf_counter() - started) * 1000,
        read_only=is_read_only(path),
        _first=first,
        _sha256=sha256,
        clean=state.clean,
        spliced=(previous.sha256, region) if region is not None and previous else None,
    )


def is_read_only(path: Path) -> bool:
    """True when an edit could not (or should not) be written: the file has no write bit
    (honoured even for root, who could write it anyway), or the user may not write the
    file or its folder (the atomic write puts a temp file beside it)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return True
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return True
    return not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
