"""Parser rules: spec §6 spans and suppression, §2 ids/aliases, noma-interop parsing facts."""

from __future__ import annotations

import random

import pytest

from core.noma import index, parse
from core.noma.nodes import (
    Code,
    Directive,
    Frontmatter,
    ListNode,
    Paragraph,
    Quote,
    Section,
    Table,
    ThematicBreak,
)


def ids(text: str) -> list[str]:
    return index(parse(text)).canonical


def node(text: str, ident: str):
    return index(parse(text)).first[ident]


def notes(text: str) -> list[str]:
    return [n.code for n in parse(text).notes]


# -- spans (§6.3) -------------------------------------------------------------------------


def test_heading_section_span_runs_to_line_before_next_same_level_heading() -> None:
    doc = parse("# A\n\ntext\n\n# B\nmore\n")
    a, b = doc.children
    assert (a.line, a.end_line) == (1, 4)
    assert (b.line, b.end_line) == (5, 6)


def test_last_section_ends_on_last_line_including_trailing_blank_lines() -> None:
    doc = parse("# A\ntext\n\n\n")
    assert doc.children[0].end_line == 4
    assert doc.end_line == 4


def test_deeper_heading_nests_and_shallower_closes_both() -> None:
    doc = parse("# A\n## B\nx\n# C\n")
    a, c = doc.children
    assert isinstance(a, Section) and a.children[0].title == "B"
    assert a.children[0].end_line == 3 and a.end_line == 3
    assert c.line == 4


def test_directive_span_is_opener_to_closer() -> None:
    n = node('intro\n\n::claim{id="c"}\nbody\n::\n', "c")
    assert (n.line, n.end_line) == (3, 5)


def test_paragraph_list_quote_table_spans() -> None:
    doc = parse(
        "p1\np2\n\n- a\n  more\n- b\n\n> q\n>\n> r\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n"
    )
    para, lst, quote, table = doc.children
    assert isinstance(para, Paragraph) and (para.line, para.end_line) == (1, 2)
    assert isinstance(lst, ListNode) and (lst.line, lst.end_line) == (4, 6)
    assert [(i.line, i.end_line) for i in lst.items] == [(4, 5), (6, 6)]
    assert isinstance(quote, Quote) and (quote.line, quote.end_line) == (8, 10)
    assert isinstance(table, Table) and (table.line, table.end_line) == (12, 14)


def test_document_span_ignores_the_trailing_newline_artifact() -> None:
    assert parse("a\nb\n").end_line == 2
    assert parse("a\nb").end_line == 2


def test_frontmatter_span_ends_on_closing_fence() -> None:
    doc = parse("---\ntitle: T\n---\n")
    fm = doc.children[0]
    assert isinstance(fm, Frontmatter) and (fm.line, fm.end_line) == (1, 3)
    assert doc.meta == {"title": "T"}


# -- code fences (§6.4, interop §1) -------------------------------------------------------


def test_code_fence_suppresses_directives_inside() -> None:
    doc = parse('# S\n\n```noma\n::claim{id="x"}\nbody\n::\n```\n')
    section = doc.children[0]
    assert [c.type for c in section.children] == ["code"]
    assert "x" not in index(doc).first


def test_code_fence_inside_directive_body_suppresses_closer() -> None:
    n = node('::note{id="n"}\n```\n::\n```\n::\n', "n")
    assert (n.line, n.end_line) == (1, 5)
    assert isinstance(n.children[0], Code)


@pytest.mark.parametrize("opener", ["~~~", "````", "```c++"])
def test_only_three_backticks_with_word_info_open_a_fence(opener: str) -> None:
    doc = parse(f'{opener}\n::claim{{id="live"}}\nx\n::\n{opener}\n')
    assert "live" in index(doc).first


def test_any_fence_line_closes_an_open_fence() -> None:
    doc = parse('```\ncode\n```python\n::claim{id="after"}\nx\n::\n')
    assert "after" in index(doc).first


