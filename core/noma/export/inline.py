"""Inline text (paragraphs, list items, quotes, table cells, titles) to HTML and Markdown.

HTML: markdown-it-py tokenises the CommonMark inline syntax (raw HTML off, so ``<script>``
is text), a small rule adds ``[[wikilinks]]``, and this module writes the tokens itself
with the standard library's escaper: only a fixed set of tags is ever produced, every text
and attribute is escaped, and a link keeps its ``href`` only when `safe_url` allows it.

Markdown: the text is already Markdown, so it passes through, except that wikilinks become
``[label](#id)`` links, raw HTML tags are backslash-escaped (shown, never run) and link
destinations with an unsafe scheme are dropped. Code spans are never touched.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Final
from urllib.parse import quote

from .common import WIKILINK_PATTERN, Context, code_segments, escape, safe_url, split_wikilink

if TYPE_CHECKING:  # markdown-it is loaded on first use: most text never needs it
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

_SIMPLE_TAGS: Final = {
    "em_open": "<em>",
    "em_close": "</em>",
    "strong_open": "<strong>",
    "strong_close": "</strong>",
    "s_open": "<s>",
    "s_close": "</s>",
}


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """``[[target]]`` / ``[[target|label]]`` as one token (before ``[link]`` is tried)."""
    if not state.src.startswith("[[", state.pos):
        return False
    match = WIKILINK_PATTERN.match(state.src, state.pos)
    if match is None or not match.group(1).strip():
        return False
    if not silent:
        target, label = split_wikilink(match)
        token = state.push("wikilink", "", 0)
        token.meta = {"target": target, "label": label}
    state.pos = match.end()
    return True


@cache
def markdown_it() -> MarkdownIt:
    """The inline tokenizer, made on first use (importing markdown-it costs ~25 ms)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("strikethrough")
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    return md


# Text with none of the characters that start inline syntax (emphasis, code, links,
# wikilinks, autolinks, entities, escapes, strikethrough).
_PLAIN: Final = re.compile(r"[^\\`*_\[\]<&~!]*")
# The characters `quote` never encodes (with ``safe="-._~:/"``).
_URL_SAFE: Final = re.compile(r"[A-Za-z0-9_.\-~:/]*")


def anchor(ident: str) -> str:
    """An id as a URL fragment (``#`` not included): percent-encoded, so any id is safe."""
    if _URL_SAFE.fullmatch(ident):
        return ident  # what `quote` leaves as it is, without the encode and the scan
    return quote(ident, safe="-._~:/")


def inline_html(text: str, ctx: Context) -> str:
    """One block's inline text as safe HTML."""
    if not text:
        return ""
    if _PLAIN.fullmatch(text) and "  \n" not in text:
        return escape(text)  # no inline syntax at all: the tokenizer would only escape it
    simple = _simple_html(text, ctx)
    if simple is not None:
        return simple
    blocks = markdown_it().parseInline(text, {})
    children = blocks[0].children if blocks else None
    return _tokens_html(children or [], ctx)


# The common inline syntax, written without the tokenizer: ``[[wikilinks]]`` and
# ``**strong**`` around plain words (`_simple_html` says exactly which).
_SIMPLE_PIECE: Final = re.compile(WIKILINK_PATTERN.pattern + r"|\*\*([^\\`*_\[\]<&~!\n]+)\*\*")
_BEFORE_STRONG: Final = frozenset(" \t\n")  # a `**` after these (or first) can only open
_AFTER_STRONG: Final = frozenset(" \t\n.,;:?)")  # a `**` before these (or last) can only close


