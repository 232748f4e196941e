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
- ``claim-without-evidence`` reads every ``::claim`` (a new one may be unbacked) and every
  ``::evidence``/``::counterevidence`` (``for=`` backs a claim); the reference targets
  read evidence too (noverify evidence still backs). Never inert.
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

from typing import Any

from .incremental_rules import _NAMING, ALL_ATTR_FACTS, _names, _only_names
from .research import EVIDENCE

# Directive kinds a whole-document rule reads beyond their names (see the module
# docstring, rule by rule): any other kind, carrying only names, is inert.
DOCUMENT_KINDS = ALL_ATTR_FACTS | {"claim", *EVIDENCE, "section"}

# Positions in `run_facts`: ids, directives, site texts, site owners, untidy groups,
# reference blocks, checked directives by name.
_IDS, _DIRECTIVES, _TEXTS, _PROBLEMS, _REFS, _CHECKED = 0, 1, 2, 4, 5, 6


def directive_changes(
    old: tuple[Any, ...], new: tuple[Any, ...]
) -> tuple[set[str], frozenset[str]] | None:
    """(the names gained or lost, the kinds of the inert directives set aside) when all
    that differs between the old and the new run's facts is inert directives (and
    headings carrying only changed names, as `heading_changes` sets them aside); None
    otherwise, or when no directive differs at all (nothing for this path)."""
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
    kinds = frozenset(e[2] for e in (*aside_old, *aside_new) if e[2] is not None)
    if not kinds:
        return None  # only headings differ: `heading_changes`' case, not this one
    checked_old = {k: v for k, v in old[_CHECKED].items() if k not in kinds}
    checked_new = {k: v for k, v in new[_CHECKED].items() if k not in kinds}
    if checked_old != checked_new:
        return None
    return changed, kinds


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
) -> tuple[tuple[list[Any], list[Any]], list[tuple[Any, ...]]]:
    """((id entries kept, directive entries kept), id entries set aside)."""
    kept_ids: list[Any] = []
    kept_directives: list[Any] = []
    aside: list[tuple[Any, ...]] = []
    k = 0
    directives = facts[_DIRECTIVES]
    for entry in facts[_IDS]:
        if entry[2] is None:  # a heading
            if _named(entry) and _only_names(entry, changed):
                aside.append(entry)
            else:
                kept_ids.append(entry)
            continue
        if inert[k] and _all_changed(entry, changed):
            aside.append(entry)
        else:
            kept_ids.append(entry)
            kept_directives.append(directives[k])
        k += 1
    return (kept_ids, kept_directives), aside


def _named(entry: tuple[Any, ...]) -> bool:
    return entry[0] is not None or bool(entry[1])


def _all_changed(entry: tuple[Any, ...], changed: set[str]) -> bool:
    ident, aliases = entry[0], entry[1]
    return (ident is None or ident in changed) and all(a in changed for a in aliases)