def test_unclosed_fence_runs_to_end_of_file_and_is_noted() -> None:
    doc = parse('```\n::claim{id="x"}\n')
    code = doc.children[0]
    assert isinstance(code, Code) and code.end_line == 2 and not code.closed
    assert [n.code for n in doc.notes] == ["unclosed-code-fence"]


# -- directives and nesting (interop §2) --------------------------------------------------


def test_child_needs_more_colons_than_parent() -> None:
    doc = parse('::section{id="s"}\n:::claim{id="c"}\nx\n:::\n::\n')
    s = index(doc).first["s"]
    assert [c.type for c in s.children] == ["directive"]
    assert s.children[0].id == "c"


def test_same_colon_opener_inside_parent_is_text_and_noted() -> None:
    doc = parse('::section{id="s"}\n::claim{id="c"}\nx\n::\n::\n')
    assert "c" not in index(doc).first
    assert notes('::section{id="s"}\n::claim{id="c"}\nx\n::\n::\n') == [
        "directive-depth-mismatch",
        "unmatched-directive-closer",
    ]


def test_parent_closer_closes_an_unclosed_child_with_a_note() -> None:
    doc = parse('::section{id="s"}\n:::claim{id="c"}\nx\n::\n')
    s = index(doc).first["s"]
    c = index(doc).first["c"]
    assert (s.line, s.end_line) == (1, 4) and (c.line, c.end_line) == (2, 3)
    assert [n.code for n in doc.notes] == ["unclosed-directive"]


def test_unclosed_directive_runs_to_end_and_is_noted() -> None:
    doc = parse('::claim{id="c"}\nbody\n')
    c = index(doc).first["c"]
    assert c.end_line == 2 and not c.closed
    assert doc.recovered


def test_directive_without_attrs_and_body_text() -> None:
    doc = parse("::toc\n::\n")
    d = doc.children[0]
    assert isinstance(d, Directive) and d.name == "toc" and d.attrs == {} and d.body == ""


def test_directive_body_keeps_raw_text_and_parses_children() -> None:
    n = node('::claim{id="c"}\nline one\n\n- item\n::\n', "c")
    assert n.body == "line one\n\n- item"
    assert [c.type for c in n.children] == ["paragraph", "list"]


def test_heading_inside_directive_is_a_childless_section() -> None:
    doc = parse('::section{id="m"}\n## Inner\n\ntext\n::\n')
    m = index(doc).first["m"]
    inner = m.children[0]
    assert (
        isinstance(inner, Section)
        and inner.children == []
        and (inner.line, inner.end_line) == (2, 2)
    )
    assert ids('::section{id="m"}\n## Inner\n\ntext\n::\n') == ["m", "inner"]


# -- attributes (interop §3) --------------------------------------------------------------


def test_attribute_values_are_coerced_even_when_quoted() -> None:
    d = parse("::x{a=\"42\" b=007 c='0.50' d=-3 e=true f=false g=1e3 flag}\n::\n").children[0]
    assert d.attrs == {
        "a": 42,
        "b": 7,
        "c": 0.5,
        "d": -3,
        "e": True,
        "f": False,
        "g": "1e3",
        "flag": True,
    }


def test_id_is_always_the_string_as_written() -> None:
    assert ids('::claim{id="2024"}\n::\n') == ["2024"]
    assert ids("::claim{id=007}\n::\n") == ["007"]


def test_attribute_values_have_no_escapes() -> None:
    d = parse('::x{a="back\\slash" b=\'it"s\'}\n::\n').children[0]
    assert d.attrs == {"a": "back\\slash", "b": 'it"s'}


def test_quoted_values_may_hold_braces() -> None:
    d = parse('::x{label="a {b} c" id="q"}\n::\n').children[0]
    assert d.attrs["label"] == "a {b} c" and d.id == "q"


def test_unparseable_opener_is_text_with_a_warning() -> None:
    doc = parse('::claim{id="unterminated}\n')
    assert isinstance(doc.children[0], Paragraph)
    assert [n.code for n in doc.notes] == ["malformed-directive-opener"]


