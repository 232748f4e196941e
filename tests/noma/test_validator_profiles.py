"""Profile conformance: ``unknown-profile`` and ``out-of-profile-directive``."""

from __future__ import annotations

from textwrap import dedent
from typing import Any

import pytest

from core.noma.diagnostics import Diagnostic
from core.noma.parser import parse
from core.noma.validate import KNOWN_PROFILES, validate
from core.noma.validate.profiles import PROFILES


def hits(src: str, code: str, **kwargs: Any) -> list[Diagnostic]:
    return [d for d in validate(parse(dedent(src)), **kwargs) if d.code == code]


def out_of_profile(src: str, **kwargs: Any) -> list[str]:
    """Names of the directives reported out of profile."""
    return [
        d.message.split()[0].removeprefix("::")
        for d in hits(src, "out-of-profile-directive", **kwargs)
    ]


BLOCKS = """\
::claim{id="c"}
::

::evidence{for="c"}
::

::hero
::

::memory
::

::figure{alt="x"}
::
"""


def test_known_profiles_are_the_four_spec_names_plus_the_interop_names() -> None:
    assert {"minimal", "technical", "research", "memory"} <= KNOWN_PROFILES
    assert {"technical-docs", "research-memo", "investment-thesis", "agent-memory"} <= (
        KNOWN_PROFILES
    )
    assert {"adr", "spec"} <= KNOWN_PROFILES


@pytest.mark.parametrize("name", sorted(KNOWN_PROFILES))
def test_a_known_profile_name_is_not_reported(name: str) -> None:
    assert hits(f"---\nprofile: {name}\n---\n# T\n", "unknown-profile") == []


def test_each_unknown_profile_name_is_one_warning_on_its_frontmatter_line() -> None:
    src = """\
    ---
    title: T
    profiles: [research, bogus, nonsense]
    ---
    # T
    """
    found = hits(src, "unknown-profile")
    assert [(d.severity, d.line) for d in found] == [("warning", 3), ("warning", 3)]
    assert '"bogus"' in found[0].message and '"nonsense"' in found[1].message


def test_profile_and_profiles_keys_are_both_read() -> None:
    src = "---\nprofile: weird\nprofiles: [odd]\n---\n# T\n"
    assert [d.line for d in hits(src, "unknown-profile")] == [2, 3]


def test_without_a_declared_profile_nothing_is_out_of_profile() -> None:
    assert out_of_profile(BLOCKS) == []


def test_directives_outside_the_research_allow_list_warn() -> None:
    found = hits("---\nprofile: research\n---\n" + BLOCKS, "out-of-profile-directive")
    assert [(d.severity, d.line) for d in found] == [("warning", 10), ("warning", 13)]
    assert out_of_profile("---\nprofile: research\n---\n" + BLOCKS) == ["hero", "memory"]


def test_nested_directives_are_checked_too() -> None:
    src = "---\nprofile: memory\n---\n::memory\n:::hero\n:::\n::\n"
    assert out_of_profile(src) == ["hero"]


def test_declared_profiles_union_their_allow_lists() -> None:
    src = "---\nprofiles: [memory, minimal]\n---\n" + BLOCKS
    assert out_of_profile(src) == ["claim", "evidence", "hero"]


def test_a_comma_separated_profile_value_declares_each_name() -> None:
    src = "---\nprofile: memory, minimal\n---\n" + BLOCKS
    assert out_of_profile(src) == ["claim", "evidence", "hero"]


def test_the_profile_argument_overrides_the_frontmatter() -> None:
    src = "---\nprofile: research\n---\n" + BLOCKS
    assert out_of_profile(src, profile="memory") == ["claim", "evidence", "hero", "figure"]
    assert out_of_profile(src, profile="spec") == ["memory"]


def test_an_unknown_override_is_reported_without_a_position_and_restricts_nothing() -> None:
    src = "---\nprofile: memory\n---\n" + BLOCKS
    found = hits(src, "unknown-profile", profile="imaginary")
    assert [(d.severity, d.line) for d in found] == [("warning", None)]
    assert out_of_profile(src, profile="imaginary") == []


def test_only_unknown_profiles_declared_means_no_allow_list() -> None:
    assert out_of_profile("---\nprofile: bogus\n---\n" + BLOCKS) == []


@pytest.mark.parametrize(
    ("alias", "base"),
    [
        ("technical-docs", "technical"),
        ("research-memo", "research"),
        ("investment-thesis", "research"),
        ("agent-memory", "memory"),
    ],
)
def test_profile_aliases_have_their_base_profiles_allow_list(alias: str, base: str) -> None:
    assert PROFILES[alias] == PROFILES[base]
    assert out_of_profile(BLOCKS, profile=alias) == out_of_profile(BLOCKS, profile=base)


def test_adr_is_minimal_plus_decision_records() -> None:
    assert PROFILES["minimal"] < PROFILES["adr"]
    assert {"decision", "adr", "risk", "evidence", "state_change"} <= PROFILES["adr"]
    assert out_of_profile(BLOCKS, profile="adr") == ["claim", "hero", "memory"]


def test_spec_is_technical_and_research_together() -> None:
    assert PROFILES["spec"] == PROFILES["technical"] | PROFILES["research"]


def test_the_section_directive_is_allowed_by_every_profile() -> None:
    src = '::section{id="s"}\n:::memory\n:::\n::\n'
    for name in sorted(KNOWN_PROFILES):
        assert "section" not in out_of_profile(src, profile=name)


def test_noverify_silences_out_of_profile_on_that_block() -> None:
    assert out_of_profile("::hero{noverify}\n::\n\n::card\n::\n", profile="research") == ["card"]
