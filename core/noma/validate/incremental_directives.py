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
  of their own kind: never inert (they are `incremental_rules.ALL_ATTR_FACTS`). A formula
  or a plot's ``dataset=`` naming an inert directive reads "not a control / not a
  dataset" either way; a ``dataset=`` naming it is a reference attribute, which keeps
  the full path anyway (the message names the kind).
- ``out-of-profile-directive`` counts every directive by kind: an inert kind added to a
  document whose declared profiles do not allow it is a new finding. The profiles in
  force are only known when `validate` runs (``--profile`` overrides the frontmatter), so
  the kinds travel with the recipe and `profiles.profile_allows` is asked there.
- ``malformed-attribute`` reads the run's untidy attribute groups: they must be equal.
- Text sites (paragraphs that hold ``[[``) must be equal, in text: a directive whose body
  links somewhere takes the full path. Their owners may differ (see `heading_changes`).
- ``::section`` is how a document spells an explicit section: kept out, to be safe.

Everything else (notes, tips, callouts, risks, assumptions, figures, todos, comments
without a target, ...) is inert when its only read attributes are ``id``/``aliases``;
their own findings come from the per-block rules, which a splice re-runs on the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic
from ..ids import IdIndex
from ..nodes import Directive, Document, Node
from .incremental_rules import _NAMING, ALL_ATTR_FACTS, _names, _only_names
from .research import EVIDENCE, check_claims
from .scan import Scan

# Directive kinds a whole-document rule reads beyond their names (see the module
# docstring, rule by rule): any other kind, carrying only names, is inert.
DOCUMENT_KINDS = ALL_ATTR_FACTS | {*EVIDENCE, "section"}
# Inert kinds that have a whole-document finding of their own, made from their names.
SELF_REPORTING = frozenset({"claim"})
_CLAIM_CODE = "claim-without-evidence"


@dataclass(slots=True, frozen=True)
class DirectiveDelta:
    """What a spliced version's whole-document findings owe to the inert directives its
    run gained or lost: their ``kinds`` (the declared profiles must allow them: asked when
    `validate` runs, `profiles.profile_allows`), the ids of the claims lost (their
    ``claim-without-evidence`` findings, inside the old run, go) and the ``findings`` of
    the claims gained."""

    kinds: frozenset[str]
    dropped: frozenset[str]
    findings: tuple[Diagnostic, ...]

    def drops(self, d: Diagnostic) -> bool:
        """Is ``d``, a base finding inside the old run, one of a claim lost?"""
        return d.code == _CLAIM_CODE and d.node_id in self.dropped


# Positions in `run_facts`: ids, directives, site texts, site owners, untidy groups,
# reference blocks, checked directives by name.
_IDS, _DIRECTIVES, _TEXTS, _PROBLEMS, _REFS, _CHECKED = 0, 1, 2, 4, 5, 6


def directive_changes(
    old: tuple[Any, ...],
    new: tuple[Any, ...],
    old_ids: list[Node],
    new_ids: list[Node],
    doc: Document,
) -> tuple[set[str], DirectiveDelta] | None:
    """(the names gained or lost, what the findings owe to the directives set aside) when
    all that differs between the old and the new run's facts (`run_facts` of the blocks
    ``old_ids`` and ``new_ids``) is inert directives (and headings carrying only changed
    names, as `heading_changes` sets them aside); None otherwise, or when no directive
    differs at all (nothing for this path). ``doc``: the new version."""
    if old[_TEXTS] != new[_TEXTS] or old[_PROBLEMS] != new[_PROBLEMS] or old[_REFS] != new[_REFS]:
        return None
    old_inert = _inert_flags(old)
    new_inert = _inert_flags(new)
    if old_inert is None or new_inert is None:
        return None
    old_names = _names(old[_IDS])
    new_names = _names(new[_IDS])
    changed = {x for x in old_names.keys() | new_names.keys() if old_names[x] != new_names[x]}
    # Set aside on each side: inert directives whose every name changed count (a name
    # kept by an inert directive might now be carried by another kind), headings whose
    # every name did. What is left must be equal, in order.
    kept_old, aside_old = _split(old, old_inert, changed)
    kept_new, aside_new = _split(new, new_inert, changed)
    if not aside_old and not aside_new:
        return None
    if kept_old != kept_new:
        return None
    kinds = frozenset(old[_IDS][k][2] for k in aside_old) | frozenset(
        new[_IDS][k][2] for k in aside_new
    )
    kinds -= {None}
    if not kinds:
        return None  # only headings differ: `heading_changes`' case, not this one
    checked_old = {k: v for k, v in old[_CHECKED].items() if k not in kinds}
    checked_new = {k: v for k, v in new[_CHECKED].items() if k not in kinds}
    if checked_old != checked_new:
        return None
    lost = _claims([old_ids[k] for k in aside_old])
    gained = _claims([new_ids[k] for k in aside_new])
    return changed, DirectiveDelta(
        kinds,
        frozenset(n.id for n in lost if n.id is not None),
        tuple(_claim_findings(doc, gained)),
    )


def _claims(nodes: list[Node]) -> list[Directive]:
    return [n for n in nodes if isinstance(n, Directive) and n.name == "claim"]


def _claim_findings(doc: Document, claims: list[Directive]) -> list[Diagnostic]:
    """What `check_claims` reports for ``claims`` when nothing backs them (their names are
    unclaimed: no ``for=`` names them)."""
    if not claims:
        return []
    alone = Scan(doc=doc, index=IdIndex())
    alone.checked_by_name["claim"] = claims
    out: list[Diagnostic] = []
    check_claims(alone, out)
    return out


def _inert_flags(facts: tuple[Any, ...]) -> list[bool] | None:
    """For each directive of the run (in order), whether no whole-document rule reads it
    beyond its names; None when the id list and the directive list do not line up."""
    entries = [e for e in facts[_IDS] if e[2] is not None]
    directives = facts[_DIRECTIVES]
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
    facts: tuple[Any, ...], inert: list[bool], changed: set[str]
) -> tuple[tuple[list[Any], list[Any]], list[int]]:
    """((id entries kept, directive entries kept), positions of the id entries set aside)."""
    kept_ids: list[Any] = []
    kept_directives: list[Any] = []
    aside: list[int] = []
    k = 0
    directives = facts[_DIRECTIVES]
    for at, entry in enumerate(facts[_IDS]):
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
