"""``::dataset`` facts: ``dataset-src-missing`` and the column names plots are checked against.

Columns, first match wins:

1. a ``columns=`` attribute (comma-separated, or space-separated when it has no comma);
2. the body's ``schema:`` mapping (its keys; a list of names or ``{name: ...}`` items also
   works), else a ``columns:`` list, else the keys of record rows (``rows:``/``data:`` of
   mappings, or a top-level JSON/YAML array of objects);
3. a CSV/TSV header: the first line of a body that is not a YAML/JSON structure (or of any
   body when ``format=csv``/``tsv``).

Anything else (row arrays with no schema, or only an external ``src=``) gives no column
list, and then no column is reported unknown: the validator never reads a ``src=`` file,
it only checks that the file is there.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path
from typing import Any

from ..bounded import MAX_DEPTH, ContentRefused, load_json_bounded
from ..diagnostics import Diagnostic
from ..frontmatter import load_yaml
from ..nodes import Directive
from .registry import diag
from .rules import rule
from .scan import Scan, body_text

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?://|[^\\/])")  # http://..., data:..., not C:\


def split_names(raw: str) -> list[str]:
    """``"a, b"`` or ``"a b"`` to names (commas win when there are any)."""
    parts = raw.split(",") if "," in raw else raw.split()
    return [p.strip() for p in parts if p.strip()]


def _names_of(schema: Any) -> list[str] | None:
    """Column names from a ``schema:``/``columns:`` value (a mapping or a list)."""
    if isinstance(schema, dict):
        return [str(k) for k in schema]
    if isinstance(schema, list):
        names: list[str] = []
        for item in schema:
            if isinstance(item, dict) and "name" in item:
                names.append(str(item["name"]))
            elif isinstance(item, str | int | float) and not isinstance(item, bool):
                names.append(str(item))
        return names
    return None


def _record_keys(rows: Any) -> list[str] | None:
    """The keys of record rows, in first-seen order; None unless every row is a mapping."""
    if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
        return list(dict.fromkeys(str(k) for r in rows for k in r))
    return None


def _csv_header(text: str, delimiter: str | None) -> list[str] | None:
    """The first non-blank line, split as CSV (a tab in it means TSV when not told)."""
    for line in text.split("\n"):
        if line.strip():
            if delimiter is None:
                delimiter = "\t" if "\t" in line else ","
            row = next(csv.reader([line], delimiter=delimiter), [])
            return [cell.strip() for cell in row]
    return None


def dataset_columns(d: Directive) -> list[str] | None:
    """The declared column names of a dataset, or None when they cannot be known."""
    raw = d.raw_attrs.get("columns")
    if raw and raw.strip():
        return split_names(raw)
    text = body_text(d)
    if not text.strip():
        return None
    fmt = str(d.attrs.get("format", "")).strip().lower()
    if fmt in ("csv", "tsv"):
        return _csv_header(text, "\t" if fmt == "tsv" else ",")
    try:
        data = load_yaml(text)
    except Exception:  # a body is arbitrary text: any loader failure means "not YAML"
        data = None
    if isinstance(data, dict):
        for key in ("schema", "columns"):
            if key in data:
                return _names_of(data[key])
        for key in ("rows", "data", "records"):
            if key in data:
                return _record_keys(data[key])
        return None
    if isinstance(data, list):
        return _record_keys(data)
    first = text.lstrip().split("\n", 1)[0]
    if "," in first or "\t" in first:
        return _csv_header(text, None)
    return None


@rule(scope="document", codes=("dataset-src-missing",), reads=("files",), attrs_of=("dataset",))
def check_dataset_sources(scan: Scan, base_dir: Path | None, out: list[Diagnostic]) -> None:
    """A ``src=`` must name a readable file. Relative paths resolve against ``base_dir``
    (the document's folder); without one they cannot be checked and are left alone, as
    are URLs. Only existence and readability are checked: nothing is opened."""
    for d in scan.checked("dataset"):
        raw = d.raw_attrs.get("src")
        if raw is None:
            continue
        src = raw.strip()
        if not src:
            out.append(diag("dataset-src-missing", "::dataset has an empty src=.", d))
            continue
        if _URL.match(src):
            continue
        path = Path(src)
        if not path.is_absolute():
            if base_dir is None:
                continue
            path = base_dir / path
        try:
            ok = path.is_file() and os.access(path, os.R_OK)
        except (OSError, ValueError):  # e.g. an embedded NUL, a name too long
            ok = False
        if not ok:
            out.append(
                diag(
                    "dataset-src-missing",
                    f'::dataset src="{src}" could not be loaded (no readable file at {path}).',
                    d,
                )
            )


def body_refusal(d: Directive) -> str | None:
    """Why a dataset body is beyond `core.noma.bounded`'s bounds, or None.

    Only a body read as YAML or JSON can be: CSV/TSV is read line by line. A body that is
    simply not YAML is not refused (it may be CSV, or shown as text).
    """
    text = body_text(d)
    if not text.strip():
        return None
    fmt = str(d.attrs.get("format", "")).strip().lower()
    if fmt in ("csv", "tsv"):
        return None
    import yaml

    try:
        load_yaml(text)
    except ContentRefused as exc:
        return str(exc)
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):  # libyaml's own bound, deeper than ours
            return f"it is nested too deeply (more than {MAX_DEPTH} levels)"
    if fmt == "json" or text.lstrip()[:1] in ("[", "{"):
        try:
            load_json_bounded(text)
        except ContentRefused as exc:
            return str(exc)
        except ValueError:
            return None
    return None


@rule(scope="block", codes=("dataset-body-unreadable",), kinds=("dataset",))
def check_dataset_bodies(scan: Scan, out: list[Diagnostic]) -> None:
    """``dataset-body-unreadable`` (additive code): aliases that expand past the bound, a
    nesting too deep, or a number too long to convert. No tool reads such a body as data
    (exports show it as text, dataset ops refuse it); the finding says why."""
    for d in scan.checked("dataset"):
        why = body_refusal(d)
        if why is not None:
            out.append(
                diag(
                    "dataset-body-unreadable",
                    f"::dataset body cannot be read as data: {why}.",
                    d,
                )
            )
