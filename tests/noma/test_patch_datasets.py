"""``::dataset`` patch ops (spec §1.5; noma-interop "Patch engine", ``::dataset``).

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


YAML = """::dataset{id="d1"}
schema:
  vertical: string
  growth: number
rows:
  - [legal, 3.4]
  - [healthcare, 2.9]
::
"""

TYPED = """::dataset{id="d"}
schema:
  name: string
  score: number
  count: integer
  active: boolean
rows:
  - ["Ann", 3.40, 2, true]  # first row
  - [bob, 1, 1, false]
::
"""


def yaml_rows(*rows: str, schema: str = "  vertical: string\n  growth: number\n") -> str:
    body = "".join(f"  - {r}\n" for r in rows)
    return f'::dataset{{id="d1"}}\nschema:\n{schema}rows:\n{body}::\n'


# -- YAML: update_dataset_cell ----------------------------------------------------------


def test_update_dataset_cell_rewrites_one_yaml_row() -> None:
    out = patch(YAML, "update_dataset_cell", id="d1", row=0, column=1, value="3.8")
    assert out == yaml_rows("[legal, 3.8]", "[healthcare, 2.9]")


def test_update_dataset_cell_addresses_a_column_by_schema_name() -> None:
    out = patch(YAML, "update_dataset_cell", id="d1", row=1, column="vertical", value="retail")
    assert out == yaml_rows("[legal, 3.4]", "[retail, 2.9]")


def test_yaml_row_keeps_its_trailing_comment_and_untouched_cell_text() -> None:
    out = patch(TYPED, "update_dataset_cell", id="d", row=0, column="count", value="5")
    assert '  - ["Ann", 3.40, 5, true]  # first row\n' in out


def test_boolean_column_coerces_yes_to_true_and_off_to_false() -> None:
    out = patch(TYPED, "update_dataset_cell", id="d", row=1, column="active", value="yes")
    assert "  - [bob, 1, 1, true]\n" in out
    out = patch(TYPED, "update_dataset_cell", id="d", row=0, column="active", value="OFF")
    assert '  - ["Ann", 3.40, 2, false]  # first row\n' in out


def test_boolean_column_refuses_other_words() -> None:
    err = refused(TYPED, "update_dataset_cell", id="d", row=0, column="active", value="maybe")
    assert err.code == "invalid_content"
    assert "'active'" in err.message


def test_number_column_writes_the_number_unquoted() -> None:
    out = patch(TYPED, "update_dataset_cell", id="d", row=1, column="score", value=" -0.5 ")
    assert "  - [bob, -0.5, 1, false]\n" in out


def test_number_column_refuses_text() -> None:
    err = refused(TYPED, "update_dataset_cell", id="d", row=1, column="score", value="high")
    assert err.code == "invalid_content"


def test_integer_column_refuses_a_fraction() -> None:
    err = refused(TYPED, "update_dataset_cell", id="d", row=1, column="count", value="1.5")
    assert err.code == "invalid_content"


def test_string_cell_stays_plain_when_yaml_reads_it_as_that_string() -> None:
    out = patch(TYPED, "update_dataset_cell", id="d", row=1, column=0, value="Bob Lee-Smith")
    assert "  - [Bob Lee-Smith, 1, 1, false]\n" in out


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("yes", "'yes'"),
        ("3.8", "'3.8'"),
        ("null", "'null'"),
        ("2026-01-05", "'2026-01-05'"),
        ("1e5", "'1e5'"),
    ],
)
def test_string_cell_is_single_quoted_when_yaml_would_read_another_type(
    value: str, written: str
) -> None:
    out = patch(TYPED, "update_dataset_cell", id="d", row=1, column="name", value=value)
    assert f"  - [{written}, 1, 1, false]\n" in out


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("a, b", "'a, b'"),
        ("key: v", "'key: v'"),
        ("[x]", "'[x]'"),
        ("#tag", "'#tag'"),
        ("'quoted'", "'''quoted'''"),
        (" padded", "' padded'"),
        ("", "''"),
    ],
)
def test_string_cell_with_yaml_special_characters_is_single_quoted(
    value: str, written: str
) -> None:
    out = patch(TYPED, "update_dataset_cell", id="d", row=1, column="name", value=value)
    assert f"  - [{written}, 1, 1, false]\n" in out


def test_without_a_schema_a_cell_keeps_its_literal_type() -> None:
    doc = '::dataset{id="d"}\nrows:\n  - [a, 1]\n::\n'
    assert "  - [a, 0]\n" in patch(doc, "update_dataset_cell", id="d", row=0, column=1, value="0")
    assert "  - [a, true]\n" in patch(
        doc, "update_dataset_cell", id="d", row=0, column=1, value="true"
    )
    assert "  - [a, 'yes']\n" in patch(
        doc, "update_dataset_cell", id="d", row=0, column=1, value="yes"
    )


def test_update_dataset_cell_pads_a_short_row_with_empty_strings() -> None:
    doc = yaml_rows("[legal]")
    out = patch(doc, "update_dataset_cell", id="d1", row=0, column=1, value="2")
    assert out == yaml_rows("[legal, 2]")


def test_update_dataset_cell_with_the_same_text_changes_nothing() -> None:
    assert patch(YAML, "update_dataset_cell", id="d1", row=0, column=1, value="3.4") == YAML


# -- YAML: rows -------------------------------------------------------------------------


def test_insert_dataset_row_appends_after_the_last_row() -> None:
    doc = yaml_rows("[legal, 3.4]")
    out = patch(doc, "insert_dataset_row", id="d1", row=1, cells=["healthcare", "2.9"])
    assert out == YAML


def test_insert_dataset_row_goes_before_the_row_at_its_index() -> None:
    out = patch(YAML, "insert_dataset_row", id="d1", row=0, cells=["retail", "1"])
    assert out == yaml_rows("[retail, 1]", "[legal, 3.4]", "[healthcare, 2.9]")


def test_insert_dataset_row_pads_missing_cells_with_empty_strings() -> None:
    out = patch(YAML, "insert_dataset_row", id="d1", row=2, cells=["retail"])
    assert out == yaml_rows("[legal, 3.4]", "[healthcare, 2.9]", "[retail, '']")


def test_insert_dataset_row_coerces_cells_through_the_schema() -> None:
    out = patch(TYPED, "insert_dataset_row", id="d", row=2, cells=["cy", "2", "3", "on"])
    assert out.endswith("  - [bob, 1, 1, false]\n  - [cy, 2, 3, true]\n::\n")


def test_insert_dataset_row_into_empty_flow_rows_opens_a_block_list() -> None:
    doc = '::dataset{id="d"}\ncolumns: [a, b]\nrows: []  # none yet\n::\n'
    out = patch(doc, "insert_dataset_row", id="d", row=0, cells=["x", "1"])
    assert out == '::dataset{id="d"}\ncolumns: [a, b]\nrows:  # none yet\n  - [x, 1]\n::\n'


def test_insert_dataset_row_adds_a_rows_key_when_there_is_none() -> None:
    doc = '::dataset{id="d"}\nschema:\n  a: string\n::\n'
    out = patch(doc, "insert_dataset_row", id="d", row=0, cells=["x"])
    assert out == '::dataset{id="d"}\nschema:\n  a: string\nrows:\n  - [x]\n::\n'


def test_insert_dataset_row_with_more_cells_than_columns_is_invalid_content() -> None:
    err = refused(YAML, "insert_dataset_row", id="d1", row=0, cells=["a", "1", "x"])
    assert err.code == "invalid_content"


def test_insert_dataset_row_past_the_end_is_target_missing() -> None:
    err = refused(YAML, "insert_dataset_row", id="d1", row=3, cells=["a"])
    assert err.code == "target_missing"
    assert "0..2" in err.message


def test_delete_dataset_row_removes_only_that_line() -> None:
    out = patch(YAML, "delete_dataset_row", id="d1", row=1)
    assert out == yaml_rows("[legal, 3.4]")


def test_delete_dataset_row_out_of_range_is_target_missing_with_the_row_count() -> None:
    err = refused(YAML, "delete_dataset_row", id="d1", row=5)
    assert err.code == "target_missing"
    assert err.message.startswith("row 5 does not exist: ::dataset 'd1' has 2 row(s)")


def test_bare_top_level_list_of_rows_is_editable() -> None:
    doc = '::dataset{id="d"}\n- [a, 1]\n- [b, 2]\n::\n'
    out = patch(doc, "insert_dataset_row", id="d", row=2, cells=["c", "3"])
    assert out == '::dataset{id="d"}\n- [a, 1]\n- [b, 2]\n- [c, 3]\n::\n'


# -- YAML: columns ----------------------------------------------------------------------


def test_insert_dataset_column_adds_a_schema_line_typed_from_its_cells() -> None:
    doc = yaml_rows("[legal, 3.4]")
    out = patch(doc, "insert_dataset_column", id="d1", column=2, header="companies", cells=["14"])
    assert out == yaml_rows(
        "[legal, 3.4, 14]",
        schema="  vertical: string\n  growth: number\n  companies: number\n",
    )


def test_insert_dataset_column_infers_boolean_and_coerces_yes_to_true() -> None:
    out = patch(YAML, "insert_dataset_column", id="d1", column=1, header="ok", cells=["yes", "No"])
    assert out == yaml_rows(
        "[legal, true, 3.4]",
        "[healthcare, false, 2.9]",
        schema="  vertical: string\n  ok: boolean\n  growth: number\n",
    )


def test_insert_dataset_column_infers_string_and_pads_rows_past_the_cells() -> None:
    out = patch(YAML, "insert_dataset_column", id="d1", column=0, header="code", cells=["1a"])
    assert out == yaml_rows(
        "[1a, legal, 3.4]",
        "['', healthcare, 2.9]",
        schema="  code: string\n  vertical: string\n  growth: number\n",
    )


def test_insert_dataset_column_keeps_a_columns_list_in_step() -> None:
    block = '::dataset{id="d"}\ncolumns:\n  - a\n  - b\nrows:\n  - [1, 2]\n::\n'
    out = patch(block, "insert_dataset_column", id="d", column=1, header="m", cells=["x"])
    assert out == '::dataset{id="d"}\ncolumns:\n  - a\n  - m\n  - b\nrows:\n  - [1, x, 2]\n::\n'
    flow = '::dataset{id="d"}\ncolumns: [a, b]  # names\nrows:\n  - [1, 2]\n::\n'
    out = patch(flow, "insert_dataset_column", id="d", column=2, header="c", cells=["3"])
    assert out == '::dataset{id="d"}\ncolumns: [a, b, c]  # names\nrows:\n  - [1, 2, 3]\n::\n'


def test_insert_dataset_column_with_an_existing_name_is_invalid_content() -> None:
    err = refused(YAML, "insert_dataset_column", id="d1", column=0, header="growth", cells=[])
    assert err.code == "invalid_content"


def test_insert_dataset_column_with_more_cells_than_rows_is_invalid_content() -> None:
    err = refused(YAML, "insert_dataset_column", id="d1", column=0, header="x", cells=["1"] * 3)
    assert err.code == "invalid_content"


def test_insert_dataset_column_past_the_end_is_target_missing() -> None:
    err = refused(YAML, "insert_dataset_column", id="d1", column=3, header="x", cells=[])
    assert err.code == "target_missing"


def test_delete_dataset_column_removes_the_schema_line_and_the_cells() -> None:
    doc = yaml_rows(
        "[legal, 3.4, 14]",
        schema="  vertical: string\n  growth: number\n  companies: number\n",
    )
    out = patch(doc, "delete_dataset_column", id="d1", column=2)
    assert out == yaml_rows("[legal, 3.4]")


def test_delete_dataset_column_by_name_removes_a_multi_line_schema_entry() -> None:
    schema = "  vertical: string\n  growth:\n    type: number\n    unit: pct\n"
    out = patch(
        yaml_rows("[legal, 3.4]", schema=schema), "delete_dataset_column", id="d1", column="growth"
    )
    assert out == yaml_rows("[legal]", schema="  vertical: string\n")


def test_delete_dataset_column_of_a_single_column_dataset_is_invalid_content() -> None:
    doc = '::dataset{id="d"}\n- [a]\n::\n'
    assert refused(doc, "delete_dataset_column", id="d", column=0).code == "invalid_content"


def test_unknown_column_name_is_target_missing_listing_the_columns() -> None:
    err = refused(YAML, "delete_dataset_column", id="d1", column="size")
    assert err.code == "target_missing"
    assert "'vertical', 'growth'" in err.message


def test_column_name_on_a_dataset_without_names_is_target_missing() -> None:
    doc = '::dataset{id="d"}\n- [a, 1]\n::\n'
    err = refused(doc, "update_dataset_cell", id="d", row=0, column="x", value="1")
    assert err.code == "target_missing"
    assert "names no columns" in err.message


def test_columns_attribute_names_columns_and_is_kept_in_step() -> None:
    doc = '::dataset{id="d" columns="k, v"}\n- [a, 1]\n::\n'
    out = patch(doc, "update_dataset_cell", id="d", row=0, column="v", value="2")
    assert out == '::dataset{id="d" columns="k, v"}\n- [a, 2]\n::\n'
    out = patch(doc, "delete_dataset_column", id="d", column="k")
    assert out == '::dataset{id="d" columns="v"}\n- [1]\n::\n'
    out = patch(doc, "insert_dataset_column", id="d", column=1, header="m", cells=["x"])
    assert out == '::dataset{id="d" columns="k, m, v"}\n- [a, x, 1]\n::\n'


# -- YAML: shapes that cannot be edited in place ----------------------------------------


def test_yaml_rows_as_block_mappings_are_invalid_content_pointing_to_replace_body() -> None:
    doc = '::dataset{id="d"}\nrows:\n  - a: 1\n    b: 2\n::\n'
    err = refused(doc, "delete_dataset_row", id="d", row=0)
    assert err.code == "invalid_content"
    assert "replace_body" in err.message


def test_yaml_list_form_schema_types_cells_but_takes_no_column_edits() -> None:
    doc = (
        '::dataset{id="d"}\n```yaml\nschema:\n  - name: a\n    type: boolean\n'
        "rows:\n  - [true]\n```\n::\n"
    )
    out = patch(doc, "update_dataset_cell", id="d", row=0, column="a", value="no")
    assert out == doc.replace("[true]", "[false]")
    err = refused(doc, "insert_dataset_column", id="d", column=1, header="b", cells=[])
    assert err.code == "invalid_content"
    assert "'name: type'" in err.message


def test_yaml_flow_row_spread_over_lines_is_invalid_content() -> None:
    doc = '::dataset{id="d"}\nrows:\n  - [a,\n     1]\n::\n'
    assert refused(doc, "delete_dataset_row", id="d", row=0).code == "invalid_content"


def test_yaml_rows_written_on_one_line_are_invalid_content() -> None:
    doc = '::dataset{id="d"}\nrows: [[a, 1], [b, 2]]\n::\n'
    assert refused(doc, "delete_dataset_row", id="d", row=0).code == "invalid_content"


# -- CSV / TSV --------------------------------------------------------------------------

CSV = '::dataset{id="c" format="csv"}\nname,score\n"Smith, J",3\nLee,4\n::\n'


def test_csv_cell_is_quoted_with_doubled_quotes_when_needed() -> None:
    out = patch(CSV, "update_dataset_cell", id="c", row=1, column="score", value='say "hi"')
    assert out == CSV.replace("Lee,4", 'Lee,"say ""hi"""')


