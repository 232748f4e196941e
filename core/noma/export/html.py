"""``render --to html``: one self-contained, safe HTML page.

Safe by construction, not by filtering: the page is written from the AST with a fixed set
of tags, every text and attribute value goes through the standard library's ``escape``,
links keep an ``href`` only for http, https, mailto and relative URLs, raw HTML in the
source (inline or ``::html``/``::svg``/``::script`` blocks) is shown as text, and a
Content-Security-Policy forbids scripts and remote loads should anything slip through.
Every canonical id is an element id, so ``#id`` links and wikilinks work. The stylesheet
follows the reader's light/dark preference.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ..diagnostics import Diagnostic
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
    directive_table,
    directive_title,
    escape,
    shown_attrs,
    value_text,
)
from .inline import anchor, inline_html

CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)

STYLE: Final = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e;
  --line: #d1d9e0; --soft: #f6f8fa; --accent: #0969da; --err: #cf222e; --warn: #9a6700; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --soft: #151b23;
    --accent: #4493f8; --err: #f85149; --warn: #d29922; } }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif; }
main { max-width: 52rem; margin: 0 auto; padding: 2rem 1.25rem 4rem; }
a { color: var(--accent); }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.6em 0 .6em; }
h1 { border-bottom: 1px solid var(--line); padding-bottom: .3em; }
.anchor { visibility: hidden; text-decoration: none; margin-left: .35em; color: var(--muted); }
:is(h1, h2, h3, h4, h5, h6, header):hover .anchor { visibility: visible; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .9em; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .8em 1em;
  overflow-x: auto; white-space: pre; }
code { background: var(--soft); border-radius: 4px; padding: .1em .3em; }
pre code { background: none; padding: 0; }
blockquote { margin: 1em 0; padding: 0 1em; color: var(--muted);
  border-left: 4px solid var(--line); }
table { border-collapse: collapse; margin: 1em 0; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: .35em .75em; }
th { background: var(--soft); }
.align-left { text-align: left; } .align-right { text-align: right; }
.align-center { text-align: center; }
.directive { border: 1px solid var(--line); border-left: 4px solid var(--accent);
  border-radius: 6px; margin: 1em 0; padding: .2em 1em; background: var(--bg); }
.directive > header { font-size: .9em; color: var(--muted); margin: .4em 0; }
.directive > header .kind { font-weight: 600; color: var(--fg); }
.directive > header .attr { margin-left: .6em; }
.directive-risk, .directive-warning, .directive-counterevidence { border-left-color: var(--warn); }
.directive-decision, .directive-adr, .directive-claim { border-left-color: var(--accent); }
.directive-comment { border-left-color: var(--muted); }
.raw-note { font-size: .85em; color: var(--muted); }
.wikilink.broken, .unsafe-link { color: var(--err); text-decoration: underline wavy; }
.frontmatter summary, .diagnostics summary { cursor: pointer; color: var(--muted); }
.diagnostics { border: 1px solid var(--line); border-radius: 6px; padding: .5em 1em;
  margin: 1em 0; }
.diagnostics .error { color: var(--err); } .diagnostics .warning { color: var(--warn); }
.diagnostics ul { padding-left: 1.2em; }
"""


def render_html(doc: Document, diagnostics: Sequence[Diagnostic] | None = None) -> str:
    """The page. ``diagnostics`` (when given) adds a collapsible summary at the top."""
    ctx = Context(doc)
    title = ctx.title or "Untitled document"
    body = [_block(n, ctx) for n in doc.children]
    if diagnostics is not None:
        body.insert(0, _diagnostics(diagnostics, ctx))
    lang = doc.meta.get("lang") if isinstance(doc.meta.get("lang"), str) else "en"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{escape(str(lang))}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="noma-workbench">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(b for b in body if b)
        + "\n</main>\n</body>\n</html>\n"
    )


def _id_attr(ident: str | None) -> str:
    return f' id="{escape(ident)}"' if ident else ""


