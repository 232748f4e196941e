"""Whole-document rules on a spliced tree, without walking it (issue 14, item 3).

A splice (`core.noma.incremental`) replaces one run of sibling blocks, old lines
``r0+1..r1``, by a re-parsed run; every block after it moves by ``delta`` lines and is
otherwise the same (ids included: a splice that moves an id outside its run never gets
here). The whole-document rules (references, duplicate ids, backing evidence, formulas,
plots, profiles, adr, memories, untidy attributes) read, from any block, only what
`run_facts` collects: ids and aliases with the kind of block that carries them, each
directive's name, attributes and (for the kinds whose body a whole-document rule reads)
its body, the text sites that can hold a wikilink with their owners, and the untidy
attribute groups. No whole-document rule reads a heading's title, level or position
except through those (a title holding ``[[`` is a text site; profiles count directives,
never sections).

So when the old run and the new run have equal facts, every whole-document finding is
the base version's: those before the run as they were, those after it moved by
``delta``. The same holds when the facts differ only by headings (sections whose only
read attributes are ``id``/``aliases``) whose ids and aliases are new or gone
(`heading_changes`), provided no such name collides with anything or is read by a rule
other than the wikilink check (`name_claims`): no other block carries it as an id or
alias (`ids.NameCounts`, the id list), the run holds it at most once, before and after,
and no reference attribute or evidence ``for=`` in the document names it
(`ReferenceTargets`). Then no ``duplicate-id`` appears or goes, no claim's backing,
plot's dataset or reference attribute resolves differently, and a formula naming it reads
"not a control" either way. Wikilinks may name it: the findings of the text sites that
link to a changed name are then made again from the new version's sites (`Relink`; the
sites are spliced with each version, `splice_sites`), unless a memory profile is in force
(its rule checks where each wikilink points). The owners of the run's text sites may
differ too (a finding at a site in the old run makes the findings be computed afresh).
A heading with ``noverify`` or a reference attribute takes the full path. Directives
that no rule reads beyond their names, and changed text sites, are handled the same way
by `incremental_directives` (its `DirectiveDelta` travels with the recipe); anything else
takes the full path.

Reusing findings holds only when no finding sat inside the old run (its lines inside the
run may have moved differently), none names a line in its message (``duplicate-id``
points at the first copy's line, a computed cycle may list lines), and the rules read no
other file (``::dataset src=``: the file may have changed since). Anything else takes the
full path: walk the new tree and run the rules (`validate.document_rules`). The property
test (`tests/noma/test_incremental_properties.py`) compares every spliced validation with
a full one; `paths_taken` tells the tests which reuse was taken.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..diagnostics import Diagnostic
from ..ids import built_index, id_names_of, name_counts_of
from ..memo import Memo
from ..nodes import Directive, Document, Node, Section
from ..scan_facts import REFERENCE_KEYS, TARGET_DIRECTIVES, TARGET_KEYS

# What the whole-document rules read, derived from their declarations: the kinds whose
# body / any attribute they read, the attributes they read on every other block.
from .catalog import ALL_ATTR_FACTS, BODY_FACTS, GENERIC_ATTR_FACTS
from .references import WIKILINK, _blank_code_spans, _report_wikilinks
from .research import EVIDENCE
from .scan import Scan, kept_scan

# The attributes of a heading that only name it: a heading carrying no other attribute a
# whole-document rule reads contributes nothing but its names.
_NAMING = frozenset({"id", "aliases"})


class RunFacts(NamedTuple):
    """Everything a whole-document rule can read from the blocks of one run, without
    lines (`run_facts`): equal facts, equal findings. ``ids``: (id, aliases, directive
    name or None for a heading, a heading's read attributes) per block; ``directives``:
    (name, id, attributes, raw attributes, body, child count) per directive, attributes
    and body only as far as the rules read them; the text sites' texts and owners; the
    untidy attribute groups; how many blocks carry a reference attribute; how many
    checked directives of each kind."""

    ids: list[tuple[Any, ...]]
    directives: list[tuple[Any, ...]]
    site_texts: list[str]
    site_owners: list[str | None]
    problems: list[str]
    ref_blocks: int
    checked: dict[str, int]


def run_facts(found: Scan, id_nodes: list[Node], problems: list[tuple[int, str]]) -> RunFacts:
    """Everything a whole-document rule can read from the blocks of one run, without
    lines (see the module docstring): equal facts, equal findings."""
    ids = [
        (
            n.id,
            tuple(n.aliases),
            n.name if isinstance(n, Directive) else None,
            _read_attrs(n.attrs) if isinstance(n, Section) else None,
        )
        for n in id_nodes
    ]
    directives = [
        (
            d.name,
            d.id,
            d.attrs if d.name in ALL_ATTR_FACTS else _read_attrs(d.attrs),
            d.raw_attrs if d.name in ALL_ATTR_FACTS else _read_attrs(d.raw_attrs),
            d.body if d.name in BODY_FACTS else None,
            len(d.children) if d.name in BODY_FACTS else None,
        )
        for d in found.directives
    ]
    return RunFacts(
        ids,
        directives,
        found.site_texts,
        found.site_owners,
        [group for _line, group in problems],
        len(found.ref_blocks),
        {name: len(bucket) for name, bucket in found.checked_by_name.items()},
    )


def _read_attrs(attrs: dict[str, Any]) -> list[tuple[str, Any]]:
    """The attributes of a block that whole-document rules read (`GENERIC_ATTR_FACTS`)."""
    if not attrs:
        return []
    return [(k, v) for k, v in attrs.items() if k in GENERIC_ATTR_FACTS]


@dataclass(slots=True, frozen=True)
class Relink:
    """Heading names a splice gained or lost that only wikilinks name (`name_claims`):
    the base findings stand but for ``broken-reference`` on the sites that link to them,
    which are made again from the new version's text sites (``sites``: texts, first
    lines, owners, as `Scan` keeps them)."""

    gained: frozenset[str]
    lost: frozenset[str]
    sites: tuple[list[str], list[int], list[str | None]]

    def apply(self, out: list[Diagnostic]) -> None:
        """Replace, in ``out``, the wikilink findings of every site that links to a
        changed name by what `check_broken_references` reports there now."""
        changed = self.gained | self.lost
        broken = {
            m.group(1)
            for d in out
            if d.code == "broken-reference" and (m := _BROKEN_LINK.match(d.message))
        }
        texts, lines, owners = self.sites
        hits: set[int] = set()
        for name in changed:
            hits.update(k for k, text in enumerate(texts) if name in text)
        for k in sorted(hits):
            text = texts[k]
            plain = _blank_code_spans(text) if "`" in text else text
            targets = {m.group(1).strip() for m in WIKILINK.finditer(plain)}
            if changed.isdisjoint(targets):
                continue
            first, last = lines[k], lines[k] + plain.count("\n")
            out[:] = [
                d
                for d in out
                if not (
                    d.code == "broken-reference"
                    and d.line is not None
                    and first <= d.line <= last
                    and d.message.startswith("Wikilink [[")
                )
            ]
            missing = {
                t for t in targets if t in self.lost or (t not in self.gained and t in broken)
            }
            if missing:
                _report_wikilinks(plain, first, owners[k], missing, out)


# What `references._report_wikilinks` says about one broken link (targets hold no brackets).
_BROKEN_LINK = re.compile(r"Wikilink \[\[([^\[\]]*)\]\] points at ")


# Text sites: (texts, first lines, owners), as `Scan` keeps them.
Sites = tuple[list[str], list[int], list[str | None]]
# What a splice passes on to the version it made, for the next splice's reuse checks.
_REF_TARGETS: Memo[ReferenceTargets] = Memo("validator reference targets")
_SITES: Memo[Sites] = Memo("validator text sites")


def pass_on(doc: Document, targets: ReferenceTargets | None, sites: Sites | None) -> None:
    """Keep on a spliced ``doc`` the reference targets and text sites its splice knew
    (`kept_findings.leave_recipes`), so the next splice need not walk it."""
    if targets is not None:
        _REF_TARGETS.put(doc, targets)
    if sites is not None:
        _SITES.put(doc, sites)


def sites_of(doc: Document) -> Sites | None:
    """The text sites of ``doc`` (texts, first lines, owners): from its scan when it was
    walked, else as the splice that made it passed them on; None when unknown."""
    scan = kept_scan(doc)
    if scan is not None:
        return scan.site_texts, scan.site_lines, scan.site_owners
    return _SITES.get(doc)


def splice_sites(old: Sites, run: Scan, r0: int, r1: int, delta: int) -> Sites:
    """The text sites of a spliced version: the old ones before the run, the run's, the
    old ones after it moved by ``delta`` (sites outside the run keep texts and owners:
    no id outside the run changed)."""
    texts, lines, owners = old
    i0 = bisect_right(lines, r0)
    i1 = bisect_right(lines, r1)
    after = lines[i1:] if not delta else [line + delta for line in lines[i1:]]
    return (
        [*texts[:i0], *run.site_texts, *texts[i1:]],
        [*lines[:i0], *run.site_lines, *after],
        [*owners[:i0], *run.site_owners, *owners[i1:]],
    )


def heading_changes(old: RunFacts, new: RunFacts) -> set[str] | None:
    """The ids and aliases the run's headings gained or lost, when that is all that differs
    between the old run's facts and the new run's (`run_facts`); None otherwise.

    Headings that only carry names (no ``noverify``, no reference attribute) and whose
    every name changed count are set aside on both sides; what is left must be equal, in
    order, and every other fact too but the owners of the text sites: a site's owner is
    only read into the findings made at that site, and a base finding inside the run
    makes the findings be computed afresh anyway (`splice_document_findings`); with the
    same site texts and no changed name named anywhere, the run's sites give findings
    after the edit exactly when they gave some before.
    """
    if (
        old.directives != new.directives
        or old.site_texts != new.site_texts
        or old.problems != new.problems
        or old.ref_blocks != new.ref_blocks
        or old.checked != new.checked
    ):
        return None  # every fact but the ids and the sites' owners must be equal
    old_names = _names(old.ids)
    new_names = _names(new.ids)
    changed = {x for x in old_names.keys() | new_names.keys() if old_names[x] != new_names[x]}
    if not changed:
        return None
    kept_old = [e for e in old.ids if not _only_names(e, changed)]
    kept_new = [e for e in new.ids if not _only_names(e, changed)]
    return changed if kept_old == kept_new else None


def _names(entries: list[tuple[Any, ...]]) -> Counter[str]:
    out: Counter[str] = Counter()
    for ident, aliases, _name, _attrs in entries:
        if ident is not None:
            out[ident] += 1
        out.update(aliases)
    return out


def _only_names(entry: tuple[Any, ...], changed: set[str]) -> bool:
    """Is ``entry`` (of `run_facts`' id list) a heading that contributes only names, all
    of them in ``changed``? (Aliases of a heading without an id resolve nowhere, so they
    are not names a wikilink could gain: such a heading is never set aside.)"""
    ident, aliases, name, attrs = entry
    return (
        name is None
        and all(key in _NAMING for key, _value in attrs)
        and (ident in changed if ident is not None else not aliases)
        and all(a in changed for a in aliases)
    )


def name_claims(
    changed: set[str], old: Document, old_ids: list[Node], new_ids: list[Node]
) -> tuple[bool, frozenset[str], frozenset[str]] | None:
    """Can the base findings be kept though the run's headings gained or lost the names in
    ``changed`` (`heading_changes`)? None when not; else (whether a wikilink names one of
    them, the names gained, the names lost).

    Kept when no block outside the run carries a changed name (as id or alias), the run
    holds each at most once before and after, and no reference attribute or evidence
    ``for=`` names one. A wikilink may name one: then its site's findings are made again
    (`Relink`)."""
    targets = reference_targets_of(old)
    counts = name_counts_of(old)
    if targets is None or counts is None:
        return None
    in_old = _names_of(old_ids)
    in_new = _names_of(new_ids)
    idx = built_index(old)  # how many blocks carry each id: the index when built, else the
    id_names = id_names_of(old) if idx is None else []  # id list (never a walk)
    for x in changed:
        if in_old[x] > 1 or in_new[x] > 1:
            return None
        carried = idx.count.get(x, 0) if idx is not None else id_names.count(x)
        if carried + counts.aliases[x] - in_old[x] > 0:
            return None  # another block carries it
    attrs, links = targets.names()
    if not changed.isdisjoint(attrs):
        return None
    gained = frozenset(x for x in changed if in_new[x] > in_old[x])
    return (not changed.isdisjoint(links), gained, frozenset(changed - gained))


def _names_of(nodes: list[Node]) -> Counter[str]:
    out: Counter[str] = Counter()
    for n in nodes:
        if n.id is not None:
            out[n.id] += 1
        out.update(n.aliases)
    return out


class ReferenceTargets:
    """Every name a whole-document rule looks up by reference in one document: reference
    attributes of checked directives, ``for=`` of every evidence (noverify evidence still
    backs its claim), wikilink targets in text sites (`check_broken_references` reads
    them the same way). Computed when first asked from the scan of the version it was
    made for, and passed on unchanged to each spliced version whose run's references are
    the same (equal `run_facts` but for heading names)."""

    __slots__ = ("_names", "_scan")

    def __init__(self, scan: Scan) -> None:
        self._scan: Scan | None = scan
        self._names: tuple[frozenset[str], frozenset[str]] | None = None

    def names(self) -> tuple[frozenset[str], frozenset[str]]:
        """(names read by reference attributes and evidence ``for=``, wikilink targets)."""
        names = self._names
        if names is None:
            scan = self._scan
            if scan is None:  # another thread made them between the two reads
                names = self._names
                assert names is not None
                return names
            names = self._names = _reference_targets(scan)
            self._scan = None  # the names are all that is needed from now on
        return names


def _reference_targets(scan: Scan) -> tuple[frozenset[str], frozenset[str]]:
    attrs, links = scan.attr_targets, scan.link_targets
    if attrs is None or links is None:  # the rule did not run on this scan: read them here
        attrs = set()
        for d in scan.ref_blocks:
            keys = TARGET_KEYS if d.name in TARGET_DIRECTIVES else REFERENCE_KEYS
            attrs.update(raw.strip() for key, raw in d.raw_attrs.items() if key in keys)
        texts = [_blank_code_spans(t) if "`" in t else t for t in scan.site_texts]
        links = set(WIKILINK.findall("\n".join(texts)))
    named = set(attrs)
    for kind in EVIDENCE:  # evidence under noverify is not a ref block, yet backs its claim
        every = scan.by_name.get(kind, ())
        if len(every) != len(scan.checked_by_name.get(kind, ())):
            named.update(d.raw_attrs["for"].strip() for d in every if d.raw_attrs.get("for"))
    return frozenset(named), frozenset(map(str.strip, links))


def reference_targets_of(doc: Document) -> ReferenceTargets | None:
    """The document's `ReferenceTargets`: passed on by the splice that made it, or from
    its own scan when it was walked; None when only a walk could say."""
    targets = _REF_TARGETS.get(doc)
    if targets is not None:
        return targets
    scan = kept_scan(doc)
    if scan is not None:
        return _REF_TARGETS.put(doc, ReferenceTargets(scan))
    return None
