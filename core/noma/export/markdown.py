"""``render --to markdown``: CommonMark with GFM tables, for wikis and reviewers.

Headings stay headings; every directive becomes a titled blockquote (``> **Claim** ·
`id` · confidence: 0.8``) holding its rendered body, nested directives nested quotes.
Every canonical id is kept as an ``<a id>`` anchor on its heading or directive title, so
``[[wikilinks]]`` (rewritten to ``[label](#id)``) and reference attributes (``for:`` and
the like) are working links in any renderer that keeps raw anchors (GitHub, GitLab,
CommonMark). Bodies are not re-flowed: paragraph text is passed through as written.
"""

from __future__ import annotations

import re
from typing import Final

from ..nodes import (
    Code,
    Directive,
    Document,
    Frontmatter,
    ListNode,
    Node,
    Paragraph,
    Quote,
    Section,
    Table,
    ThematicBreak,
)
from .common import (
    ESCAPE_HATCHES,
    LITERAL_DIRECTIVES,
    MAX_RENDER_DEPTH,
    REFERENCE_KEYS,
    TOO_DEEP_NOTE,
    Context,
    Grid,
    dataset_grid,
    dataset_lang,
    directive_table,
    directive_title,
    escape,
    may_read_differently,
    remembered,
    shown_attrs,
    value_text,
)
from .inert import is_inert, literal_markdown
from .inline import anchor, escape_markdown, inline_markdown

_BACKTICK_RUN: Final = re.compile(r"`+")
# Line starts that Markdown reads as a block (the group is where the backslash goes).
_BLOCK_START: Final = re.compile(
    r"[ \t]{0,3}(?:(=+|-+)[ \t]*\Z|(~{3,}|`{3,})|(\+)[ \t]|\d{1,9}(\))[ \t]|(\|))"
)
_UNESCAPED_PIPE: Final = re.compile(r"(?<!\\)\|")
# A fence's info string is kept only when it is a plain language name.
_FENCE_INFO: Final = re.compile(r"[A-Za-z0-9_+.\-]*")
# A line of whitespace only (not empty): `_quoted` writes it as `>` too. Looked for as
# the first line, then after each newline: a search for `^` would try every position.
_FIRST_BLANK_WITH_SPACE: Final = re.compile(r"[^\S\n]+$", re.MULTILINE)
_NEXT_BLANK_WITH_SPACE: Final = re.compile(r"\n[^\S\n]+$", re.MULTILINE)
# `_BLOCK_START` at the start of the first line, and of any later line: text where it
# matches nowhere passes unchanged. (Two patterns, not one search for `^`, which would try
# every position; a search for a leading newline skips to the next newline.)
_FIRST_BLOCK_START: Final = re.compile(_BLOCK_START.pattern.replace(r"\Z", "$"), re.MULTILINE)
_NEXT_BLOCK_START: Final = re.compile("\n" + _FIRST_BLOCK_START.pattern, re.MULTILINE)


def render_markdown(doc: Document) -> str:
    """The whole document as Markdown text (ends with one newline; empty for an empty doc)."""
    ctx = Context(doc)
    text = "\n\n".join(b for b in (_block(n, ctx) for n in doc.children) if b)
    return text + "\n" if text else ""


def _block(node: Node, ctx: Context) -> str:
    if isinstance(node, Paragraph):
        text = stays_paragraph(inline_markdown(node.content, ctx))
        return literal_markdown(node.content) if needs_literal(node.content, text) else text
    if isinstance(node, Section):
        title = inline_markdown(node.title, ctx)
        if needs_literal(node.title, title):
            title = literal_markdown(node.title)
        if title.endswith("#"):
            title = title[:-1] + "\\#"  # a trailing `#` run would be read as a closing sequence
        head = "#" * node.level + " " + _anchor_tag(node.id) + title
        parts = [head, *(_block(c, ctx) for c in node.children)]
        return "\n\n".join(p for p in parts if p)
    if isinstance(node, Directive):
        return _directive(node, ctx)
    if isinstance(node, Code):
        return fenced(node.content, node.lang or "")
    if isinstance(node, ListNode):
        return "\n".join(
            _item(f"{k}. " if node.ordered else "- ", item.content, ctx)
            for k, item in enumerate(node.items, 1)
        )
    if isinstance(node, Quote):
        quoted = _quoted(stays_paragraph(inline_markdown(node.content, ctx)))
        if needs_literal(node.content, quoted):
            return _quoted(literal_markdown(node.content))
        return quoted
    if isinstance(node, Table):
        return grid_markdown(Grid(node.header, node.align, node.rows), ctx)
    if isinstance(node, ThematicBreak):
        return "***"  # never `---`: after text it would make a setext heading
    if isinstance(node, Frontmatter):
        return _frontmatter(node.raw)
    return ""


