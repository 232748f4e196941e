"""Computed-interaction checks: controls, the formula grammar, dependencies, chains (§4.4)."""

from __future__ import annotations

from textwrap import dedent
from typing import Any

import pytest

from core.noma.diagnostics import Diagnostic
from core.noma.parser import parse
from core.noma.validate import validate
from core.noma.validate.formula import FormulaError, parse_formula


def hits(src: str, code: str, **kwargs: Any) -> list[Diagnostic]:
    return [d for d in validate(parse(dedent(src)), **kwargs) if d.code == code]


def control(attrs: str) -> str:
    return f"::control{{{attrs}}}\n::\n"


# -- control-missing-default ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["slider", "range", "number", "checkbox", "toggle", "Slider"])
def test_a_numeric_control_without_default_warns(kind: str) -> None:
    found = hits(control(f'id="c" type="{kind}"'), "control-missing-default")
    assert [(d.severity, d.node_id) for d in found] == [("warning", "c")]


def test_a_non_numeric_default_on_a_numeric_control_warns() -> None:
    found = hits(control('id="c" type="slider" default="high"'), "control-missing-default")
    assert len(found) == 1 and '"high"' in found[0].message


def test_a_control_without_a_type_is_text_and_needs_no_default() -> None:
    assert hits(control('id="c"'), "control-missing-default") == []
    assert hits(control('id="c" type="select"'), "control-missing-default") == []


def test_a_quoted_numeric_default_counts_as_numeric() -> None:
    assert hits(control('id="c" type="slider" default="0.5"'), "control-missing-default") == []


def test_a_checkbox_default_may_be_a_boolean_but_a_slider_default_may_not() -> None:
    assert hits(control('type="checkbox" default=true'), "control-missing-default") == []
    assert len(hits(control('type="slider" default=true'), "control-missing-default")) == 1


# -- control-out-of-range-default -----------------------------------------------------------


@pytest.mark.parametrize(
    ("attrs", "count"),
    [
        ('type="slider" default=-1 min=0 max=10', 1),
        ('type="slider" default=11 min=0 max=10', 1),
        ('type="slider" default=10 min=0 max=10', 0),
        ('type="slider" default=0 min=0 max=10', 0),
        ('type="number" default=0.25 min=0.5', 1),
        ('type="number" default=99 max="lots"', 0),
        ('type="select" default=99 max=1', 0),
    ],
)
def test_a_default_outside_min_max_warns(attrs: str, count: int) -> None:
    found = hits(control(attrs), "control-out-of-range-default")
    assert len(found) == count
    assert all(d.severity == "warning" for d in found)


# -- control-invalid-lock -------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["control", "Content-Locked", "SDT locked", "control_and_content", "none", "0", "", "all"],
)
def test_supported_lock_values_compare_without_case_or_punctuation(value: str) -> None:
    assert hits(control(f'id="c" lock="{value}"'), "control-invalid-lock") == []


def test_a_boolean_lock_is_accepted() -> None:
    assert hits(control('id="c" lock=true'), "control-invalid-lock") == []
    assert hits(control('id="c" lock'), "control-invalid-lock") == []


def test_an_unsupported_lock_warns_on_any_control_type() -> None:
    found = hits(control('id="c" lock="readonly"'), "control-invalid-lock")
    assert [(d.severity, d.node_id) for d in found] == [("warning", "c")]
    assert '"readonly"' in found[0].message


def test_content_control_lock_and_sdt_lock_are_checked_too() -> None:
    found = hits(control('content_control_lock="x" sdt_lock="y"'), "control-invalid-lock")
    assert len(found) == 2


# -- the formula grammar --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formula", "identifiers"),
    [
        ("1", []),
        ("rate * 2", ["rate"]),
        ("-a ^ -2 ^ b", ["a", "b"]),
        ("(a + b) / c - 1.5e3", ["a", "b", "c"]),
        ("base-rate * growth.q1", ["base-rate", "growth.q1"]),
        ("if(x >= 10, max(x, 1, 2), clamp(x, 0, 1))", ["x"]),
        ("pow(a, 2) + abs(-b) + round(c) + round(c, 2) + min(d)", ["a", "b", "c", "d"]),
        ("a != b", ["a", "b"]),
        ("(a < b) == (c < d)", ["a", "b", "c", "d"]),
        ("x + x", ["x"]),
        ("+.5", []),
    ],
)
def test_valid_formulas_parse_and_list_their_identifiers(
    formula: str, identifiers: list[str]
) -> None:
    assert parse_formula(formula) == identifiers


@pytest.mark.parametrize(
    "formula",
    [
        "",
        "   ",
        "1 +",
        "* 2",
        "(a + b",
        "a + b)",
        "a b",
        "2x",
        "a < b < c",
        "a = b",
        "a && b",
        "sqrt(a)",
        "Max(a, b)",
        "pow(a)",
        "clamp(a, 1)",
        "abs()",
        "if(a, b)",
        "min(a,)",
        "a, b",
        "1 $ 2",
        "a % b",
    ],
)
def test_invalid_formulas_raise(formula: str) -> None:
    with pytest.raises(FormulaError):
        parse_formula(formula)


def test_a_deeply_nested_formula_is_an_error_not_a_crash() -> None:
    with pytest.raises(FormulaError):
        parse_formula("(" * 5000 + "1" + ")" * 5000)