# -- headings, slugs, suffixes (interop §4-6, spec §6.5) ----------------------------------


def test_heading_trailing_group_is_always_attributes() -> None:
    s = parse("## Use {braces}\n").children[0]
    assert s.title == "Use" and s.attrs == {"braces": True}


def test_setext_headings_do_not_exist() -> None:
    doc = parse("Text\n---\n")
    assert [c.type for c in doc.children] == ["paragraph", "thematic_break"]


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("snake_case_name", "snakecasename"),
        ("C++ / Rust (2024)", "c-rust-2024"),
        ("Café  au   lait", "cafe-au-lait"),
        ("Привет мир", "привет-мир"),
        ("日本語 テスト", "日本語-テスト"),
    ],
)
def test_slug_rules(title: str, slug: str) -> None:
    assert ids(f"# {title}\n") == [slug]


def test_duplicate_headings_get_suffixes_in_document_order() -> None:
    assert ids("## Overview\n## Overview\n## Overview\n") == [
        "overview",
        "overview-2",
        "overview-3",
    ]


def test_suffix_counter_skips_values_other_headings_hold_naturally() -> None:
    assert ids("# Step 2\n# Step\n# Step\n# Step 2\n") == ["step-2", "step", "step-3", "step-2-2"]


def test_suffix_pool_spans_all_levels_and_directive_bodies() -> None:
    text = '# Notes\n::section{id="s"}\n## Notes\n::\n### Notes\n'
    assert ids(text) == ["notes", "s", "notes-2", "notes-3"]


def test_explicit_heading_ids_are_outside_the_pool() -> None:
    assert ids('# A {id="a"}\n# A\n') == ["a", "a"]


def test_explicit_directive_ids_are_never_suffixed() -> None:
    assert ids('::claim{id="x"}\n::\n\n::claim{id="x"}\n::\n') == ["x", "x"]


# -- aliases (§2.2, interop §8) -----------------------------------------------------------


def test_frontmatter_aliases_attach_to_first_h1() -> None:
    doc = parse("---\naliases: [demo, intro]\n---\n\n## Pre\n\n# Main\n")
    assert index(doc).alias_map() == {"main": ["demo", "intro"]}


def test_frontmatter_aliases_without_h1_attach_nowhere() -> None:
    assert index(parse("---\naliases: [demo]\n---\n## Only\n")).alias_map() == {}


def test_heading_and_directive_aliases_split_on_commas_and_spaces() -> None:
    doc = parse(
        '# Risks {aliases="dangers, threats perils"}\n\n::claim{id="c" aliases="x,y"}\n::\n'
    )
    assert index(doc).alias_map() == {"risks": ["dangers", "threats", "perils"], "c": ["x", "y"]}
    assert index(doc).resolve("perils") == "risks"


def test_book_mode_scopes_level_two_ids_and_adds_filename_alias() -> None:
    doc = parse("# Chapter\n## Risks\n", chapter="chapter-2")
    idx = index(doc)
    assert idx.canonical == ["chapter", "chapter-2/risks"]
    assert idx.alias_map() == {"chapter": ["chapter-2"], "chapter-2/risks": ["risks"]}


# -- frontmatter (interop §7) -------------------------------------------------------------


def test_unterminated_frontmatter_is_a_thematic_break_and_text_without_notes() -> None:
    doc = parse("---\ntitle: x\n")
    assert [c.type for c in doc.children] == ["thematic_break", "paragraph"]
    assert doc.notes == []


def test_empty_frontmatter_gives_no_node() -> None:
    doc = parse("---\n---\n# A\n")
    assert doc.frontmatter is None and [c.type for c in doc.children] == ["section"]


def test_frontmatter_dates_stay_strings() -> None:
    assert parse("---\ndate: 2026-01-05\n---\n").meta == {"date": "2026-01-05"}


def test_invalid_frontmatter_yaml_is_a_recovery_note() -> None:
    assert notes("---\nkey: [unclosed\n---\n") == ["frontmatter-invalid-yaml"]


