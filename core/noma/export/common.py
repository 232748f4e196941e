"""What every export format needs to read a document the same way.

The three renderers (Markdown, HTML, LLM context) differ only in how they write a block;
how a wikilink resolves, which attributes are references, how a ``::table`` body splits
into cells, and which URLs are safe to emit are decided here once, so a link that works in
the HTML page also works in the Markdown file.
"""

from __future__ import annotations

import csv
import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ..attrs import AttrValue, format_number
from ..backtick_runs import paired_runs
from ..ids import IdIndex, index
from ..nodes import Directive, Document
from ..table_cells import is_separator, split_row
from ..wikilinks import WIKILINK

WIKILINK_PATTERN: Final = WIKILINK
"""The validator's wikilink pattern: one definition of a link for every surface."""

# Attributes whose value names another block: rendered as links when the id resolves.
# (The validator's reference keys plus the review/notes targets, interop "Validator".)
REFERENCE_KEYS: Final = frozenset(
    {"for", "parent", "dataset", "target", "block", "ref", "scope", "reply_to"}
)

# Directives whose body is literal text, not Noma blocks: rendered as code, never parsed.
LITERAL_DIRECTIVES: Final = frozenset({"code", "code_cell", "output", "math", "query", "diagram"})
# Escape hatches (raw HTML, SVG, script): shown as inert source text in every format.
ESCAPE_HATCHES: Final = frozenset({"html", "svg", "script"})

# Containers (sections and directives) a renderer descends into. Each level costs the
# recursive renderers a few stack frames, and the parser nests directives as deep as the
# colons go; a directive deeper than this is shown as its source text, never recursed into.
MAX_RENDER_DEPTH: Final = 48
TOO_DEEP_NOTE: Final = "Nested too deeply to render: shown as source text."

_URL_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_IGNORED_IN_URL: Final = re.compile(r"[\x00-\x20\x7f]")
SAFE_SCHEMES: Final = frozenset({"http", "https", "mailto"})


def escape(text: str) -> str:
    """`html.escape` (quotes included), which costs five replaces even on text holding
    none of ``&<>"'``: such text (most of it) is returned as it is."""
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return html.escape(text)
    return text


@dataclass(slots=True)
class Context:
    """One document being exported: its id index, resolved once."""

    doc: Document
    index: IdIndex = field(init=False)
    # References already resolved: a block is typically named from several places.
    resolved: dict[str, str | None] = field(init=False)

    def __post_init__(self) -> None:
        self.index = index(self.doc)
        self.resolved = {}

    def resolve(self, ref: str) -> str | None:
        """An id or alias to the canonical id it names, or None for a broken reference."""
        resolved = self.resolved
        if ref in resolved:
            return resolved[ref]
        ident = resolved[ref] = self.index.resolve(ref.strip())
        return ident

    @property
    def title(self) -> str:
        """The document's title: frontmatter ``title``, else its first heading, else ''."""
        value = self.doc.meta.get("title")
        if isinstance(value, str) and value.strip():
            return value.strip()
        for node, _parent in self.doc.walk():
            title = getattr(node, "title", None)
            if isinstance(title, str) and title:
                return title
        return ""


def safe_url(url: str) -> bool:
    """http, https, mailto or a relative URL (``#id``, ``page.html``, ``/x``, ``//host/x``).

    Browsers ignore control characters and blanks inside a scheme (``java\\tscript:``), so
    they are dropped before the scheme is read; anything with another scheme (javascript,
    data, vbscript, file, ...) is unsafe.
    """
    cleaned = _IGNORED_IN_URL.sub("", url)
    match = _URL_SCHEME.match(cleaned)
    if match is None:
        # No scheme before the first ':', '/', '?' or '#': relative (a ':' later is fine).
        return True
    return match.group(1).lower() in SAFE_SCHEMES


def may_read_differently(source: str, markdown: str) -> bool:
    """Could a Markdown reader see ``markdown`` (written from ``source``) differently from
    the exporter? Only with a fence-like run, or with backticks in the source beside raw
    HTML or link syntax (see `inert`). Plain ``in`` checks, no loop: it runs once per
    exported block, and an ordinary block stops here."""
    if "```" not in markdown and "~~~" not in markdown:
        if "`" not in source:
            return False
        if "<" not in markdown and "](" not in markdown and "]:" not in markdown:
            return False
    return True