# -- computed-missing-formula / formula-parse-error -----------------------------------------


def test_computed_blocks_without_a_formula_warn() -> None:
    src = '::computed_metric{id="m"}\n::\n\n::computed_plot{id="p"}\nNo formula here.\n::\n'
    found = hits(src, "computed-missing-formula")
    assert [(d.severity, d.node_id) for d in found] == [("warning", "m"), ("warning", "p")]


def test_a_formula_body_line_counts_as_a_formula() -> None:
    src = '::computed_metric{id="m"}\nlabel: Margin\nformula: "2 * 3"\n::\n'
    assert validate(parse(src)) == []


def test_an_empty_formula_attribute_is_a_missing_formula() -> None:
    src = '::computed_metric{id="m" formula=""}\n::\n'
    assert len(hits(src, "computed-missing-formula")) == 1
    assert hits(src, "formula-parse-error") == []


def test_a_numeric_looking_formula_is_parsed_as_written() -> None:
    assert validate(parse('::computed_metric{id="m" formula="42"}\n::\n')) == []


def test_bad_syntax_is_a_formula_parse_error() -> None:
    found = hits('::computed_metric{id="m" formula="(1 + 2"}\n::\n', "formula-parse-error")
    assert [(d.severity, d.node_id) for d in found] == [("error", "m")]
    assert "(1 + 2" in found[0].message


def test_a_function_outside_the_allow_list_is_a_formula_parse_error() -> None:
    found = hits('::computed_plot{id="p" formula="log(x)"}\n::\n', "formula-parse-error")
    assert len(found) == 1 and "log" in found[0].message


def test_an_unparseable_formula_reports_no_dependencies() -> None:
    src = '::computed_metric{id="m" formula="ghost +"}\n::\n'
    assert hits(src, "computed-unknown-dependency") == []


# -- computed-unknown-dependency ------------------------------------------------------------


def test_identifiers_may_name_controls_and_computed_blocks() -> None:
    src = """\
    ::control{id="price" type="number" default=10}
    ::

    ::computed_table{id="tbl"}
    ::

    ::computed_metric{id="revenue" formula="price * 3 + tbl"}
    ::
    """
    assert hits(src, "computed-unknown-dependency") == []


def test_identifiers_resolve_through_aliases() -> None:
    src = control('id="price" aliases="p" type="number" default=1')
    src += '\n::computed_metric{id="m" formula="p * 2"}\n::\n'
    assert hits(src, "computed-unknown-dependency") == []


def test_each_unknown_identifier_is_one_error() -> None:
    src = '# Intro\n\n::computed_metric{id="m" formula="ghost + intro + ghost + spook"}\n::\n'
    found = hits(src, "computed-unknown-dependency")
    assert [(d.severity, d.line) for d in found] == [("error", 3)] * 3
    assert ['"ghost"' in found[0].message, '"intro"' in found[1].message] == [True, True]


def test_a_plot_domain_variable_is_a_declared_identifier() -> None:
    src = """\
    ::computed_plot{id="p1" formula="x ^ 2" domain="x: 0..10"}
    ::

    ::computed_plot{id="p2" formula="t * 2" range="t: 0..1:0.1"}
    ::

    ::computed_plot{id="p3"}
    formula: n + 1
    domain: n: 1..5
    ::
    """
    assert validate(parse(dedent(src))) == []


def test_a_domain_variable_belongs_to_its_own_plot_only() -> None:
    src = '::computed_plot{id="p" formula="x" domain="x: 0..1"}\n::\n\n'
    src += '::computed_metric{id="m" formula="x"}\n::\n'
    assert [d.node_id for d in hits(src, "computed-unknown-dependency")] == ["m"]


# -- computed-chain-too-deep ----------------------------------------------------------------

CHAIN = """\
::control{id="c" type="number" default=1}
::

::computed_metric{id="a" formula="c"}
::

::computed_metric{id="b" formula="a + c"}
::

::computed_metric{id="d" formula="b"}
::

::computed_metric{id="e" formula="d"}
::
"""


def test_the_chain_warning_fires_on_the_block_at_depth_three_only() -> None:
    found = hits(CHAIN, "computed-chain-too-deep")
    assert [(d.severity, d.node_id) for d in found] == [("warning", "d")]


def test_two_levels_of_computed_blocks_are_fine() -> None:
    src = CHAIN.split('::computed_metric{id="d"')[0]
    assert hits(src, "computed-chain-too-deep") == []


def test_every_block_of_a_computed_cycle_warns() -> None:
    src = """\
    ::computed_metric{id="a" formula="b"}
    ::

    ::computed_metric{id="b" formula="a"}
    ::

    ::computed_metric{id="self" formula="self + 1"}
    ::

    ::computed_metric{id="reader" formula="a"}
    ::
    """
    found = hits(src, "computed-chain-too-deep")
    assert sorted(d.node_id or "" for d in found) == ["a", "b", "self"]
    assert all("cycle" in d.message for d in found)


def test_a_long_chain_does_not_recurse() -> None:
    parts = ['::control{id="c0" type="number" default=1}\n::\n']
    parts += [f'::computed_metric{{id="c{i}" formula="c{i - 1}"}}\n::\n' for i in range(1, 3000)]
    found = hits("\n".join(parts), "computed-chain-too-deep")
    assert [d.node_id for d in found] == ["c3"]
