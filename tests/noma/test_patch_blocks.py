"""Block and review ops (§3.1, §1.5) and the placement rules of noma-interop "Patch engine"."""

from __future__ import annotations

import hashlib

import pytest

from core.noma.patch import PatchError, apply_ops_to_bytes, apply_ops_to_text


def apply(text: str, *ops: dict) -> str:
    return apply_ops_to_text(text, list(ops))


def code_of(text: str, *ops: dict) -> str:
    with pytest.raises(PatchError) as info:
        apply_ops_to_text(text, list(ops))
    return info.value.code


CLAIM = '::claim{id="c1" confidence=0.5}\nOld body.\n::\n'


# -- source preservation ------------------------------------------------------------------


def test_bytes_outside_the_touched_block_never_change_crlf_bom_no_final_newline() -> None:
    text = '\ufeff# Title\r\n\r\nkeep  \r\n\r\n::claim{id="c"}\r\nold\r\n::\r\n\r\ntail'
    out = apply(text, {"op": "replace_body", "id": "c", "content": "new"})
    assert out == '\ufeff# Title\r\n\r\nkeep  \r\n\r\n::claim{id="c"}\r\nnew\r\n::\r\n\r\ntail'


def test_appending_after_a_last_line_without_newline_keeps_it_that_way() -> None:
    text = '::section{id="s"}\r\n::'
    out = apply(text, {"op": "add_block", "parent": "s", "content": ':::note{id="n"}\nx\n:::'})
    assert out == '::section{id="s"}\r\n:::note{id="n"}\r\nx\r\n:::\r\n::'


def test_invalid_utf8_elsewhere_in_the_file_survives_a_patch() -> None:
    raw = b'\xff junk\n\n::claim{id="c" confidence=0.5}\nx\n::\n'
    out = apply_ops_to_bytes(
        raw, [{"op": "update_attribute", "id": "c", "key": "confidence", "value": 1}]
    )
    assert out == b'\xff junk\n\n::claim{id="c" confidence=1}\nx\n::\n'


# -- replace_block / replace_body ---------------------------------------------------------


def test_replace_block_replaces_opener_body_and_closer() -> None:
    out = apply(
        "a\n\n" + CLAIM + "\nz\n",
        {"op": "replace_block", "id": "c1", "content": '::claim{id="c1"}\nNew.\n::\n\n'},
    )
    assert out == 'a\n\n::claim{id="c1"}\nNew.\n::\n\nz\n'


def test_replace_block_rejects_non_directive_content() -> None:
    assert (
        code_of(CLAIM, {"op": "replace_block", "id": "c1", "content": "# A heading"})
        == "invalid_content"
    )
    two = '::a{id="x"}\n::\n\n::b{id="y"}\n::'
    assert code_of(CLAIM, {"op": "replace_block", "id": "c1", "content": two}) == "invalid_content"
    assert (
        code_of(CLAIM, {"op": "replace_block", "id": "c1", "content": '::a{id="x"}\nunclosed'})
        == "invalid_content"
    )


def test_replace_block_id_conflict_with_another_block() -> None:
    text = CLAIM + '\n::claim{id="c2"}\nx\n::\n'
    assert (
        code_of(text, {"op": "replace_block", "id": "c1", "content": '::claim{id="c2"}\ny\n::'})
        == "id_conflict"
    )


def test_replace_body_fills_an_empty_directive_and_strips_trailing_newlines() -> None:
    out = apply(
        '::note{id="n"}\n::\n', {"op": "replace_body", "id": "n", "content": "one\ntwo\n\n"}
    )
    assert out == '::note{id="n"}\none\ntwo\n::\n'


def test_replace_body_cannot_close_its_block_early() -> None:
    assert (
        code_of(CLAIM, {"op": "replace_body", "id": "c1", "content": "x\n::\ny"})
        == "invalid_content"
    )


# -- add_block ------------------------------------------------------------------------------


SECTION = '::section{id="s"}\n:::risk{id="r1"}\nA.\n:::\n::\n'


def test_add_block_before_a_child_puts_a_blank_line_after() -> None:
    out = apply(
        SECTION,
        {"op": "add_block", "parent": "s", "position": 0, "content": ':::risk{id="r0"}\nZ.\n:::'},
    )
    assert out == '::section{id="s"}\n:::risk{id="r0"}\nZ.\n:::\n\n:::risk{id="r1"}\nA.\n:::\n::\n'


