"""``render --to html`` is inert whatever the document holds.

A corpus of hostile text -- script tags, event handlers, ``javascript:`` and other unsafe
URLs, attribute breakouts -- placed in bodies, attributes, ids, headings, table cells,
list items, quotes, code, link targets and wikilinks. The page is parsed with the standard
library's HTML parser (as a browser tokenises it) and must contain only the tags and
attributes the renderer writes, no script or handler, and no URL outside http, https,
mailto and relative ones. The hostile text must still be visible as text.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from core.noma import parse
from core.noma.export import export
from core.noma.export.common import safe_url
from core.noma.validate import validate

ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "section", "h1", "h2", "h3",
    "h4", "h5", "h6", "p", "a", "span", "code", "pre", "ul", "ol", "li", "blockquote",
    "table", "thead", "tbody", "tr", "th", "td", "hr", "br", "aside", "header", "em",
    "strong", "s", "details", "summary",
}  # fmt: skip
ALLOWED_ATTRS = {
    "lang", "charset", "http-equiv", "content", "name", "id", "class", "href", "rel",
    "title", "aria-label", "open",
}  # fmt: skip
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "poster", "background"}

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><script>alert(2)</script>',
    "'><svg onload=alert(3)>",
    '<a href="javascript:alert(4)">x</a>',
    "<iframe src=javascript:alert(5)>",
    "</style><script>alert(6)</script>",
    "</title><script>alert(7)</script>",
    "<!--<script>alert(8)</script>-->",
    "<body onload=alert(9)>",
]
BAD_URLS = [
    "javascript:alert(10)",
    "JaVaScRiPt:alert(11)",
    "java\tscript:alert(12)",
    " javascript:alert(13)",
    "&#106;avascript:alert(14)",
    "data:text/html,<script>alert(15)</script>",
    "vbscript:msgbox(16)",
    "file:///etc/passwd",
    "javascript&colon;alert(17)",
    "data:image/svg+xml,<svg onload=alert(18)>",
    "ftp://example.com/file",
    "intent://x#Intent;end",
]


def _document() -> str:
    """Every payload in every place a document can carry text."""
    lines = [
        "---",
        "title: \"</title><script>alert('fm')</script>\"",
        'lang: \'"><script>alert("lang")</script>\'',
        "---",
        "",
    ]
    for k, p in enumerate(PAYLOADS):
        single = p.replace('"', "&quot;")
        source = f"source='{p}'" if "'" not in p else f'source="{p}"'
        lines += [
            f"## Heading {k} {p}",
            "",
            f"Paragraph {k}: {p} and [link {k}](javascript:alert({k})) and "
            f"[[{p}|label {k}]] and `code {p}`.",
            "",
            f"- item {p}",
            f"1. ordered {p}",
            "",
            f"> quote {p}",
            "",
            "| head | cell |",
            "| ---- | ---- |",
            f"| {p.replace('|', '')} | [x](javascript:alert({k})) |",
            "",
            f'::claim{{id="c{k}" note="{single}" onclick="alert({k})" {source}}}',
            f"Body {p}",
            "::",
            "",
            f'::note{{id="n{k}" for="c{k}" href="javascript:alert({k})"}}',
            f"Inner {p} <{BAD_URLS[k % len(BAD_URLS)]}>",
            "::",
            "",
            f"```html\n{p}\n```",
            "",
        ]
    for k, url in enumerate(BAD_URLS):
        lines += [
            f"Bad link [u{k}]({url}) and ![img{k}]({url}) and <{url}> and [r{k}][ref{k}].",
            "",
            f"[ref{k}]: {url}",
            "",
        ]
    lines += [
        '::html{id="raw"}',
        "<script>alert('raw')</script><img src=x onerror=alert(1)>",
        "::",
        "",
        '::table{id="t" header}',
        "a | b",
        "<script>alert('t')</script> | [x](javascript:alert('t'))",
        "::",
        "",
        '::dataset{id="d"}',
        "rows:",
        "  - ['<script>alert(1)</script>', '\"><img src=x onerror=alert(1)>']",
        "::",
        "",
        '::claim{id="x\'><script>alert(1)</script>"}',
        "breakout in an id",
        "::",
        "",
        "::claim{id='q\"><svg onload=alert(1)>'}",
        "single-quoted id breakout",
        "::",
        "",
    ]
    return "\n".join(lines)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


@pytest.fixture(scope="module")
def page() -> tuple[str, _Page]:
    doc = parse(_document())
    html = export(doc, "html", diagnostics=validate(doc))
    parser = _Page()
    parser.feed(html)
    parser.close()
    return html, parser


def test_the_corpus_parses_into_the_blocks_it_targets() -> None:
    """The payloads really sit in attributes, ids, cells and bodies (not one paragraph)."""
    doc = parse(_document())
    names = [getattr(n, "name", n.type) for n, _ in doc.walk()]
    assert names.count("claim") == len(PAYLOADS) + 2
    assert {"table", "list", "quote", "code", "html", "dataset", "note"} <= set(names)
    claim = next(n for n, _ in doc.walk() if getattr(n, "id", None) == "c1")
    assert claim.attrs["onclick"] == "alert(1)"  # type: ignore[attr-defined]


def test_only_known_tags_and_attributes(page: tuple[str, _Page]) -> None:
    _html, parsed = page
    for tag, attrs in parsed.tags:
        assert tag in ALLOWED_TAGS, tag
        for name, _value in attrs:
            assert name in ALLOWED_ATTRS, (tag, name)
            assert not name.startswith("on"), (tag, name)


def test_no_script_no_handler_no_comment(page: tuple[str, _Page]) -> None:
    _html, parsed = page
    tags = [t for t, _ in parsed.tags]
    for banned in ("script", "iframe", "img", "svg", "object", "embed", "base", "form"):
        assert banned not in tags
    assert parsed.comments == []


def test_every_url_is_http_https_mailto_or_relative(page: tuple[str, _Page]) -> None:
    _html, parsed = page
    urls = [v or "" for _t, attrs in parsed.tags for k, v in attrs if k in URL_ATTRS]
    assert urls, "the corpus must produce some links"
    for url in urls:
        assert safe_url(url), url
        squashed = "".join(ch for ch in url.lower() if ch > " ")
        for scheme in ("javascript:", "vbscript:", "data:", "file:", "ftp:", "intent:"):
            assert not squashed.startswith(scheme), url


def test_meta_refresh_is_never_written(page: tuple[str, _Page]) -> None:
    _html, parsed = page
    for tag, attrs in parsed.tags:
        if tag == "meta":
            values = dict(attrs)
            assert values.get("http-equiv") in (None, "Content-Security-Policy")


def test_hostile_text_is_shown_as_text(page: tuple[str, _Page]) -> None:
    _html, parsed = page
    text = "".join(parsed.text)
    assert "<script>alert(1)</script>" in text
    assert "<img src=x onerror=alert(1)>" in text
    assert "alert('raw')" in text  # the ::html escape hatch is shown, not run


def test_the_page_forbids_scripts_by_policy(page: tuple[str, _Page]) -> None:
    _html, parsed = page
    csp = [dict(a).get("content") or "" for t, a in parsed.tags if t == "meta"]
    policy = next(c for c in csp if "default-src" in c)
    assert "default-src 'none'" in policy and "script-src" not in policy


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/a?b=c#d",
        "http://x",
        "mailto:a@b.c",
        "#anchor",
        "page.html",
        "/abs/path",
        "../up",
        "?q=1",
        "a:b/c".replace("a:b", "./a:b"),
    ],
)
def test_safe_urls(url: str) -> None:
    assert safe_url(url)


@pytest.mark.parametrize("url", [*BAD_URLS[:4], "data:x", "vbscript:x", "file:///x", "x-y:z"])
def test_unsafe_urls(url: str) -> None:
    assert not safe_url(url)


def _body(text: str) -> str:
    return export(parse(text), "html").split("<main>\n", 1)[1].split("\n</main>", 1)[0]


def test_nested_list_items_and_quotes_become_nested_elements() -> None:
    body = _body("- a\n  - b <i>x</i>\n    - c\n- d\n\n> q\n>\n> > inner\n")
    assert body.count("<ul>") == 3 and "<li>c</li>" in body
    assert "&lt;i&gt;x&lt;/i&gt;" in body
    assert body.count("<blockquote>") == 2 and "<p>inner</p>" in body


def test_pipes_in_table_cells_follow_gfm() -> None:
    body = _body("| a | b |\n| --- | --- |\n| `x\\|y` | p \\| q |\n")
    assert "<td><code>x|y</code></td>" in body and "<td>p | q</td>" in body