# -- lists, quotes, tables, breaks (interop §10-11) ---------------------------------------


def test_list_continuation_lines_belong_to_their_item() -> None:
    lst = parse("- one\n  two\nthree\n- four\n").children[0]
    assert isinstance(lst, ListNode) and [i.content for i in lst.items] == [
        "one\n  two\nthree",
        "four",
    ]


def test_ordered_and_bullet_items_make_separate_lists() -> None:
    doc = parse("- a\n* b\n1. c\n2. d\n")
    assert [(c.type, c.ordered, len(c.items)) for c in doc.children] == [
        ("list", False, 2),
        ("list", True, 2),
    ]


def test_a_quote_marker_takes_one_space_or_tab_after_it() -> None:
    # Tab and space are the same blank everywhere else in the grammar (headings, list
    # markers, fences); the reference's quote rule also takes either.
    contents = [
        parse(text).children[0].content for text in (">\tx\n", "> \tx\n", ">  x\n", ">\t\n")
    ]
    assert contents == ["x", "\tx", " x", ""]


def test_table_needs_pipes_and_a_separator_with_three_dashes() -> None:
    assert parse("| a | b |\n| -- | -- |\n").children[0].type == "paragraph"
    assert parse("a | b\n--- | ---\n").children[0].type == "paragraph"
    assert parse("| a |\n| --- |\n").children[0].type == "paragraph"
    t = parse("| a | b |\n|:---|---:|\n").children[0]
    assert t.type == "table" and t.align == ["left", "right"]


def test_table_rows_are_padded_truncated_and_split_outside_code() -> None:
    t = parse("| a | b |\n| --- | --- |\n| 1 |\n| 1 | 2 | 3 |\n| `x|y` | a\\|b |\n").children[0]
    assert t.rows == [["1", ""], ["1", "2"], ["`x|y`", "a\\|b"]]


def test_thematic_breaks() -> None:
    doc = parse("a\n\n***\n\n___\n")
    assert [type(c) for c in doc.children] == [Paragraph, ThematicBreak, ThematicBreak]


# -- line endings, BOM, robustness (interop §9, spec §6.2) --------------------------------


def test_crlf_gives_the_same_ids_and_spans_as_lf() -> None:
    text = '# A\n\n::claim{id="c"}\nx\n::\n## B\n'
    lf, crlf = parse(text), parse(text.replace("\n", "\r\n"))
    assert [(i, n.line, n.end_line) for i, n in index(lf).entries] == [
        (i, n.line, n.end_line) for i, n in index(crlf).entries
    ]


def test_bom_is_ignored_for_parsing_but_remembered() -> None:
    doc = parse("\ufeff---\ntitle: x\n---\n# H\n")
    assert doc.bom and doc.meta == {"title": "x"} and index(doc).canonical == ["h"]


def test_invalid_utf8_is_reported_not_raised() -> None:
    doc = parse(b"# A\n\xff\xfe bad\n")
    assert doc.notes[0].code == "invalid-utf8" and doc.notes[0].line == 2


def test_empty_document() -> None:
    doc = parse("")
    assert doc.children == [] and doc.notes == [] and doc.end_line == 1


@pytest.mark.parametrize("seed", range(40))
def test_parse_never_raises_on_random_input(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = [
        "::",
        ":::",
        "```",
        "#",
        "##",
        "{",
        "}",
        '"',
        "'",
        "|",
        "-",
        "*",
        ">",
        "\n",
        "\n\n",
        "---",
        "id=",
        "x",
        " ",
        "\r\n",
        "[[a]]",
        "1.",
        "\ufeff",
        "\x00",
    ]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
    doc = parse(text)
    index(doc)
    for n, _parent in doc.walk():
        assert 1 <= n.line <= max(n.end_line, 1)


@pytest.mark.parametrize("seed", range(10))
def test_parse_never_raises_on_random_bytes(seed: int) -> None:
    rng = random.Random(seed)
    doc = parse(bytes(rng.randrange(256) for _ in range(2000)))
    assert doc.type == "document"