def _permalink(ident: str | None) -> str:
    if not ident:
        return ""
    return f'<a class="anchor" href="#{escape(anchor(ident))}" aria-label="link to this">#</a>'


def _children(children: list[Node], ctx: Context) -> str:
    return "\n".join(b for b in (_block(c, ctx) for c in children) if b)


def _block(node: Node, ctx: Context) -> str:
    if isinstance(node, Paragraph):
        return f"<p>{inline_html(node.content, ctx)}</p>"
    if isinstance(node, Section):
        level = min(max(node.level, 1), 6)
        head = (
            f"<h{level}{_id_attr(node.id)}>{inline_html(node.title, ctx)}"
            f"{_permalink(node.id)}</h{level}>"
        )
        if node.in_directive or not node.children:
            return head
        return f"<section>\n{head}\n{_children(node.children, ctx)}\n</section>"
    if isinstance(node, Directive):
        return _directive(node, ctx)
    if isinstance(node, Code):
        return _pre(node.content, node.lang)
    if isinstance(node, ListNode):
        return _list([item.content for item in node.items], node.ordered, ctx)
    if isinstance(node, Quote):
        return _quote(node.content, ctx)
    if isinstance(node, Table):
        return _grid(Grid(node.header, node.align, node.rows), ctx)
    if isinstance(node, ThematicBreak):
        return "<hr>"
    if isinstance(node, Frontmatter):
        return (
            '<details class="frontmatter"><summary>Front matter</summary>\n'
            f"<pre><code>{escape(node.raw)}</code></pre>\n</details>"
        )
    return ""


# A nested list item inside a list item's continuation lines: indented marker, then text.
_NESTED_ITEM: Final = re.compile(r"([ \t]+)([-*+]|\d{1,9}[.)])[ \t]+(.*)\Z")


def _list(items: list[str], ordered: bool, ctx: Context, depth: int = 0) -> str:
    tag = "ol" if ordered else "ul"
    rendered = "\n".join(f"<li>{_item(text, ctx, depth)}</li>" for text in items)
    return f"<{tag}>\n{rendered}\n</{tag}>"


def _item(content: str, ctx: Context, depth: int) -> str:
    """An item's text, then any indented sub-items (Noma keeps them as continuation lines;
    Markdown readers show them as a nested list, and so does the page)."""
    lines = content.split("\n")
    cut = next((k for k, line in enumerate(lines) if k and _NESTED_ITEM.match(line)), None)
    if cut is None or depth >= 8:
        return inline_html(content, ctx)
    head = inline_html("\n".join(lines[:cut]), ctx)
    first = _NESTED_ITEM.match(lines[cut])
    assert first is not None
    indent = len(first.group(1))
    strip = re.compile(r"[ \t]{0," + str(indent) + "}")
    subs: list[list[str]] = []
    for line in lines[cut:]:
        match = _NESTED_ITEM.match(line)
        if match is not None and len(match.group(1)) <= indent:
            subs.append([match.group(3)])
        else:
            lead = strip.match(line)
            subs[-1].append(line[lead.end() if lead else 0 :])
    ordered = first.group(2)[0].isdigit()
    return head + "\n" + _list(["\n".join(s) for s in subs], ordered, ctx, depth + 1)


def _quote(content: str, ctx: Context, depth: int = 0) -> str:
    """Paragraphs split at blank lines; a paragraph of ``>`` lines is a nested quote."""
    parts = []
    for para in (p for p in content.split("\n\n") if p.strip()):
        lines = para.split("\n")
        if depth < 8 and all(line.startswith(">") for line in lines):
            inner = "\n".join(line[2:] if line[1:2] == " " else line[1:] for line in lines)
            parts.append(_quote(inner, ctx, depth + 1))
        else:
            parts.append(f"<p>{inline_html(para, ctx)}</p>")
    return "<blockquote>\n" + "\n".join(parts) + "\n</blockquote>"