def test_add_block_append_puts_a_blank_line_before() -> None:
    out = apply(SECTION, {"op": "add_block", "parent": "s", "content": ':::risk{id="r2"}\nB.\n:::'})
    assert out == '::section{id="s"}\n:::risk{id="r1"}\nA.\n:::\n\n:::risk{id="r2"}\nB.\n:::\n::\n'


def test_add_block_into_empty_directive_and_empty_heading_section() -> None:
    assert apply(
        '::section{id="s"}\n::\n',
        {"op": "add_block", "parent": "s", "content": ':::n{id="n"}\n:::'},
    ) == ('::section{id="s"}\n:::n{id="n"}\n:::\n::\n')
    assert apply(
        "# Empty\n# Next\n", {"op": "add_block", "parent": "empty", "content": '::n{id="n"}\n::'}
    ) == ('# Empty\n\n::n{id="n"}\n::\n\n# Next\n')


def test_add_block_content_is_inserted_as_written() -> None:
    out = apply(
        SECTION,
        {"op": "add_block", "parent": "s", "position": 1, "content": '::risk{id="r2"}\nB.\n::'},
    )
    assert '\n\n::risk{id="r2"}\nB.\n::\n::\n' in out


def test_add_block_errors() -> None:
    add = {"op": "add_block", "content": ':::risk{id="r9"}\n:::'}
    assert code_of(SECTION, {**add, "parent": "nope"}) == "parent_missing"
    assert code_of(SECTION, {**add, "parent": "s", "position": 2}) == "parent_missing"
    assert (
        code_of(SECTION, {**add, "parent": "s", "position": -1}) == "invalid_op"
    )  # schema: minimum 0
    assert (
        code_of(SECTION, {**add, "parent": "s", "content": ':::risk{id="r1"}\n:::'})
        == "id_conflict"
    )
    assert (
        code_of(SECTION, {"op": "add_block", "parent": "s", "content": "just text"})
        == "invalid_content"
    )


def test_parent_addressed_by_alias_is_parent_missing() -> None:
    text = '::section{id="s" aliases="sec"}\n::\n'
    assert (
        code_of(text, {"op": "add_block", "parent": "sec", "content": ":::n\n:::"})
        == "parent_missing"
    )


# -- delete_block ---------------------------------------------------------------------------


def test_delete_block_takes_one_following_blank_line_when_preceded_by_one() -> None:
    text = 'a\n\n::x{id="x"}\n::\n\nb\n'
    assert apply(text, {"op": "delete_block", "id": "x"}) == "a\n\nb\n"


def test_delete_first_block_leaves_no_leading_blank_line() -> None:
    assert apply('::x{id="x"}\n::\n\nb\n', {"op": "delete_block", "id": "x"}) == "b\n"


def test_delete_last_block_leaves_no_trailing_blank_line() -> None:
    assert apply('a\n\n::x{id="x"}\n::\n', {"op": "delete_block", "id": "x"}) == "a\n"


def test_delete_block_removes_children_and_leaves_references_dangling() -> None:
    text = '::claim{id="c"}\n:::evidence{id="e" for="c"}\n:::\n::\n\nSee [[c]].\n'
    assert apply(text, {"op": "delete_block", "id": "c"}) == "See [[c]].\n"


def test_heading_sections_are_not_directive_targets() -> None:
    for op in (
        {"op": "delete_block", "id": "h"},
        {"op": "replace_block", "id": "h", "content": "::x\n::"},
        {"op": "rename_id", "from": "h", "to": "k"},
        {"op": "update_attribute", "id": "h", "key": "a", "value": 1},
    ):
        assert code_of("# H\n", op) == "target_missing"


# -- attributes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (True, "flag"),
        (False, "flag=false"),
        (3, "flag=3"),
        (0.25, "flag=0.25"),
        ("text", 'flag="text"'),
        ("42", 'flag="42"'),
        ('say "hi"', "flag='say \"hi\"'"),
    ],
)
def test_update_attribute_value_forms(value: object, written: str) -> None:
    out = apply(
        '::x{id="x"}\n::\n', {"op": "update_attribute", "id": "x", "key": "flag", "value": value}
    )
    assert out == '::x{id="x" ' + written + "}\n::\n"


def test_update_attribute_replaces_in_place_and_drops_trailing_whitespace() -> None:
    out = apply(
        '::x{id="x" a=1 b="two"}   \r\n::\r\n',
        {"op": "update_attribute", "id": "x", "key": "a", "value": 9},
    )
    assert out == '::x{id="x" a=9 b="two"}\r\n::\r\n'


