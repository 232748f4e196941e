"""Per-block checks: citations, diagrams, plots, plotly, figures, datasets, escape hatches."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from core.noma.diagnostics import Diagnostic
from core.noma.nodes import Directive
from core.noma.parser import parse
from core.noma.validate import validate
from core.noma.validate.datasets import dataset_columns

TODAY = date(2026, 6, 1)


def hits(src: str, code: str, **kwargs: Any) -> list[Diagnostic]:
    kwargs.setdefault("today", TODAY)
    return [d for d in validate(parse(dedent(src)), **kwargs) if d.code == code]


# -- stale-citation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accessed", "count"),
    [
        ("2025-06-01", 0),  # exactly 365 days: not older than the window
        ("2025-05-31", 1),  # 366 days
        ("2020-01-01", 1),
        ("2026-05-31", 0),
        ("2027-01-01", 0),  # a future date is never stale
        ("2020-01-01T10:00:00Z", 1),  # an ISO timestamp counts by its date
        ("last spring", 0),  # not a date: no diagnostic
    ],
)
def test_a_citation_older_than_365_days_is_stale(accessed: str, count: int) -> None:
    found = hits(f'::citation{{id="c" accessed="{accessed}"}}\n::\n', "stale-citation")
    assert [(d.severity, d.node_id) for d in found] == [("warning", "c")] * count


def test_a_citation_without_accessed_is_not_stale() -> None:
    assert hits('::citation{url="https://example.org"}\n::\n', "stale-citation") == []


def test_the_frontmatter_window_overrides_the_default() -> None:
    src = '---\nstale_citation_days: 30\n---\n::citation{accessed="2026-04-01"}\n::\n'
    assert [d.line for d in hits(src, "stale-citation")] == [4]


def test_the_block_window_overrides_the_frontmatter() -> None:
    src = """\
    ---
    stale_citation_days: 30
    ---
    ::citation{accessed="2026-04-01" stale_after_days=90}
    ::

    ::citation{accessed="2026-04-01"}
    ::
    """
    assert [d.line for d in hits(src, "stale-citation")] == [7]


def test_the_clock_defaults_to_today() -> None:
    src = '::citation{accessed="1999-01-01"}\n::\n'
    found = [d for d in validate(parse(src)) if d.code == "stale-citation"]
    assert len(found) == 1


# -- diagrams -------------------------------------------------------------------------------


def test_a_diagram_without_kind_or_source_warns_twice() -> None:
    diags = validate(parse("::diagram\n::\n"))
    assert sorted((d.code, d.severity) for d in diags) == [
        ("diagram-missing-kind", "warning"),
        ("diagram-missing-source", "warning"),
    ]


def test_a_complete_diagram_is_clean() -> None:
    assert validate(parse('::diagram{kind="graphviz"}\ndigraph { a -> b }\n::\n')) == []


# -- plots ----------------------------------------------------------------------------------

DATASET = """\
::dataset{id="sales"}
schema:
  year: integer
  revenue: number
rows:
  - [2024, 10]
::

