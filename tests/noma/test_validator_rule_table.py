"""Every §4.4 rule code, one trigger and one near miss each.

The table is checked against `RULE_CODES`, so a code added to the validator without an
example here fails the suite. The topic files (`test_validator_*.py`) go deeper per rule.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from core.noma.diagnostics import Diagnostic
from core.noma.parser import parse
from core.noma.validate import RULE_CODES, validate
from core.noma.validate.registry import SEVERITIES

TODAY = date(2026, 6, 1)


def run(src: str, **kwargs: Any) -> list[Diagnostic]:
    kwargs.setdefault("today", TODAY)
    return validate(parse(dedent(src)), **kwargs)


DATASET = '::dataset{id="d"}\nschema:\n  year: integer\n::\n\n'

# code -> (severity, source, expected count, validate() keyword arguments)
# Codes this implementation adds (§4.4: "New codes MAY be added in a minor version").
# The fifteen after the first are the reference's rules beyond §4.4 (issue 13).
ADDITIVE = frozenset(
    {
        "malformed-attribute",
        "dataset-body-unreadable",
        "citation-missing-source",
        "claim-invalid-confidence",
        "claim-missing-confidence",
        "change-request-invalid-action",
        "change-request-missing-revision-text",
        "adr-missing-owner",
        "adr-missing-date",
        "adr-missing-decision",
        "memory-missing-id",
        "memory-missing-type",
        "memory-invalid-type",
        "memory-invalid-confidence",
        "memory-invalid-last-seen",
        "memory-wikilink-non-memory-target",
    }
)
MEMO = "---\nprofile: research-memo\n---\n"
ADR = "---\nprofile: adr\n---\n"
MEM = "---\nprofile: agent-memory\n---\n"
MEMORY = '::memory{id="m1" type="user"}\nLikes tea.\n::\n\n'

TRIGGERS: dict[str, tuple[str, str, int, dict[str, Any]]] = {
    "duplicate-id": (
        "error",
        '::note{id="x"}\n::\n\n::note{id="x"}\n::\n\n::note{id="x"}\n::\n',
        2,
        {},
    ),
    "broken-reference": ("error", "See [[ghost]] and [[phantom|the phantom]].\n", 2, {}),
    "unknown-profile": ("warning", "---\nprofiles: [bogus, nonsense]\n---\n# T\n", 2, {}),
    "out-of-profile-directive": (
        "warning",
        "---\nprofile: minimal\n---\n::hero\n::\n\n::claim{id='c'}\n::\n",
        2,
        {},
    ),
    "claim-without-evidence": ("warning", '::claim{id="c1"}\nThe sky is green.\n::\n', 1, {}),
    "evidence-missing-for": ("warning", "::evidence\nData.\n::\n", 1, {}),
    "risk-without-owner": ("warning", "::risk\nOutage.\n::\n", 1, {}),
    "decision-without-status": ("warning", "::decision\nUse Rust.\n::\n", 1, {}),
    "agent-task-without-scope": ("warning", "::agent_task\n::\n", 1, {}),
    "control-missing-default": ("warning", '::control{id="n" type="slider"}\n::\n', 1, {}),
    "control-out-of-range-default": (
        "warning",
        '::control{id="n" type="number" default=11 min=0 max=10}\n::\n',
        1,
        {},
    ),
    "control-invalid-lock": ("warning", '::control{id="t" lock="sometimes"}\n::\n', 1, {}),
    "computed-missing-formula": ("warning", '::computed_metric{id="m"}\n::\n', 1, {}),
    "formula-parse-error": ("error", '::computed_metric{id="m" formula="1 +"}\n::\n', 1, {}),
    "computed-unknown-dependency": (
        "error",
        '::computed_metric{id="m" formula="ghost * 2"}\n::\n',
        1,
        {},
    ),
    "computed-chain-too-deep": (
        "warning",
        '::control{id="c" type="number" default=1}\n::\n\n'
        '::computed_metric{id="a" formula="c"}\n::\n\n'
        '::computed_metric{id="b" formula="a"}\n::\n\n'
        '::computed_metric{id="d" formula="b"}\n::\n',
        1,
        {},
    ),
    "state-change-missing-block": (
        "warning",
        '::state_change{from="draft" to="final"}\n::\n',
        1,
        {},
    ),
    "state-change-missing-from-to": (
        "warning",
        '# Plan\n\n::state_change{block="plan" from="draft"}\n::\n',
        1,
        {},
    ),
    "stale-citation": ("warning", '::citation{accessed="2024-01-01"}\n::\n', 1, {}),
    "diagram-missing-kind": ("warning", "::diagram\ngraph TD; A-->B\n::\n", 1, {}),
    "diagram-missing-source": ("warning", '::diagram{kind="mermaid"}\n::\n', 1, {}),
    "plot-missing-data": ("error", '::plot{title="Growth"}\n::\n', 1, {}),
    "plot-unknown-dataset": (
        "error",
        '# Numbers\n\n::plot{dataset="numbers"}\n::\n',
        1,
        {},
    ),
    "plot-unknown-column": (
        "error",
        DATASET + '::plot{dataset="d" column="profit"}\n::\n',
        1,
        {},
    ),
    "plot-mixed-delimiters": ("warning", '::plot{data="1,2,3" xlabels="a b c"}\n::\n', 1, {}),
    "plotly-missing-spec": ("warning", "::plotly\n::\n", 1, {}),
    "plotly-invalid-json": ("error", "::plotly\n{data: [}\n::\n", 1, {}),
    "figure-missing-alt": ("warning", '::figure{src="chart.png"}\n::\n', 1, {}),
    "dataset-src-missing": ("warning", '::dataset{id="d" src="missing.csv"}\n::\n', 1, {}),
    "escape-hatch-untrusted": ("warning", "::script\nalert(1)\n::\n", 1, {}),
    "malformed-attribute": ("warning", '::note{id="n" x="1"y k=2}\ntext\n::\n', 1, {}),
    "dataset-body-unreadable": ("error", '::dataset{id="d"}\nrows: &r [*r]\n::\n', 1, {}),
    "unknown-ignore-rule": ("info", "# Fine\n", 1, {"ignore_rules": ["no-such-rule"]}),
    "citation-missing-source": ("warning", '::citation{title="A paper"}\n::\n', 1, {}),
    "claim-invalid-confidence": (
        "warning",
        '::claim{confidence="high"}\n::\n\n::claim{confidence=1.5}\n::\n',
        2,
        {},
    ),
    "claim-missing-confidence": ("warning", MEMO + "::claim\nX.\n::\n", 1, {}),
    "change-request-invalid-action": (
        "warning",
        '::change_request{action="rewrite" to="x"}\n::\n\n::change_request{to="y"}\n::\n',
        2,
        {},
    ),
    "change-request-missing-revision-text": (
        "warning",
        '::change_request{action="replace" from="a"}\n::\n\n'
        '::change_request{action="insert"}\n::\n\n'
        '::change_request{action="delete" to="b"}\n::\n',
        3,
        {},
    ),
    "adr-missing-owner": (
        "warning",
        ADR + '::decision{status="accepted" date="2026-01-02"}\nUse Rust.\n::\n',
        1,
        {},
    ),
    "adr-missing-date": (
        "warning",
        ADR + '::adr{status="accepted" owner="kim"}\nUse Rust.\n::\n',
        1,
        {},
    ),
    "adr-missing-decision": ("warning", ADR + "# Context\n\nWhy.\n", 1, {}),
    "memory-missing-id": ("error", '::memory{type="user"}\nLikes tea.\n::\n', 1, {}),
    "memory-missing-type": ("error", '::memory{id="m1"}\nLikes tea.\n::\n', 1, {}),
    "memory-invalid-type": ("error", '::memory{id="m1" type="opinion"}\nx\n::\n', 1, {}),
    "memory-invalid-confidence": (
        "error",
        '::memory{id="m1" type="user" confidence="sure"}\nx\n::\n',
        1,
        {},
    ),
    "memory-invalid-last-seen": (
        "error",
        '::memory{id="m1" type="user" last_seen="yesterday"}\nx\n::\n',
        1,
        {},
    ),
    "memory-wikilink-non-memory-target": (
        "warning",
        MEM
        + "# Notes\n\n"
        + '::memory{id="m2" type="project"}\nSee [[notes]] and [[m1]].\n::\n\n'
        + MEMORY,
        1,
        {},
    ),
}
# code -> (source, validate() keyword arguments): as close as possible, but clean.
NEAR_MISSES: dict[str, tuple[str, dict[str, Any]]] = {
    "duplicate-id": ("## Overview\n\n## Overview\n", {}),
    "broken-reference": ("# Home {aliases='start'}\n\nSee [[home]] and [[start|here]].\n", {}),
    "unknown-profile": ("---\nprofiles: [research-memo, agent-memory]\n---\n# T\n", {}),
    "out-of-profile-directive": ("::hero\n::\n", {}),
    "claim-without-evidence": (
        '::claim{id="c1"}\nX.\n::\n\n::counterevidence{for="c1"}\nNot X.\n::\n',
        {},
    ),
    "evidence-missing-for": ('::claim{id="c"}\n::\n\n::evidence{for="c"}\n::\n', {}),
    "risk-without-owner": ('::risk{owner="ops"}\nOutage.\n::\n', {}),
    "decision-without-status": ('::adr{status="accepted"}\nUse Rust.\n::\n', {}),
    "agent-task-without-scope": ("::agent_task\nTidy the intro.\n::\n", {}),
    "control-missing-default": ('::control{id="n"}\n::\n', {}),
    "control-out-of-range-default": (
        '::control{id="n" type="number" default=10 min=0 max=10}\n::\n',
        {},
    ),
    "control-invalid-lock": ('::control{id="t" lock="Content Locked"}\n::\n', {}),
    "computed-missing-formula": ('::computed_metric{id="m"}\nformula: 2 * 3\n::\n', {}),
    "formula-parse-error": ('::computed_metric{id="m" formula="max(1, 2) ^ 2"}\n::\n', {}),
    "computed-unknown-dependency": (
        '::control{id="rate" type="number" default=1}\n::\n\n'
        '::computed_metric{id="m" formula="rate * 2"}\n::\n',
        {},
    ),
    "computed-chain-too-deep": (
        '::control{id="c" type="number" default=1}\n::\n\n'
        '::computed_metric{id="a" formula="c"}\n::\n\n'
        '::computed_metric{id="b" formula="a"}\n::\n',
        {},
    ),
    "state-change-missing-block": (
        '# Plan\n\n::state_change{block="plan" from="draft" to="final"}\n::\n',
        {},
    ),
    "state-change-missing-from-to": (
        '# Plan\n\n::state_change{block="plan" from="draft" to="final"}\n::\n',
        {},
    ),
    "stale-citation": ('::citation{accessed="2026-01-01"}\n::\n', {}),
    "diagram-missing-kind": ('::diagram{kind="mermaid"}\ngraph TD; A-->B\n::\n', {}),
    "diagram-missing-source": ('::diagram{kind="mermaid"}\ngraph TD; A-->B\n::\n', {}),
    "plot-missing-data": ('::plot{data="1,2,3"}\n::\n', {}),
    "plot-unknown-dataset": (
        '::dataset{id="numbers"}\nschema:\n  x: number\n::\n\n::plot{dataset="numbers"}\n::\n',
        {},
    ),
    "plot-unknown-column": (
        DATASET + '::plot{dataset="d" column="year"}\n::\n',
        {},
    ),
    "plot-mixed-delimiters": ('::plot{data="1,2,3" xlabels="a,b,c"}\n::\n', {}),
    "plotly-missing-spec": ('::plotly\n{"data": []}\n::\n', {}),
    "plotly-invalid-json": ('::plotly\n{"data": [{"y": [1, 2]}]}\n::\n', {}),
    "figure-missing-alt": ('::figure{src="chart.png" caption="Growth by year"}\n::\n', {}),
    "dataset-src-missing": ('::dataset{id="d" src="present.csv"}\n::\n', {}),
    "escape-hatch-untrusted": ("::script{trusted}\nalert(1)\n::\n", {}),
    "malformed-attribute": ('::note{id="n" x="1" y k=2}\ntext\n::\n', {}),
    "dataset-body-unreadable": ('::dataset{id="d"}\na: &a [1, 2]\nrows: [*a, *a]\n::\n', {}),
    "unknown-ignore-rule": ("# Fine\n", {"ignore_rules": ["duplicate-id"]}),
    "citation-missing-source": ('::citation{doi="10.1000/182"}\n::\n', {}),
    "claim-invalid-confidence": (
        '::claim{confidence="0.5"}\n::\n\n::claim{confidence=1}\n::\n',
        {},
    ),
    "claim-missing-confidence": ("::claim\nX.\n::\n", {}),  # not required outside memos
    "change-request-invalid-action": ('::change_request{action="insert" to="x"}\n::\n', {}),
    "change-request-missing-revision-text": (
        '::change_request{action="replace" from="a" to="b"}\n::\n\n'
        '::change_request{action="insert"}\nNew words.\n::\n\n'
        '::change_request{action="delete" text="old"}\n::\n',
        {},
    ),
    "adr-missing-owner": (
        ADR + '::decision{status="accepted" owner="kim" decided_at="2026-01-02"}\nX\n::\n',
        {},
    ),
    "adr-missing-date": (
        ADR + '::adr{status="accepted" owner="kim" decidedAt="2026-01-02"}\nX\n::\n',
        {},
    ),
    "adr-missing-decision": ("# Context\n\nWhy.\n", {}),  # not under the adr profile
    "memory-missing-id": (MEMORY, {}),
    "memory-missing-type": (MEMORY, {}),
    "memory-invalid-type": ('::memory{id="m1" type="reference"}\nx\n::\n', {}),
    "memory-invalid-confidence": ('::memory{id="m1" type="user" confidence=0.7}\nx\n::\n', {}),
    "memory-invalid-last-seen": (
        '::memory{id="m1" type="user" last_seen="2026-03-01T10:00:00Z"}\nx\n::\n',
        {},
    ),
    "memory-wikilink-non-memory-target": (
        MEM + '::memory{id="m2" type="project"}\nSee [[m1]].\n::\n\n' + MEMORY,
        {},
    ),
}


def test_there_are_31_spec_rule_codes_plus_the_additive_ones_each_with_its_severity() -> None:
    from core.noma.validate.registry import ADDITIVE_CODES

    assert ADDITIVE == ADDITIVE_CODES and len(ADDITIVE) == 16
    assert len(RULE_CODES - ADDITIVE) == 31
    assert ADDITIVE <= RULE_CODES
    assert "unknown-ignore-rule" in RULE_CODES
    assert {code: TRIGGERS[code][0] for code in RULE_CODES} == dict(SEVERITIES)


def test_the_table_covers_every_rule_code() -> None:
    assert set(TRIGGERS) == RULE_CODES
    assert set(NEAR_MISSES) == RULE_CODES


def _with_files(kwargs: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "present.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return {"base_dir": tmp_path, **kwargs}


@pytest.mark.parametrize("code", sorted(RULE_CODES))
def test_rule_fires_on_its_trigger(code: str, tmp_path: Path) -> None:
    severity, src, count, kwargs = TRIGGERS[code]
    hits = [d for d in run(src, **_with_files(kwargs, tmp_path)) if d.code == code]
    assert len(hits) == count, hits
    assert all(d.severity == severity for d in hits)


@pytest.mark.parametrize("code", sorted(RULE_CODES))
def test_rule_is_silent_on_its_near_miss(code: str, tmp_path: Path) -> None:
    src, kwargs = NEAR_MISSES[code]
    hits = [d for d in run(src, **_with_files(kwargs, tmp_path)) if d.code == code]
    assert hits == []