def needs_literal(source: str, text: str) -> bool:
    """`inert.needs_literal`, with its cheap first test run here (compiled with this module)."""
    return may_read_differently(source, text) and not is_inert(text)


def _item(marker: str, content: str, ctx: Context) -> str:
    text = marker + inline_markdown(content, ctx)
    return marker + literal_markdown(content) if needs_literal(content, text) else text


# Frontmatter is passed through as written (YAML, which Markdown readers either parse or
# show as text); one holding anything a reader could take for markup is read back first.
_FRONTMATTER_MARKS: Final = re.compile(r"[`<&~]|\]\(|\]:")


def _frontmatter(raw: str) -> str:
    text = f"---\n{raw}\n---"
    if _FRONTMATTER_MARKS.search(raw) is None or is_inert(text):
        return text
    return f"---\n{literal_markdown(raw)}\n---"


def stays_paragraph(text: str) -> str:
    """Paragraph text whose lines Markdown would read as something else, made literal.

    Noma reads these as plain paragraph lines, so the export must too: a first line
    indented by four (indented code), a ``===``/``---`` line (setext underline), ``~~~``
    or three backticks Noma does not read as a fence (a fence to Markdown), ``+ x`` or
    ``1) x`` (list items) and ``| a |`` rows (a GFM table). What else could read
    differently is caught by `inert.needs_literal`.
    """
    first = text[:1]
    if (
        first not in (" ", "\t")
        and (not _may_start_block(first) or _FIRST_BLOCK_START.match(text) is None)
        and ("\n" not in text or _NEXT_BLOCK_START.search(text) is None)
    ):
        return text  # the usual paragraph: nothing to escape, no indentation to drop
    lines = text.split("\n")
    lines[0] = lines[0].lstrip(" \t")
    for k, line in enumerate(lines):
        match = _BLOCK_START.match(line)
        if match is not None:
            at = next(match.start(g) for g in range(1, 6) if match.group(g) is not None)
            lines[k] = line[:at] + "\\" + line[at:]
    return "\n".join(lines)


def _may_start_block(first: str) -> bool:
    """Can `_FIRST_BLOCK_START` match text starting with ``first`` (not a blank)? Its
    alternatives start with one of ``=-~`+|`` or a digit (``\\d``: any Unicode decimal
    digit, as `str.isdecimal` says); a regex match per paragraph costs far more."""
    return not first or first in "=-~`+|" or first.isdecimal()


def _anchor_tag(ident: str | None) -> str:
    return f'<a id="{escape(ident)}"></a>' if ident else ""


# Directive names and attribute keys, escaped once each (`remembered`): a regex search per
# use was a twentieth of an export.
_ESCAPED_KEYS: dict[str, str] = {}
_BOLD_TITLES: dict[str, str] = {}


def _bold_title(name: str) -> str:
    return "**" + escape_markdown(directive_title(name)) + "**"


def _directive(node: Directive, ctx: Context) -> str:
    head = [_anchor_tag(node.id) + remembered(_BOLD_TITLES, node.name, _bold_title)]
    if node.id:
        head.append(code_span(node.id))
    for key, value in shown_attrs(node):
        escaped = remembered(_ESCAPED_KEYS, key, escape_markdown)
        head.append(escaped + ": " + _attr_value(key, value_text(value), ctx))
    body = _directive_body(node, ctx)
    text = " · ".join(head) + ("\n\n" + body if body else "")
    return _quoted(text)


