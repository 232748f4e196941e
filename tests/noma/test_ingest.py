"""``noma ingest FILE.md``: Markdown in, a valid ``.noma`` out, text kept.

The text check reads both the source Markdown and ``render --to markdown`` of the ingested
document with markdown-it-py and compares every visible piece of text in order.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from core.noma import parse
from core.noma.export import export
from core.noma.ingest import ingest_markdown
from core.noma.nodes import Code, Directive, ListNode, Quote, Section, Table
from core.noma.validate import validate
from noma_tui.demo import DEMO_SOURCE

SAMPLE = Path(__file__).parent / "data" / "commonmark-sample.md"
READER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
VISIBLE = ("text", "code_inline", "fence", "code_block", "html_block")
OUR_ANCHOR = re.compile(r'<a id="[^"]*">|</a>')


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4)
        return text[end + 5 :]
    return text


def visible_text(markdown: str) -> list[str]:
    """Every word a reader sees, in order (text, code, alt text, raw HTML as written)."""
    words: list[str] = []

    def walk(tokens: list[Token]) -> None:
        for t in tokens:
            if t.children:
                walk(t.children)
            elif t.type in ("text", "code_inline", "fence", "code_block", "html_block") or (
                t.type == "html_inline" and not OUR_ANCHOR.fullmatch(t.content)
            ):
                words.extend(t.content.split())

    walk(READER.parse(_strip_front_matter(markdown)))
    return words


def test_ingest_then_render_markdown_keeps_the_text_of_a_commonmark_sample() -> None:
    source = SAMPLE.read_text()
    result = ingest_markdown(source)
    out = export(parse(result.text), "markdown")
    # The hard break, the ~~struck~~ text and the link targets all survive too.
    assert visible_text(out) == visible_text(source)
    assert "break follows  \non the next line" in out
    assert "[link][ref]" in out and "[ref]: https://spec.commonmark.org/0.31.2/" in out


def test_the_ingested_sample_is_valid_and_has_the_blocks_it_should() -> None:
    result = ingest_markdown(SAMPLE.read_text())
    doc = parse(result.text)
    assert [d for d in validate(doc) if d.severity == "error"] == []
    assert [n for n in doc.notes if n.severity == "error"] == []
    assert doc.meta == {"title": "A CommonMark sample", "tags": ["demo", "ingest"]}
    kinds = {type(n) for n, _ in doc.walk()}
    assert {Section, ListNode, Quote, Code, Table} <= kinds
    assert not any(isinstance(n, Directive) for n, _ in doc.walk())  # `::claim` stayed text
    titles = [n.title for n, _ in doc.walk() if isinstance(n, Section)]
    assert titles == [
        "Sample document",
        "Lists",
        "Setext second level",
        "Use {braces} in a title",
        "Last heading with `code` and [[sample-document|a link]]",
    ]
    table = next(n for n, _ in doc.walk() if isinstance(n, Table))
    assert table.header == ["Name", "Value", "Note"] and table.align == ["left", "right", "center"]
    assert table.rows == [["a \\| b", "`x`", "~~old~~"], ["c", "2", ""]]
    code = [n for n, _ in doc.walk() if isinstance(n, Code)]
    assert code[0].lang == "python" and '"::not a directive"' in code[0].content
    assert code[1].content == "an indented code block\non two lines"
    assert code[2].lang == "html"


def test_notes_say_what_was_rewritten() -> None:
    notes = ingest_markdown(SAMPLE.read_text()).notes
    assert any("would end a Noma fence" in n for n in notes)
    assert any("raw HTML block" in n for n in notes)
    assert any("'python title=\"demo\"'" in n for n in notes)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("", ""),
        ("\ufeff# T\r\n\r\ntext\r\n", "# T\n\ntext\n"),
        ("---\n", "***\n"),
        ("| only |\n| --- |\n| one |\n", "| only |  |\n| --- | --- |\n| one |  |\n"),
        ("| a | b |\n| - | - |\n| `x | y |\n", "| a | b |\n| --- | --- |\n| &#96;x | y |\n"),
        ("- a\n\n- b\n", "- a\n- b\n"),
        ("+ a\n+ b\n", "- a\n- b\n"),
        ("3. a\n4. b\n", "1. a\n2. b\n"),
        ("#\n\ntext\n", "text\n"),
    ],
)
def test_edge_cases(markdown: str, expected: str) -> None:
    assert ingest_markdown(markdown).text == expected


def test_front_matter_that_is_not_a_mapping_becomes_yaml_code() -> None:
    result = ingest_markdown("---\n- a\n- b\n---\n\nbody\n")
    doc = parse(result.text)
    assert doc.frontmatter is None
    assert isinstance(doc.children[0], Code) and doc.children[0].lang == "yaml"
    assert any("front matter" in n for n in result.notes)


def noma(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_writes_out_and_refuses_to_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "sample.noma"
    first = noma("ingest", str(SAMPLE), "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert "note:" in first.stderr
    written = out.read_bytes()
    assert parse(written).meta["title"] == "A CommonMark sample"
    again = noma("ingest", str(SAMPLE), "--out", str(out))
    assert again.returncode == 1 and "exists" in again.stderr
    assert out.read_bytes() == written
    assert noma("ingest", str(SAMPLE), "--out", str(out), "--force").returncode == 0
    assert noma("check", str(out)).returncode == 0


def test_cli_prints_to_stdout_and_reports_a_missing_file(tmp_path: Path) -> None:
    result = noma("ingest", str(SAMPLE))
    assert result.returncode == 0 and result.stdout.startswith("---\ntitle: A CommonMark")
    missing = noma("ingest", str(tmp_path / "nope.md"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_cli_never_overwrites_its_input(tmp_path: Path) -> None:
    src = tmp_path / "x.md"
    src.write_text("# T\n")
    result = noma("ingest", str(src), "--out", str(src), "--force")
    assert result.returncode == 2 and src.read_text() == "# T\n"


def test_our_own_markdown_export_ingests_back_with_the_same_heading_ids() -> None:
    from bench.generate import generate

    sources = [generate(30), "## Notes\n\nA\n\n## Notes\n\nB\n"]
    sources += [p.read_text() for p in sorted(DEMO_SOURCE.glob("*.noma"))]
    for source in sources:
        doc = parse(source)
        back = parse(ingest_markdown(export(doc, "markdown")).text)
        assert [d for d in validate(back) if d.severity == "error"] == []
        ids = [n.id for n, _ in doc.walk() if isinstance(n, Section)]
        assert [n.id for n, _ in back.walk() if isinstance(n, Section)] == ids
        titles = [n.title for n, _ in back.walk() if isinstance(n, Section)]
        assert not any("<a" in t for t in titles)


def test_wikilinks_to_nothing_become_text_so_the_result_validates() -> None:
    source = "# Home\n\nSee [[Other Page]] and [[home]] and `[[code]]`.\n\n```\n[[in code]]\n```\n"
    result = ingest_markdown(source)
    doc = parse(result.text)
    assert validate(doc) == []
    assert "[\\[Other Page]] and [[home]] and `[[code]]`" in result.text
    assert "```\n[[in code]]\n```" in result.text
    assert any("[[Other Page]]" in n for n in result.notes)
    assert visible_text(export(doc, "markdown")) == visible_text(source.replace("[[home]]", "home"))


def test_links_to_headings_become_wikilinks() -> None:
    source = (
        "# Home\n\n[back](#home), [Home](#home), [home](#home), ![img](#home), "
        "[out](#nowhere), `[c](#home)`.\n"
    )
    result = ingest_markdown(source)
    assert (
        "[[home|back]], [[home|Home]], [[home]], ![img](#home), [out](#nowhere), `[c](#home)`"
        in result.text
    )
    doc = parse(result.text)
    assert validate(doc) == []
    assert visible_text(export(doc, "markdown")) == visible_text(source)