def test_update_attribute_null_removes_and_absent_null_is_a_noop() -> None:
    text = '::x{id="x" a=1}\n::\n'
    assert (
        apply(text, {"op": "update_attribute", "id": "x", "key": "a", "value": None})
        == '::x{id="x"}\n::\n'
    )
    assert apply(text, {"op": "update_attribute", "id": "x", "key": "zz", "value": None}) == text


def test_update_attribute_on_a_directive_without_braces() -> None:
    assert apply(
        '::toc\n::\n\n::x{id="x"}\n::\n',
        {"op": "update_attribute", "id": "x", "key": "k", "value": "v"},
    ).startswith("::toc\n")


def test_value_with_both_quote_kinds_cannot_be_written() -> None:
    assert (
        code_of(
            '::x{id="x"}\n::\n',
            {"op": "update_attribute", "id": "x", "key": "k", "value": "a'b\"c"},
        )
        == "invalid_content"
    )


def test_id_attribute_is_protected() -> None:
    assert (
        code_of(CLAIM, {"op": "update_attribute", "id": "c1", "key": "id", "value": "c2"})
        == "id_attribute_protected"
    )
    assert (
        code_of(CLAIM, {"op": "remove_attribute", "id": "c1", "key": "id"})
        == "id_attribute_protected"
    )


@pytest.mark.parametrize("form", ['k="v"', "k='v'", "k=v", "k"])
def test_remove_attribute_handles_every_form(form: str) -> None:
    out = apply(
        f'::x{{id="x" {form} z=1}}\n::\n', {"op": "remove_attribute", "id": "x", "key": "k"}
    )
    assert out == '::x{id="x" z=1}\n::\n'


def test_remove_attribute_absent_key_is_a_noop() -> None:
    assert apply(CLAIM, {"op": "remove_attribute", "id": "c1", "key": "nope"}) == CLAIM


# -- rename_id ------------------------------------------------------------------------------


def test_rename_id_retargets_references_and_wikilinks_but_not_aliases_prose_or_code() -> None:
    text = (
        '::claim{id="old" aliases="old-alias"}\nbody [[old]] and [[old|label]] and old\n::\n\n'
        "::evidence{for=\"old\" parent=old dataset='old'}\n::\n\n"
        '::comment{target="old"}\n::\n\n'
        "```\n[[old]]\n```\n\n"
        "Inline `[[old]]` stays, [[old]] moves, [[older]] stays.\n"
    )
    out = apply(text, {"op": "rename_id", "from": "old", "to": "new"})
    assert out == (
        '::claim{id="new" aliases="old-alias"}\nbody [[new]] and [[new|label]] and old\n::\n\n'
        '::evidence{for="new" parent="new" dataset="new"}\n::\n\n'
        '::comment{target="old"}\n::\n\n'
        "```\n[[old]]\n```\n\n"
        "Inline `[[old]]` stays, [[new]] moves, [[older]] stays.\n"
    )


def test_rename_id_conflicts_with_an_existing_id_or_alias() -> None:
    text = '::a{id="a"}\n::\n\n::b{id="b" aliases="bee"}\n::\n'
    assert code_of(text, {"op": "rename_id", "from": "a", "to": "b"}) == "id_conflict"
    assert code_of(text, {"op": "rename_id", "from": "a", "to": "bee"}) == "id_conflict"
    assert code_of(text, {"op": "rename_id", "from": "zz", "to": "q"}) == "target_missing"


def test_rename_id_by_alias_is_target_missing() -> None:
    assert (
        code_of('::a{id="a" aliases="x"}\n::\n', {"op": "rename_id", "from": "x", "to": "y"})
        == "target_missing"
    )


def test_rename_to_itself_is_a_noop() -> None:
    assert apply(CLAIM, {"op": "rename_id", "from": "c1", "to": "c1"}) == CLAIM


# -- update_heading ---------------------------------------------------------------------------


def test_update_heading_pins_the_old_id_when_the_slug_changes() -> None:
    assert apply(
        "## Old Title\n\ntext\n", {"op": "update_heading", "id": "old-title", "title": "New Title"}
    ) == ('## New Title {id="old-title"}\n\ntext\n')


def test_update_heading_keeps_attributes_and_adds_no_id_when_slug_matches() -> None:
    assert apply(
        '## Risks {aliases="r"}\n', {"op": "update_heading", "id": "risks", "title": "RISKS"}
    ) == ('## RISKS {aliases="r"}\n')
    assert apply(
        '## Risks {aliases="r"}\n', {"op": "update_heading", "id": "risks", "title": "Perils"}
    ) == ('## Perils {aliases="r" id="risks"}\n')


