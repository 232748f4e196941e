"""No export of any document contains active HTML.

A fence-breakout corpus (each entry made live HTML in the exported Markdown before the
fix), checked by rendering the Markdown with raw HTML on (`active_html`), and a
hypothesis property: random documents drawn from an alphabet rich in backticks, tildes,
angle brackets, ampersands, quotes, newlines and indentation, exported to Markdown and
HTML, never contain active HTML.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.noma import parse
from core.noma.export import export
from tests.noma.active_html import active_in_markdown, active_in_page

IMG = "<img src=x onerror=alert(1)>"

BREAKOUTS: dict[str, str] = {
    # a paragraph opening with a backtick fence swallows the next code block's opener
    "paragraph-fence": f"``` x\nhello\n\n```\n{IMG}\n```\n",
    "paragraph-fence-second-line": f"text\n``` y\n\n```\n{IMG}\n```\n",
    "paragraph-tilde-fence": f"a `b\n~~~ x\n{IMG}`\n",  # (a guard: escaped before)
    # a line CommonMark reads as a block ends the paragraph inside a code span
    "empty-heading": f"`a\n#\n{IMG}`\n",
    "indented-heading": f"`a\n # b\n{IMG}`\n",
    "indented-bullet": f"`a\n - b\n{IMG}`\n",
    "indented-ordered": f"`a\n 1. b\n{IMG}`\n",
    "indented-quote": f"`a\n >\n{IMG}`\n",
    "spaced-thematic": f"`a\n_ _ _\n{IMG}`\n",
    "html-block-start": "`a\n<div onmouseover=alert(1)>`\n",
    "table-delimiter": f"`a | b\n--- | ---\n{IMG}`\n",
    # CommonMark's reading of backticks differs from a plain pairing
    "escaped-backtick": f"\\`{IMG}`\n",
    "link-destination-backtick": f"[a](x`y) `z` {IMG}`\n",
    "autolink-backtick": f"<http://a`b> `z` {IMG}`\n",  # (a guard)
    # an author's escape must not be doubled into an escaped backslash
    "escaped-angle": "\\" + IMG + "\n",
    # list items, quotes and headings carry inline text too
    "list-item": f"- `a\n#\n{IMG}`\n",
    "quote": f"> `a\n> #\n> {IMG}`\n",
    "heading": f"# \\`{IMG}`\n",
    # frontmatter is passed through as written
    "frontmatter": f"---\ntitle: {IMG}\n---\n\nx\n",
    "frontmatter-fence": f"---\nx: |\n  ```\n---\n\n```\n{IMG}\n```\n",
    # links whose label or destination is split by code spans
    "reference-definition-code-label": "[`r`]: javascript:alert(1)\n\n[`r`]\n",
    "link-code-destination": "[x](java`script:alert(1)`) `\n",  # (a guard)
}


@pytest.mark.parametrize("name", sorted(BREAKOUTS))
def test_no_markdown_export_breaks_out(name: str) -> None:
    markdown = export(parse(BREAKOUTS[name]), "markdown")
    assert active_in_markdown(markdown) == [], markdown


@pytest.mark.parametrize("name", sorted(BREAKOUTS))
def test_no_html_export_breaks_out(name: str) -> None:
    assert active_in_page(export(parse(BREAKOUTS[name]), "html")) == []


def test_hostile_text_is_still_shown() -> None:
    """Made inert, not dropped: the reader still sees what the author wrote."""
    markdown = export(parse(BREAKOUTS["escaped-backtick"]), "markdown")
    rendered = markdown.replace("\\", "")
    assert "img src=x onerror=alert(1)" in rendered


def test_ordinary_code_spans_keep_their_angle_brackets() -> None:
    """Only text whose reading differs is changed: `Vec<T>` stays a code span as written."""
    text = "Use `Vec<T>` and `<div>` here, see [docs](https://example.com/a).\n"
    assert export(parse(text), "markdown") == text


ALPHABET = st.sampled_from(
    ["`", "``", "```", "~", "~~~", "<", ">", "&", '"', "'", "\n", "\n\n", " ", "    ", "\t",
     "\\", "#", "-", "*", "_", "|", "[", "]", "(", ")", ":", "!", "=", "1.", "a", "b",
     "img", "script", "<img src=x onerror=alert(1)>", "<script>", "javascript:alert(1)",
     "::note{id=\"n\"}\n", "\n::\n", "---\n", "[[n]]", "<a href=x>", "&lt;", "```js\n",
     "\n- ", "\n> ", "\n1. ", "](", "]: ", "<http://a>", "\n| a | `b` |\n| --- | --- |\n| ",
     "::table{id=\"t\" header}\n", "::dataset{id=\"d\"}\nrows:\n  - [", "---\ntitle: "]
)  # fmt: skip


@settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(ALPHABET, min_size=1, max_size=40).map("".join))
def test_random_documents_never_export_active_html(text: str) -> None:
    doc = parse(text)
    markdown = export(doc, "markdown")
    assert active_in_markdown(markdown) == [], (text, markdown)
    assert active_in_page(export(doc, "html")) == [], text