def test_csv_untouched_quoted_cells_keep_their_source_text() -> None:
    out = patch(CSV, "update_dataset_cell", id="c", row=0, column=1, value="5")
    assert out == CSV.replace('"Smith, J",3', '"Smith, J",5')


def test_csv_insert_row_quotes_a_cell_holding_the_delimiter_and_pads() -> None:
    out = patch(CSV, "insert_dataset_row", id="c", row=2, cells=["a,b"])
    assert out == CSV.replace("Lee,4\n", 'Lee,4\n"a,b",\n')


def test_csv_delete_row_never_touches_the_header() -> None:
    out = patch(CSV, "delete_dataset_row", id="c", row=0)
    assert out == CSV.replace('"Smith, J",3\n', "")


def test_csv_insert_column_writes_the_header_and_the_cells() -> None:
    out = patch(CSV, "insert_dataset_column", id="c", column=1, header="team", cells=["x y"])
    assert out == '::dataset{id="c" format="csv"}\nname,team,score\n"Smith, J",x y,3\nLee,,4\n::\n'


def test_csv_delete_column_by_header_name() -> None:
    out = patch(CSV, "delete_dataset_column", id="c", column="name")
    assert out == '::dataset{id="c" format="csv"}\nscore\n3\n4\n::\n'


def test_csv_comma_space_style_is_kept_on_touched_lines() -> None:
    doc = '::dataset{id="c"}\nname, score\na, 1\n::\n'
    out = patch(doc, "insert_dataset_column", id="c", column=0, header="k", cells=["9"])
    assert out == '::dataset{id="c"}\nk, name, score\n9, a, 1\n::\n'


