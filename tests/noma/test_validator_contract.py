"""The validation contract around the rules: noverify, ignore_rules, ordering, the §4.2
summary, the §4.3 shape, recovery notes kept apart, and never raising."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from core.noma.diagnostics import summarize
from core.noma.parser import parse
from core.noma.validate import RULE_CODES, validate

MESSY = """\
---
profile: minimal
---
# Doc

See [[ghost]].

::claim{id="c1"}
::

::risk
::

::html
<b>x</b>
::
"""


def codes(src: str, **kwargs: Any) -> list[str]:
    return [d.code for d in validate(parse(dedent(src)), **kwargs)]


# -- noverify -------------------------------------------------------------------------------


def test_noverify_suppresses_every_check_on_that_block() -> None:
    src = """\
    ---
    profile: minimal
    ---
    ::plot{noverify dataset="ghost" data="1,2" xlabels="a b" for="nope"}
    see [[ghost]]
    ::

    ::control{noverify type="slider" default=9 max=1 lock="bad"}
    ::

    ::computed_metric{noverify formula="sqrt(x)"}
    ::

    ::html{noverify}
    <b>x</b>
    ::

    ::note{noverify for="nope"}
    see [[ghost]]
    ::
    """
    assert codes(src) == []
    assert codes(src.replace("noverify", "")) != []


def test_noverify_on_a_duplicate_silences_only_that_copy() -> None:
    src = '::note{id="x"}\n::\n\n::note{id="x" noverify}\n::\n\n::note{id="x"}\n::\n'
    found = [d for d in validate(parse(src)) if d.code == "duplicate-id"]
    assert [d.line for d in found] == [7]


def test_noverify_does_not_hide_a_block_from_reference_resolution() -> None:
    src = '::claim{id="c1" noverify}\n::\n\n::evidence{for="c1"}\n::\n\nSee [[c1]].\n'
    assert codes(src) == []


def test_noverify_false_does_not_suppress() -> None:
    assert codes("::risk{noverify=false}\n::\n") == ["risk-without-owner"]


def test_noverify_does_not_reach_nested_directives() -> None:
    src = "::note{noverify}\nsee [[quiet]]\n:::risk\n:::\n::\n"
    assert codes(src) == ["risk-without-owner"]


def test_noverify_on_a_heading_quiets_its_own_text_but_not_subsections() -> None:
    src = "## Draft {noverify}\n\nsee [[quiet]]\n\n### Next\n\nsee [[loud]]\n"
    found = [d for d in validate(parse(src)) if d.code == "broken-reference"]
    assert [d.line for d in found] == [7]


# -- ignore_rules ---------------------------------------------------------------------------


def test_ignore_rules_drops_those_codes() -> None:
    before = codes(MESSY)
    after = codes(MESSY, ignore_rules=["broken-reference", "out-of-profile-directive"])
    assert "broken-reference" in before and "out-of-profile-directive" in before
    assert after == [c for c in before if c not in ("broken-reference", "out-of-profile-directive")]


def test_each_unknown_ignored_rule_is_one_info_naming_it() -> None:
    diags = validate(parse("# Fine\n"), ignore_rules=["nope", "duplicate-id", "also-nope", "nope"])
    assert [(d.code, d.severity, d.line) for d in diags] == [
        ("unknown-ignore-rule", "info", None),
        ("unknown-ignore-rule", "info", None),
    ]
    assert '"nope"' in diags[0].message and '"also-nope"' in diags[1].message


def test_a_single_rule_name_passed_as_a_string_is_one_name() -> None:
    assert codes("::risk\n::\n", ignore_rules="risk-without-owner") == []


def test_unknown_ignore_rule_can_itself_be_ignored() -> None:
    assert codes("# Fine\n", ignore_rules=["nope", "unknown-ignore-rule"]) == []


# -- ordering and shape ---------------------------------------------------------------------


def test_diagnostics_are_sorted_by_line_then_code() -> None:
    diags = validate(parse(MESSY), ignore_rules=["bogus"])
    keys = [(d.line or 0, d.code) for d in diags]
    assert keys == sorted(keys)
    assert diags[0].code == "unknown-ignore-rule"  # file-level first


def test_validation_is_deterministic() -> None:
    first = [d.to_json() for d in validate(parse(MESSY))]
    assert first == [d.to_json() for d in validate(parse(MESSY))]


def test_diagnostics_have_the_section_4_3_shape() -> None:
    diags = validate(parse(MESSY))
    for d in diags:
        out = d.to_json()
        assert set(out) <= {"severity", "code", "message", "pos", "nodeId"}
        assert out["severity"] in ("info", "warning", "error")
        assert out["code"] in RULE_CODES and out["message"]
        assert out["pos"]["column"] == 1
    claim = next(d for d in diags if d.code == "claim-without-evidence")
    assert claim.to_json()["nodeId"] == "c1" and claim.line == 8


def test_recovery_notes_are_never_validator_diagnostics() -> None:
    doc = parse("::note\nnever closed\n\n```\nunclosed fence\n")
    assert doc.notes, "the parser recorded its recoveries"
    assert validate(doc) == []


# -- the §4.2 summary -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "kwargs", "summary"),
    [
        ("# Fine\n", {}, "ok"),
        ("# Fine\n", {"ignore_rules": ["nope"]}, "ok"),  # info alone is still ok
        ("::risk\n::\n", {}, "warn"),
        ("::risk\n::\n\nSee [[ghost]].\n", {}, "error"),
        ("::risk\n::\n\nSee [[ghost]].\n", {"ignore_rules": ["broken-reference"]}, "warn"),
    ],
)
def test_the_summary_is_derived_from_the_highest_severity(
    src: str, kwargs: dict[str, Any], summary: str
) -> None:
    assert summarize(validate(parse(src), **kwargs)) == summary


# -- robustness -----------------------------------------------------------------------------

_ALPHABET = [
    *":{}[]|`#>-*=\"' \n\tabcxyz019.,_^()/+",
    "::claim",
    "::evidence{for=",
    "::control{type=slider default=",
    '::computed_metric{formula="',
    "::plot{dataset=",
    "::dataset{src=",
    "::plotly\n",
    "::citation{accessed=",
    "[[",
    "]]",
    "```",
    "\n::\n",
    "noverify",
    'id="x"',
    "---\n",
    "profile: ",
]


@pytest.mark.parametrize("seed", range(40))
def test_validate_never_raises_on_garbage(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
    validate(parse(raw), today=date(2026, 1, 1))
    text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(1, 600)))
    validate(parse(text), today=date(2026, 1, 1), base_dir=tmp_path, profile="research")
    validate(parse(text.encode("utf-8", "surrogateescape")), ignore_rules=["x"])


def test_deep_directive_nesting_does_not_recurse() -> None:
    depth = 400
    src = "".join(":" * (i + 2) + "note\n" for i in range(depth))
    src += "[[ghost]]\n"
    src += "".join(":" * (i + 2) + "\n" for i in reversed(range(depth)))
    assert codes(src) == ["broken-reference"]