def _simple_html(text: str, ctx: Context) -> str | None:
    """What markdown-it makes of ``text`` when it is plain text, ``[[wikilinks]]`` and
    ``**strong**`` spans only, else None (the tokenizer decides).

    Plain: none of the characters that start inline syntax, no ``\r`` or NUL (normalised
    by the tokenizer), no blank before or after a line break (trimmed by it). A strong
    span is a ``**`` after the start or a blank, plain text that starts and ends with a
    letter or digit, and a ``**`` before the end, a blank or ``.,;:?)``: its delimiters
    are unambiguous (CommonMark's flanking rules), so it pairs as written. Anything else,
    an empty wikilink target included, is left to the tokenizer.
    """
    if " \n" in text or "\n " in text or "\n\t" in text or "\r" in text or "\x00" in text:
        return None
    out: list[str] = []
    pos = 0
    for match in _SIMPLE_PIECE.finditer(text):
        start = match.start()
        if _PLAIN.fullmatch(text, pos, start) is None:
            return None
        out.append(escape(text[pos:start]))
        strong = match.group(2)
        if strong is None:
            if not match.group(1).strip():
                return None
            target, label = split_wikilink(match)
            out.append(_wikilink_html(target, label, ctx))
        else:
            end = match.end()
            if not (strong[0].isalnum() and strong[-1].isalnum()):
                return None
            if start and text[start - 1] not in _BEFORE_STRONG:
                return None
            if end < len(text) and text[end] not in _AFTER_STRONG:
                return None
            out.append("<strong>" + escape(strong) + "</strong>")
        pos = match.end()
    if _PLAIN.fullmatch(text, pos) is None:
        return None
    out.append(escape(text[pos:]))
    return "".join(out)


def _tokens_html(tokens: list[Token], ctx: Context) -> str:
    out: list[str] = []
    links: list[str] = []  # the closing tag of each open link: </a> or </span>
    for token in tokens:
        kind = token.type
        if kind == "text":
            out.append(escape(token.content))
        elif kind == "softbreak":
            out.append("\n")
        elif kind == "hardbreak":
            out.append("<br>\n")
        elif kind == "code_inline":
            out.append(f"<code>{escape(token.content)}</code>")
        elif kind in _SIMPLE_TAGS:
            out.append(_SIMPLE_TAGS[kind])
        elif kind == "link_open":
            href = str(token.attrGet("href") or "")
            if safe_url(href):
                out.append(f'<a href="{escape(href)}" rel="noopener noreferrer">')
                links.append("</a>")
            else:
                out.append('<span class="unsafe-link" title="link removed: unsafe URL">')
                links.append("</span>")
        elif kind == "link_close":
            out.append(links.pop() if links else "")
        elif kind == "image":
            out.append(_image(token, ctx))
        elif kind == "wikilink":
            out.append(_wikilink_html(token.meta["target"], token.meta["label"], ctx))
        else:  # html_inline cannot occur (html is off); anything else is shown as text
            out.append(escape(token.content))
    out.extend(reversed(links))
    return "".join(out)


def _image(token: Token, ctx: Context) -> str:
    """An image becomes a link to it: the page stays self-contained (no remote loads)."""
    alt = _tokens_html(token.children or [], ctx) or "image"
    src = str(token.attrGet("src") or "")
    if src and safe_url(src):
        return f'<a class="image-link" href="{escape(src)}" rel="noopener noreferrer">{alt}</a>'
    return f'<span class="image-link">{alt}</span>'


def _wikilink_html(target: str, label: str, ctx: Context) -> str:
    ident = ctx.resolve(target)
    if ident is None:
        return (
            f'<span class="wikilink broken" title="broken reference: {escape(target)}">'
            f"{escape(label)}</span>"
        )
    return f'<a class="wikilink" href="#{escape(anchor(ident))}">{escape(label)}</a>'


# -- Markdown ------------------------------------------------------------------------------

# A raw HTML start: `<` then a tag name, `/`, `!` or `?` (CommonMark's raw HTML openers).
_RAW_HTML: Final = re.compile(r"<(?=[A-Za-z/!?])")
# An autolink `<scheme:...>` or `<user@host>`, kept when its scheme is safe.
_AUTOLINK: Final = re.compile(
    r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+)>"
)
# An inline link destination `](url` or `](<url>` (CommonMark: no `<` inside the angle
# brackets, which also keeps a line of `](<](<...` linear instead of quadratic).
_DESTINATION: Final = re.compile(r"\]\(\s*(<[^<>\n]*>|[^\s()]*)")
# A link reference definition `[label]: url` at the start of a line.
_REFERENCE_DEF: Final = re.compile(r"^( {0,3})\[([^\]\n]+\]:[ \t]*)(<[^>\n]*>|\S*)", re.MULTILINE)


