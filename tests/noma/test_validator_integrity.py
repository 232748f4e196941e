"""Document integrity: ``duplicate-id`` and ``broken-reference`` (§2.1, §2.2, §4.4)."""

from __future__ import annotations

from textwrap import dedent
from typing import Any

from core.noma.diagnostics import Diagnostic
from core.noma.parser import parse
from core.noma.validate import validate


def hits(src: str, code: str, **kwargs: Any) -> list[Diagnostic]:
    return [d for d in validate(parse(dedent(src)), **kwargs) if d.code == code]


# -- duplicate-id ---------------------------------------------------------------------------


def test_three_copies_of_an_explicit_id_give_two_errors_on_the_extra_copies() -> None:
    found = hits(
        """\
        ::note{id="x"}
        ::

        ::note{id="x"}
        ::

        ::note{id="x"}
        ::
        """,
        "duplicate-id",
    )
    assert [(d.severity, d.line, d.column, d.node_id) for d in found] == [
        ("error", 4, 1, "x"),
        ("error", 7, 1, "x"),
    ]
    assert '"x"' in found[0].message


def test_heading_slugs_and_directive_ids_share_one_id_space() -> None:
    found = hits(
        """\
        # Intro

        ::note{id="intro"}
        ::
        """,
        "duplicate-id",
    )
    assert len(found) == 1 and found[0].line == 3


def test_explicit_heading_id_colliding_with_a_directive_id_is_a_duplicate() -> None:
    assert len(hits('## Setup {id="s"}\n\n::note{id="s"}\n::\n', "duplicate-id")) == 1


def test_repeated_headings_are_suffixed_not_duplicates() -> None:
    assert hits("## Overview\n\n## Overview\n\n## Overview\n", "duplicate-id") == []


def test_duplicate_ids_inside_directive_bodies_are_found() -> None:
    src = """\
    ::section{id="outer"}
    :::note{id="inner"}
    :::
    :::note{id="inner"}
    :::
    ::
    """
    found = hits(src, "duplicate-id")
    assert [(d.line, d.node_id) for d in found] == [(4, "inner")]


# -- broken-reference: attributes -----------------------------------------------------------


def test_evidence_for_a_missing_claim_is_a_broken_reference() -> None:
    found = hits('::evidence{for="nope"}\nfloating.\n::\n', "broken-reference")
    assert [(d.severity, d.line) for d in found] == [("error", 1)]
    assert '"nope"' in found[0].message


def test_for_parent_and_dataset_are_checked_on_any_directive() -> None:
    src = """\
    ::note{for="a"}
    ::

    ::callout{parent="b"}
    ::

    ::plotly{dataset="c"}
    {}
    ::
    """
    assert [d.line for d in hits(src, "broken-reference")] == [1, 4, 7]


def test_references_resolve_against_aliases() -> None:
    src = """\
    ---
    aliases: [home]
    ---
    # Start

    ::claim{id="c1" aliases="first-claim, main"}
    ::

    ::evidence{for="main"}
    ::

    ::note{parent="home"}
    ::
    """
    assert hits(src, "broken-reference") == []


def test_target_block_and_ref_are_checked_on_review_and_note_directives() -> None:
    src = """\
    ::comment{target="t1"}
    ::

    ::footnote{ref="t2"}
    ::

    ::endnote{block="t3"}
    ::

    ::change_request{target="t4"}
    ::

    ::state_change{block="t5" from="a" to="b"}
    ::
    """
    found = hits(src, "broken-reference")
    assert len(found) == 5
    assert all(d.severity == "error" for d in found)


def test_target_on_other_directives_is_not_a_reference() -> None:
    assert hits('::callout{target="_blank" ref="x" block="y"}\n::\n', "broken-reference") == []


def test_numeric_looking_ids_resolve_as_written() -> None:
    src = '::claim{id="2024"}\n::\n\n::evidence{for=2024}\n::\n\nSee [[2024]].\n'
    assert hits(src, "broken-reference") == []


def test_an_empty_reference_attribute_is_not_a_broken_reference() -> None:
    assert hits('::note{for="" parent}\n::\n', "broken-reference") == []


# -- broken-reference: wikilinks ------------------------------------------------------------


def test_each_broken_wikilink_is_its_own_error_on_its_own_line() -> None:
    src = """\
    # Doc

    First [[a]] and [[b]],
    then [[c]].

    - item [[d]]
    - item
      continued [[e]]
    """
    found = hits(src, "broken-reference")
    assert [(d.line, d.severity, d.node_id) for d in found] == [
        (3, "error", "doc"),
        (3, "error", "doc"),
        (4, "error", "doc"),
        (6, "error", "doc"),
        (8, "error", "doc"),
    ]


def test_wikilinks_are_read_in_headings_quotes_and_table_cells() -> None:
    src = """\
    # Title [[h]]

    > quoted [[q]]

    | A | B |
    | --- | --- |
    | [[cell]] | x |
    """
    found = hits(src, "broken-reference")
    assert [(d.line, d.message.split("]]")[0]) for d in found] == [
        (1, "Wikilink [[h"),
        (3, "Wikilink [[q"),
        (7, "Wikilink [[cell"),
    ]


def test_a_labelled_wikilink_checks_its_target_not_its_label() -> None:
    src = """\
    ::claim{id="c1"}
    ::

    See [[c1|the claim]] and [[ghost|a ghost]].

    | Link |
    | --- |
    | [[c1|claim]] |
    """
    found = hits(src, "broken-reference")
    assert len(found) == 1 and "ghost" in found[0].message


def test_wikilinks_in_code_are_not_links() -> None:
    src = """\
    ```python
    x = "[[ghost]]"
    ```

    Inline `[[also-ghost]]` code spans are literal too.
    """
    assert hits(src, "broken-reference") == []


def test_a_wikilink_in_a_one_paragraph_directive_body_counts_once() -> None:
    found = hits('::note{id="n"}\nsee [[ghost]]\n::\n', "broken-reference")
    assert [(d.line, d.node_id) for d in found] == [(2, "n")]


def test_a_wikilink_in_a_heading_inside_a_directive_body_counts() -> None:
    found = hits("::note\n## About [[ghost]]\n::\n", "broken-reference")
    assert [d.line for d in found] == [2]


def test_dataset_row_arrays_are_data_not_wikilinks() -> None:
    src = """\
    ::dataset{id="d"}
    rows: [[1, 2]]
    ::

    ::plotly
    {"data": [{"z": [[1, 2]]}]}
    ::
    """
    assert hits(src, "broken-reference") == []


def test_wikilinks_resolve_to_heading_slugs_and_suffixed_slugs() -> None:
    src = "## Risks\n\n## Risks\n\nSee [[risks]] and [[risks-2]] but not [[risks-3]].\n"
    found = hits(src, "broken-reference")
    assert len(found) == 1 and "risks-3" in found[0].message


def test_blanks_around_a_wikilink_target_are_ignored() -> None:
    src = '::claim{id="c1"}\n::\n\nSee [[ c1 ]] and [[ c1 | label ]] but not [[ c2 ]].\n'
    found = hits(src, "broken-reference")
    assert len(found) == 1 and '"c2"' in found[0].message


def test_an_explicit_heading_id_can_collide_with_another_headings_slug() -> None:
    found = hits('## Alpha {id="beta"}\n\n## Beta\n', "duplicate-id")
    assert [(d.line, d.node_id) for d in found] == [(3, "beta")]
