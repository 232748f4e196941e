"""The one reading of the document that every rule reads from.

A 5,000-section document has ~75k nodes, so rules must not each walk the tree.
`scan_document` leaves behind what the rules need: directives bucketed by name (and in
document order), and the inline text that holds ``[[`` together with the line it starts on
and the id of the block it belongs to. Text that cannot hold a wikilink is never copied or
matched. For a tree a whole parse made, the parser noted all of it as it read the blocks
(`core.noma.scan_facts`); any other tree (a splice's re-parsed run) is walked, once.

``noverify`` scope (interop: "noverify suppresses every check on that block"): a flagged
directive or heading is quiet, and so is its own inline content (paragraphs, list items,
quotes, tables and body headings directly inside it). A nested directive or a subsection
is a block of its own and is checked unless it carries ``noverify`` itself. Quiet blocks
stay visible to everyone else's reference resolution: they are still in the id index.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Final

from ..ids import IdIndex, index
from ..memo import Memo
from ..nodes import (
    Code,
    Directive,
    Document,
    ListNode,
    Node,
    Paragraph,
    Quote,
    Section,
    Table,
)
from ..scan_facts import (
    RAW_BODY_DIRECTIVES,
    REFERENCE_KEYS,
    TARGET_DIRECTIVES,
    TARGET_KEYS,
    is_noverify,
    take_facts,
)


def body_text(node: Directive) -> str:
    """The content of a data body (JSON, YAML, CSV). Authors often wrap it in one fenced
    code block for syntax highlighting; then the content is inside the fence."""
    kids = node.children
    if len(kids) == 1 and isinstance(kids[0], Code):
        return kids[0].content
    return node.body


def has_value(node: Directive, key: str) -> bool:
    """Is ``key`` written with a non-blank value? A bare flag or ``key=""`` is not."""
    raw = node.raw_attrs.get(key)
    if not raw:
        return False
    return not raw.isspace()  # (`str.strip` trims exactly what `str.isspace` tests)


@dataclass(slots=True)
class Scan:
    """What one walk learnt about a document; every rule module reads only this.

    It is kept on its document (`scan_document`), so it refers to it weakly (`of` makes
    one): a strong reference would make every validated tree a reference cycle, freed only
    by the cyclic collector instead of when its last user drops it. Rules read it while
    their caller holds the document."""

    doc_ref: weakref.ReferenceType[Document]
    index: IdIndex
    directives: list[Directive] = field(default_factory=list)
    by_name: dict[str, list[Directive]] = field(default_factory=dict)
    checked_by_name: dict[str, list[Directive]] = field(default_factory=dict)  # no noverify
    # Checked directives that carry a reference attribute (for=, parent=, ...), in order.
    ref_blocks: list[Directive] = field(default_factory=list)
    # Inline text holding "[[": its text, first line and owning block id, as three parallel
    # lists of untracked values (`scan_document` says why not one object per site).
    site_texts: list[str] = field(default_factory=list)
    site_lines: list[int] = field(default_factory=list)
    site_owners: list[str | None] = field(default_factory=list)
    # What `check_broken_references` looked up, kept for the incremental engine
    # (`incremental_rules.ReferenceTargets`): the stripped reference attribute values and
    # the raw wikilink targets. None until that rule ran on this scan.
    attr_targets: set[str] | None = None
    link_targets: set[str] | None = None

    @classmethod
    def of(cls, doc: Document, index: IdIndex) -> Scan:
        """An empty scan of ``doc`` (the walk fills it)."""
        return cls(weakref.ref(doc), index)

    @property
    def doc(self) -> Document:
        doc = self.doc_ref()
        if doc is None:  # a scan read after its document was dropped: a caller's bug
            raise ReferenceError("the scanned document is no longer alive")
        return doc

    def named(self, *names: str) -> list[Directive]:
        """Directives with any of ``names``, in document order."""
        return _merge(self.by_name, names)

    def checked(self, *names: str) -> list[Directive]:
        """Like `named`, without the blocks that carry ``noverify``."""
        return _merge(self.checked_by_name, names)


def _merge(buckets: dict[str, list[Directive]], names: tuple[str, ...]) -> list[Directive]:
    """One name: its bucket as is. Several: their buckets merged back into document order."""
    if len(names) == 1:
        return buckets.get(names[0], [])
    found = [bucket for bucket in map(buckets.get, names) if bucket]
    if len(found) < 2:  # one name present (evidence without counterevidence): no sort
        return found[0] if found else []
    out: list[Directive] = []
    for bucket in found:
        out.extend(bucket)
    out.sort(key=_LINE)
    return out


# The sort key, read in C: a Python key function was called once per merged block.
_LINE: Final = attrgetter("line")


_SCAN: Memo[Scan] = Memo("validator scan")


def scan_document(doc: Document) -> Scan:
    """The document's scan, made once per tree and kept on it (trees are immutable, so it
    stays true; `core.noma.incremental` splices it into the next version). From the facts
    the parser left on it when there are any, else by the walk."""
    cached = _SCAN.get(doc)
    if cached is not None:
        return cached
    idx = index(doc)
    facts = take_facts(doc)
    owners = facts.owner_ids() if facts is not None else None
    if facts is None or owners is None:
        result = Scan.of(doc, idx)
        scan_nodes(result, doc.children, None, False, False)
    else:  # the parser noted all of it as it read the blocks (`core.noma.scan_facts`)
        result = Scan(
            weakref.ref(doc),
            idx,
            directives=facts.directives,
            by_name=facts.by_name,
            checked_by_name=facts.checked_by_name,
            ref_blocks=facts.ref_blocks,
            site_texts=facts.site_texts,
            site_lines=facts.site_lines,
            site_owners=owners,
        )
    return _SCAN.put(doc, result)


def kept_scan(doc: Document) -> Scan | None:
    """The scan kept on ``doc`` when it was walked; None when it was not (never walks)."""
    return _SCAN.get(doc)


def scan_nodes(result: Scan, kids: list[Node], owner: str | None, quiet: bool, raw: bool) -> None:
    """Walk ``kids`` (and everything below them) once, pre-order, into ``result``.

    ``owner``, ``quiet`` and ``raw`` are the context of their container: the id of the
    block that owns them, whether they are a ``noverify`` block's inline content, whether
    they sit in a raw-body directive.

    Iterative (deep directive nesting must not hit the recursion limit) and frugal: a leaf
    costs one step of a loop over its container's children, and only a container with
    children saves the state of the one it interrupts. Nothing is allocated per node:
    right after a parse the cyclic garbage collector is close to a full pass over every
    node, and tens of thousands of new objects would trigger it here. So the saved state
    lives in parallel stacks, and the text sites are parallel lists of strings, ints and
    ``None``.
    """
    directives = result.directives
    ref_blocks = result.ref_blocks
    by_name = result.by_name
    checked_by_name = result.checked_by_name
    texts = result.site_texts
    lines = result.site_lines
    owners = result.site_owners
    # The children being walked, the next position in them, the id of the block that owns
    # them, whether they are a quiet (``noverify``) block's inline content, and whether
    # they sit in a raw-body directive; plus the same, saved, for every interrupted level.
    pos = 0
    saved_kids: list[list[Node]] = []
    saved_pos: list[int] = []
    saved_owner: list[str | None] = []
    saved_quiet: list[bool] = []
    saved_raw: list[bool] = []
    while True:
        if pos >= len(kids):
            if not saved_kids:
                break
            kids = saved_kids.pop()
            pos = saved_pos.pop()
            owner = saved_owner.pop()
            quiet = saved_quiet.pop()
            raw = saved_raw.pop()
            continue
        # Any: each branch below reads the fields of the kind it tested (an assert per
        # block to narrow the type would cost a call each, 17,500 per 5,000 sections).
        node: Any = kids[pos]
        pos += 1
        kind = type(node)
        if kind is Paragraph:
            text = node.content
            if not quiet and not raw and "[[" in text:
                texts.append(text)
                lines.append(node.line)
                owners.append(owner)
        elif kind is Directive:
            directives.append(node)
            name = node.name
            bucket = by_name.get(name)
            if bucket is None:
                by_name[name] = bucket = []
                checked_by_name[name] = []
            bucket.append(node)
            attrs = node.attrs
            nv = "noverify" in attrs and is_noverify(attrs)
            if not nv:
                checked_by_name[name].append(node)
                keys = TARGET_KEYS if name in TARGET_DIRECTIVES else REFERENCE_KEYS
                if not keys.isdisjoint(node.raw_attrs):
                    ref_blocks.append(node)
            body = node.children
            if len(body) == 1 and type(body[0]) is Paragraph:
                # The common body, one paragraph: read it here in the directive's context
                # (as the Paragraph branch would one level down), no state saved.
                text = body[0].content
                if not nv and not raw and name not in RAW_BODY_DIRECTIVES and "[[" in text:
                    texts.append(text)
                    lines.append(body[0].line)
                    owners.append(node.id if node.id is not None else owner)
            elif body:
                saved_kids.append(kids)
                saved_pos.append(pos)
                saved_owner.append(owner)
                saved_quiet.append(quiet)
                saved_raw.append(raw)
                kids = body
                pos = 0
                if node.id is not None:
                    owner = node.id
                quiet = nv
                raw = raw or name in RAW_BODY_DIRECTIVES
        elif kind is Section:
            nv = is_noverify(node.attrs) if node.attrs else False
            own = node.id if node.id is not None else owner
            title = node.title
            if node.in_directive:
                # A heading in a directive body is inline content of that directive.
                nv = nv or quiet or raw
            if not nv and "[[" in title:
                texts.append(title)
                lines.append(node.line)
                owners.append(own)
            if node.children:
                saved_kids.append(kids)
                saved_pos.append(pos)
                saved_owner.append(owner)
                saved_quiet.append(quiet)
                saved_raw.append(raw)
                kids = node.children
                pos = 0
                owner = own
                quiet = nv
                raw = False
        elif quiet or raw:
            continue
        elif kind is ListNode:
            for item in node.items:
                text = item.content
                if "[[" in text:
                    texts.append(text)
                    lines.append(item.line)
                    owners.append(owner)
        elif kind is Table:
            # Rows are re-joined with "|": a `[[x|label]]` cell is split by the row
            # splitter, and joining restores it (a link never spans two cells).
            if any("[[" in cell for cell in node.header):
                texts.append("|".join(node.header))
                lines.append(node.line)
                owners.append(owner)
            row_line = node.line + 2  # past the header and the separator row
            for row in node.rows:
                if any("[[" in cell for cell in row):
                    texts.append("|".join(row))
                    lines.append(row_line)
                    owners.append(owner)
                row_line += 1
        elif kind is Quote:
            text = node.content
            if "[[" in text:
                texts.append(text)
                lines.append(node.line)
                owners.append(owner)
        # Code, ThematicBreak, Frontmatter: nothing to read.