def test_tsv_is_detected_from_tabs_and_uses_tabs() -> None:
    doc = '::dataset{id="t"}\nname\tscore\na\t1\n::\n'
    out = patch(doc, "insert_dataset_row", id="t", row=1, cells=["b", "2"])
    assert out == '::dataset{id="t"}\nname\tscore\na\t1\nb\t2\n::\n'


def test_csv_quoted_cell_left_open_is_invalid_content() -> None:
    doc = '::dataset{id="c" format="csv"}\nname,note\na,"line one\nline two"\n::\n'
    assert refused(doc, "delete_dataset_row", id="c", row=0).code == "invalid_content"


# -- JSON -------------------------------------------------------------------------------

ROWS = '::dataset{id="j"}\n[\n  ["legal", 3.4],\n  ["healthcare", 2.9]\n]\n::\n'
RECORDS = (
    '::dataset{id="r"}\n[\n'
    '  {"vertical": "legal", "growth": 3.4},\n'
    '  {"vertical": "health", "growth": 2.9}\n'
    "]\n::\n"
)


def test_json_row_array_is_reserialised_compactly_on_the_touched_line_only() -> None:
    out = patch(ROWS, "update_dataset_cell", id="j", row=0, column=1, value="3.8")
    assert out == ROWS.replace('["legal", 3.4],', '["legal",3.8],')


