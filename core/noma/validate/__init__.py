"""The §4.4 validator: a document in, its `Diagnostic` list out.

`validate` walks the tree once (`scan.scan_document`), then each rule module reads the
buckets that walk left behind. Rules never see parser recovery notes (``doc.notes``):
those describe how the text was read, not what the document says, and mixing them in
would change a ``{code, severity}`` comparison against the conformance corpus.

Module map: `registry` (codes and severities), `scan` (the walk, ``noverify`` scope),
`references` (duplicate ids, broken references), `profiles`, `research` (claims, evidence,
risks, decisions), `blocks` (single-block checks), `controls`, `formula` + `computed`,
`citations`, `datasets` + `plots`, `reference_rules` (the additive codes the reference
applies beyond §4.4). Each rule declares, beside its code, its scope and the facts it reads
(`rules`); `catalog` orders them into the per-block and whole-document passes and derives
from the declarations what a splice compares. `kept_findings` keeps each pass's findings on
the tree and the recipes a splice leaves (`incremental_rules`, `incremental_directives`:
when the facts are unchanged).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from pathlib import Path

from ..diagnostics import Diagnostic
from ..nodes import Document
from .catalog import BLOCK_RULES, DOCUMENT_RULES
from .kept_findings import (
    DocumentKey,
    block_findings,
    block_recipe,
    document_findings,
    keep_block_findings,
    keep_document_findings,
    splice_document_findings,
)
from .profiles import KNOWN_PROFILES, declared_profiles
from .registry import RULE_CODES, diag
from .scan import Scan, scan_document

__all__ = ["KNOWN_PROFILES", "RULE_CODES", "validate"]


def validate(
    doc: Document,
    *,
    profile: str | None = None,
    ignore_rules: Iterable[str] = (),
    today: date | None = None,
    base_dir: Path | None = None,
) -> list[Diagnostic]:
    """Run every §4.4 rule over ``doc``; diagnostics sorted by (line, code).

    ``profile`` replaces the frontmatter ``profile:``/``profiles:`` declaration;
    ``ignore_rules`` drops those codes (an unrecognised one is reported as
    ``unknown-ignore-rule``); ``today`` pins the clock for ``stale-citation``; ``base_dir``
    is the document's folder, against which relative ``::dataset`` ``src=`` paths resolve.
    File-level diagnostics (no line) sort first. Never raises on a parsed document.

    A tree spliced from a validated version (`core.noma.incremental`) is not walked: the
    per-block rules re-run on the re-parsed run, the whole-document rules' findings are
    the base version's, shifted, when the run's facts are unchanged (`incremental_rules`).
    """
    day = today if today is not None else date.today()
    profiles = _profiles_in_force(doc, profile)
    out = list(_document_findings(doc, (profile, day, base_dir), profiles))
    out.extend(_block_findings(doc, profiles))

    if isinstance(ignore_rules, str):  # one code passed bare: not its characters
        ignore_rules = (ignore_rules,)
    ignored: set[str] = set()
    for code in dict.fromkeys(ignore_rules):
        if code in RULE_CODES:
            ignored.add(code)
        else:
            out.append(
                diag(
                    "unknown-ignore-rule",
                    f'--ignore-rule "{code}" is not a rule code this validator knows; '
                    "it was not applied.",
                )
            )
    if ignored:
        out = [d for d in out if d.code not in ignored]
    out.sort(key=_order)
    return out


def _profiles_in_force(doc: Document, profile: str | None) -> set[str]:
    return declared_profiles(doc.meta, profile)


def document_rules(
    found: Scan, profile: str | None, day: date, base_dir: Path | None, profiles: set[str]
) -> list[Diagnostic]:
    """The whole-document rules (`catalog.DOCUMENT_RULES`): their findings for a block may
    depend on any other block (references, backing evidence, formulas, profiles), so they
    read the whole scan."""
    out: list[Diagnostic] = []
    inputs = {"profile": profile, "day": day, "base_dir": base_dir, "profiles": profiles}
    for rule in DOCUMENT_RULES:
        rule.run(found, inputs, out)
    return out


def _document_findings(doc: Document, key: DocumentKey, profiles: set[str]) -> list[Diagnostic]:
    """The whole-document rules' findings, kept on the tree by ``key``; a spliced tree whose
    run changed none of the facts those rules read takes its base version's, shifted."""
    cached = document_findings(doc)
    if cached is not None and cached.key == key and not cached.reads_files:
        # (Findings that read another file are made again: the file may have changed.)
        return cached.findings
    out = splice_document_findings(doc, key)
    reads_files = False
    if out is None:
        found = scan_document(doc)
        profile, day, base_dir = key
        out = document_rules(found, profile, day, base_dir, profiles)
        reads_files = any("src" in d.attrs for d in found.by_name.get("dataset", ()))
    keep_document_findings(doc, key, out, reads_files)
    return out


def block_rules(found: Scan, profiles: set[str], out: list[Diagnostic]) -> None:
    """Run the per-block rules (`catalog.BLOCK_RULES`) over ``found`` (a whole document's
    scan or a run's): their findings for a block depend on that block only, so a spliced
    tree re-runs them on the re-parsed run and keeps the rest. Each has codes of its own,
    so the (line, code) sort puts their findings where a full run would."""
    inputs = {"profiles": profiles}
    for rule in BLOCK_RULES:
        rule.run(found, inputs, out)


def _block_findings(doc: Document, profiles: set[str]) -> list[Diagnostic]:
    """The per-block rules' findings, kept on the tree by declared profiles; a spliced tree
    takes its base version's outside the run (shifted) and runs the rules on the run."""
    key = frozenset(profiles)
    cached = block_findings(doc)
    if cached is not None and cached.profiles == key:
        return cached.findings
    out: list[Diagnostic] = []
    recipe = block_recipe(doc)
    if recipe is not None and recipe.profiles == key:
        r0, r1, delta = recipe.r0, recipe.r1, recipe.delta
        out.extend(d for d in recipe.base if d.line is not None and d.line <= r0)
        block_rules(recipe.run, profiles, out)
        for d in recipe.base:
            if d.line is not None and d.line > r1:
                out.append(
                    d
                    if not delta
                    else Diagnostic(
                        d.severity, d.code, d.message, d.line + delta, d.column, d.node_id, d.phase
                    )
                )
    else:
        block_rules(scan_document(doc), profiles, out)
    keep_block_findings(doc, key, out)
    return out


def _order(d: Diagnostic) -> tuple[int, str]:
    """(line, code); file-level diagnostics (no line) sort first."""
    return (d.line or 0, d.code)
