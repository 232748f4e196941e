"""The validator's findings kept on a document, and the recipes a splice leaves for them.

`validate` keeps each pass's findings on the tree it validated (`BlockFindings`,
`DocumentFindings`: trees are immutable, so they stay true). A splice
(`core.noma.incremental`) asks `leave_recipes` how the new version's findings follow from
its base version's without a walk: the per-block rules re-run on the re-parsed run
(`BlockRecipe`); the whole-document rules' findings move by the line delta when the facts
their rules declare (`catalog`) are unchanged in the run (`DocumentRecipe`,
`incremental_rules`, `incremental_directives`). This module is the only one that creates,
reads or drops these four caches (`core.noma.memo`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import NamedTuple

from .. import paths_taken
from ..change import Change
from ..diagnostics import Diagnostic
from ..memo import Memo
from ..nodes import Document, Node, Section
from ..scan_facts import is_noverify
from .catalog import LINE_IN_MESSAGE
from .incremental_directives import DirectiveDelta, directive_changes, targets_after
from .incremental_rules import (
    Relink,
    heading_changes,
    name_claims,
    pass_on,
    run_facts,
    sites_of,
    splice_sites,
)
from .profiles import declared_profiles
from .reference_rules import MEMORY_PROFILES
from .scan import Scan, scan_nodes

# What the whole-document findings were made for: (``--profile`` override, today, the
# document's folder).
DocumentKey = tuple[str | None, date, Path | None]


class BlockFindings(NamedTuple):
    """The per-block rules' findings, made under the declared ``profiles``."""

    profiles: frozenset[str]
    findings: list[Diagnostic]


class DocumentFindings(NamedTuple):
    """The whole-document rules' findings for ``key``; ``reads_files``: a rule looked at
    another file (a ``::dataset`` ``src=``), which may have changed since."""

    key: DocumentKey
    findings: list[Diagnostic]
    reads_files: bool


@dataclass(frozen=True, slots=True)
class BlockRecipe:
    """The per-block findings of a spliced version: the base version's before old line
    ``r0`` and after old line ``r1`` (moved by ``delta``), the rules re-run on ``run``."""

    profiles: frozenset[str]
    base: list[Diagnostic]
    run: Scan
    r0: int
    r1: int
    delta: int


@dataclass(frozen=True, slots=True)
class DocumentRecipe:
    """The whole-document findings of a spliced version, from its base version's
    (``base``, made for ``key``): kept before the run, moved by ``delta`` after it; the
    wikilink sites of changed heading names made again (``relink``), and what inert
    directives the run gained or lost owe (``directives``)."""

    key: DocumentKey
    base: list[Diagnostic]
    reads_files: bool
    r0: int
    r1: int
    delta: int
    relink: Relink | None
    directives: DirectiveDelta | None


_BLOCK_FINDINGS: Memo[BlockFindings] = Memo("validator per-block findings")
_BLOCK_RECIPE: Memo[BlockRecipe] = Memo("validator per-block recipe")
_DOCUMENT_FINDINGS: Memo[DocumentFindings] = Memo("validator whole-document findings")
_DOCUMENT_RECIPE: Memo[DocumentRecipe] = Memo("validator whole-document recipe")


def block_findings(doc: Document) -> BlockFindings | None:
    return _BLOCK_FINDINGS.get(doc)


def block_recipe(doc: Document) -> BlockRecipe | None:
    return _BLOCK_RECIPE.get(doc)


def keep_block_findings(doc: Document, profiles: frozenset[str], out: list[Diagnostic]) -> None:
    """Keep the per-block findings on ``doc``; its recipe has served."""
    _BLOCK_FINDINGS.put(doc, BlockFindings(profiles, out))
    _BLOCK_RECIPE.clear(doc)


def document_findings(doc: Document) -> DocumentFindings | None:
    return _DOCUMENT_FINDINGS.get(doc)


def keep_document_findings(
    doc: Document, key: DocumentKey, out: list[Diagnostic], reads_files: bool
) -> None:
    """Keep the whole-document findings on ``doc``; its recipe has served."""
    _DOCUMENT_FINDINGS.put(doc, DocumentFindings(key, out, reads_files))
    _DOCUMENT_RECIPE.clear(doc)


def has_recipes(doc: Document) -> tuple[bool, bool]:
    """(per-block recipe, whole-document recipe) left on ``doc`` by its splice? (For the
    property tests' counts of which path was taken.)"""
    return _BLOCK_RECIPE.get(doc) is not None, _DOCUMENT_RECIPE.get(doc) is not None


