"""Incremental validation equals full validation, rule family by rule family.

For every declared rule (`core.noma.validate.rules`), a document holding blocks that rule
reads (and reports on) is edited at random: its family's blocks added, removed, changed a
line at a time, mixed with other families' blocks, ids and links; after every step the
spliced version's findings (kept and moved from the previous version's where the rules'
declarations allow) must equal a full validation of a fresh parse, diagnostic for
diagnostic. A rule added without blocks here fails `test_every_rule_has_a_family`.
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_trust_properties import SEEDS, TRIED, run

from bench.generate import generate
from core.noma.diagnostics import Diagnostic
from core.noma.incremental import reparse
from core.noma.parser import parse
from core.noma.validate import validate
from core.noma.validate.kept_findings import has_recipes
from core.noma.validate.rules import registered

TODAY = date(2026, 11, 22)

# Blocks each rule reads, some of which it reports on (and some it finds fine).
FAMILIES: dict[str, list[str]] = {
    "check_duplicate_ids": ['::note{id="dup"}\nOne.\n::', '::tip{id="dup"}\nTwo.\n::'],
    "check_broken_references": [
        "See [[dup]] and [[nowhere]] here.",
        '::comment{target="nowhere"}\nHm.\n::',
        '::note{id="linked" aliases="also-linked"}\nx\n::',
    ],
    "check_profiles": ["::html{trusted}\n<b>x</b>\n::", "::memory_index\nx\n::"],
    "check_claims": [
        '::claim{id="c-fam"}\nA claim.\n::',
        '::claim{id="c-alone"}\nUnbacked.\n::',
        '::evidence{for="c-fam"}\nBacked.\n::',
        '::counterevidence{for="c-fam" noverify}\nNot quite.\n::',
    ],
    "check_evidence": ["::evidence\nFor nothing.\n::", '::evidence{for="c-fam"}\nOk.\n::'],
    "check_risks": ["::risk\nNobody owns it.\n::", '::risk{owner="ana"}\nOwned.\n::'],
    "check_decisions": ["::decision\nUndecided.\n::", '::adr{status="accepted"}\nDone.\n::'],
    "check_controls": [
        '::control{id="k" type="slider" default="5" min="0" max="10"}\n::',
        '::control{id="k2" type="slider" default="50" min="0" max="10"}\n::',
        '::control{id="k3" type="number" lock="weird"}\n::',
    ],
    "check_computed": [
        '::computed_metric{id="m" formula="k * 2"}\n::',
        '::computed_metric{id="m2" formula="m + zz"}\n::',
        '::computed_metric{id="m3" formula="m2 + m"}\n::',
        '::computed_plot{id="p" formula="sin("}\n::',
        "::computed_table\n::",
    ],
    "check_citations": [
        '::citation{id="cit" accessed="2020-01-01" source="a"}\nOld.\n::',
        '::citation{accessed="2026-11-01" source="b"}\nFresh.\n::',
    ],
    "check_plots": [
        '::dataset{id="ds"}\n```csv\na,b\n1,2\n```\n::',
        '::plot{dataset="ds" x="a" y="c"}\n::',
        '::plot{data="1,2;3" xlabels="a;b"}\n::',
        "::plot\n::",
    ],
    "check_plotly": ["::plotly\n{bad json\n::", '::plotly\n{"data": []}\n::', "::plotly\n::"],
    "check_dataset_sources": [
        '::dataset{id="ds2" src="missing.csv"}\n::',
        '::dataset{src=""}\n::',
    ],
    "check_attribute_syntax": ['::note{id="a" "unclosed}\nx\n::', '## Odd {id="h" = }'],
    "check_adr": ['::decision{owner="bo" date="2026-01-01"}\nYes.\n::', "::adr\nNo owner.\n::"],
    "check_memories": [
        '::memory{id="mem1" type="user"}\nSee [[mem2]] and [[dup]].\n::',
        '::memory{id="mem2" type="bogus" confidence="2" last_seen="soon"}\nx\n::',
        "::memory\nNo id.\n::",
    ],
    "check_agent_tasks": ["::agent_task\n::", '::todo{scope="docs"}\n::'],
    "check_state_changes": ['::state_change{block="x"}\n::', "::state_change\n::"],
    "check_diagrams": ["::diagram\n::", '::diagram{kind="mermaid"}\ngraph TD\n::'],
    "check_figures": ["::figure\n::", '::figure{alt="a cat"}\n::'],
    "check_dataset_bodies": [
        '::dataset{format="json"}\n' + "[" * 120 + "]" * 120 + "\n::",
        '::dataset{format="json"}\n[1, 2]\n::',
    ],
    "check_escape_hatches": ["::html\n<b>x</b>\n::", "::script{trusted}\nx\n::"],
    "check_citation_sources": ["::citation\nNo source.\n::"],
    "check_change_requests": [
        '::change_request{action="bogus"}\nx\n::',
        '::change_request{action="replace"}\n::',
    ],
    "check_claim_confidence": [
        '::claim{id="c-conf" confidence="7"}\nSure.\n::',
        '::claim{id="c-none"}\nUnsure.\n::',
    ],
}
# The profile a family's rules need in force (the rest run without one).
PROFILES = {
    "check_profiles": "research",
    "check_adr": "adr",
    "check_memories": "memory",
    "check_claim_confidence": "research-memo",
}
_EVERY = [block for blocks in FAMILIES.values() for block in blocks]
LINES = ["", "plain words", "::", '::note{id="n-x"}', "## Inserted heading", "[[linked]] x"]


def _diags(found: list[Diagnostic]) -> list[tuple[Any, ...]]:
    return [(d.severity, d.code, d.message, d.line, d.column, d.node_id) for d in found]


def _start(family: str, n: int, seed: int) -> str:
    return generate(n, seed=seed) + "\n" + "\n\n".join(FAMILIES[family]) + "\n"


@st.composite
def family_edit(draw: st.DrawFn, text: str, family: str) -> str:
    """Add one of the family's blocks (or any family's) between blocks, remove a block,
    or change, add or drop one line."""
    blocks = text.split("\n\n")
    kind = draw(st.sampled_from(["add", "add", "add-any", "remove", "line", "line"]))
    if kind in ("add", "add-any"):
        pool = FAMILIES[family] if kind == "add" else _EVERY
        blocks.insert(draw(st.integers(0, len(blocks))), draw(st.sampled_from(pool)))
        return "\n\n".join(blocks)
    if kind == "remove" and len(blocks) > 1:
        del blocks[draw(st.integers(0, len(blocks) - 1))]
        return "\n\n".join(blocks)
    lines = text.split("\n")
    at = draw(st.integers(0, len(lines) - 1))
    what = draw(st.sampled_from(["replace", "insert", "delete"]))
    family_lines = [line for block in FAMILIES[family] for line in block.split("\n")]
    new = draw(st.sampled_from([*LINES, *family_lines]))
    if what == "replace":
        lines[at] = new
    elif what == "insert":
        lines.insert(at, new)
    else:
        del lines[at]
    return "\n".join(lines)


def test_every_rule_has_a_family() -> None:
    declared = {r.name for r in registered()}
    assert declared == set(FAMILIES), declared ^ set(FAMILIES)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_familys_blocks_give_its_findings(family: str) -> None:
    """The blocks above are worth editing: a full validation reports the family's codes."""
    (rule,) = [r for r in registered() if r.name == family]
    text = _start(family, 2, 1)
    found = {d.code for d in validate(parse(text), profile=PROFILES.get(family), today=TODAY)}
    assert found & rule.codes, (family, sorted(found))


