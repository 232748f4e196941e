"""Directives added, removed or renamed by a splice that no whole-document rule reads.

`incremental_rules` keeps the base version's whole-document findings when the facts of
the old and the new run (`run_facts`) are equal, or differ only by heading names. This
module extends that to directives, rule by rule:

- ``duplicate-id`` and ``broken-reference`` read a block's names (id, aliases) and its
  reference attributes (``for=``, ``parent=``, ``dataset=``; ``target=``/``block=``/
  ``ref=`` on the review directives). A directive that carries only names (no reference
  attribute, no ``noverify``), none of them carried by another block or named by a
  reference attribute or an evidence ``for=`` (`incremental_rules.name_claims`), changes
  neither. Wikilinks may name it: their sites are checked again (`Relink`).
- ``claim-without-evidence`` reads every ``::claim`` and every ``::evidence``/
  ``::counterevidence`` (``for=`` backs a claim; the reference targets read evidence
  too: noverify evidence still backs). Evidence is never inert. A ``::claim`` carrying
  only names is inert but for its own finding: its names are unclaimed, so no ``for=``
  backs it, and a claim with an id is then reported exactly as the rule reports it
  (`DirectiveDelta`: the findings of the claims gained are made by `check_claims` on
  them alone, those of the claims lost are dropped from the base findings).
- Controls, formulas and computed blocks (``control``, ``computed_*``), plots and their
  datasets (``plot``, ``plotly``, ``dataset``), citations (stale ``accessed=``), the adr
  profile (``decision``, ``adr``) and memories (``memory``) read the attributes or body
  of their own kind: never inert (they are `catalog.ALL_ATTR_FACTS`, from the rules'
  declarations). A formula or a plot's ``dataset=`` naming an inert directive reads "not
  a control / not a dataset" either way; a ``dataset=`` naming it is a reference
  attribute, which keeps the full path anyway (the message names the kind).
- ``out-of-profile-directive`` counts every directive by kind: an inert kind added to a
  document whose declared profiles do not allow it is a new finding. The profiles in
  force are only known when `validate` runs (``--profile`` overrides the frontmatter), so
  the kinds travel with the recipe and `profiles.profile_allows` is asked there.
- ``malformed-attribute`` reads the run's untidy attribute groups: they must be equal.
- Text sites (text that holds ``[[``: a directive's body, a paragraph, a title) are read
  by the wikilink check only (and, under a memory profile, by the memory link check:
  then any changed site takes the full path). When the run's sites changed, the old
  run's wikilink findings go and the new run's sites are checked on their own
  (`DirectiveDelta.with_sites`): a target resolves when it is a name gained, or neither
  lost nor unknown to the base version (its index, or its id list and alias counts).
  The next version's `ReferenceTargets` gain the new links (`targets_after`). Sites'
  owners may differ (see `heading_changes`). This holds for a paragraph edited alone too.
- ``::section`` is how a document spells an explicit section: kept out, to be safe.

Everything else (notes, tips, callouts, risks, assumptions, figures, todos, comments
without a target, ...) is inert when its only read attributes are ``id``/``aliases``;
their own findings come from the per-block rules, which a splice re-runs on the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..diagnostics import Diagnostic
from ..ids import IdIndex, built_index, id_names_of, name_counts_of
from ..nodes import Directive, Document, Node

# Directive kinds a whole-document rule reads beyond their names (from the rules'
# declarations; the module docstring says why, rule by rule): any other kind, carrying
# only names, is inert.
from .catalog import DOCUMENT_KINDS
from .incremental_rules import (
    _NAMING,
    ReferenceTargets,
    RunFacts,
    _names,
    _only_names,
    reference_targets_of,
)
from .profiles import profile_allows
from .reference_rules import MEMORY_PROFILES
from .references import WIKILINK, _blank_code_spans, _report_wikilinks
from .research import check_claims
from .scan import Scan

_CLAIM_CODE = "claim-without-evidence"


@dataclass(slots=True, frozen=True)
class DirectiveDelta:
    """What a spliced version's whole-document findings owe to the inert directives its
    run gained or lost and to its changed text sites: the ``kinds`` (the declared
    profiles must allow them: asked when `validate` runs), the ids of the claims lost
    (their ``claim-without-evidence`` findings, inside the old run, go), whether the run's
    text sites changed (``sites``: the old run's wikilink findings go, the new run's are
    made), the ``findings`` of the claims gained and of the new run's sites, and the link
    targets of those sites (``links``, for the next version's `ReferenceTargets`)."""

    kinds: frozenset[str]
    dropped: frozenset[str]
    findings: tuple[Diagnostic, ...]
    sites: bool = False
    links: frozenset[str] = frozenset()

    @property
    def label(self) -> str:
        """How `paths_taken` names it: "directives", or "sites" when only text sites changed."""
        return "directives" if self.kinds else "sites"

    def allowed(self, profiles: set[str]) -> bool:
        """May the findings be kept under the declared ``profiles``? Not when one counts a
        kind added out of profile, nor when a memory profile checks where each wikilink
        of a changed site points."""
        if self.sites and profiles & MEMORY_PROFILES:
            return False
        return profile_allows(self.kinds, profiles)

    def drops(self, d: Diagnostic) -> bool:
        """Is ``d``, a base finding inside the old run, one that goes with the run: a lost
        claim's, or a wikilink's when the run's text sites changed?"""
        if d.code == "broken-reference":
            return self.sites and d.message.startswith("Wikilink [[")
        return d.code == _CLAIM_CODE and d.node_id in self.dropped

    def with_sites(
        self, run: Scan, old: Document, gained: frozenset[str], lost: frozenset[str]
    ) -> DirectiveDelta | None:
        """This delta with the findings of the new run's text sites when they changed:
        a link is broken when its target is a name lost, or neither gained nor known to
        ``old``. None when ``old`` cannot say without a walk (an alias whose owner may
        carry no id)."""
        if not self.sites:
            return self
        resolves = _resolver(old)
        if resolves is None:
            return None
        texts = [_blank_code_spans(t) if "`" in t else t for t in run.site_texts]
        raw = set(WIKILINK.findall("\n".join(texts)))
        missing: set[str] = set()
        for target in {t.strip() for t in raw}:
            if not target or target in gained:
                continue
            known = False if target in lost else resolves(target)
            if known is None:
                return None
            if not known:
                missing.add(target)
        out: list[Diagnostic] = []
        if missing:
            for text, line, owner in zip(texts, run.site_lines, run.site_owners, strict=True):
                _report_wikilinks(text, line, owner, missing, out)
        return replace(self, findings=(*self.findings, *out), links=frozenset(map(str.strip, raw)))


def _resolver(old: Document) -> Callable[[str], bool | None] | None:
    """Does a name resolve in ``old`` (True, False, None: cannot tell)? From its index when
    built, else from its id list and alias counts (never a walk)."""
    idx = built_index(old)
    if idx is not None:
        return lambda name: name in idx.first or name in idx.alias_owner
    counts = name_counts_of(old)
    if counts is None:
        return None
    ids = id_names_of(old)
    aliases = counts.aliases

    def resolves(name: str) -> bool | None:
        if name in ids:
            return True
        return None if aliases[name] else False

    return resolves


class _Widened(ReferenceTargets):
    """A version's reference targets known up front: its base's, plus the link targets of
    the text sites its run gained (a superset stays safe: a name it holds only makes a
    later reuse check the sites that link to it, or decline)."""

    __slots__ = ()

    def __init__(self, names: tuple[frozenset[str], frozenset[str]]) -> None:
        self._scan = None
        self._names = names


def targets_after(old: Document, delta: DirectiveDelta | None) -> ReferenceTargets | None:
    """The new version's `ReferenceTargets`: the base version's, widened by the links of
    the run's new text sites (the run's reference attributes are the same)."""
    targets = reference_targets_of(old)
    if targets is None or delta is None or not delta.links:
        return targets
    attrs, links = targets.names()
    if delta.links <= links:
        return targets
    return _Widened((attrs, links | delta.links))


def directive_changes(
    old: RunFacts,
    new: RunFacts,
    old_ids: list[Node],
    new_ids: list[Node],
    doc: Document,
) -> tuple[set[str], DirectiveDelta] | None:
    """(the names gained or lost, what the findings owe to the directives set aside) when
    all that differs between the old and the new run's facts (`run_facts` of the blocks
    ``old_ids`` and ``new_ids``) is inert directives (and headings carrying only changed
    names, as `heading_changes` sets them aside); None otherwise, or when no directive
    differs at all (nothing for this path). ``doc``: the new version."""
    if old.problems != new.problems or old.ref_blocks != new.ref_blocks:
        return None
    sites = old.site_texts != new.site_texts
    old_inert = _inert_flags(old)
    new_inert = _inert_flags(new)
    if old_inert is None or new_inert is None:
        return None
    old_names = _names(old.ids)
    new_names = _names(new.ids)
    changed = {x for x in old_names.keys() | new_names.keys() if old_names[x] != new_names[x]}
    # Set aside on each side: inert directives whose every name changed count (a name
    # kept by an inert directive might now be carried by another kind), headings whose
    # every name did. What is left must be equal, in order.
    kept_old, aside_old = _split(old, old_inert, changed)
    kept_new, aside_new = _split(new, new_inert, changed)
    if (not aside_old and not aside_new and not sites) or kept_old != kept_new:
        return None
    kinds = frozenset(old.ids[k][2] for k in aside_old) | frozenset(
        new.ids[k][2] for k in aside_new
    )
    kinds -= {None}
    if not kinds and not sites:
        return None  # only headings differ: `heading_changes`' case, not this one
    checked_old = {k: v for k, v in old.checked.items() if k not in kinds}
    checked_new = {k: v for k, v in new.checked.items() if k not in kinds}
    if checked_old != checked_new:
        return None
    lost = _claims([old_ids[k] for k in aside_old])
    gained = _claims([new_ids[k] for k in aside_new])
    return changed, DirectiveDelta(
        kinds,
        frozenset(n.id for n in lost if n.id is not None),
        tuple(_claim_findings(doc, gained)),
        sites,
    )


def _claims(nodes: list[Node]) -> list[Directive]:
    return [n for n in nodes if isinstance(n, Directive) and n.name == "claim"]


def _claim_findings(doc: Document, claims: list[Directive]) -> list[Diagnostic]:
    """What `check_claims` reports for ``claims`` when nothing backs them (their names are
    unclaimed: no ``for=`` names them)."""
    if not claims:
        return []
    alone = Scan.of(doc, IdIndex())
    alone.checked_by_name["claim"] = claims
    out: list[Diagnostic] = []
    check_claims(alone, out)
    return out


def _inert_flags(facts: RunFacts) -> list[bool] | None:
    """For each directive of the run (in order), whether no whole-document rule reads it
    beyond its names; None when the id list and the directive list do not line up."""
    entries = [e for e in facts.ids if e[2] is not None]
    directives = facts.directives
    if len(entries) != len(directives):
        return None
    flags: list[bool] = []
    for entry, d in zip(entries, directives, strict=True):
        name, ident, attrs, raw_attrs = d[0], d[1], d[2], d[3]
        if entry[2] != name or entry[0] != ident:
            return None
        flags.append(
            name not in DOCUMENT_KINDS
            and all(key in _NAMING for key, _value in attrs)
            and all(key in _NAMING for key, _value in raw_attrs)
        )
    return flags


def _split(
    facts: RunFacts, inert: list[bool], changed: set[str]
) -> tuple[tuple[list[Any], list[Any]], list[int]]:
    """((id entries kept, directive entries kept), positions of the id entries set aside)."""
    kept_ids: list[Any] = []
    kept_directives: list[Any] = []
    aside: list[int] = []
    k = 0
    directives = facts.directives
    for at, entry in enumerate(facts.ids):
        if entry[2] is None:  # a heading
            if _named(entry) and _only_names(entry, changed):
                aside.append(at)
            else:
                kept_ids.append(entry)
            continue
        if inert[k] and _all_changed(entry, changed):
            aside.append(at)
        else:
            kept_ids.append(entry)
            kept_directives.append(directives[k])
        k += 1
    return (kept_ids, kept_directives), aside


def _named(entry: tuple[Any, ...]) -> bool:
    return entry[0] is not None or bool(entry[1])


def _all_changed(entry: tuple[Any, ...], changed: set[str]) -> bool:
    """Did every name of ``entry`` change count? Aliases of a block without an id resolve
    nowhere (`ids.index`): such a block is never set aside."""
    ident, aliases = entry[0], entry[1]
    return (ident in changed if ident is not None else not aliases) and all(
        a in changed for a in aliases
    )
