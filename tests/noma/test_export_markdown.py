"""``render --to markdown``: readable directives, working links, nothing that runs.

The output is read back with markdown-it-py (a CommonMark + GFM reader the renderer does
not share code with) the way a wiki would render it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

from core.noma import parse
from core.noma.export import export
from noma_tui.demo import DEMO_SOURCE

READER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        if values.get("href") is not None:
            self.hrefs.append(values["href"] or "")


def _rendered(md: str) -> _Links:
    parser = _Links()
    parser.feed(READER.render(md))
    return parser


def md(text: str) -> str:
    return export(parse(text), "markdown")


def test_every_fragment_link_of_the_demo_documents_lands_on_an_anchor() -> None:
    for path in sorted(DEMO_SOURCE.glob("*.noma")):
        doc = parse(path.read_text())
        links = _rendered(export(doc, "markdown"))
        fragments = [h[1:] for h in links.hrefs if h.startswith("#")]
        assert fragments or path.name != "research-memo.noma"
        for fragment in fragments:
            assert fragment in links.ids, (path.name, fragment)
        ids = {n.id for n, _ in doc.walk() if n.id}
        assert ids <= links.ids, (path.name, ids - links.ids)


def test_wikilinks_resolve_aliases_to_canonical_anchors() -> None:
    text = (
        '# Top {aliases="t"}\n\nSee [[t]] and [[c1|the claim]] and [[nowhere]].\n\n'
        '::claim{id="c1"}\nx\n::\n'
    )
    out = md(text)
    assert "[t](#top)" in out
    assert "[the claim](#c1)" in out
    assert "[[nowhere]]" in out  # a broken link stays visible as written


def test_directive_is_a_titled_blockquote_with_a_compact_attribute_line() -> None:
    out = md('::open_question{id="q1" owner="ana" for="c1"}\nWhy?\n::\n\n::claim{id="c1"}\nx\n::\n')
    first = out.split("\n\n")[0]
    assert first.startswith(
        '> <a id="q1"></a>**Open question** · `q1` · owner: ana · for: [c1](#c1)'
    )
    tokens = [t.type for t in READER.parse(out)]
    assert tokens.count("blockquote_open") == 2


def test_nested_directives_are_nested_quotes_and_code_stays_code() -> None:
    text = (
        '::section{id="s"}\n:::claim{id="c"}\ninner [[s]]\n:::\n\n'
        "```py\n::not a directive\n```\n::\n"
    )
    out = md(text)
    assert '> > <a id="c"></a>**Claim**' in out
    assert "> > inner [s](#s)" in out
    assert "> ```py\n> ::not a directive\n> ```" in out


def test_gfm_tables_from_pipe_tables_and_table_directives() -> None:
    text = "| a | b |\n| :--- | ---: |\n| 1 | `x|y` |\n\n"
    text += '::table{id="t" header align="c,r"}\nk | v\nq | 2\n::\n'
    out = md(text)
    tables = [t for t in READER.parse(out) if t.type == "table_open"]
    assert len(tables) == 2
    assert "| :--- | ---: |" in out and "| :---: | ---: |" in out
    cells = [t.content for t in READER.parse(out) if t.type == "inline"]
    assert "`x|y`" in cells  # one cell, as Noma read it (the pipe is escaped for GFM)


def test_raw_html_and_unsafe_links_are_inert() -> None:
    out = md(
        "Hi <script>alert(1)</script> <img src=x onerror=alert(1)> "
        "[x](javascript:alert(1)) <javascript:alert(2)> <https://ok.example>\n\n"
        "[r]: javascript:alert(3)\n\n[ok]: https://fine.example\n"
    )
    page = _rendered(out)
    assert "script" not in page.tags and "img" not in page.tags
    assert all(not h.lower().startswith("javascript") for h in page.hrefs)
    assert "https://ok.example" in page.hrefs
    assert "[ok]: https://fine.example" in out  # a safe definition is kept


def test_code_spans_are_left_alone() -> None:
    out = md('Use `<b>[[c1]]</b>` here.\n\n::claim{id="c1"}\nx\n::\n')
    assert "`<b>[[c1]]</b>`" in out


def test_fences_grow_past_backticks_in_the_content() -> None:
    out = md('::code{id="k" lang="md"}\n````\nx\n````\n::\n')
    assert re.search(r"> `````md\n> ````\n> x\n> ````\n> `````", out)


def test_escape_hatch_blocks_are_shown_as_code() -> None:
    out = md('::html{id="h"}\n<b onclick="x()">hi</b>\n::\n')
    assert "```html" in out
    assert "onclick" not in {t for t in _rendered(out).tags}


def test_thematic_break_never_becomes_a_setext_underline() -> None:
    out = md("Para\n\n---\n\nMore\n")
    assert [t.type for t in READER.parse(out)].count("hr") == 1


def test_datasets_in_every_shape_become_tables_or_code() -> None:
    text = (
        '::dataset{id="csv" format=csv}\nmonth,orders\n"2025-01","8,120"\n::\n\n'
        '::dataset{id="rec"}\n[{"m": "x", "n": 1}, {"m": "y|z", "k": true}]\n::\n\n'
        '::dataset{id="yaml" columns="a, b"}\nrows:\n  - [1, "<b>"]\n::\n\n'
        '::dataset{id="odd"}\njust some text\n::\n'
    )
    out = md(text)
    tables = [t for t in READER.parse(out) if t.type == "table_open"]
    assert len(tables) == 3
    assert "| 2025-01 | 8,120 |" in out
    assert "| m | n | k |" in out and "| y\\|z |  | true |" in out
    assert "| a | b |" in out and "| 1 | \\<b\\> |" in out
    assert "```yaml\n> just some text\n> ```" in out


def test_a_noma_paragraph_stays_one_markdown_paragraph() -> None:
    lines = ["\t\tindented", "Title", "=====", " ---", "~~~", "+ plus", "1) paren", "| a |"]
    lines += ["| - |", "last"]
    out = md("\n".join(lines) + "\n")
    tokens = READER.parse(out)
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    text = tokens[1].content
    for line in ["=====", "---", "~~~", "+ plus", "1) paren", "| a |", "last"]:
        assert line in text.replace("\\", "")
    quoted = READER.parse(md("> Title\n> =====\n"))
    assert [t.type for t in quoted if t.type.endswith("_open")] == [
        "blockquote_open",
        "paragraph_open",
    ]


def test_a_title_ending_in_hashes_keeps_them() -> None:
    html = READER.render(md("## C# ##\n"))
    assert "C# ##</h2>" in html