@pytest.mark.parametrize("which", SEEDS)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_incremental_validation_equals_full_per_rule_family(family: str, which: int) -> None:
    """Both reuse paths are taken for every family (the findings are not merely remade)."""
    profile = PROFILES.get(family)
    taken: Counter[str] = Counter()

    @given(st.data())
    def prop(data: st.DataObject) -> None:
        TRIED[f"family:{family}"] += 1  # `test_zz_report_cases_tried` checks each ran
        text = _start(family, data.draw(st.integers(1, 4)), data.draw(st.integers(0, 20)))
        doc = parse(text)
        validate(doc, profile=profile, today=TODAY)  # the base findings a splice moves
        for _ in range(data.draw(st.integers(1, 5))):
            new_text = data.draw(family_edit(text, family))
            spliced = reparse(doc, text, new_text)
            kept_blocks, kept_document = has_recipes(spliced)
            taken["block findings moved"] += kept_blocks
            taken["document findings moved"] += kept_document
            fresh = parse(new_text)
            assert _diags(validate(spliced, profile=profile, today=TODAY)) == _diags(
                validate(fresh, profile=profile, today=TODAY)
            ), (family, new_text)
            doc, text = spliced, new_text

    run(f"family:{family}", prop, which, examples=12)
    assert taken["block findings moved"] > 0, (family, taken)
    assert taken["document findings moved"] > 0, (family, taken)
