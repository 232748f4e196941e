"""What "no active HTML" means for an export, as one checker the export tests share.

Markdown is rendered the way a permissive site would: markdown-it in CommonMark mode with
raw HTML on (and GFM tables and strikethrough), every link kept whatever its scheme (the
checker, not markdown-it's own URL filter, judges them). An element is active when it is
not one Markdown syntax produces by itself: raw HTML other than the exporter's own
``<a id="...">`` anchors, any ``on*`` or ``style`` attribute, a ``javascript:``/``data:``
(any non-http(s)/mailto scheme) URL in ``href`` or ``src``. The HTML page is held to its
own fixed vocabulary.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.token import Token

from core.noma.export.common import safe_url

MARKDOWN_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "img", "hr", "br", "table", "thead", "tbody", "tr", "th", "td",
    "s", "del",
}  # fmt: skip
MARKDOWN_ATTRS = {"href", "src", "alt", "title", "id", "start", "class"}
PAGE_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "section", "h1", "h2", "h3",
    "h4", "h5", "h6", "p", "a", "span", "code", "pre", "ul", "ol", "li", "blockquote",
    "table", "thead", "tbody", "tr", "th", "td", "hr", "br", "aside", "header", "em",
    "strong", "s", "details", "summary",
}  # fmt: skip
PAGE_ATTRS = {
    "lang", "charset", "http-equiv", "content", "name", "id", "class", "href", "rel",
    "title", "aria-label", "open",
}  # fmt: skip
_ANCHOR = re.compile(r'<a id="[^"<>]*"></a>|<a id="[^"<>]*">|</a>')


class _EveryLink(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        return True  # every link reaches the checker


_MD = _EveryLink("commonmark", {"html": True}).enable(["table", "strikethrough"])


class _Elements(HTMLParser):
    def __init__(self, tags: set[str], attrs: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.allowed_tags = tags
        self.allowed_attrs = attrs
        self.bad: list[str] = []
        self.styles = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.allowed_tags:
            self.bad.append(f"<{tag}>")
        if tag == "style":
            self.styles += 1
        for name, value in attrs:
            if name not in self.allowed_attrs or name.startswith("on") or name == "style":
                self.bad.append(f"<{tag} {name}>")
            if name in ("href", "src") and not safe_url(value or ""):
                self.bad.append(f"<{tag} {name}={value!r}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_comment(self, data: str) -> None:
        self.bad.append("<!--comment-->")


def _raw_html(tokens: list[Token]) -> list[str]:
    """Raw HTML tokens markdown-it passed through, other than the exporter's anchors."""
    out: list[str] = []
    for token in tokens:
        if token.type in ("html_inline", "html_block"):
            rest = _ANCHOR.sub("", token.content).strip()
            if rest:
                out.append(token.content)
        if token.children:
            out.extend(_raw_html(token.children))
    return out


def active_in_markdown(markdown: str) -> list[str]:
    """Everything active in ``markdown`` once rendered with raw HTML on ([] when inert)."""
    bad = _raw_html(_MD.parse(markdown))
    elements = _Elements(MARKDOWN_TAGS, MARKDOWN_ATTRS)
    elements.feed(_MD.render(markdown))
    elements.close()
    return bad + elements.bad


def active_in_page(page: str) -> list[str]:
    """Everything active in an exported HTML page ([] when inert)."""
    elements = _Elements(PAGE_TAGS, PAGE_ATTRS)
    elements.feed(page)
    elements.close()
    return elements.bad + ([f"<style> x{elements.styles}"] if elements.styles != 1 else [])
