"""The exporters' fast paths give the bytes the general paths give.

Each shortcut in `core.noma.export` (plain text skipping the inline rewrites, the simple
inline HTML writer standing in for markdown-it, the paragraph block-start check, the
escapes, the table grid memo) is compared here with the general path it skips, on texts
built from exactly the characters that path reacts to.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from core.noma import parse
from core.noma.export import common, inline, markdown
from core.noma.export.common import Context, code_segments, directive_table
from core.noma.nodes import Directive

# Text made of what the inline rules look at: brackets, stars, backticks, blanks, breaks.
INLINE_ALPHABET = "ab1 *[]|`<>&_~!\\:(.\n\t\r#-é"
WORDS = [
    "**bold**",
    "**a b**",
    "[[claim-1]]",
    "[[x|label]]",
    "[[ ]]",
    "[[missing]]",
    "](javascript:x)",
    "[r]: javascript:x",
    "<b>",
    "<https://x.y>",
    "`code`",
    " ",
    "\n",
    "  \n",
    "word",
    ".",
    ")",
    "*",
    "**",
]
inline_text = st.one_of(
    st.text(alphabet=INLINE_ALPHABET, max_size=40),
    st.lists(st.sampled_from(WORDS), max_size=12).map("".join),
)

DOC = parse(
    "# Title\n\n## Claim one {#claim-1}\n\n::claim{id=x}\nBody.\n::\n\n"
    '::table{id=t header=yes align="l,r"}\na | `b|c` | d\n--- | ---\n1 | 2\n::\n'
)
CTX = Context(DOC)


def general_markdown(text: str, ctx: Context) -> str:
    """`inline_markdown` without its shortcuts: every rewrite on every segment."""
    parts = []
    for is_code, segment in code_segments(text):
        if is_code:
            parts.append(segment)
            continue
        segment = inline.WIKILINK_PATTERN.sub(lambda m: inline._wikilink_md(m, ctx), segment)
        segment = inline._DESTINATION.sub(inline._checked_destination, segment)
        segment = inline._REFERENCE_DEF.sub(inline._checked_definition, segment)
        parts.append(_raw_html_escaped(segment))
    return "".join(parts)


def _raw_html_escaped(text: str) -> str:
    out: list[str] = []
    pos = 0
    for match in inline._RAW_HTML.finditer(text):
        if match.start() < pos:
            continue
        auto = inline._AUTOLINK.match(text, match.start())
        if auto is not None and ("@" in auto.group(1) or common.safe_url(auto.group(1))):
            out.append(text[pos : auto.end()])
            pos = auto.end()
            continue
        escaped = inline._odd_backslashes(text, match.start())
        out.append(text[pos : match.start()] + ("<" if escaped else "\\<"))
        pos = match.start() + 1
    out.append(text[pos:])
    return "".join(out)


def general_html(text: str, ctx: Context) -> str:
    blocks = inline.markdown_it().parseInline(text, {})
    children = blocks[0].children if blocks else None
    return inline._tokens_html(children or [], ctx)


@settings(max_examples=3000, deadline=None)
@given(inline_text)
def test_inline_markdown_equals_the_general_path(text: str) -> None:
    assert inline.inline_markdown(text, CTX) == general_markdown(text, CTX)


@settings(max_examples=3000, deadline=None)
@given(inline_text)
def test_simple_inline_html_equals_markdown_it(text: str) -> None:
    simple = inline._simple_html(text, CTX)
    if simple is not None:
        assert simple == general_html(text, CTX)


def test_simple_inline_html_takes_the_common_cases() -> None:
    """The shortcut is taken for what documents mostly hold (else it saves nothing)."""
    text = "Observed **latency** in cohort 3. See [[claim-1]] and\n[[nope|the earlier one]]."
    got = inline._simple_html(text, CTX)
    assert got == general_html(text, CTX)
    assert got is not None and "<strong>latency</strong>" in got
    assert inline._simple_html("a **b**c", CTX) is None  # a closer that could also open
    assert inline._simple_html("a*b*", CTX) is None
    assert inline._simple_html("line \nbreak [[claim-1]]", CTX) is None


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="=-~`+1)| \t\n\ra.9\u0663x", max_size=30))
def test_stays_paragraph_equals_the_line_by_line_rule(text: str) -> None:
    lines = text.split("\n")
    lines[0] = lines[0].lstrip(" \t")
    for k, line in enumerate(lines):
        match = markdown._BLOCK_START.match(line)
        if match is not None:
            at = next(match.start(g) for g in range(1, 6) if match.group(g) is not None)
            lines[k] = line[:at] + "\\" + line[at:]
    assert markdown.stays_paragraph(text) == "\n".join(lines)


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="\\`*_[]<>|~!&#\n a'\"é-./:%Z0", max_size=20))
def test_escapes_equal_the_library_ones(text: str) -> None:
    expected = re.sub(r"([\\`*_\[\]<>|~!&#])", r"\\\1", text).replace("\n", " ")
    assert inline.escape_markdown(text) == expected
    assert common.escape(text) == html.escape(text)
    assert inline.anchor(text) == quote(text, safe="-._~:/")


def test_plain_code_span_equals_the_fenced_rule() -> None:
    assert markdown.code_span("a\nb") == "`a b`"
    assert markdown.code_span("a`b") == "``a`b``"
    assert markdown.code_span("`a") == "`` `a ``"


def test_table_grid_is_read_once_and_follows_the_body() -> None:
    node = next(n for n, _ in DOC.walk() if isinstance(n, Directive) and n.name == "table")
    first = directive_table(node)
    assert first is not None and first.header == ["a", "`b|c`", "d"]
    assert first.align == ["left", "right", None]
    assert directive_table(node) is first  # memoised: not re-split per export
    other = parse("::table{header=yes}\na | b\n1 | 2\n::\n").children[0]
    assert isinstance(other, Directive)
    grid = directive_table(other)
    assert grid is not None and grid.header == ["a", "b"] and grid.rows == [["1", "2"]]
    other.body = "x | y | z\n"  # an edited body is read again, never served stale
    grid = directive_table(other)
    assert grid is not None and grid.header == ["x", "y", "z"] and grid.rows == []


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="a \t\n\r\u2003\x1c>", max_size=20))
def test_quoted_equals_the_line_by_line_rule(text: str) -> None:
    expected = "\n".join(f"> {line}" if line.strip() else ">" for line in text.split("\n"))
    assert markdown._quoted(text) == expected


def test_directive_titles() -> None:
    assert common.directive_title("open_question") == "Open question"
    assert common.directive_title("open_question") == "Open question"  # from the memo
    assert common.directive_title(" -x") == "X"