"""


def test_a_plot_with_neither_data_nor_dataset_is_an_error() -> None:
    found = hits('::plot{id="p" kind="line"}\n::\n', "plot-missing-data")
    assert [(d.severity, d.node_id) for d in found] == [("error", "p")]
    assert hits('::plot{data=""}\n::\n', "plot-missing-data") != []


def test_a_plot_with_a_dataset_has_data() -> None:
    assert validate(parse(DATASET + '::plot{dataset="sales" column="revenue"}\n::\n')) == []


def test_a_plot_dataset_naming_a_non_dataset_block_is_unknown() -> None:
    found = hits('# Sales\n\n::plot{dataset="sales"}\n::\n', "plot-unknown-dataset")
    assert [d.severity for d in found] == ["error"]
    assert "section" in found[0].message


def test_a_plot_dataset_naming_nothing_is_unknown_and_a_broken_reference() -> None:
    diags = validate(parse('::plot{dataset="ghost"}\n::\n'))
    assert sorted(d.code for d in diags) == ["broken-reference", "plot-unknown-dataset"]


def test_a_plot_dataset_may_be_an_alias() -> None:
    src = DATASET.replace('id="sales"', 'id="sales" aliases="s"') + '::plot{dataset="s"}\n::\n'
    assert validate(parse(src)) == []


def test_a_plot_column_must_be_declared_by_the_dataset_schema() -> None:
    found = hits(DATASET + '::plot{dataset="sales" column="profit"}\n::\n', "plot-unknown-column")
    assert [d.severity for d in found] == ["error"]
    assert '"profit"' in found[0].message and "year, revenue" in found[0].message


def test_each_unknown_column_of_a_column_list_is_reported() -> None:
    src = DATASET + '::plot{dataset="sales" column="year, cost, margin"}\n::\n'
    assert len(hits(src, "plot-unknown-column")) == 2


@pytest.mark.parametrize(
    ("dataset", "columns"),
    [
        ('::dataset{id="d" columns="a, b"}\n::\n', ["a", "b"]),
        ('::dataset{id="d" columns="a b"}\n::\n', ["a", "b"]),
        ('::dataset{id="d"}\nschema:\n  - name: a\n  - name: b\n::\n', ["a", "b"]),
        ('::dataset{id="d"}\ncolumns: [a, b]\nrows: [[1, 2]]\n::\n', ["a", "b"]),
        ('::dataset{id="d" format="csv"}\na,"b"\n1,2\n::\n', ["a", "b"]),
        ('::dataset{id="d"}\na\tb\n1\t2\n::\n', ["a", "b"]),
        ('::dataset{id="d"}\n[{"a": 1, "b": 2}]\n::\n', ["a", "b"]),
        ('::dataset{id="d"}\nrows:\n  - {a: 1}\n  - {b: 2}\n::\n', ["a", "b"]),
        ('::dataset{id="d"}\nrows: [[1, 2]]\n::\n', None),
        ('::dataset{id="d" src="data.csv"}\n::\n', None),
        ('::dataset{id="d"}\n: : [ not yaml\n::\n', None),
    ],
)
def test_dataset_columns_come_from_schema_columns_csv_header_or_records(
    dataset: str, columns: list[str] | None
) -> None:
    node = parse(dataset).children[0]
    assert isinstance(node, Directive)
    assert dataset_columns(node) == columns


def test_a_dataset_with_unknowable_columns_accepts_any_column() -> None:
    src = '::dataset{id="d"}\nrows: [[1, 2]]\n::\n\n::plot{dataset="d" column="anything"}\n::\n'
    assert hits(src, "plot-unknown-column") == []


@pytest.mark.parametrize(
    ("attrs", "count"),
    [
        ('data="1,2,3" xlabels="a b c"', 1),
        ('data="1 2 3" xlabels="a,b,c"', 1),
        ('data="1,2,3" xlabels="a,b,c"', 0),
        ('data="1 2 3" xlabels="a b c"', 0),
        ('data="1,2,3" xlabels="Q1 2024, Q2 2024"', 0),
        ('data="5" xlabels="a b"', 0),
        ('data="1,2,3"', 0),
    ],
)
def test_plot_data_and_xlabels_must_use_the_same_delimiter(attrs: str, count: int) -> None:
    found = hits(f"::plot{{{attrs}}}\n::\n", "plot-mixed-delimiters")
    assert [d.severity for d in found] == ["warning"] * count


# -- plotly ---------------------------------------------------------------------------------


def test_a_plotly_without_a_body_warns() -> None:
    found = hits('::plotly{id="p"}\n\n::\n', "plotly-missing-spec")
    assert [(d.severity, d.node_id) for d in found] == [("warning", "p")]


@pytest.mark.parametrize(
    "body", ["{data: []}", '{"a": 1,}', '{"y": NaN}', "[1, 2", '{"a": 1} trailing']
)
def test_a_plotly_body_that_is_not_json_is_an_error(body: str) -> None:
    found = hits(f"::plotly\n{body}\n::\n", "plotly-invalid-json")
    assert [d.severity for d in found] == ["error"]


def test_a_plotly_spec_in_a_json_code_fence_is_read_inside_the_fence() -> None:
    src = '::plotly\n```json\n{"data": [{"y": [1, 2]}]}\n```\n::\n'
    assert validate(parse(src)) == []


def test_a_plotly_with_invalid_json_is_not_also_missing_its_spec() -> None:
    assert hits("::plotly\nnot json\n::\n", "plotly-missing-spec") == []


# -- figure-missing-alt ---------------------------------------------------------------------


def test_a_figure_without_alt_or_caption_warns() -> None:
    found = hits('::figure{id="f" src="a.png" alt=""}\n::\n', "figure-missing-alt")
    assert [(d.severity, d.node_id) for d in found] == [("warning", "f")]


def test_alt_or_caption_either_satisfies_figure_missing_alt() -> None:
    assert hits('::figure{alt="Bar chart of sales"}\n::\n', "figure-missing-alt") == []
    assert hits('::figure{caption="Sales"}\n::\n', "figure-missing-alt") == []


def test_figure_missing_alt_is_silenced_by_noverify() -> None:
    assert hits("::figure{noverify}\n::\n", "figure-missing-alt") == []


# -- dataset-src-missing --------------------------------------------------------------------


def test_a_dataset_src_missing_from_the_document_folder_warns(tmp_path: Path) -> None:
    (tmp_path / "there.csv").write_text("a\n1\n", encoding="utf-8")
    src = """\
    ::dataset{id="ok" src="there.csv"}
    ::

    ::dataset{id="gone" src="data/gone.csv"}
    ::
    """
    found = hits(src, "dataset-src-missing", base_dir=tmp_path)
    assert [(d.severity, d.node_id) for d in found] == [("warning", "gone")]
    assert "data/gone.csv" in found[0].message


def test_a_relative_src_is_not_checked_without_a_base_dir() -> None:
    assert hits('::dataset{src="surely-not-here.csv"}\n::\n', "dataset-src-missing") == []


def test_an_absolute_src_is_checked_without_a_base_dir(tmp_path: Path) -> None:
    there = tmp_path / "there.csv"
    there.write_text("a\n", encoding="utf-8")
    src = f'::dataset{{src="{there}"}}\n::\n\n::dataset{{src="{tmp_path / "no.csv"}"}}\n::\n'
    assert [d.line for d in hits(src, "dataset-src-missing")] == [4]


def test_a_directory_is_not_a_loadable_src(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    assert len(hits('::dataset{src="folder"}\n::\n', "dataset-src-missing", base_dir=tmp_path)) == 1


def test_an_unreadable_src_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root (CI) can read a chmod-000 file, so the permission check is simulated instead.
    import core.noma.validate.datasets as datasets

    locked = tmp_path / "locked.csv"
    locked.write_text("a\n", encoding="utf-8")
    real_access = os.access
    monkeypatch.setattr(
        datasets.os, "access", lambda p, mode: False if Path(p) == locked else real_access(p, mode)
    )
    found = hits('::dataset{src="locked.csv"}\n::\n', "dataset-src-missing", base_dir=tmp_path)
    assert len(found) == 1


def test_urls_and_empty_src(tmp_path: Path) -> None:
    src = '::dataset{src="https://example.org/d.csv"}\n::\n\n::dataset{src=""}\n::\n'
    assert [d.line for d in hits(src, "dataset-src-missing", base_dir=tmp_path)] == [4]


# -- escape-hatch-untrusted -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["html", "svg", "script"])
def test_escape_hatches_without_trusted_warn(name: str) -> None:
    found = hits(f"::{name}\n<b>x</b>\n::\n", "escape-hatch-untrusted")
    assert [d.severity for d in found] == ["warning"]


@pytest.mark.parametrize(
    ("attrs", "count"),
    [("trusted", 0), ("trusted=true", 0), ("trusted=false", 1), ('trusted="yes"', 1)],
)
def test_only_a_boolean_true_trusts_an_escape_hatch(attrs: str, count: int) -> None:
    assert len(hits(f"::html{{{attrs}}}\n<i>x</i>\n::\n", "escape-hatch-untrusted")) == count
