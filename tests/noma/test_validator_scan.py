"""The validator's scan is written for speed twice over: a whole parse leaves its facts
noted as the blocks were read (`core.noma.scan_facts`), and the walk that reads any other
tree (`validate.scan.scan_nodes`) uses parallel stacks instead of recursion and reads a
directive whose body is one paragraph in place. Every rule reads only what the scan leaves
behind, so both must be exactly what a plain recursive walk of the documented rules finds:
on the corpus, the demo workspace, generated research documents and random documents built
from every kind of block and every context (``noverify``, raw bodies, nested directives,
headings inside directives, headings with no id)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_trust_properties import corpus

from bench.generate import generate
from core.noma import parser
from core.noma.ids import index
from core.noma.nodes import Directive, Document, ListNode, Node, Paragraph, Quote, Section, Table
from core.noma.parser import parse
from core.noma.scan_facts import (
    RAW_BODY_DIRECTIVES,
    REFERENCE_KEYS,
    TARGET_DIRECTIVES,
    TARGET_KEYS,
    is_noverify,
)
from core.noma.validate.scan import Scan, scan_document, scan_nodes


def reference_scan(doc: Document) -> dict[str, Any]:
    """The scan's contract, walked the obvious way."""
    directives: list[Directive] = []
    by_name: dict[str, list[Directive]] = {}
    checked: dict[str, list[Directive]] = {}
    refs: list[Directive] = []
    sites: list[tuple[str, int, str | None]] = []

    def site(text: str, line: int, owner: str | None) -> None:
        if "[[" in text:
            sites.append((text, line, owner))

    def visit(kids: list[Node], owner: str | None, quiet: bool, raw: bool) -> None:
        for node in kids:
            if type(node) is Directive:
                directives.append(node)
                by_name.setdefault(node.name, []).append(node)
                checked.setdefault(node.name, [])
                nv = is_noverify(node.attrs)
                if not nv:
                    checked[node.name].append(node)
                    keys = TARGET_KEYS if node.name in TARGET_DIRECTIVES else REFERENCE_KEYS
                    if any(k in node.raw_attrs for k in keys):
                        refs.append(node)
                visit(
                    node.children,
                    node.id if node.id is not None else owner,
                    nv,
                    raw or node.name in RAW_BODY_DIRECTIVES,
                )
            elif type(node) is Section:
                nv = bool(node.attrs) and is_noverify(node.attrs)
                if node.in_directive:
                    nv = nv or quiet or raw
                own = node.id if node.id is not None else owner
                if not nv:
                    site(node.title, node.line, own)
                visit(node.children, own, nv, False)
            elif quiet or raw:
                continue
            elif type(node) is Paragraph or type(node) is Quote:
                site(node.content, node.line, owner)  # type: ignore[attr-defined]
            elif type(node) is ListNode:
                for item in node.items:
                    site(item.content, item.line, owner)
            elif type(node) is Table:
                if any("[[" in cell for cell in node.header):
                    sites.append(("|".join(node.header), node.line, owner))
                for k, row in enumerate(node.rows):
                    if any("[[" in cell for cell in row):
                        sites.append(("|".join(row), node.line + 2 + k, owner))

    visit(doc.children, None, False, False)
    return {
        "directives": [id(d) for d in directives],
        "by_name": {k: [id(d) for d in v] for k, v in by_name.items()},
        "checked": {k: [id(d) for d in v] for k, v in checked.items()},
        "refs": [id(d) for d in refs],
        "sites": sites,
    }


def fast_scan(doc: Document) -> dict[str, Any]:
    """What `scan_document` leaves (from the parser's facts, for a parsed document)."""
    return _facts(scan_document(doc))


def walked_scan(doc: Document) -> dict[str, Any]:
    """What the walk finds on the same tree (as it does for a splice's run)."""
    scan = Scan.of(doc, index(doc))
    scan_nodes(scan, doc.children, None, False, False)
    return _facts(scan)


