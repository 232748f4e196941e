"""Every validator rule declares what it reads, and the incremental cutoff follows them.

The splice keeps a finding only when the facts its rule reads are unchanged; those facts
are the rules' own declarations (`core.noma.validate.rules`), gathered by
`core.noma.validate.catalog`. These tests fail for a rule that runs without a declaration,
for a declaration naming a fact the engine does not know, and when a declaration changes
what a splice compares.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import pytest

import core.noma.validate as validate_pkg
from core.noma.diagnostics import Diagnostic
from core.noma.validate import catalog, incremental_directives, incremental_rules, kept_findings
from core.noma.validate.registry import SEVERITIES
from core.noma.validate.rules import (
    FACTS,
    Undeclared,
    UnknownFact,
    declaration,
    make_rule,
    registered,
)
from core.noma.validate.scan import Scan


def _check_functions() -> list[Any]:
    """Every public ``check_*`` function defined in a module of the validator package."""
    found = []
    for info in pkgutil.iter_modules(validate_pkg.__path__):
        module = importlib.import_module(f"core.noma.validate.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("check_") and fn.__module__ == module.__name__:
                found.append(fn)
    return found


def test_every_rule_function_in_the_validator_is_declared_and_runs_in_one_pass() -> None:
    checks = _check_functions()
    assert len(checks) >= 25, "the rule modules were not found"
    in_passes = {r.check for r in (*catalog.DOCUMENT_RULES, *catalog.BLOCK_RULES)}
    for check in checks:
        rule = declaration(check)  # raises Undeclared for a rule without a declaration
        assert rule.check in in_passes, f"{rule.name} is declared but never runs"
    assert {r.check for r in registered()} == in_passes


def test_a_rule_without_a_declaration_is_refused() -> None:
    def check_something_new(scan: Scan, out: list[Diagnostic]) -> None:
        return None

    with pytest.raises(Undeclared, match="check_something_new has no rule declaration"):
        declaration(check_something_new)


def _new_rule(**kwargs: Any) -> None:
    def check_new(scan: Scan, out: list[Diagnostic]) -> None:
        return None

    make_rule(check_new, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"scope": "cross-block", "codes": ("duplicate-id",), "reads": ("colour",)}, "facts"),
        ({"scope": "global", "codes": ("duplicate-id",)}, "scope"),
        ({"scope": "block", "codes": ("no-such-code",)}, "codes"),
        ({"scope": "block", "codes": ()}, "codes"),
        ({"scope": "block", "codes": ("risk-without-owner",), "reads": ("names",)}, "block"),
        ({"scope": "cross-block", "codes": ("duplicate-id",), "reads": ("clock",)}, "takes"),
        (
            {
                "scope": "cross-block",
                "codes": ("duplicate-id",),
                "lines_in_message": ("broken-reference",),
            },
            "lines_in_message",
        ),
    ],
)
def test_a_declaration_the_engine_cannot_follow_is_refused(
    kwargs: dict[str, Any], says: str
) -> None:
    with pytest.raises(UnknownFact, match=says):
        _new_rule(**kwargs)


def test_every_declared_fact_is_one_the_engine_knows() -> None:
    for rule in registered():
        assert rule.reads <= set(FACTS), rule.name
        assert rule.scope in ("block", "cross-block", "document"), rule.name


def test_every_code_is_reported_by_exactly_one_rule() -> None:
    owners: dict[str, list[str]] = {}
    for rule in registered():
        for code in rule.codes:
            owners.setdefault(code, []).append(rule.name)
    assert all(len(names) == 1 for names in owners.values()), owners
    assert set(owners) | catalog.VALIDATOR_CODES == set(SEVERITIES)


def test_the_passes_hold_their_scopes() -> None:
    assert all(r.scope == "block" for r in catalog.BLOCK_RULES)
    assert all(r.scope != "block" for r in catalog.DOCUMENT_RULES)
    # Block rules read their own block and the declared profiles, nothing else.
    assert all(r.reads <= {"profiles"} for r in catalog.BLOCK_RULES)


def test_the_splice_compares_what_the_declarations_say() -> None:
    """The sets the incremental engine compares are the catalog's, derived: a rule that
    starts reading a kind's body (say) changes what a splice compares with no other edit."""
    compared = vars(incremental_rules)
    for name in ("BODY_FACTS", "ALL_ATTR_FACTS", "GENERIC_ATTR_FACTS"):
        assert compared[name] is getattr(catalog, name), name
    assert vars(kept_findings)["LINE_IN_MESSAGE"] is catalog.LINE_IN_MESSAGE
    assert vars(incremental_directives)["DOCUMENT_KINDS"] is catalog.DOCUMENT_KINDS
    body_of = {kind for r in catalog.DOCUMENT_RULES for kind in r.body_of}
    assert body_of == catalog.BODY_FACTS
    assert catalog.BODY_FACTS <= catalog.ALL_ATTR_FACTS <= catalog.DOCUMENT_KINDS
    # What the rules declare today (a change here is a change of the cutoff: on purpose).
    assert {
        "dataset",
        "plot",
        "plotly",
        "computed_metric",
        "computed_plot",
        "computed_table",
        "control",
    } == catalog.BODY_FACTS
    assert {"citation", "decision", "adr", "memory"} == catalog.ALL_ATTR_FACTS - catalog.BODY_FACTS
    assert {
        "evidence",
        "counterevidence",
        "section",
    } == catalog.DOCUMENT_KINDS - catalog.ALL_ATTR_FACTS
    assert {
        "id",
        "aliases",
        "noverify",
        "for",
        "parent",
        "dataset",
        "target",
        "block",
        "ref",
    } == catalog.GENERIC_ATTR_FACTS
    assert {"duplicate-id", "computed-chain-too-deep"} == catalog.LINE_IN_MESSAGE


def test_a_body_read_by_a_new_rule_enters_the_compared_facts() -> None:
    """Derivation, not a list: declare a whole-document rule reading ``::note`` bodies and
    the union the catalog takes holds ``note``."""

    def check_notes(scan: Scan, out: list[Diagnostic]) -> None:
        return None

    extra = make_rule(
        check_notes, scope="cross-block", codes=("broken-reference",), body_of=("note",)
    )
    derived = catalog._union([r.body_of for r in (*catalog.DOCUMENT_RULES, extra)])
    assert "note" in derived and "note" not in catalog.BODY_FACTS
