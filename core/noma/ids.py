"""Canonical ids and aliases (spec §2.1, §2.2, §6.5; noma-interop §5, §6, §8).

A directive's id and aliases are its own attributes, so the parser sets them as it reads
the directive (and each heading's slug). Section ids need the whole outline and are
assigned after parsing, in one pass over the sections: heading slugs share a single suffix
pool across all levels (directive bodies included), explicit ids are never suffixed, and
aliases come from ``aliases=`` attributes, frontmatter ``aliases:`` and, in book mode, the
chapter filename. The resulting `IdIndex` is what every lookup (validator, patch engine, UI) uses.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .attrs import split_aliases
from .memo import Memo
from .nodes import Directive, Document, Node, Section, gc_paused

# The id index and the name counts of a document, kept on it (`core.noma.memo`): only
# this module reads or writes them; the splice hands its spliced ones to `keep_index`
# and `keep_name_counts`.
_INDEX: Memo[IdIndex] = Memo("id index")
_NAME_COUNTS: Memo[NameCounts] = Memo("id name counts")


def assign_ids(
    doc: Document,
    sections: list[Section],
    blocks: list[Node],
    block_ids: list[str | None],
    section_slots: list[int],
    directive_aliases: list[str],
    aliased: list[Node],
    *,
    chapter: str | None = None,
) -> None:
    """Give ids and aliases to the parser's sections (in doc order, slugs made); ``blocks``
    is them and the directives in line order, as the parser made them. Directives took
    theirs from their own attributes as they were read: ``block_ids`` holds their ids
    (None at each section, whose place in it ``section_slots`` gives; filled in here, it
    becomes the document's id list), ``directive_aliases`` the aliases they gave, in
    order, and ``aliased`` the directives that gave any."""
    alias_counts = Counter(directive_aliases)
    natural = natural_slugs(sections)
    aliased_sections: list[Node] = []
    planned = plan_section_ids(doc.meta, sections, chapter, set(natural))
    for section, slot, (ident, aliases) in zip(sections, section_slots, planned, strict=True):
        section.id = ident
        block_ids[slot] = ident
        if aliases is not None:
            section.aliases = aliases
            alias_counts.update(aliases)
            if aliases:
                aliased_sections.append(section)
    if aliased_sections:
        aliased = sorted(aliased + aliased_sections, key=_start_line)
    # What the index reads for aliases, rather than every block's (175k at 50k sections).
    doc._aliased = aliased
    # Kept for the incremental engine: can a heading change move another id?
    _NAME_COUNTS.put(doc, NameCounts(Counter(natural), alias_counts))
    # Only sections and directives carry ids; in line order they are the pre-order walk
    # order (no two start on the same line), so the index never needs a full tree walk.
    doc._id_nodes = blocks
    doc._id_names = block_ids  # (what the index reads: no pass over the blocks for it)


def natural_slugs(sections: list[Section]) -> list[str]:
    """The slugs that take part in suffixing, in order: every section without an explicit
    ``id=`` whose title has a slug."""
    return [s.slug for s in sections if s.slug and not (s.attrs and "id" in s.attrs)]


def plan_section_ids(
    meta: dict[str, Any],
    sections: list[Section],
    chapter: str | None,
    natural: set[str] | None = None,
) -> list[tuple[str | None, list[str] | None]]:
    """Each section's (id, aliases) from its slug and attributes, touching no node.

    Aliases are None where the section keeps the parser's default (none). Pure, so the
    incremental parser (`core.noma.incremental`) can ask what ids a spliced section list
    gets and compare them with the ids shared nodes already carry. ``natural`` is
    ``set(natural_slugs(sections))`` when the caller has it.
    """
    if natural is None:
        natural = set(natural_slugs(sections))
    ids: list[str | None] = []
    aliases: list[list[str] | None] = []
    used: set[str] = set()
    next_suffix: dict[str, int] = {}  # per slug: no suffix below this is free (used only grows)
    for section in sections:
        ident: str | None = None
        attrs = section.attrs
        if attrs and "id" in attrs:  # `Section.explicit_id`, inlined (one call per section)
            value = attrs["id"]
            ident = str(value) if value not in ("", True) else None
        elif section.slug:
            slug = section.slug
            if slug in used:
                k = next_suffix.get(slug, 2)
                while f"{slug}-{k}" in used or f"{slug}-{k}" in natural:
                    k += 1
                next_suffix[slug] = k + 1
                slug = f"{slug}-{k}"
            used.add(slug)
            ident = slug
        ids.append(ident)
        aliases.append(split_aliases(attrs["aliases"]) if attrs and "aliases" in attrs else None)

    root = next((k for k, s in enumerate(sections) if s.level == 1), None)
    if root is not None:
        fm_aliases = meta.get("aliases")
        if isinstance(fm_aliases, list):
            extra = [str(a) for a in fm_aliases if a is not None and str(a)]
        else:
            extra = split_aliases(fm_aliases) if isinstance(fm_aliases, str) else []
        own = aliases[root] or []
        aliases[root] = [*own, *(a for a in extra if a not in own)]

    if chapter:
        for k, section in enumerate(sections):
            original = ids[k]
            if section.level >= 2 and original is not None:
                ids[k] = f"{chapter}/{original}"
                own = aliases[k] or []
                if original not in own:
                    aliases[k] = [*own, original]
        if root is not None and chapter not in (aliases[root] or []):
            aliases[root] = [*(aliases[root] or []), chapter]
    return list(zip(ids, aliases, strict=True))


def suffix_base(slug: str) -> str | None:
    """``slug`` without a trailing ``-<digits>`` (the shape a repeat suffix has), or None
    when it has none: ``"step-2"`` -> ``"step"``."""
    if not slug or not slug[-1].isdigit():
        return None
    head, sep, tail = slug.rpartition("-")
    return head if sep and head and tail.isdigit() else None


@dataclass(slots=True)
class NameCounts:
    """How many sections of a document (those that take part in suffixing, see
    `natural_slugs`) carry each slug, how many carry a slug of the shape ``<base>-<digits>``
    per base, and how many blocks carry each alias.

    What the incremental engine reads to prove, without a walk, that a heading added,
    removed or retitled moves no other section's id (`core.noma.incremental`: a slug's id
    can only be moved by a slug equal to it, its suffixed shape or its base) and that a
    new or vanished id collides with no alias (`validate.incremental_rules`). Kept on the
    document, made with the parse and spliced with each version whose ids outside the
    re-parsed run are unchanged; never mutated once made (versions share it).
    """

    slugs: Counter[str]
    aliases: Counter[str]
    _bases: Counter[str] | None = None

    @property
    def bases(self) -> Counter[str]:
        """Base -> how many slugs have that base (made when first asked)."""
        bases = self._bases
        if bases is None:
            bases = Counter()
            for slug, count in self.slugs.items():
                if slug[-1:].isdigit():  # `suffix_base` inlined past its first test
                    base = suffix_base(slug)
                    if base is not None:
                        bases[base] += count
            self._bases = bases
        return bases

    def spliced(self, old_run: list[Node], new_run: list[Node]) -> NameCounts:
        """The counts once the blocks of ``old_run`` are replaced by those of ``new_run``
        (sections and directives, ids assigned)."""
        removed = natural_slugs([n for n in old_run if type(n) is Section])
        added = natural_slugs([n for n in new_run if type(n) is Section])
        gone = [a for n in old_run for a in n.aliases]
        new = [a for n in new_run for a in n.aliases]
        same_slugs = sorted(removed) == sorted(added)
        same_aliases = sorted(gone) == sorted(new)
        if same_slugs and same_aliases:
            return self
        slugs, bases, aliases = self.slugs, self._bases, self.aliases
        if not same_slugs:
            slugs = slugs.copy()
            bases = bases.copy() if bases is not None else None
            for sign, batch in ((-1, removed), (1, added)):
                for slug in batch:
                    _bump(slugs, slug, sign)
                    base = suffix_base(slug)
                    if bases is not None and base is not None:
                        _bump(bases, base, sign)
        if not same_aliases:
            aliases = aliases.copy()
            for alias in gone:
                _bump(aliases, alias, -1)
            for alias in new:
                _bump(aliases, alias, 1)
        return NameCounts(slugs, aliases, bases)


def _bump(counts: Counter[str], key: str, by: int) -> None:
    """Add ``by`` to one count, dropping it at zero (a copy per splice stays small)."""
    value = counts[key] + by
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)


def name_counts_of(doc: Document) -> NameCounts | None:
    """The document's `NameCounts`: kept from the parse or the splice that made it, else
    made from its block list when that exists; None when only a walk could say."""
    counts = _NAME_COUNTS.get(doc)
    if counts is not None:
        return counts
    nodes = doc._id_nodes
    if nodes is None:
        return None
    sections: list[Section] = [n for n in nodes if type(n) is Section]
    counts = NameCounts(
        Counter(natural_slugs(sections)), Counter(a for n in nodes for a in n.aliases)
    )
    return _NAME_COUNTS.put(doc, counts)


class IdIndex:
    """Every canonical id and alias of a document, in document-walk order.

    ``first`` (id -> its first block) and ``alias_owner`` (alias -> the id of its first
    owner) are what lookups read. ``entries`` ((id, block) per id-bearing block, in order)
    and ``count`` (id -> how many blocks carry it) are made when first read on an index
    `index` built: a validation of a document without repeated ids reads neither, and at
    50,000 sections the two were 175k tuples and a 175k-key dict (~50 ms of ``noma check``).
    An index is never mutated once made, except by the splice that is making it.
    """

    __slots__ = ("_count", "_entries", "_nodes", "alias_owner", "first")

    def __init__(
        self,
        entries: list[tuple[str, Node]] | None = None,
        first: dict[str, Node] | None = None,
        count: dict[str, int] | None = None,
        alias_owner: dict[str, str] | None = None,
        *,
        nodes: list[Node] | None = None,
    ) -> None:
        """``nodes`` (the document's blocks, `id_nodes_of`) stands in for ``entries``, and a
        missing ``count`` then means every id of ``first`` occurs once."""
        self.first: dict[str, Node] = {} if first is None else first
        self.alias_owner: dict[str, str] = {} if alias_owner is None else alias_owner
        self._nodes = nodes
        self._entries = entries if entries is not None or nodes is not None else []
        self._count = count if count is not None or nodes is not None else {}

    @property
    def entries(self) -> list[tuple[str, Node]]:
        entries = self._entries
        if entries is None:
            assert self._nodes is not None
            entries = [(n.id, n) for n in self._nodes if n.id is not None]
            self._entries = entries
        return entries

    @entries.setter
    def entries(self, value: list[tuple[str, Node]]) -> None:
        self._entries = value

    @property
    def count(self) -> dict[str, int]:
        count = self._count
        if count is None:
            count = self._count = dict.fromkeys(self.first, 1)
        return count

    @count.setter
    def count(self, value: dict[str, int]) -> None:
        self._count = value

    @property
    def unique(self) -> bool:
        """Does every id name one block?"""
        if self._count is None:
            return True
        return len(self.first) == len(self.entries)

    @property
    def canonical(self) -> list[str]:
        return [i for i, _ in self.entries]

    def known(self, ref: str) -> bool:
        """Does ``ref`` resolve, as a canonical id or an alias?"""
        return ref in self.first or ref in self.alias_owner

    def resolve(self, ref: str) -> str | None:
        """An id or alias to its canonical id."""
        if ref in self.first:
            return ref
        return self.alias_owner.get(ref)

    def alias_map(self) -> dict[str, list[str]]:
        """Canonical id -> its aliases (the ``expected.ids.json`` shape)."""
        out: dict[str, list[str]] = {}
        for ident, node in self.entries:
            if node.aliases:
                out.setdefault(ident, []).extend(
                    a for a in node.aliases if a not in out.get(ident, [])
                )
        return out


def id_nodes_of(doc: Document) -> list[Node]:
    """The document's sections and directives in line order (= pre-order), as the id pass
    recorded them; a spliced version whose moved blocks are copied lazily makes the list
    from its tree the first time it is asked for."""
    nodes = doc._id_nodes
    if nodes is None:
        with gc_paused(promote=True):  # see `Document.walk`
            nodes = blocks_in(doc.children)
        doc._id_nodes = nodes
    return nodes


def blocks_in(nodes: list[Node]) -> list[Node]:
    """The sections and directives in and below ``nodes``, in line order (pre-order). Only
    blocks hold blocks, so leaves are never entered."""
    out: list[Node] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is Section or kind is Directive:
            out.append(node)
            kids = node.children  # type: ignore[attr-defined]
            if kids:
                stack.extend(reversed(kids))
    return out


def id_lines_of(doc: Document) -> list[int]:
    """The lines of `id_nodes_of`: a splice finds its run's blocks by line without making
    the blocks of a version it copied lazily (the list moves with each splice)."""
    lines = doc._id_lines
    if lines is None:
        lines = [n.line for n in id_nodes_of(doc)]
        doc._id_lines = lines
    return lines


def id_names_of(doc: Document) -> list[str | None]:
    """The ids of `id_nodes_of`, in the same order (moves with each splice, like the lines)."""
    names = doc._id_names
    if names is None:
        names = [n.id for n in id_nodes_of(doc)]
        doc._id_names = names
    return names


def find_block(doc: Document, ident: str) -> tuple[Node | None, int]:
    """The first block whose canonical id is ``ident``, and how many blocks carry it.

    What an op needs to find its target. On a version whose moved blocks were copied
    lazily (`nodes.shifted`) and whose index was not built, the id and line lists say
    where the block is, and only the containers on the way down to it are made: the next
    op after a line-moving edit costs the size of its block, not of the document.
    """
    idx = _INDEX.get(doc)
    if idx is None and doc._id_nodes is None and doc._id_names is not None:
        names = doc._id_names
        count = names.count(ident)
        if not count:
            return None, 0
        return _locate(doc, id_lines_of(doc)[names.index(ident)]), count
    idx = index(doc)
    return idx.first.get(ident), idx.count.get(ident, 0)


def _start_line(node: Node) -> int:
    return node.line


def _locate(doc: Document, line: int) -> Node:
    """The section or directive that starts on ``line``, found from the root down."""
    container: Node = doc
    while True:
        kids: list[Node] = container.children  # type: ignore[attr-defined]
        k = bisect_right(kids, line, key=_start_line) - 1
        node = kids[k]
        if node.line == line and (type(node) is Section or type(node) is Directive):
            return node
        if k < 0 or not (type(node) is Section or type(node) is Directive):
            raise LookupError(f"no block starts on line {line}")  # a broken invariant
        container = node


def index(doc: Document) -> IdIndex:
    """The document's id index, built once and cached on the document."""
    cached = _INDEX.get(doc)
    if cached is not None:
        return cached
    nodes = id_nodes_of(doc)
    with gc_paused(promote=True):  # no cycles, and GC passes would cost ~3x
        names = id_names_of(doc)
        # The common case, no id repeats: the map in one C-level call (a Python loop over
        # 17k ids was ~10 ms of every cold validation at 5,000 sections). With no repeat,
        # the last block of an id is its first; blocks without an id all land on None.
        first: dict[Any, Node] = dict(zip(names, nodes, strict=True))
        first.pop(None, None)
        if len(first) == len(names) - names.count(None):
            idx = IdIndex(first=first, nodes=nodes)
        else:
            pairs = zip(names, nodes, strict=True)
            entries = [(ident, node) for ident, node in pairs if ident is not None]
            first = {}
            count: dict[str, int] = {}
            for ident, node in entries:
                if ident not in first:
                    first[ident] = node
                    count[ident] = 1
                else:
                    count[ident] += 1
            idx = IdIndex(entries, first, count)
        aliased = doc._aliased
        if aliased is None:
            aliased = [n for n in nodes if n.aliases]
        owner = idx.alias_owner
        for node in aliased:
            canonical = node.id
            if canonical is not None:
                for alias in node.aliases:
                    owner.setdefault(alias, canonical)
    return _INDEX.put(doc, idx)


def built_index(doc: Document) -> IdIndex | None:
    """The id index of ``doc`` when it was built (or spliced); None rather than build it."""
    return _INDEX.get(doc)


def keep_index(doc: Document, idx: IdIndex | None) -> None:
    """Keep on a spliced ``doc`` the index its splice made (None: built when asked)."""
    if idx is not None:
        _INDEX.put(doc, idx)


def keep_name_counts(doc: Document, counts: NameCounts) -> None:
    """Keep on a spliced ``doc`` the name counts its splice made."""
    _NAME_COUNTS.put(doc, counts)
