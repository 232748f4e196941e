"""``::table`` patch ops (spec §1.5; noma-interop "Patch engine", ``::table``).

Each test states one rule. Documents are inline; outputs are compared byte for byte.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.noma.patch import PatchError, apply_ops_to_text


def patch(text: str, op: str, **fields: Any) -> str:
    return apply_ops_to_text(text, [{"op": op, **fields}])


def refused(text: str, op: str, **fields: Any) -> PatchError:
    with pytest.raises(PatchError) as caught:
        patch(text, op, **fields)
    return caught.value


BARE = """::table{id="t1" header align="l,l"}
Vertical | Growth
Legal | 3.4
Healthcare | 2.9
::
"""

PIPED = """Intro.

::table{id="t1"}
| Vertical | Growth |
| --- | :---: |
| Legal | 3.4 |
Healthcare | 2.9
::

Outro.
"""


# -- reading the table ------------------------------------------------------------------


def test_update_table_cell_rewrites_only_the_touched_row_with_outer_pipes() -> None:
    out = patch(BARE, "update_table_cell", id="t1", row=0, column=1, value="3.8")
    assert out == (
        '::table{id="t1" header align="l,l"}\n'
        "Vertical | Growth\n"
        "| Legal | 3.8 |\n"
        "Healthcare | 2.9\n"
        "::\n"
    )


def test_separator_line_is_not_a_body_row() -> None:
    out = patch(PIPED, "update_table_cell", id="t1", row=0, column=0, value="Law")
    assert out == PIPED.replace("| Legal | 3.4 |", "| Law | 3.4 |")


def test_second_line_separator_makes_the_first_row_a_header_without_the_flag() -> None:
    out = patch(PIPED, "update_table_cell", id="t1", row=1, column="Growth", value="3")
    assert out == PIPED.replace("Healthcare | 2.9", "| Healthcare | 3 |")


def test_table_without_header_counts_body_rows_from_the_first_line() -> None:
    doc = '::table{id="t"}\na | b\nc | d\n::\n'
    out = patch(doc, "update_table_cell", id="t", row=0, column=0, value="x")
    assert out == '::table{id="t"}\n| x | b |\nc | d\n::\n'


def test_blank_lines_in_a_table_body_are_not_rows() -> None:
    doc = '::table{id="t" header}\nA | B\n\na | b\n\nc | d\n::\n'
    out = patch(doc, "update_table_cell", id="t", row=1, column=1, value="z")
    assert out == '::table{id="t" header}\nA | B\n\na | b\n\n| c | z |\n::\n'


def test_pipes_inside_code_spans_and_escaped_pipes_do_not_split_existing_cells() -> None:
    doc = '::table{id="t" header}\n| A | B | C |\n| `x|y` | p\\|q | 1 |\n::\n'
    out = patch(doc, "update_table_cell", id="t", row=0, column=2, value="2")
    assert out == '::table{id="t" header}\n| A | B | C |\n| `x|y` | p\\|q | 2 |\n::\n'


def test_table_nested_in_another_directive_is_edited_at_its_own_depth() -> None:
    doc = '::section{id="s"}\n:::table{id="t" header}\nA | B\na | b\n:::\n::\n'
    out = patch(doc, "update_table_cell", id="t", row=0, column=1, value="c")
    assert out == '::section{id="s"}\n:::table{id="t" header}\nA | B\n| a | c |\n:::\n::\n'


# -- update_table_cell ------------------------------------------------------------------


def test_update_table_cell_addresses_a_column_by_header_label() -> None:
    out = patch(BARE, "update_table_cell", id="t1", row=1, column="Growth", value="3.1")
    assert out == BARE.replace("Healthcare | 2.9", "| Healthcare | 3.1 |")


def test_update_table_cell_header_label_falls_back_to_a_unique_case_insensitive_match() -> None:
    out = patch(BARE, "update_table_cell", id="t1", row=1, column="growth", value="3.1")
    assert out == BARE.replace("Healthcare | 2.9", "| Healthcare | 3.1 |")


def test_update_table_cell_escapes_pipes_outside_code_spans() -> None:
    out = patch(BARE, "update_table_cell", id="t1", row=0, column=0, value="a|b `c|d` e")
    assert "| a\\|b `c|d` e | 3.4 |\n" in out


def test_update_table_cell_does_not_double_escape_an_escaped_pipe() -> None:
    out = patch(BARE, "update_table_cell", id="t1", row=0, column=0, value="a\\|b")
    assert "| a\\|b | 3.4 |\n" in out


def test_update_table_cell_strips_the_value() -> None:
    out = patch(BARE, "update_table_cell", id="t1", row=0, column=1, value="  4  ")
    assert "| Legal | 4 |\n" in out


def test_update_table_cell_pads_a_short_row_up_to_the_column() -> None:
    doc = '::table{id="t" header}\nA | B | C\na\n::\n'
    out = patch(doc, "update_table_cell", id="t", row=0, column=2, value="c")
    assert out == '::table{id="t" header}\nA | B | C\n| a |  | c |\n::\n'


def test_update_table_cell_with_the_same_text_changes_nothing() -> None:
    assert patch(BARE, "update_table_cell", id="t1", row=0, column=1, value="3.4") == BARE


def test_update_table_cell_keeps_the_row_indentation() -> None:
    doc = '::table{id="t" header}\n  A | B\n  a | b\n::\n'
    out = patch(doc, "update_table_cell", id="t", row=0, column=0, value="x")
    assert out == '::table{id="t" header}\n  A | B\n  | x | b |\n::\n'


def test_update_table_cell_row_out_of_range_is_target_missing() -> None:
    err = refused(BARE, "update_table_cell", id="t1", row=5, column=0, value="x")
    assert err.code == "target_missing"
    assert err.message.startswith("row 5 does not exist: ::table 't1' has 2 body row(s)")


def test_update_table_cell_column_out_of_range_is_target_missing() -> None:
    err = refused(BARE, "update_table_cell", id="t1", row=0, column=2, value="x")
    assert err.code == "target_missing"
    assert "column 2 does not exist: ::table 't1' has 2 column(s) (valid: 0..1)" in err.message


def test_update_table_cell_unknown_header_label_is_target_missing_listing_the_header() -> None:
    err = refused(BARE, "update_table_cell", id="t1", row=0, column="Size", value="x")
    assert err.code == "target_missing"
    assert "'Vertical', 'Growth'" in err.message


def test_update_table_cell_label_on_a_headerless_table_is_target_missing() -> None:
    doc = '::table{id="t"}\na | b\n::\n'
    err = refused(doc, "update_table_cell", id="t", row=0, column="a", value="x")
    assert err.code == "target_missing"
    assert "no header row" in err.message


def test_update_table_cell_with_an_unpaired_backtick_reads_back_as_written() -> None:
    # An unmatched backtick run is literal text (CommonMark), so it cannot swallow the
    # pipe that ends the cell: the row reads back as the cells written.
    out = patch(BARE, "update_table_cell", id="t1", row=0, column=0, value="it`s")
    assert "| it`s | 3.4 |" in out
    from core.noma.patch.state import OpState
    from core.noma.patch.tables import read_table

    table = read_table(OpState(out), "t1")
    assert table.body[0].cells == ["it`s", "3.4"]


def test_update_table_cell_whose_backticks_would_pair_with_a_later_cell_is_refused() -> None:
    # "`a" next to a cell holding "b`" would pair up and swallow the separator between.
    text = BARE.replace("Legal | 3.4", "Legal | b`")
    err = refused(text, "update_table_cell", id="t1", row=0, column=0, value="`a")
    assert err.code == "invalid_content"
    assert "backticks" in err.message


def test_update_table_cell_line_break_in_value_is_invalid_content() -> None:
    err = refused(BARE, "update_table_cell", id="t1", row=0, column=0, value="a\nb")
    assert err.code == "invalid_content"


# -- targets ----------------------------------------------------------------------------


def test_table_op_on_another_directive_is_target_missing_naming_it() -> None:
    doc = '::note{id="n1"}\nText.\n::\n'
    err = refused(doc, "delete_table_row", id="n1", row=0)
    assert err.code == "target_missing"
    assert "::note" in err.message


def test_table_op_on_an_unknown_id_is_target_missing() -> None:
    assert refused(BARE, "delete_table_row", id="nope", row=0).code == "target_missing"


def test_table_op_on_a_heading_section_is_target_missing() -> None:
    doc = "# Title\n\nText.\n"
    assert refused(doc, "delete_table_row", id="title", row=0).code == "target_missing"


def test_table_op_on_an_unclosed_table_is_invalid_content() -> None:
    doc = '::table{id="t"}\na | b\n'
    assert refused(doc, "delete_table_row", id="t", row=0).code == "invalid_content"


# -- update_table_header_cell -----------------------------------------------------------


def test_update_table_header_cell_rewrites_the_header_row() -> None:
    doc = '::table{id="t1" header align="l,l"}\nVertical | Growth\nLegal | 3.4\n::\n'
    out = patch(doc, "update_table_header_cell", id="t1", column=1, value="YoY Growth")
    assert out == (
        '::table{id="t1" header align="l,l"}\n| Vertical | YoY Growth |\nLegal | 3.4\n::\n'
    )


def test_update_table_header_cell_addresses_a_column_by_its_current_label() -> None:
    out = patch(PIPED, "update_table_header_cell", id="t1", column="Vertical", value="Sector")
    assert out == PIPED.replace("| Vertical | Growth |", "| Sector | Growth |")


def test_update_table_header_cell_on_a_headerless_table_is_target_missing() -> None:
    doc = '::table{id="t"}\na | b\n::\n'
    err = refused(doc, "update_table_header_cell", id="t", column=0, value="x")
    assert err.code == "target_missing"
    assert "no header row" in err.message


# -- insert_table_row / delete_table_row ------------------------------------------------


def test_insert_table_row_at_the_end_goes_after_the_last_row() -> None:
    doc = '::table{id="t1" header align="l,l"}\nVertical | Growth\nLegal | 3.4\n::\n'
    out = patch(doc, "insert_table_row", id="t1", row=1, cells=["Healthcare", "2.9"])
    assert out == (
        '::table{id="t1" header align="l,l"}\n'
        "Vertical | Growth\nLegal | 3.4\n| Healthcare | 2.9 |\n::\n"
    )


def test_insert_table_row_goes_before_the_row_at_its_index() -> None:
    out = patch(PIPED, "insert_table_row", id="t1", row=0, cells=["Retail", "1.2"])
    assert out == PIPED.replace("| Legal |", "| Retail | 1.2 |\n| Legal |")


def test_insert_table_row_into_a_table_with_no_body_rows_goes_after_the_separator() -> None:
    doc = '::table{id="t"}\n| A | B |\n| --- | --- |\n::\n'
    out = patch(doc, "insert_table_row", id="t", row=0, cells=["a", "b"])
    assert out == '::table{id="t"}\n| A | B |\n| --- | --- |\n| a | b |\n::\n'


def test_insert_table_row_into_an_empty_table_goes_after_the_opener() -> None:
    doc = '::table{id="t"}\n::\n'
    out = patch(doc, "insert_table_row", id="t", row=0, cells=["a", "b"])
    assert out == '::table{id="t"}\n| a | b |\n::\n'


def test_insert_table_row_pads_a_short_cell_list_with_empty_cells() -> None:
    out = patch(BARE, "insert_table_row", id="t1", row=2, cells=["Retail"])
    assert out.endswith("Healthcare | 2.9\n| Retail |  |\n::\n")


def test_insert_table_row_escapes_pipes_in_new_cells() -> None:
    out = patch(BARE, "insert_table_row", id="t1", row=2, cells=["a|b", "`x|y`"])
    assert "| a\\|b | `x|y` |\n" in out


def test_insert_table_row_with_more_cells_than_columns_is_invalid_content() -> None:
    err = refused(BARE, "insert_table_row", id="t1", row=0, cells=["a", "b", "c"])
    assert err.code == "invalid_content"


def test_insert_table_row_past_the_end_is_target_missing() -> None:
    err = refused(BARE, "insert_table_row", id="t1", row=3, cells=["a"])
    assert err.code == "target_missing"
    assert "0..2" in err.message


def test_delete_table_row_removes_only_that_line() -> None:
    out = patch(BARE, "delete_table_row", id="t1", row=0)
    assert out == ('::table{id="t1" header align="l,l"}\nVertical | Growth\nHealthcare | 2.9\n::\n')


def test_delete_table_row_never_deletes_the_header_or_separator() -> None:
    out = patch(PIPED, "delete_table_row", id="t1", row=0)
    assert out == PIPED.replace("| Legal | 3.4 |\n", "")


def test_delete_table_row_out_of_range_is_target_missing() -> None:
    err = refused(BARE, "delete_table_row", id="t1", row=2)
    assert err.code == "target_missing"
    assert "row 2 does not exist" in err.message


# -- insert_table_column / delete_table_column ------------------------------------------


def test_insert_table_column_rewrites_every_row() -> None:
    doc = '::table{id="t1" header align="l,l"}\nVertical | Growth\nLegal | 3.4\n::\n'
    out = patch(doc, "insert_table_column", id="t1", column=2, header="Companies", cells=["14"])
    assert out == (
        '::table{id="t1" header align="l,l"}\n'
        "| Vertical | Growth | Companies |\n| Legal | 3.4 | 14 |\n::\n"
    )


def test_insert_table_column_gives_the_separator_a_dash_cell() -> None:
    out = patch(PIPED, "insert_table_column", id="t1", column=1, header="N", cells=["1", "2"])
    assert out == PIPED.replace(
        "| Vertical | Growth |\n| --- | :---: |\n| Legal | 3.4 |\nHealthcare | 2.9\n",
        "| Vertical | N | Growth |\n| --- | --- | :---: |\n| Legal | 1 | 3.4 |\n"
        "| Healthcare | 2 | 2.9 |\n",
    )


def test_insert_table_column_without_a_header_gives_an_empty_header_cell() -> None:
    out = patch(BARE, "insert_table_column", id="t1", column=0, cells=["a", "b"])
    assert out == (
        '::table{id="t1" header align="l,l"}\n'
        "|  | Vertical | Growth |\n| a | Legal | 3.4 |\n| b | Healthcare | 2.9 |\n::\n"
    )


def test_insert_table_column_fills_rows_past_the_cells_with_empty_cells() -> None:
    out = patch(BARE, "insert_table_column", id="t1", column=2, header="N", cells=["1"])
    assert out.splitlines()[3] == "| Healthcare | 2.9 |  |"


def test_insert_table_column_with_more_cells_than_rows_is_invalid_content() -> None:
    err = refused(BARE, "insert_table_column", id="t1", column=0, cells=["1", "2", "3"])
    assert err.code == "invalid_content"


def test_insert_table_column_header_on_a_headerless_table_is_invalid_content() -> None:
    doc = '::table{id="t"}\na | b\n::\n'
    err = refused(doc, "insert_table_column", id="t", column=0, header="H", cells=["x"])
    assert err.code == "invalid_content"


def test_insert_table_column_past_the_end_is_target_missing() -> None:
    err = refused(BARE, "insert_table_column", id="t1", column=3, cells=[])
    assert err.code == "target_missing"
    assert "0..2" in err.message


def test_delete_table_column_leaves_align_untouched() -> None:
    doc = (
        '::table{id="t1" header align="l,l,l"}\n'
        "Vertical | Growth | Companies\nLegal | 3.4 | 14\n::\n"
    )
    out = patch(doc, "delete_table_column", id="t1", column=2)
    assert out == (
        '::table{id="t1" header align="l,l,l"}\n| Vertical | Growth |\n| Legal | 3.4 |\n::\n'
    )


def test_delete_table_column_by_header_label_also_trims_the_separator() -> None:
    out = patch(PIPED, "delete_table_column", id="t1", column="Vertical")
    assert out == PIPED.replace(
        "| Vertical | Growth |\n| --- | :---: |\n| Legal | 3.4 |\nHealthcare | 2.9\n",
        "| Growth |\n| :---: |\n| 3.4 |\n| 2.9 |\n",
    )


def test_delete_table_column_leaves_rows_too_short_to_have_it_untouched() -> None:
    doc = '::table{id="t" header}\nA | B | C\na\nb | c | d\n::\n'
    out = patch(doc, "delete_table_column", id="t", column=2)
    assert out == '::table{id="t" header}\n| A | B |\na\n| b | c |\n::\n'


def test_delete_table_column_of_a_single_column_table_is_invalid_content() -> None:
    doc = '::table{id="t"}\na\nb\n::\n'
    assert refused(doc, "delete_table_column", id="t", column=0).code == "invalid_content"


def test_delete_table_column_unknown_label_is_target_missing() -> None:
    assert refused(BARE, "delete_table_column", id="t1", column="Size").code == "target_missing"


# -- bytes outside the edit -------------------------------------------------------------


def test_crlf_document_keeps_crlf_on_touched_and_untouched_lines() -> None:
    doc = BARE.replace("\n", "\r\n")
    out = patch(doc, "update_table_cell", id="t1", row=0, column=1, value="3.8")
    assert out == doc.replace("Legal | 3.4", "| Legal | 3.8 |")


def test_crlf_document_gives_an_inserted_row_crlf() -> None:
    doc = BARE.replace("\n", "\r\n")
    out = patch(doc, "insert_table_row", id="t1", row=0, cells=["a", "b"])
    assert out == doc.replace("Legal | 3.4\r\n", "| a | b |\r\nLegal | 3.4\r\n")


def test_missing_final_newline_stays_missing() -> None:
    doc = BARE.rstrip("\n")
    out = patch(doc, "delete_table_row", id="t1", row=1)
    assert out == '::table{id="t1" header align="l,l"}\nVertical | Growth\nLegal | 3.4\n::'


def test_byte_order_mark_is_kept() -> None:
    doc = "\ufeff" + BARE
    out = patch(doc, "update_table_cell", id="t1", row=0, column=1, value="3.8")
    assert out == "\ufeff" + BARE.replace("Legal | 3.4", "| Legal | 3.8 |")


def test_ops_in_a_list_each_see_the_previous_result() -> None:
    out = apply_ops_to_text(
        BARE,
        [
            {"op": "insert_table_row", "id": "t1", "row": 0, "cells": ["Retail", "1"]},
            {"op": "update_table_cell", "id": "t1", "row": 0, "column": "Growth", "value": "2"},
            {"op": "delete_table_row", "id": "t1", "row": 2},
        ],
    )
    assert out == (
        '::table{id="t1" header align="l,l"}\nVertical | Growth\n| Retail | 2 |\nLegal | 3.4\n::\n'
    )