def _pre(content: str, lang: str | None = None) -> str:
    cls = f' class="language-{escape(lang)}"' if lang else ""
    return f"<pre><code{cls}>{escape(content)}</code></pre>"


def _directive(node: Directive, ctx: Context) -> str:
    name = node.name
    head = [f'<span class="kind">{escape(directive_title(name))}</span>']
    if node.id:
        head.append(f'<code class="block-id">{escape(node.id)}</code>')
    for key, value in shown_attrs(node):
        text = value_text(value)
        shown = escape(text)
        if key in REFERENCE_KEYS:
            ident = ctx.resolve(text)
            if ident is not None:
                shown = f'<a href="#{escape(anchor(ident))}">{shown}</a>'
        head.append(f'<span class="attr"><span class="key">{escape(key)}</span>: {shown}</span>')
    header = f"<header>{' '.join(head)}{_permalink(node.id)}</header>"
    body = _directive_body(node, ctx)
    cls = f"directive directive-{escape(name)}"
    return f'<aside class="{cls}"{_id_attr(node.id)}>\n{header}\n{body}\n</aside>'


def _directive_body(node: Directive, ctx: Context) -> str:
    name = node.name
    if node.depth > MAX_RENDER_DEPTH:
        note = f'<p class="raw-note">{escape(TOO_DEEP_NOTE)}</p>'
        return note + "\n" + _pre(node.body) if node.body.strip() else ""
    if name == "table":
        grid = directive_table(node)
        return _grid(grid, ctx) if grid is not None else ""
    if name == "dataset":
        grid = dataset_grid(node)
        if grid is not None:
            return _grid(grid, ctx)
        return _pre(node.body) if node.body.strip() else ""
    if name in ESCAPE_HATCHES:
        note = f'<p class="raw-note">Raw {escape(name)} source, shown as text (never run):</p>'
        return note + "\n" + _pre(node.body, name)
    if name in LITERAL_DIRECTIVES:
        lang = node.attrs.get("lang", node.attrs.get("language"))
        return _pre(node.body, str(lang) if lang else None) if node.body.strip() else ""
    return _children(node.children, ctx)


def _grid(grid: Grid, ctx: Context) -> str:
    def cell(tag: str, col: int, text: str) -> str:
        align = grid.align[col] if col < len(grid.align) else None
        cls = f' class="align-{align}"' if align in ("left", "right", "center") else ""
        # GFM cell semantics: `\|` is a pipe, inside code spans too.
        inner = escape(text) if grid.literal else inline_html(text.replace("\\|", "|"), ctx)
        return f"<{tag}{cls}>{inner}</{tag}>"

    head = "".join(cell("th", c, t) for c, t in enumerate(grid.header))
    rows = "\n".join(
        "<tr>" + "".join(cell("td", c, t) for c, t in enumerate(row)) + "</tr>" for row in grid.rows
    )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>"


def _diagnostics(diagnostics: Sequence[Diagnostic], ctx: Context) -> str:
    counts = {s: sum(1 for d in diagnostics if d.severity == s) for s in ("error", "warning")}
    summary = (
        f"Diagnostics: {counts['error']} error(s), {counts['warning']} warning(s), "
        f"{len(diagnostics) - counts['error'] - counts['warning']} info"
    )
    items = []
    for d in diagnostics:
        where = f"line {d.line}" if d.line else "document"
        node = ""
        if d.node_id and ctx.resolve(d.node_id):
            node = f' <a href="#{escape(anchor(d.node_id))}">{escape(d.node_id)}</a>'
        items.append(
            f'<li class="{escape(d.severity)}"><strong>{escape(d.severity)}</strong> '
            f"<code>{escape(d.code)}</code> {escape(where)}: {escape(d.message)}{node}</li>"
        )
    listing = f"\n<ul>\n{chr(10).join(items)}\n</ul>" if items else ""
    opened = " open" if counts["error"] else ""
    return (
        f'<details class="diagnostics"{opened}><summary>{escape(summary)}</summary>'
        f"{listing}\n</details>"
    )
