"""Research-profile semantic checks (§4.4); they run in every document.

``claim-without-evidence`` needs the whole document (which claims are backed), the other
three look at one block each. Following noma-interop: only claims with an id can be
backed, so only they are checked; ``::counterevidence`` backs a claim as well as
``::evidence``; ``::adr`` counts as ``::decision``.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic
from .registry import diag
from .rules import rule
from .scan import Scan, has_value

EVIDENCE = ("evidence", "counterevidence")


@rule(
    # Claims are read by their names only (and ``noverify``): a claim that carries
    # nothing else gets its own finding remade by the engine (`incremental_directives`).
    scope="cross-block",
    codes=("claim-without-evidence",),
    reads=("names", "references", "noverify"),
    kinds=EVIDENCE,
)
def check_claims(scan: Scan, out: list[Diagnostic]) -> None:
    """A claim is backed by any evidence whose ``for=`` resolves to it (aliases count).

    Evidence under ``noverify`` still backs its claim: noverify silences a block's own
    checks, it does not take the block out of the document.
    """
    claims = scan.checked("claim")
    if not claims:
        return
    idx = scan.index
    first, alias_owner = idx.first, idx.alias_owner
    # The stripped for= values, once each (a set is built: no need to merge the buckets
    # back into order), each resolved as `IdIndex.resolve` does, in set operations.
    refs = {
        raw.strip()
        for name in EVIDENCE
        for d in scan.by_name.get(name, ())
        if (raw := d.raw_attrs.get("for"))
    }
    backed = refs.intersection(first)
    for ref in refs.difference(first):
        target = alias_owner.get(ref)
        if target is not None:
            backed.add(target)
    if backed.issuperset([d.id for d in claims if d.id is not None]):
        return  # every claim with an id is backed (the common case): nothing to report
    for d in claims:
        if d.id is not None and d.id not in backed:
            out.append(
                diag(
                    "claim-without-evidence",
                    f'::claim "{d.id}" has no ::evidence or ::counterevidence with for="{d.id}".',
                    d,
                )
            )


@rule(scope="block", codes=("evidence-missing-for",), kinds=EVIDENCE)
def check_evidence(scan: Scan, out: list[Diagnostic]) -> None:
    """Evidence must say which claim it backs. A ``for=`` that names no block at all is a
    ``broken-reference``, not this rule."""
    # Bucket by bucket, not merged back into document order: each finding is on its own
    # block's line, and the validator sorts findings by line.
    for d in (d for name in EVIDENCE for d in scan.checked_by_name.get(name, ())):
        raw = d.raw_attrs.get("for")  # `has_value`, inlined: one call per evidence block
        if not raw or raw.isspace():
            out.append(
                diag(
                    "evidence-missing-for",
                    f"::{d.name} has no for= attribute naming the claim it bears on.",
                    d,
                )
            )


@rule(scope="block", codes=("risk-without-owner",), kinds=("risk",))
def check_risks(scan: Scan, out: list[Diagnostic]) -> None:
    """A risk nobody owns is a risk nobody mitigates."""
    for d in scan.checked("risk"):
        if not has_value(d, "owner"):
            out.append(diag("risk-without-owner", "::risk has no owner= attribute.", d))


@rule(scope="block", codes=("decision-without-status",), kinds=("decision", "adr"))
def check_decisions(scan: Scan, out: list[Diagnostic]) -> None:
    """A decision must say whether it is proposed, accepted, superseded..."""
    for d in scan.checked("decision", "adr"):
        if not has_value(d, "status"):
            out.append(diag("decision-without-status", f"::{d.name} has no status= attribute.", d))