def _facts(scan: Scan) -> dict[str, Any]:
    return {
        "directives": [id(d) for d in scan.directives],
        "by_name": {k: [id(d) for d in v] for k, v in scan.by_name.items()},
        "checked": {k: [id(d) for d in v] for k, v in scan.checked_by_name.items()},
        "refs": [id(d) for d in scan.ref_blocks],
        "sites": list(zip(scan.site_texts, scan.site_lines, scan.site_owners, strict=True)),
    }


@pytest.mark.parametrize("parse", [parser.parse, parser.PURE["parse"]], ids=["parse", "pure"])
def test_the_scan_equals_a_plain_walk_on_the_corpus_and_generated_documents(
    parse: Callable[[str], Document],
) -> None:
    """Both parsers (the compiled one where it is built, and the pure one) note the facts."""
    texts = [data.decode("utf-8", errors="surrogateescape") for data in corpus()]
    texts += [generate(n, seed=s) for n, s in ((3, 0), (40, 1), (200, 2))]
    sites = 0
    for text in texts:
        doc = parse(text)
        want = reference_scan(doc)
        assert fast_scan(doc) == want
        assert walked_scan(doc) == want
        sites += len(want["sites"])
    assert sites > 50  # the documents do hold wikilinks, in many contexts


BLOCKS = [
    "See [[a]] here.",
    "plain words",
    "- item [[b]]\n- other",
    "> quoted [[c]]",
    "| h [[d]] | x |\n|---|---|\n| [[e|label]] | y |",
    "```\n[[in code]]\n```",
    "## Heading [[f]]",
    "## Quiet heading [[g]] {noverify}",
    '### Deep {id="deep"}',
    "## ?!",  # no slug: no id, so its content belongs to the block around it
    '## Emptied {id=""}\n\nLinks [[h]] here.',
]
OPENERS = [
    '::note{id="n1"}',
    "::note",
    '::claim{id="c1" for="x" noverify}',
    '::claim{noverify=false for="y"}',
    '::comment{target="t"}',
    "::dataset",
    '::plot{id="p1"}',
    '::evidence{parent="z"}',
]


@st.composite
def documents(draw: st.DrawFn, depth: int = 0) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        if depth < 3 and draw(st.integers(0, 3)) == 0:
            opener = draw(st.sampled_from(OPENERS))
            colons = ":" * (2 + depth)  # a nested directive takes a longer fence
            opener = colons + opener.lstrip(":")
            parts.append(f"{opener}\n{draw(documents(depth + 1))}\n{colons}")
        else:
            parts.append(draw(st.sampled_from(BLOCKS)))
    return "\n\n".join(parts)


@settings(max_examples=300, deadline=None)
@given(documents())
@example('::::note{id="n1"}\nSee [[a]] here.\n::::')  # a one-paragraph body: its owner
@example("::::dataset\nrows: [[1, 2]]\n::::")  # a raw body holds no link
@example("::::note{noverify}\nSee [[a]] here.\n::::")  # a quiet body neither
@example("## Top\n\n### ?!\n\nSee [[a]] here.")  # owned by Top: its heading has no id
@example('::plot{id="p1"}\n:::note{id="n"}\n## In [[x]]\n:::\n::')  # raw, two levels up
def test_the_scan_equals_a_plain_walk_on_random_documents(text: str) -> None:
    doc = parse(text)
    want = reference_scan(doc)
    assert fast_scan(doc) == want
    assert walked_scan(doc) == want


def test_a_parsed_document_is_not_walked_unless_a_heading_has_no_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parser's facts stand in for the walk; a site owned by a heading that got no id
    is the one case they cannot place (its owner is the block around it), so it walks."""
    from core.noma.validate import scan as scan_module

    walks: list[int] = []
    real = scan_module.scan_nodes

    def counted(*args: Any) -> None:
        walks.append(1)
        real(*args)

    monkeypatch.setattr(scan_module, "scan_nodes", counted)
    doc = parse(generate(40, seed=1))
    assert scan_document(doc).site_texts  # the sites are there ...
    assert not walks  # ... and no walk found them
    doc = parse("## Top\n\n### ?!\n\nSee [[a]] here.")
    assert scan_document(doc).site_owners == ["top"]
    assert walks == [1]