def split_wikilink(match: re.Match[str]) -> tuple[str, str]:
    """``[[target|label]]`` -> (target, label); the label defaults to the target."""
    inner = match.group(0)[2:-2]
    target, _bar, label = inner.partition("|")
    target = target.strip()
    return target, (label.strip() or target)


def code_segments(text: str) -> list[tuple[bool, str]]:
    """Split inline text into (is_code, text) runs: a run of N backticks up to the next
    run of exactly N is a code span (CommonMark); an unmatched run is literal text."""
    out: list[tuple[bool, str]] = []
    pos = 0
    for start, end in paired_runs(text):  # linear: `core.noma.backtick_runs`
        if start > pos:
            out.append((False, text[pos:start]))
        out.append((True, text[start:end]))
        pos = end
    if pos < len(text):
        out.append((False, text[pos:]))
    return out


REMEMBERED_NAMES: Final = 1024


def remembered(table: dict[str, str], name: str, make: Callable[[str], str]) -> str:
    """``make(name)``, made once per name and kept in ``table``. For what a document repeats
    thousands of times from a few names (directive names, attribute keys); at most
    `REMEMBERED_NAMES` are kept, so a hostile document's names cannot grow a table without
    end (the rest are made each time)."""
    text = table.get(name)
    if text is None:
        text = make(name)
        if len(table) < REMEMBERED_NAMES:
            table[name] = text
    return text


_TITLES: dict[str, str] = {}


def directive_title(name: str) -> str:
    """``open_question`` -> ``Open question``: the label a reader sees for a block type."""
    return remembered(_TITLES, name, _title)


def _title(name: str) -> str:
    words = name.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def value_text(value: AttrValue) -> str:
    """An attribute value as a reader would write it: ``true``, ``0.8``, ``text``."""
    if isinstance(value, str):  # most values (compiled: one type test)
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    return format_number(value)


def shown_attrs(node: Directive) -> list[tuple[str, AttrValue]]:
    """The attributes a reader sees beside the block's type (the id is shown apart)."""
    hidden = _HIDDEN_TABLE_ATTRS if node.name == "table" else _HIDDEN_ATTRS
    return [(k, v) for k, v in node.attrs.items() if k not in hidden]


_HIDDEN_ATTRS: Final = frozenset({"id"})
_HIDDEN_TABLE_ATTRS: Final = frozenset({"id", "header", "align"})


@dataclass(slots=True)
class Grid:
    """A table's cells, whatever source it came from (pipe table, ``::table``, dataset)."""

    header: list[str]
    align: list[str | None]
    rows: list[list[str]]
    literal: bool = False  # cells are plain values (a dataset), not inline Noma text


_ALIGN_WORDS: Final = {
    "l": "left",
    "left": "left",
    "r": "right",
    "right": "right",
    "c": "center",
    "center": "center",
    "centre": "center",
}


def _separator_align(line: str) -> list[str | None]:
    out: list[str | None] = []
    for cell in split_row(line):
        cell = cell.strip()
        left, right = cell.startswith(":"), cell.endswith(":")
        out.append("center" if left and right else "left" if left else "right" if right else None)
    return out


# Grids already read, by what they are read from (body, ``header``, ``align``): each table
# is split once, not once per export. Keyed by content, so an edited body is read again;
# bounded, so a long session's old tables do not accumulate.
_GRIDS: dict[tuple[str, AttrValue | None, AttrValue | None], Grid | None] = {}
_GRIDS_KEPT: Final = 4096


def directive_table(node: Directive) -> Grid | None:
    """The cells of a ``::table`` body, read like the table ops read them: pipe rows with
    optional outer pipes; the first row is the header when the opener has ``header`` or
    the second row is a separator. ``align="l,r,c"`` sets alignments. None for no rows.

    The grid is shared between calls for the same table: callers read it, never change it.
    """
    attrs = node.attrs
    key = (node.body, attrs.get("header"), attrs.get("align"))
    if key in _GRIDS:
        return _GRIDS[key]
    if len(_GRIDS) >= _GRIDS_KEPT:
        _GRIDS.clear()
    grid = _GRIDS[key] = _read_table(node)
    return grid


