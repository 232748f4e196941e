"""Exported Markdown that no reader can turn into active HTML, whatever the document says.

The Markdown exporter passes inline text through and makes raw HTML and unsafe link
destinations inert outside code spans (`inline.inline_markdown`). That is right only when
the exporter and the reader agree on where the code spans and blocks are, and CommonMark
has many ways to disagree with a plain reading: a backslash before a backtick, a link
destination holding a backtick, a line that ends the paragraph (an empty ``#``, an
indented list marker, a fence) inside a span, a fence left open that swallows the next
code block's opener. Text the exporter left alone inside "its" code span is then raw HTML
to the reader.

So a block whose Markdown could disagree (backticks beside ``<`` or link syntax, or a
fence-like line) is read back here with markdown-it the way a permissive renderer reads
it (raw HTML on, every URL kept). If it holds raw HTML, an unsafe link or a fence, the
block is written literally instead (`literal_markdown`): every ASCII punctuation
character backslash-escaped, which no Markdown reader turns into markup. Ordinary
blocks never take this path, so their bytes and their cost do not change.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

from .common import may_read_differently, safe_url

if TYPE_CHECKING:  # markdown-it is loaded on first use: ordinary blocks never need it
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# The exporter's own anchors are the only raw HTML it writes.
_ANCHOR = re.compile(r'<a id="[^"<>]*"></a>|<a id="[^"<>]*">|</a>')


@cache
def _reader() -> MarkdownIt:
    from markdown_it import MarkdownIt

    class EveryLink(MarkdownIt):
        """Keeps every link: they are judged by the exporter's own rule (`safe_url`)."""

        def validateLink(self, url: str) -> bool:
            return True

    return EveryLink("commonmark", {"html": True}).enable(["table", "strikethrough"])


def needs_literal(source: str, markdown: str) -> bool:
    """Must ``markdown`` (written from ``source``) be replaced by the literal form? Only
    when a reader could see it differently from the exporter and, read back, it is active.

    The first test (`common.may_read_differently`) is plain ``in`` checks: it runs once
    per exported block, and an ordinary block stops there.
    """
    return may_read_differently(source, markdown) and not is_inert(markdown)


def is_inert(markdown: str) -> bool:
    """No raw HTML (but the exporter's anchors), no unsafe link, image or link reference
    definition (a definition serves links in other blocks), no fence: a block of prose
    never opens a fence, and one that does could close a later one."""
    env: dict[str, Any] = {}
    tokens = _reader().parse(markdown, env)
    references = env.get("references", {})
    if any(not safe_url(str(ref.get("href", ""))) for ref in references.values()):
        return False
    return not _active(tokens)


def _active(tokens: list[Token]) -> bool:
    for token in tokens:
        kind = token.type
        if kind in ("html_inline", "html_block") and _ANCHOR.sub("", token.content).strip():
            return True
        if kind == "fence":
            return True
        if kind == "link_open" and not safe_url(str(token.attrGet("href") or "")):
            return True
        if kind == "image" and not safe_url(str(token.attrGet("src") or "")):
            return True
        if token.children and _active(token.children):
            return True
    return False


def literal_markdown(text: str) -> str:
    """``text`` shown exactly as written, as Markdown no reader turns into markup: each
    line stripped of its indentation and every ASCII punctuation backslash-escaped."""
    return "\n".join(_PUNCTUATION.sub(r"\\\1", line.strip()) for line in text.split("\n"))