def test_update_heading_keeps_a_suffixed_id() -> None:
    out = apply(
        "## Overview\n\n## Overview\n",
        {"op": "update_heading", "id": "overview-2", "title": "Summary"},
    )
    assert out == '## Overview\n\n## Summary {id="overview-2"}\n'


def test_update_heading_rejects_titles_that_would_read_back_differently() -> None:
    # Same slug, so no id group is appended and "{braces}" would read back as attributes.
    assert code_of(
        "# Use Braces\n", {"op": "update_heading", "id": "use-braces", "title": "Use {braces}"}
    ) == ("invalid_content")
    # With an id group appended after it, the braces stay part of the title.
    assert (
        apply("# A\n", {"op": "update_heading", "id": "a", "title": "Use {braces}"})
        == '# Use {braces} {id="a"}\n'
    )
    assert code_of(CLAIM, {"op": "update_heading", "id": "c1", "title": "X"}) == "target_missing"


# -- move_block ---------------------------------------------------------------------------------


def test_move_block_renormalises_fences_to_the_new_depth() -> None:
    text = '::claim{id="m"}\n:::evidence{id="e"}\n:::\n::\n\n::section{id="b"}\n::\n'
    out = apply(text, {"op": "move_block", "id": "m", "parent": "b"})
    assert out == '::section{id="b"}\n:::claim{id="m"}\n::::evidence{id="e"}\n::::\n:::\n::\n'


def test_move_block_under_a_heading_section_uses_two_colons() -> None:
    text = '# A\n\n::section{id="s"}\n:::claim{id="m"}\nx\n:::\n::\n\n# B\n'
    out = apply(text, {"op": "move_block", "id": "m", "parent": "b"})
    assert out == '# A\n\n::section{id="s"}\n::\n\n# B\n\n::claim{id="m"}\nx\n::\n'


def test_move_block_into_itself_is_refused() -> None:
    text = '::section{id="a"}\n:::section{id="b"}\n:::\n::\n'
    assert code_of(text, {"op": "move_block", "id": "a", "parent": "b"}) == "parent_missing"


# -- review ops ---------------------------------------------------------------------------------


def test_add_comment_after_a_nested_target_keeps_its_fence_depth() -> None:
    text = '::section{id="s"}\n:::claim{id="c"}\nx\n:::\n::\n'
    out = apply(
        text, {"op": "add_comment", "id": "cm", "target": "c", "content": "Check.", "author": "ann"}
    )
    assert out == (
        '::section{id="s"}\n:::claim{id="c"}\nx\n:::\n\n'
        ':::comment{id="cm" parent="c" author="ann"}\n'
        "Check.\n:::\n::\n"
    )


def test_repeated_comments_read_newest_first() -> None:
    out = apply(
        CLAIM,
        {"op": "add_comment", "id": "a", "target": "c1", "content": "first"},
        {"op": "add_comment", "id": "b", "target": "c1", "content": "second"},
    )
    assert out.index('id="b"') < out.index('id="a"')


def test_comment_reply_uses_reply_to_instead_of_parent() -> None:
    text = CLAIM + '\n::comment{id="cm1" parent="c1"}\nQ?\n::\n'
    out = apply(
        text,
        {
            "op": "add_comment",
            "id": "cm2",
            "target": "cm1",
            "reply_to": "cm1",
            "content": "A.",
            "author": "bo",
            "initials": "BO",
            "date": "2026-11-21",
        },
    )
    assert (
        '::comment{id="cm2" reply_to="cm1" author="bo" initials="BO" date="2026-11-21"}\nA.\n::'
        in out
    )


def test_add_footnote_after_a_heading_section() -> None:
    out = apply(
        "# Intro\nText.\n",
        {"op": "add_footnote", "id": "fn", "target": "intro", "content": "Note.", "label": "1"},
    )
    assert out == '# Intro\n\n::footnote{id="fn" for="intro" label="1"}\nNote.\n::\n\nText.\n'


