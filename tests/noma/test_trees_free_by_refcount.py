"""Trees are freed when their last user drops them, not by the cyclic collector.

`core.noma.nodes.gc_paused` promotes a fresh tree past the young collections on the
premise that a tree holds no reference cycle: reference counting frees it. A cycle
(the document in its own walk list, a kept scan pointing back at its document) made every
version cyclic garbage instead: kept until a full collection, which in a long-running
server or the app can be many versions later. Each case parses, validates and splices,
drops everything, and asks the collector what it found: nothing may be left for it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest

from bench.generate import generate
from core.noma import parser
from core.noma.incremental import reparse
from core.noma.nodes import Document
from core.noma.validate import validate

TEXT = generate(30)
EDITED = TEXT.replace("Pricing improves", "Pricing clearly improves", 1)
MOVED = TEXT.replace("## Finding 1:", "A new paragraph.\n\n## Finding 1:", 1)


@pytest.fixture
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _left_for_the_collector(work: Callable[[], object]) -> int:
    """Run ``work`` twice (the first warms caches that are cyclic by nature: compiled
    patterns, imports), dropping what it made; how many objects the second run left that
    only the cyclic collector could free."""
    work()
    gc.collect()
    work()
    return gc.collect()


def _walked(doc: Document) -> Document:
    for _node, parent in doc.walk():
        assert parent is not None
    return doc


@pytest.mark.parametrize("parse", [parser.parse, parser.PURE["parse"]], ids=["parse", "pure"])
def test_a_parsed_and_validated_tree_is_acyclic(
    collector_paused: None, parse: Callable[..., Document]
) -> None:
    def work() -> object:
        doc = parse(TEXT)
        validate(doc)
        return _walked(doc).line_count

    assert _left_for_the_collector(work) == 0


@pytest.mark.parametrize("edited", [EDITED, MOVED], ids=["in-place", "lines-moved"])
def test_spliced_versions_are_acyclic(collector_paused: None, edited: str) -> None:
    def work() -> object:
        old = parser.parse(TEXT)
        validate(old)
        new = reparse(old, TEXT, edited)
        assert new is not old and new.change is not None
        validate(new)
        _walked(new)
        return new.line_count

    assert _left_for_the_collector(work) == 0


def test_the_walk_still_names_the_document_as_top_level_parent() -> None:
    doc = parser.parse(TEXT)
    parents = {id(p) for _n, p in doc.walk()}
    assert id(doc) in parents
    top = [n for n, p in doc.walk() if p is doc]
    assert [id(n) for n in top] == [id(n) for n in doc.children]
