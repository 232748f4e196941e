"""``::plot`` checks: ``plot-missing-data``, ``plot-unknown-dataset``, ``plot-unknown-column``
and ``plot-mixed-delimiters`` (§4.4).

A ``dataset=`` that names nothing at all is also a ``broken-reference`` (that rule covers
``dataset=`` on every directive); both fire, because they are separate §4.4 conditions and
either can be ignored on its own. ``column=`` may list several columns, comma-separated;
each unknown one is reported.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic
from ..ids import IdIndex
from ..nodes import Directive
from .datasets import dataset_columns
from .registry import diag
from .rules import rule
from .scan import Scan, has_value


def _delimiter(raw: str | None) -> str | None:
    """How a list attribute is separated: "comma", "space", or None (one item / absent)."""
    if raw is None:
        return None
    text = raw.strip()
    if "," in text:
        return "comma"
    if len(text.split()) > 1:
        return "space"
    return None


@rule(
    scope="cross-block",
    codes=(
        "plot-missing-data",
        "plot-unknown-dataset",
        "plot-unknown-column",
        "plot-mixed-delimiters",
    ),
    reads=("names", "references"),
    body_of=("plot", "dataset"),
)
def check_plots(scan: Scan, out: list[Diagnostic]) -> None:
    """Data present, dataset resolvable, columns declared, delimiters consistent."""
    plots = scan.checked("plot")
    if not plots:
        return
    idx = scan.index
    columns_of: dict[int, list[str] | None] = {}
    for d in plots:
        has_dataset = has_value(d, "dataset")
        if not has_value(d, "data") and not has_dataset:
            out.append(
                diag(
                    "plot-missing-data",
                    "::plot has neither a data= attribute nor a dataset= reference.",
                    d,
                )
            )
        if has_dataset:
            _check_dataset(d, idx, columns_of, out)
        data = _delimiter(d.raw_attrs.get("data"))
        labels = _delimiter(d.raw_attrs.get("xlabels"))
        if data and labels and data != labels:
            out.append(
                diag(
                    "plot-mixed-delimiters",
                    f"::plot separates data= with {data}s but xlabels= with {labels}s; "
                    "use commas throughout.",
                    d,
                )
            )


def _check_dataset(
    d: Directive,
    idx: IdIndex,
    columns_of: dict[int, list[str] | None],
    out: list[Diagnostic],
) -> None:
    """``dataset=`` must resolve to a ::dataset; ``column=`` must name its columns."""
    ref = d.raw_attrs["dataset"].strip()
    canonical = idx.resolve(ref)
    target = idx.first.get(canonical) if canonical is not None else None
    if not (isinstance(target, Directive) and target.name == "dataset"):
        what = "nothing" if target is None else f"a {_kind(target)}, not a ::dataset"
        out.append(diag("plot-unknown-dataset", f'::plot dataset="{ref}" resolves to {what}.', d))
        return
    raw = d.raw_attrs.get("column")
    if raw is None or not raw.strip():
        return
    key = id(target)
    if key not in columns_of:
        columns_of[key] = dataset_columns(target)
    columns = columns_of[key]
    if columns is None:
        return
    for name in (part.strip() for part in raw.split(",")):
        if name and name not in columns:
            out.append(
                diag(
                    "plot-unknown-column",
                    f'::plot column="{name}" is not a column of dataset "{ref}" '
                    f"(columns: {', '.join(columns) or 'none'}).",
                    d,
                )
            )


def _kind(node: object) -> str:
    """How a resolved non-dataset node is named in a message."""
    return f"::{node.name}" if isinstance(node, Directive) else type(node).__name__.lower()
