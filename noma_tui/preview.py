"""A rendered preview of one block, beside its source (``p``).

The body of a block is Markdown-like prose: emphasis, links, lists, quotes, pipe tables and
fenced code. It is rendered with Rich's Markdown (markdown-it-py underneath), so tables
come out as tables and code is highlighted. Noma's own syntax is shown for what it means:
a directive's opener becomes a heading line with its attributes, ``[[id]]`` wikilinks
become links, and nested directives become quoted blocks with their name.
"""

from __future__ import annotations

import re

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from core.noma.api import Directive, Section, visible

from .document import ROOT, LoadedDocument
from .styles import Styles
from .visible import line_text, plain

WIKILINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
OPENER = re.compile(r"^(:{2,})([A-Za-z_][\w-]*)(\{.*\})?\s*$")
CLOSER = re.compile(r"^:{2,}\s*$")
HEADING_ATTRS = re.compile(r"^(#{1,6}\s.*?)\s*\{[^}]*\}\s*$")
MAX_PREVIEW_LINES = 400


def _markdown_source(lines: list[str]) -> str:
    out: list[str] = []
    depth = 0
    in_code = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
            out.append(line)
            continue
        if in_code:
            out.append(line)
            continue
        opener = OPENER.match(line)
        if opener:
            depth += 1
            attrs = (opener.group(3) or "").strip("{}")
            out.append("> " * depth + f"**::{opener.group(2)}** {attrs}".rstrip())
            continue
        if CLOSER.match(line) and depth:
            depth -= 1
            out.append("")
            continue
        line = HEADING_ATTRS.sub(r"\1", line)
        line = WIKILINK.sub(lambda m: f"[{m.group(2) or m.group(1)}](#{m.group(1)})", line)
        out.append(("> " * depth) + line if depth else line)
    return "\n".join(out)


def render_block(
    loaded: LoadedDocument | None, block: int | None, palette: Styles
) -> RenderableType:
    if loaded is None or block is None:
        return Text("No block selected.", style=palette.muted)
    if block == ROOT:
        first, last = 1, len(loaded.lines)
        head = line_text(loaded.name, style="bold")
        body_lines = [
            visible(loaded.lines.get(n)) for n in range(first, min(last, MAX_PREVIEW_LINES) + 1)
        ]
        return Group(head, Text(), Markdown(_markdown_source(body_lines)))
    node = loaded.blocks[block]
    if not loaded.span_ok(block):
        return Text("The block's span is not reliable (recovered document).", style=palette.warning)
    end = min(node.end_line, node.line + MAX_PREVIEW_LINES)
    if isinstance(node, Directive):
        head = Text()
        head.append(f"::{plain(node.name)}", palette.fence)
        if node.id:
            head.append(f" {plain(node.id)}", "bold")
        attrs = [plain(f"{k}={v}") for k, v in node.attrs.items() if k != "id"]
        if attrs:
            head.append("  " + "  ".join(attrs), palette.muted)
        if node.name == "table":
            table = _table(loaded, block)
            if table is not None:
                return Group(head, Text(), table)
        inner = [
            visible(loaded.lines.get(n)) for n in range(node.line + 1, max(node.line + 1, end))
        ]
        if inner and CLOSER.match(inner[-1]):
            inner = inner[:-1]
        return Group(head, Text(), Markdown(_markdown_source(inner)))
    if isinstance(node, Section):
        lines = [visible(loaded.lines.get(n)) for n in range(node.line, end + 1)]
        return Markdown(_markdown_source(lines))
    return Text("")


def _table(loaded: LoadedDocument, block: int) -> Table | None:
    """A ``::table`` as a table, read the way the table ops read it."""
    from core.noma.api import PatchError

    from .tables import read_table, shown_cell

    try:
        cells = read_table(loaded, block)
    except PatchError:
        return None
    table = Table(show_header=cells.header is not None, expand=False)
    header = cells.header or [f"col {i}" for i in range(cells.width)]
    for i in range(cells.width):
        table.add_column(line_text(shown_cell(header[i])) if i < len(header) else "")
    for row in cells.rows:  # Text cells: a cell is neither markup nor terminal controls
        shown = [line_text(shown_cell(c)) for c in row]
        table.add_row(*shown + [Text()] * (cells.width - len(row)))
    return table