def splice_document_findings(doc: Document, key: DocumentKey) -> list[Diagnostic] | None:
    """The whole-document findings of a spliced ``doc`` taken from its base version's, or
    None when they must be computed afresh."""
    recipe = _DOCUMENT_RECIPE.get(doc)
    if recipe is None or recipe.key != key or recipe.reads_files:
        return None
    relink, directives = recipe.relink, recipe.directives
    profiles = (
        declared_profiles(doc.meta, key[0])
        if relink is not None or directives is not None
        else set()
    )
    if directives is not None and not directives.allowed(profiles):
        return None  # a kind added out of profile, a memory profile's links
    r0, r1, delta = recipe.r0, recipe.r1, recipe.delta
    out: list[Diagnostic] = []
    for d in recipe.base:
        line = d.line
        if line is None or line <= r0:
            out.append(d)
        elif line <= r1:
            if directives is None or not directives.drops(d):
                return None  # (a claim lost from the run takes its finding with it)
        elif delta and d.code in LINE_IN_MESSAGE:
            return None
        elif not delta:
            out.append(d)
        else:
            out.append(
                Diagnostic(
                    d.severity, d.code, d.message, line + delta, d.column, d.node_id, d.phase
                )
            )
    if directives is not None:
        # The claims the run gained, its changed sites' links (`validate` sorts); before
        # the relink, which makes a site's findings again when it links to a changed name.
        out.extend(directives.findings)
    if relink is not None:
        if profiles & MEMORY_PROFILES:
            return None  # memory documents check where each wikilink points, too
        relink.apply(out)
    return out


def _run_scan(doc: Document, path: list[Document | Section], nodes: list[Node]) -> Scan:
    """The validator's scan of one run of blocks, in its container's context."""
    owner: str | None = None
    quiet = False
    for container in path[1:]:
        assert isinstance(container, Section)
        owner = container.id if container.id is not None else owner
        quiet = is_noverify(container.attrs) if container.attrs else False
    run = Scan.of(doc, None)  # type: ignore[arg-type]  # the rules read no index here
    scan_nodes(run, nodes, owner, quiet, False)
    return run


def leave_recipes(
    old: Document,
    new: Document,
    path: list[Document | Section],
    old_run: list[Node],
    run: list[Node],
    old_ids: list[Node],
    run_ids: list[Node],
    change: Change,
) -> None:
    """How `validate` gets the new version's findings from the base version's without a
    walk: the per-block rules re-run on the run (`BlockRecipe`), the whole-document rules'
    findings move by the line delta when the run's facts are unchanged (`DocumentRecipe`,
    `incremental_rules`). ``run``: the re-parsed blocks; ``old_run`` the ones they replace;
    ``change``: what the splice changed (its old lines and line delta)."""
    base_blocks = _BLOCK_FINDINGS.get(old)
    base_document = _DOCUMENT_FINDINGS.get(old)
    if base_blocks is None and base_document is None:
        return
    r0, r1, delta = change.old_lines.start, change.old_lines.end, change.line_delta
    run_scan = _run_scan(new, path, run)
    if base_blocks is not None and all(d.line is not None for d in base_blocks.findings):
        _BLOCK_RECIPE.put(
            new, BlockRecipe(base_blocks.profiles, base_blocks.findings, run_scan, r0, r1, delta)
        )
    if base_document is None:
        return
    old_facts = run_facts(
        _run_scan(old, path, old_run),
        old_ids,
        [p for p in old.attr_problems if r0 < p[0] <= r1],
    )
    new_facts = run_facts(
        run_scan,
        run_ids,
        [p for p in new.attr_problems if r0 < p[0] <= r1 + delta],
    )
    old_sites = sites_of(old)
    new_sites = splice_sites(old_sites, run_scan, r0, r1, delta) if old_sites else None
    relink: Relink | None = None
    delta_of: DirectiveDelta | None = None  # what inert directives added or removed owe
    if old_facts == new_facts:
        if paths_taken.observer is not None:
            paths_taken.observer["kept:same-facts"] += 1
    else:
        changed = heading_changes(old_facts, new_facts)
        if changed is None:  # directives no rule reads beyond their names?
            directives = directive_changes(old_facts, new_facts, old_ids, run_ids, new)
            if directives is None:
                return
            changed, delta_of = directives
        claims = (
            name_claims(changed, old, old_ids, run_ids)
            if changed
            else (False, frozenset(), frozenset())
        )
        if claims is None:
            return
        linked, gained, lost = claims
        if linked:
            if new_sites is None:
                return
            relink = Relink(gained, lost, new_sites)
        if delta_of is not None:  # the run's changed text sites: their findings made
            delta_of = delta_of.with_sites(run_scan, old, gained, lost)
            if delta_of is None:
                return
        what = delta_of.label if delta_of is not None else "headings"
        if paths_taken.observer is not None:
            paths_taken.observer[f"kept:linked-{what}" if linked else f"kept:new-{what}"] += 1
    key, found, reads_files = base_document
    _DOCUMENT_RECIPE.put(
        new, DocumentRecipe(key, found, reads_files, r0, r1, delta, relink, delta_of)
    )
    # The run's references are the same: the base's targets pass on (widened by new links).
    pass_on(new, targets_after(old, delta_of), new_sites)