def test_json_value_keeps_its_literal_type() -> None:
    out = patch(ROWS, "update_dataset_cell", id="j", row=0, column=1, value="007")
    assert '  ["legal","007"],\n' in out
    out = patch(ROWS, "update_dataset_cell", id="j", row=0, column=1, value="false")
    assert '  ["legal",false],\n' in out


def test_json_insert_at_the_end_gives_the_old_last_row_a_comma() -> None:
    out = patch(ROWS, "insert_dataset_row", id="j", row=2, cells=["retail", "1"])
    assert out == ROWS.replace("2.9]\n", '2.9],\n  ["retail",1]\n')


def test_json_delete_of_the_last_row_takes_the_comma_off_the_new_last_row() -> None:
    out = patch(ROWS, "delete_dataset_row", id="j", row=1)
    assert out == '::dataset{id="j"}\n[\n  ["legal", 3.4]\n]\n::\n'


def test_json_trailing_comma_style_is_kept() -> None:
    doc = ROWS.replace("2.9]\n", "2.9],\n")
    out = patch(doc, "insert_dataset_row", id="j", row=2, cells=["x", "1"])
    assert out == doc.replace("2.9],\n", '2.9],\n  ["x",1],\n')
    out = patch(doc, "delete_dataset_row", id="j", row=1)
    assert out == '::dataset{id="j"}\n[\n  ["legal", 3.4],\n]\n::\n'