def test_add_change_request_attribute_order_and_errors() -> None:
    out = apply(
        CLAIM,
        {
            "op": "add_change_request",
            "id": "cr",
            "target": "c1",
            "action": "insert",
            "text": "more",
            "author": "x",
            "date": "d",
        },
    )
    assert (
        '::change_request{id="cr" target="c1" action="insert" text="more" author="x" date="d"}\n::'
        in out
    )
    bad = {"op": "add_change_request", "id": "cr", "target": "c1", "action": "replace", "from": "a"}
    assert code_of(CLAIM, bad) == "invalid_op"
    assert code_of(CLAIM, {**bad, "to": "b", "target": "nope"}) == "target_missing"
    assert code_of(CLAIM, {**bad, "to": "b", "id": "c1"}) == "id_conflict"


def test_resolve_comment_overwrites_status_then_adds_resolver() -> None:
    text = '::comment{id="cm" status="open" author="a"}\nQ\n::\n'
    out = apply(
        text, {"op": "resolve_comment", "id": "cm", "resolved_by": "r", "resolved_at": "2026-11-21"}
    )
    assert (
        out == '::comment{id="cm" status="resolved" author="a" resolved_by="r" '
        'resolved_at="2026-11-21"}\nQ\n::\n'
    )
    assert code_of(CLAIM, {"op": "resolve_comment", "id": "c1"}) == "target_missing"


# -- preconditions, catalog, atomicity ------------------------------------------------------------


def block_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_base_hash_matches_the_block_source_and_accepts_prefixes() -> None:
    h = block_hash('::claim{id="c1" confidence=0.5}\nOld body.\n::')
    for prefix in (h, h[:8], h[:8].upper()):
        apply(CLAIM, {"op": "replace_body", "id": "c1", "content": "x", "baseHash": prefix})
    assert (
        code_of(CLAIM, {"op": "replace_body", "id": "c1", "content": "x", "baseHash": "0" * 8})
        == "sha_mismatch"
    )


def test_base_hash_of_a_crlf_block_covers_its_raw_lines() -> None:
    text = CLAIM.replace("\n", "\r\n")
    h = block_hash('::claim{id="c1" confidence=0.5}\r\nOld body.\r\n::\r')
    apply(text, {"op": "replace_body", "id": "c1", "content": "x", "baseHash": h})


def test_base_hash_applies_to_the_rename_source_and_add_block_parent() -> None:
    assert (
        code_of(CLAIM, {"op": "rename_id", "from": "c1", "to": "c9", "baseHash": "deadbeef"})
        == "sha_mismatch"
    )
    assert (
        code_of(
            SECTION,
            {"op": "add_block", "parent": "s", "content": ":::n\n:::", "baseHash": "deadbeef"},
        )
        == "sha_mismatch"
    )


def test_ops_in_a_list_see_the_text_the_previous_op_left() -> None:
    out = apply(
        CLAIM,
        {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.8},
        {"op": "rename_id", "from": "c1", "to": "c2"},
        {"op": "update_attribute", "id": "c2", "key": "confidence", "value": 0.9},
    )
    assert out == '::claim{id="c2" confidence=0.9}\nOld body.\n::\n'


def test_a_failing_op_rejects_the_whole_list() -> None:
    ops = [
        {"op": "update_attribute", "id": "c1", "key": "a", "value": 1},
        {"op": "delete_block", "id": "nope"},
    ]
    assert code_of(CLAIM, *ops) == "target_missing"


def test_unknown_op_is_unsupported_and_malformed_ops_are_invalid() -> None:
    assert code_of(CLAIM, {"op": "frobnicate", "id": "c1"}) == "unsupported_op"
    assert code_of(CLAIM, {"id": "c1"}) == "unsupported_op"
    assert code_of(CLAIM, {"op": "delete_block"}) == "invalid_op"
    assert code_of(CLAIM, {"op": "delete_block", "id": "c1", "extra": 1}) == "invalid_op"
    assert (
        code_of(CLAIM, {"op": "add_block", "parent": "c1", "content": "::x\n::", "position": "0"})
        == "invalid_op"
    )
    assert (
        code_of(CLAIM, {"op": "add_comment", "id": "bad id", "target": "c1", "content": "x"})
        == "invalid_op"
    )


def test_duplicate_id_targets_are_ambiguous() -> None:
    text = '::claim{id="x"}\n::\n\n::claim{id="x"}\n::\n'
    assert code_of(text, {"op": "delete_block", "id": "x"}) == "id_conflict"


def test_rename_id_retargets_spaced_wikilinks_like_the_validator_reads_them() -> None:
    text = '::claim{id="old"}\n::\n\nSee [[ old ]] and [[ old | label]].\n'
    out = apply(text, {"op": "rename_id", "from": "old", "to": "new"})
    assert out.endswith("See [[ new ]] and [[ new | label]].\n")