def _read_table(node: Directive) -> Grid | None:
    lines = [line for line in node.body.split("\n") if line.strip()]
    if not lines:
        return None
    flag = node.attrs.get("header")
    has_header = flag is True or flag == 1 or str(flag).lower() in ("yes", "on")
    align: list[str | None] = []
    if len(lines) > 1 and is_separator(lines[1]):
        has_header = True
        align = _separator_align(lines[1])
    rows = [split_row(line) for line in lines if not is_separator(line)]
    if not rows:
        return None
    header = rows.pop(0) if has_header else []
    width = max(len(r) for r in [header, *rows])
    spec = node.attrs.get("align")
    if isinstance(spec, str):
        align = [_ALIGN_WORDS.get(a.strip().lower()) for a in spec.split(",")]
    align = (align + [None] * width)[:width]
    pad = [*([""] * width)]
    header = (header + pad)[:width] if header else [""] * width
    rows = [(r + pad)[:width] for r in rows]
    return Grid(header, align, rows)


def dataset_grid(node: Directive) -> Grid | None:
    """A ``::dataset`` as a grid, for the shapes the validator reads: CSV/TSV (``format=``
    or a comma/tab first line; the first row is the header), YAML or JSON with ``rows:``
    (or ``data:``/``records:``) of lists or mappings, or a list of records. Columns come
    from ``columns=``, ``schema:``/``columns:`` or the record keys. None for another shape
    (shown as code)."""
    from ..bounded import ContentRefused
    from ..frontmatter import load_yaml

    body = node.body
    if not body.strip():
        return None
    fmt = str(node.attrs.get("format", "")).strip().lower()
    first = body.lstrip().split("\n", 1)[0]
    if fmt in ("csv", "tsv"):
        return _csv_grid(body, "\t" if fmt == "tsv" else ",", node)
    try:
        data: Any = load_yaml(body)
    except ContentRefused:  # beyond the bounds (the validator says why): shown as code
        return None
    except Exception:  # any other loader failure: not YAML/JSON (maybe CSV, else code)
        data = None
    columns: list[str] = []
    rows_in: Any = None
    if isinstance(data, dict):
        rows_in = next((data[k] for k in ("rows", "data", "records") if k in data), None)
        schema = data.get("schema", data.get("columns"))
        if isinstance(schema, dict):
            columns = [str(k) for k in schema]
        elif isinstance(schema, list):
            columns = [str(c.get("name", "")) if isinstance(c, dict) else str(c) for c in schema]
    elif isinstance(data, list):
        rows_in = data
    elif "," in first or "\t" in first:
        return _csv_grid(body, "\t" if "\t" in first else ",", node)
    if not isinstance(rows_in, list) or not rows_in:
        return None
    if all(isinstance(r, dict) for r in rows_in):
        keys = list(dict.fromkeys(str(k) for r in rows_in for k in r))
        columns = columns or keys
        rows = [[_cell(r.get(c)) for c in columns] for r in rows_in]
    elif all(isinstance(r, list) for r in rows_in):
        rows = [[_cell(v) for v in r] for r in rows_in]
    else:
        return None
    return _padded(_declared(node) or columns, rows)


def _declared(node: Directive) -> list[str]:
    attr = node.raw_attrs.get("columns")
    return [c.strip() for c in attr.split(",")] if attr and attr.strip() else []


def _csv_grid(body: str, delimiter: str, node: Directive) -> Grid | None:
    lines = [line for line in body.split("\n") if line.strip()]
    rows = [[c.strip() for c in row] for row in csv.reader(lines, delimiter=delimiter)]
    if not rows:
        return None
    declared = _declared(node)
    header = declared or rows.pop(0)
    return _padded(header, rows)


def _padded(header: list[str], rows: list[list[str]]) -> Grid | None:
    width = max([len(header), *(len(r) for r in rows)])
    if width == 0:
        return None
    pad = [""] * width
    return Grid(
        (header + pad)[:width], [None] * width, [(r + pad)[:width] for r in rows], literal=True
    )


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):  # a tuple: compiled to two type tests, no union made
        return format_number(value)
    return str(value)


def dataset_lang(body: str) -> str:
    """The code-fence language of a dataset body shown as code."""
    head = body.lstrip()[:1]
    if head in ("{", "["):
        return "json"
    first = body.strip().split("\n", 1)[0]
    if "," in first and ":" not in first:
        return "csv"
    return "yaml"