def _attr_value(key: str, text: str, ctx: Context) -> str:
    if key in REFERENCE_KEYS:
        ident = ctx.resolve(text)
        if ident is not None:
            return f"[{escape_markdown(text)}](#{anchor(ident)})"
    return escape_markdown(text)


def _directive_body(node: Directive, ctx: Context) -> str:
    name = node.name
    if node.depth > MAX_RENDER_DEPTH:
        return f"*{TOO_DEEP_NOTE}*\n\n" + fenced(node.body) if node.body.strip() else ""
    if name == "table":
        grid = directive_table(node)
        return grid_markdown(grid, ctx) if grid is not None else ""
    if name == "dataset":
        grid = dataset_grid(node)
        if grid is not None:
            return grid_markdown(grid, ctx)
        return fenced(node.body, dataset_lang(node.body)) if node.body.strip() else ""
    if name in ESCAPE_HATCHES:
        note = f"*Raw {escape_markdown(name)} source, shown as text (never run):*"
        return note + "\n\n" + fenced(node.body, name)
    if name in LITERAL_DIRECTIVES:
        lang = node.attrs.get("lang", node.attrs.get("language", "math" if name == "math" else ""))
        return fenced(node.body, str(lang)) if node.body.strip() else ""
    return "\n\n".join(b for b in (_block(c, ctx) for c in node.children) if b)


def _quoted(text: str) -> str:
    """Each line behind ``> ``; a blank line (empty or only whitespace) is ``>`` alone."""
    first = text[:1]
    if (
        first.isspace() and first != "\n" and _FIRST_BLANK_WITH_SPACE.match(text) is not None
    ) or _NEXT_BLANK_WITH_SPACE.search(text) is not None:
        return "\n".join(f"> {line}" if line.strip() else ">" for line in text.split("\n"))
    # No whitespace-only line: only empty lines become `>` (two passes catch neighbours).
    out = ("> " + text.replace("\n", "\n> ")).replace("\n> \n", "\n>\n").replace("\n> \n", "\n>\n")
    if out.startswith("> \n") or out == "> ":
        out = ">" + out[2:]
    if out.endswith("\n> "):
        out = out[:-1]
    return out


def fenced(content: str, lang: str = "") -> str:
    """A backtick fence longer than any backtick run inside, so the content cannot end it."""
    longest = max((len(m.group(0)) for m in _BACKTICK_RUN.finditer(content)), default=0)
    fence = "`" * max(3, longest + 1)
    info = lang if _FENCE_INFO.fullmatch(lang) else ""
    return f"{fence}{info}\n{content}\n{fence}" if content else f"{fence}{info}\n{fence}"


def code_span(text: str) -> str:
    """Literal text as an inline code span (a longer fence when the text has backticks)."""
    if "`" not in text:  # the common case: one backtick each side
        return "`" + text.replace("\n", " ") + "`"
    longest = max((len(m.group(0)) for m in _BACKTICK_RUN.finditer(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text.replace(chr(10), ' ')}{pad}{fence}"


def grid_markdown(grid: Grid, ctx: Context) -> str:
    """A GFM pipe table (the header row may be empty cells: GFM requires one)."""

    def cell(text: str) -> str:
        if grid.literal:
            return escape_markdown(text)
        # Noma keeps `|` inside code spans in one cell; GFM splits there unless escaped.
        shown = inline_markdown(text, ctx)
        if "|" in shown:
            shown = _UNESCAPED_PIPE.sub(r"\\|", shown)
        shown = shown.replace("\n", " ")
        if needs_literal(text, shown):
            return literal_markdown(text).replace("\n", " ")
        return shown

    width = max(len(grid.header), 1)
    seps = []
    for col in range(width):
        align = grid.align[col] if col < len(grid.align) else None
        seps.append({"left": ":---", "right": "---:", "center": ":---:"}.get(align or "", "---"))
    lines = ["| " + " | ".join(cell(c) for c in grid.header) + " |"]
    lines.append("| " + " | ".join(seps) + " |")
    lines.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in grid.rows)
    return "\n".join(lines)
