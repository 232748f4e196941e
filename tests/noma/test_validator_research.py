"""Research, agent-task and state-change checks (§4.4)."""

from __future__ import annotations

from textwrap import dedent
from typing import Any

from core.noma.diagnostics import Diagnostic
from core.noma.parser import parse
from core.noma.validate import validate


def hits(src: str, code: str, **kwargs: Any) -> list[Diagnostic]:
    return [d for d in validate(parse(dedent(src)), **kwargs) if d.code == code]


# -- claim-without-evidence -----------------------------------------------------------------


def test_a_claim_with_an_id_and_no_evidence_warns() -> None:
    found = hits('# T\n\n::claim{id="c1"}\nMarkets grow.\n::\n', "claim-without-evidence")
    assert [(d.severity, d.line, d.node_id) for d in found] == [("warning", 3, "c1")]


def test_claim_without_evidence_is_silenced_by_evidence() -> None:
    src = '::claim{id="c1"}\n::\n\n::evidence{for="c1"}\n::\n'
    assert hits(src, "claim-without-evidence") == []


def test_claim_without_evidence_is_silenced_by_counterevidence() -> None:
    src = '::claim{id="c1"}\n::\n\n::counterevidence{for="c1"}\n::\n'
    assert hits(src, "claim-without-evidence") == []


def test_evidence_may_name_the_claim_by_alias() -> None:
    src = '::claim{id="c1" aliases="growth"}\n::\n\n::evidence{for="growth"}\n::\n'
    assert hits(src, "claim-without-evidence") == []


def test_evidence_for_another_claim_does_not_back_this_one() -> None:
    src = '::claim{id="a"}\n::\n\n::claim{id="b"}\n::\n\n::evidence{for="a"}\n::\n'
    assert [d.node_id for d in hits(src, "claim-without-evidence")] == ["b"]


def test_a_claim_without_an_id_is_not_checked() -> None:
    assert hits("::claim\nUnaddressable.\n::\n", "claim-without-evidence") == []


def test_evidence_under_noverify_still_backs_its_claim() -> None:
    src = '::claim{id="c1"}\n::\n\n::evidence{for="c1" noverify}\n::\n'
    assert hits(src, "claim-without-evidence") == []


def test_nested_evidence_backs_a_claim() -> None:
    src = '::claim{id="c1"}\nX.\n:::evidence{for="c1"}\nY.\n:::\n::\n'
    assert hits(src, "claim-without-evidence") == []


# -- evidence-missing-for -------------------------------------------------------------------


def test_evidence_and_counterevidence_without_for_both_warn() -> None:
    found = hits("::evidence\n::\n\n::counterevidence\n::\n", "evidence-missing-for")
    assert [(d.severity, d.line) for d in found] == [("warning", 1), ("warning", 4)]


def test_an_empty_for_is_missing() -> None:
    assert len(hits('::evidence{for=""}\n::\n', "evidence-missing-for")) == 1


def test_a_broken_for_is_a_broken_reference_not_a_missing_for() -> None:
    src = '::evidence{for="nope"}\n::\n'
    assert hits(src, "evidence-missing-for") == []
    assert len(hits(src, "broken-reference")) == 1


# -- risk-without-owner / decision-without-status -------------------------------------------


def test_a_risk_without_owner_warns_and_an_owner_silences_it() -> None:
    found = hits('::risk{id="r"}\n::\n', "risk-without-owner")
    assert [(d.severity, d.node_id) for d in found] == [("warning", "r")]
    assert hits('::risk{id="r" owner="sam"}\n::\n', "risk-without-owner") == []


def test_a_blank_owner_is_no_owner() -> None:
    assert len(hits('::risk{owner=""}\n::\n', "risk-without-owner")) == 1


def test_decisions_and_adrs_without_status_warn() -> None:
    found = hits("::decision\n::\n\n::adr\n::\n", "decision-without-status")
    assert [(d.severity, d.line) for d in found] == [("warning", 1), ("warning", 4)]
    assert "::adr" in found[1].message


def test_a_decision_with_status_is_fine() -> None:
    assert hits('::decision{status="proposed"}\n::\n', "decision-without-status") == []


# -- agent-task-without-scope ---------------------------------------------------------------


def test_agent_task_and_todo_without_scope_or_body_warn() -> None:
    found = hits("::agent_task\n::\n\n::todo\n   \n::\n", "agent-task-without-scope")
    assert [(d.severity, d.line) for d in found] == [("warning", 1), ("warning", 4)]


def test_agent_task_without_scope_is_silenced_by_a_scope_attribute() -> None:
    assert hits('::todo{scope="intro"}\n::\n', "agent-task-without-scope") == []


def test_agent_task_without_scope_is_silenced_by_a_body() -> None:
    assert hits("::agent_task\nRewrite the summary.\n::\n", "agent-task-without-scope") == []


def test_agent_task_without_scope_is_silenced_by_child_blocks() -> None:
    src = "::agent_task\n:::note\nSee the intro.\n:::\n::\n"
    assert hits(src, "agent-task-without-scope") == []


# -- state-change-missing-block / state-change-missing-from-to ------------------------------


def test_state_change_without_block_warns() -> None:
    found = hits('::state_change{from="a" to="b"}\n::\n', "state-change-missing-block")
    assert [d.severity for d in found] == ["warning"]


def test_state_change_missing_from_and_to_is_one_warning() -> None:
    found = hits('# P\n\n::state_change{block="p"}\n::\n', "state-change-missing-from-to")
    assert [(d.severity, d.line) for d in found] == [("warning", 3)]
    assert "from=" in found[0].message and "to=" in found[0].message


def test_state_change_missing_only_to_warns() -> None:
    found = hits('# P\n\n::state_change{block="p" from="a"}\n::\n', "state-change-missing-from-to")
    assert len(found) == 1 and "from=" not in found[0].message


def test_a_complete_state_change_is_clean() -> None:
    diags = validate(parse('# P\n\n::state_change{block="p" from="draft" to="final"}\n::\n'))
    assert diags == []


def test_a_state_change_pointing_nowhere_is_a_broken_reference() -> None:
    src = '::state_change{block="gone" from="a" to="b"}\n::\n'
    assert [d.code for d in validate(parse(src))] == ["broken-reference"]