def test_json_insert_into_an_empty_one_line_array() -> None:
    doc = '::dataset{id="j"}\n[]\n::\n'
    out = patch(doc, "insert_dataset_row", id="j", row=0, cells=["a", "1"])
    assert out == '::dataset{id="j"}\n[\n  ["a",1]\n]\n::\n'


def test_json_records_stay_one_per_line_and_are_addressed_by_key() -> None:
    out = patch(RECORDS, "update_dataset_cell", id="r", row=1, column="growth", value="3")
    assert out == RECORDS.replace(
        '{"vertical": "health", "growth": 2.9}', '{"vertical":"health","growth":3}'
    )


def test_json_records_insert_row_builds_a_record_from_the_keys() -> None:
    out = patch(RECORDS, "insert_dataset_row", id="r", row=0, cells=["retail"])
    assert '  {"vertical":"retail","growth":""},\n  {"vertical": "legal"' in out


def test_json_records_insert_column_places_the_key_at_its_index() -> None:
    out = patch(RECORDS, "insert_dataset_column", id="r", column=1, header="n", cells=["5"])
    assert out == (
        '::dataset{id="r"}\n[\n'
        '  {"vertical":"legal","n":5,"growth":3.4},\n'
        '  {"vertical":"health","n":"","growth":2.9}\n'
        "]\n::\n"
    )


