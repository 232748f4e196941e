"""The validator's rules in the order they run, and what a splice must compare, derived.

Each rule declares itself beside its code (`rules.rule`); this module puts them in their
passes (the per-block pass, re-run on a spliced run; the whole-document pass, kept when
the run's facts are unchanged) and derives from the declarations the sets the incremental
engine compares (`incremental_rules.run_facts`, `incremental_directives`). Nothing here is
kept by hand beside the rules: a rule that starts reading a kind's body declares it, and
the splice compares that body from then on.

The order of each pass is fixed (findings are sorted by line and code afterwards; within
one line and code a rule's own order is kept, and no two rules share a code: checked
below).
"""

from __future__ import annotations

from .blocks import (
    check_agent_tasks,
    check_attribute_syntax,
    check_diagrams,
    check_escape_hatches,
    check_figures,
    check_plotly,
    check_state_changes,
)
from .citations import check_citations
from .computed import check_computed
from .controls import check_controls
from .datasets import check_dataset_bodies, check_dataset_sources
from .plots import check_plots
from .profiles import check_profiles
from .reference_rules import (
    check_adr,
    check_change_requests,
    check_citation_sources,
    check_claim_confidence,
    check_memories,
)
from .references import check_broken_references, check_duplicate_ids
from .registry import SEVERITIES
from .research import check_claims, check_decisions, check_evidence, check_risks
from .rules import FACT_ATTRS, Rule, Undeclared, declaration, registered

# The whole-document pass: findings for a block may depend on other blocks or on the
# document (references, backing evidence, formulas, profiles, the clock, other files).
DOCUMENT_RULES: tuple[Rule, ...] = tuple(
    declaration(check)
    for check in (
        check_duplicate_ids,
        check_broken_references,
        check_profiles,
        check_claims,
        check_controls,
        check_computed,
        check_citations,
        check_plots,
        check_plotly,
        check_dataset_sources,
        check_attribute_syntax,
        check_adr,
        check_memories,
    )
)
# The per-block pass: each rule reads one directive (and at most the declared profiles).
BLOCK_RULES: tuple[Rule, ...] = tuple(
    declaration(check)
    for check in (
        check_evidence,
        check_risks,
        check_decisions,
        check_agent_tasks,
        check_state_changes,
        check_diagrams,
        check_figures,
        check_dataset_bodies,
        check_escape_hatches,
        check_citation_sources,
        check_change_requests,
        check_claim_confidence,
    )
)
# Codes the validator reports itself, not through a rule.
VALIDATOR_CODES = frozenset({"unknown-ignore-rule"})


def _union(sets: list[frozenset[str]]) -> frozenset[str]:
    out: set[str] = set()
    for s in sets:
        out |= s
    return frozenset(out)


# Directive kinds whose body (or the one code block in it) a whole-document rule reads.
BODY_FACTS: frozenset[str] = _union([r.body_of for r in DOCUMENT_RULES])
# Directive kinds a whole-document rule reads any attribute of (bodies' kinds included).
ALL_ATTR_FACTS: frozenset[str] = _union([r.attrs_of for r in DOCUMENT_RULES])
# Directive kinds a whole-document rule reads beyond their names; ``::section`` is how a
# document spells an explicit section, kept out of the inert kinds to be safe.
DOCUMENT_KINDS: frozenset[str] = _union([r.kinds for r in DOCUMENT_RULES]) | {"section"}
# The attributes whole-document rules read on every other block (their generic facts).
GENERIC_ATTR_FACTS: frozenset[str] = _union(
    [FACT_ATTRS[f] for r in DOCUMENT_RULES for f in r.reads if f in FACT_ATTRS]
)
# Codes whose message names a line of another block: they cannot be moved by a delta.
LINE_IN_MESSAGE: frozenset[str] = _union([r.lines_in_message for r in DOCUMENT_RULES])


def verify_catalog() -> None:
    """Every declared rule runs in exactly one pass, the pass its scope names; no two
    rules share a code; every registered code is some rule's (or the validator's own).
    Raises `Undeclared` otherwise (run at import: a rule left out fails every validation)."""
    in_passes = [*DOCUMENT_RULES, *BLOCK_RULES]
    names = [r.name for r in in_passes]
    for r in registered():
        if names.count(r.name) != 1 or r not in in_passes:
            raise Undeclared(f"{r.name} is declared but runs in {names.count(r.name)} passes")
    for r in DOCUMENT_RULES:
        if r.scope == "block":
            raise Undeclared(f"{r.name} is a block rule in the whole-document pass")
    for r in BLOCK_RULES:
        if r.scope != "block":
            raise Undeclared(f"{r.name} ({r.scope}) is in the per-block pass")
    seen: dict[str, str] = {}
    for r in in_passes:
        for code in r.codes:
            if code in seen:
                raise Undeclared(f"{code} is reported by both {seen[code]} and {r.name}")
            seen[code] = r.name
    missing = set(SEVERITIES) - set(seen) - VALIDATOR_CODES
    if missing:
        raise Undeclared(f"no rule declares the codes {sorted(missing)}")


verify_catalog()
