"""The fifteen additive rules the reference applies beyond §4.4 (issue 13) respect
``noverify``, ``--ignore-rule`` and profiles like the §4.4 rules; edge cases per rule."""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_validator_rule_table import TRIGGERS, run

from core.noma.validate.registry import ADDITIVE_CODES

NEW = sorted(ADDITIVE_CODES - {"malformed-attribute"})


def codes(src: str, **kwargs: Any) -> list[str]:
    return [d.code for d in run(src, **kwargs)]


@pytest.mark.parametrize("code", NEW)
def test_ignore_rule_drops_it(code: str) -> None:
    _severity, src, _count, kwargs = TRIGGERS[code]
    assert code in codes(src, **kwargs)
    after = run(src, ignore_rules=[code], **kwargs)
    assert code not in [d.code for d in after]
    assert "unknown-ignore-rule" not in [d.code for d in after]  # a known rule name


def _noverify(src: str) -> str:
    """Every directive opener of ``src`` flagged ``noverify``."""

    def flag(m: re.Match[str]) -> str:
        opener, group = m.group(1), m.group(2)
        return f"{opener}{{noverify {group[1:-1]}}}" if group else f"{opener}{{noverify}}"

    return re.sub(r"(?m)^(::[a-z_]+)(\{[^}\n]*\})?$", flag, src)


@pytest.mark.parametrize("code", sorted(set(NEW) - {"adr-missing-decision"}))
def test_noverify_silences_it(code: str) -> None:
    _severity, src, _count, kwargs = TRIGGERS[code]
    quiet = _noverify(src)
    assert quiet != src
    assert code not in codes(quiet, **kwargs)


def test_profile_rules_follow_the_declared_or_overridden_profile() -> None:
    claim = "::claim\nX.\n::\n"
    assert "claim-missing-confidence" not in codes(claim)
    assert "claim-missing-confidence" in codes(claim, profile="investment-thesis")
    assert "claim-missing-confidence" not in codes(claim, profile="research")
    bare = "# Context\n"
    assert "adr-missing-decision" in codes(bare, profile="adr")
    assert "adr-missing-decision" in codes("---\nprofiles: [spec, adr]\n---\n" + bare)
    # A decision under noverify still counts as the document's decision.
    assert "adr-missing-decision" not in codes(
        "---\nprofile: adr\n---\n::decision{noverify}\nX\n::\n"
    )
    # Outside the adr profile a decision needs no owner or date.
    assert codes('::decision{status="accepted"}\nX\n::\n') == []


def test_memory_links_only_under_memory_profiles_and_never_in_code() -> None:
    src = '# Notes\n\n::memory{id="m1" type="user"}\nSee [[notes]] and `[[notes]]`.\n::\n'
    assert "memory-wikilink-non-memory-target" not in codes(src)
    found = [d for d in run(src, profile="memory") if d.code == "memory-wikilink-non-memory-target"]
    assert len(found) == 1 and found[0].line == 4
    # A broken link is broken-reference's finding, not this one.
    ghost = '::memory{id="m1" type="user"}\nSee [[ghost]].\n::\n'
    assert codes(ghost, profile="memory") == ["broken-reference"]
    # An alias of a memory is a memory target.
    alias = (
        '::memory{id="m1" type="user" aliases="tea"}\nx\n::\n\n'
        '::memory{id="m2" type="user"}\n[[tea]]\n::\n'
    )
    assert codes(alias, profile="agent-memory") == []


@pytest.mark.parametrize(
    ("value", "ok"),
    [("0", True), ("1", True), ("0.25", True), ("-0.1", False), ("2", False), ("", False)],
)
def test_confidence_bounds(value: str, ok: bool) -> None:
    for name, code in (
        ("claim", "claim-invalid-confidence"),
        ("memory", "memory-invalid-confidence"),
    ):
        src = f'::{name}{{id="b1" type="user" confidence="{value}"}}\nx\n::\n'
        assert (code not in codes(src)) is ok, (name, value)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-03-01", True),
        ("2026-03-01T10:00:00+02:00", True),
        ("2026-03-01 10:00", True),
        ("03/01/2026", False),
        ("2026-13-01", False),
        ("", False),
    ],
)
def test_last_seen_dates(value: str, ok: bool) -> None:
    src = f'::memory{{id="m1" type="user" last_seen="{value}"}}\nx\n::\n'
    assert ("memory-invalid-last-seen" not in codes(src)) is ok


def test_citation_source_needs_a_value() -> None:
    assert "citation-missing-source" in codes('::citation{url=""}\n::\n')
    assert "citation-missing-source" not in codes('::citation{source="Interview"}\n::\n')