def test_json_records_delete_column_by_key() -> None:
    out = patch(RECORDS, "delete_dataset_column", id="r", column="vertical")
    assert out == '::dataset{id="r"}\n[\n  {"growth":3.4},\n  {"growth":2.9}\n]\n::\n'


def test_json_body_inside_a_code_fence_is_edited_inside_the_fence() -> None:
    doc = '::dataset{id="j"}\n```json\n[\n  ["a", 1]\n]\n```\n::\n'
    out = patch(doc, "delete_dataset_row", id="j", row=0)
    assert out == '::dataset{id="j"}\n```json\n[\n]\n```\n::\n'


def test_json_that_is_not_an_array_of_rows_is_invalid_content() -> None:
    # Any array layout is editable (tests/noma/test_interop_format.py); these are not rows.
    for body in ('{"a": 1}', '[["a", 1] ["b", 2]]', '[["a", 1], 3]', '[["a", 1]'):
        doc = '::dataset{id="j"}\n' + body + "\n::\n"
        err = refused(doc, "delete_dataset_row", id="j", row=0)
        assert err.code == "invalid_content"
        assert "replace_body" in err.message


def test_json_mixing_row_arrays_and_records_is_invalid_content() -> None:
    doc = '::dataset{id="j"}\n[\n  ["a", 1],\n  {"k": 1}\n]\n::\n'
    assert refused(doc, "delete_dataset_row", id="j", row=0).code == "invalid_content"


# -- targets and values -----------------------------------------------------------------


def test_dataset_op_on_another_directive_is_target_missing_naming_it() -> None:
    doc = '::table{id="t"}\na | b\n::\n'
    err = refused(doc, "delete_dataset_row", id="t", row=0)
    assert err.code == "target_missing"
    assert "::table" in err.message


def test_dataset_op_on_an_unknown_id_is_target_missing() -> None:
    assert refused(YAML, "delete_dataset_row", id="nope", row=0).code == "target_missing"


def test_dataset_with_only_a_src_file_is_invalid_content() -> None:
    doc = '::dataset{id="d" src="data.csv"}\n::\n'
    err = refused(doc, "insert_dataset_row", id="d", row=0, cells=["a"])
    assert err.code == "invalid_content"
    assert "data.csv" in err.message


def test_dataset_op_on_an_unclosed_dataset_is_invalid_content() -> None:
    doc = '::dataset{id="d"}\n- [a]\n'
    assert refused(doc, "delete_dataset_row", id="d", row=0).code == "invalid_content"


def test_line_break_in_a_dataset_value_is_invalid_content() -> None:
    err = refused(YAML, "update_dataset_cell", id="d1", row=0, column=0, value="a\nb")
    assert err.code == "invalid_content"
    err = refused(CSV, "insert_dataset_row", id="c", row=0, cells=["a\r\nb"])
    assert err.code == "invalid_content"


# -- bytes outside the edit -------------------------------------------------------------


def test_crlf_document_keeps_crlf_on_touched_and_untouched_lines() -> None:
    doc = YAML.replace("\n", "\r\n")
    out = patch(doc, "update_dataset_cell", id="d1", row=0, column=1, value="3.8")
    assert out == doc.replace("3.4", "3.8")
    out = patch(doc, "insert_dataset_column", id="d1", column=2, header="n", cells=["1", "2"])
    assert out == (
        yaml_rows(
            "[legal, 3.4, 1]",
            "[healthcare, 2.9, 2]",
            schema="  vertical: string\n  growth: number\n  n: number\n",
        ).replace("\n", "\r\n")
    )


def test_missing_final_newline_stays_missing() -> None:
    doc = YAML.rstrip("\n")
    out = patch(doc, "delete_dataset_row", id="d1", row=0)
    assert out == yaml_rows("[healthcare, 2.9]").rstrip("\n")


def test_dataset_nested_in_another_directive_is_edited_in_place() -> None:
    doc = '::section{id="s"}\n:::dataset{id="d"}\n- [a, 1]\n:::\n::\n'
    out = patch(doc, "update_dataset_cell", id="d", row=0, column=1, value="2")
    assert out == '::section{id="s"}\n:::dataset{id="d"}\n- [a, 2]\n:::\n::\n'