def inline_markdown(text: str, ctx: Context) -> str:
    """Noma inline text as Markdown: wikilinks resolved, raw HTML and unsafe links inert.

    Every rewrite below needs a ``[``/``]`` (wikilinks, link destinations, definitions) or
    a ``<`` (raw HTML, autolinks), and code spans need a backtick: most text has none of
    them and is returned as it is, without the splitting and the scans.
    """
    if "`" not in text:
        if "[" not in text and "]" not in text and "<" not in text:
            return text
        return _markdown_text(text, ctx)
    parts = []
    for is_code, segment in code_segments(text):
        parts.append(segment if is_code else _markdown_text(segment, ctx))
    return "".join(parts)


def _markdown_text(text: str, ctx: Context) -> str:
    # Each substitution only when its pattern's first characters occur at all. A resolved
    # wikilink is written `[label](#id)`: a destination that is safe by construction, so
    # the destinations are checked only when the text had one of its own.
    destinations = "](" in text
    definitions = "]:" in text
    if "[[" in text:
        text = WIKILINK_PATTERN.sub(lambda m: _wikilink_md(m, ctx), text)
    if destinations:
        text = _DESTINATION.sub(_checked_destination, text)
    if definitions:
        text = _REFERENCE_DEF.sub(_checked_definition, text)
    if "<" not in text:
        return text
    out: list[str] = []
    pos = 0
    for match in _RAW_HTML.finditer(text):
        if match.start() < pos:
            continue
        auto = _AUTOLINK.match(text, match.start())
        if auto is not None and ("@" in auto.group(1) or safe_url(auto.group(1))):
            out.append(text[pos : auto.end()])
            pos = auto.end()
            continue
        before = text[pos : match.start()]
        if _odd_backslashes(text, match.start()):
            out.append(before + "<")  # the author's own escape: doubling it would undo it
        else:
            out.append(before + "\\<")
        pos = match.start() + 1
    out.append(text[pos:])
    return "".join(out)


def _odd_backslashes(text: str, end: int) -> bool:
    """Is ``text[end]`` escaped, i.e. preceded by an odd run of backslashes?"""
    start = end
    while start > 0 and text[start - 1] == "\\":
        start -= 1
    return (end - start) % 2 == 1


def _checked_destination(match: re.Match[str]) -> str:
    url = match.group(1)
    bare = url[1:-1] if url.startswith("<") else url
    if safe_url(bare):
        return match.group(0)
    return "](#unsafe-link-removed"


def _checked_definition(match: re.Match[str]) -> str:
    """A ``[label]: url`` definition with an unsafe URL is shown as text (``\\[``)."""
    url = match.group(3)
    bare = url[1:-1] if url.startswith("<") else url
    if safe_url(bare):
        return match.group(0)
    return match.group(1) + "\\[" + match.group(2) + url


def _wikilink_md(match: re.Match[str], ctx: Context) -> str:
    target, label = split_wikilink(match)
    ident = ctx.resolve(target)
    if ident is None:
        return match.group(0)  # a broken link stays as written: the reader sees it
    return f"[{label}](#{anchor(ident)})"


# Each character Markdown could read as markup gets a backslash; a newline becomes a blank.
_ESCAPES: Final = {ord(c): "\\" + c for c in "\\`*_[]<>|~!&#"} | {ord("\n"): " "}


_NEEDS_ESCAPE: Final = re.compile(r"[\\`*_\[\]<>|~!&#\n]")


def escape_markdown(text: str) -> str:
    """Plain text (an attribute value, a dataset cell) that must read literally in Markdown."""
    if _NEEDS_ESCAPE.search(text) is None:
        return text  # most values: nothing to escape, and the table lookups cost
    return text.translate(_ESCAPES)
