"""The parser's one block-start test (`_Parser.block_start`) and its GC handling.

`block_start` answers "does a block start on this line" for both the main loop and the
paragraph/list-item loops, so it must have no side effects: asking twice, or asking about a
line that is then read as text, must not add notes or change parser state. The notes for a
``::`` line read as text are written once, by the loop that reads it.
"""

from __future__ import annotations

import gc
import random
import re
import weakref

import pytest

from core.noma import parse
from core.noma.nodes import gc_paused
from core.noma.parser import _Parser
from core.noma.source import split_lines

COLON_TEXT = (
    "para\n"
    "::\n"  # closes nothing: text, one note
    "::note{a='x}\n"  # malformed opener: text, one note
    "more\n"
    "\n"
    "::outer\n"
    "inside\n"
    "::inner\n"  # not deeper than its parent: text, one note
    "::\n"
    "- item\n"
    "  ::\n"  # indented: item text, no note
    ":::\n"  # closes nothing: item text, one note
    "\n"
)


def _state(parser: _Parser) -> tuple[object, ...]:
    return (
        list(parser.notes),
        list(parser.attr_problems),
        list(parser.directive_colons),
        list(parser.body_start),
        len(parser.flat_nodes),
        len(parser.stack),
        len(parser.sections),
        len(parser.directives),
    )


def _answers(parser: _Parser, n: int) -> list[object]:
    out: list[object] = []
    for i in range(n):
        start = parser.block_start(i)
        if start is not None and isinstance(start[1], re.Match):
            start = (start[0], start[1].group(0))
        out.append(start)
    return out


def test_block_start_changes_nothing() -> None:
    lines = split_lines(COLON_TEXT + "# H {a=1 a=2}\n| a | b |\n|---|---|\n```\n> q\n1. x\n***\n")
    parser = _Parser(lines)
    before = _state(parser)
    answers = _answers(parser, len(lines))
    assert _state(parser) == before
    assert _answers(parser, len(lines)) == answers
    # It does see blocks: the heading, the table, the fence, the quote, the list, the break.
    assert sum(a is not None for a in answers) >= 7


def test_block_start_kinds_match_what_the_parser_builds() -> None:
    lines = [
        "::note",
        "::",
        "# T",
        "```py",
        "> q",
        "| a | b |",
        "|---|---|",
        "***",
        "- b",
        "1. o",
        "x",
    ]
    parser = _Parser(lines)
    kinds = [None if s is None else s[0] for s in map(parser.block_start, range(len(lines)))]
    assert kinds[0] is not None  # an opener (no directive open yet)
    assert kinds[1] is None  # a closer with nothing open is text
    assert kinds[-1] is None
    # The table needs its separator on the next line; the separator row alone is not one.
    assert kinds[5] is not None and kinds[6] is None
    assert len({k for k in kinds if k is not None}) == 9 - 1  # every kind but the closer


def test_colon_text_notes_are_written_once_each() -> None:
    doc = parse(COLON_TEXT)
    assert [(n.code, n.line) for n in doc.notes] == [
        ("unmatched-directive-closer", 2),
        ("malformed-directive-opener", 3),
        ("directive-depth-mismatch", 8),
        ("unmatched-directive-closer", 12),
    ]


def test_interrupting_block_is_built_once_at_its_line() -> None:
    doc = parse("::a\ntext\n::\n# H\npara\n::b\nx\n::\n")
    directive, section = doc.children
    assert directive.type == "directive" and (directive.line, directive.end_line) == (1, 3)
    assert section.type == "section" and section.children[1].type == "directive"
    assert [c.type for c in section.children] == ["paragraph", "directive"]
    assert (section.children[1].line, section.children[1].end_line) == (6, 8)


@pytest.mark.parametrize("seed", range(20))
def test_random_lines_parse_the_same_twice(seed: int) -> None:
    """Parsing has no hidden state: the same text gives the same tree and notes."""
    rng = random.Random(seed)
    pool = ["::", ":::", "::a", ":::b{x=1}", "# h", "text", "", "- i", "| a |", "|---|", "```"]
    text = "\n".join(rng.choice(pool) for _ in range(60))
    a, b = parse(text), parse(text)
    assert a.to_json() == b.to_json()
    assert [(n.code, n.line) for n in a.notes] == [(n.code, n.line) for n in b.notes]


# -- GC --------------------------------------------------------------------------------


def test_parse_leaves_the_young_generation_empty() -> None:
    """The fresh tree is promoted, so no young GC pass sweeps its ~10^3 nodes again."""
    text = "\n\n".join(f"## S{k}\n\n::claim{{id=c{k}}}\ntext\n::" for k in range(300))
    was_enabled = gc.isenabled()  # an in-process `noma` main() turns it off for good
    gc.enable()
    try:
        gc.collect(0)  # the young generation empty (a full pass would walk the worker's heap)
        doc = parse(text)
        assert gc.get_count()[0] < 100  # without the promotion: thousands of new objects
        assert gc.isenabled()
        assert len(doc.children) == 300
    finally:
        if not was_enabled:
            gc.disable()


def test_promotion_keeps_someone_elses_freeze() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_paused(promote=True):
            held = [[k] for k in range(1000)]
        assert gc.get_freeze_count() == frozen  # not unfrozen by the parser
        assert len(held) == 1000
    finally:
        gc.unfreeze()


def test_gc_paused_restores_a_disabled_gc() -> None:
    gc.disable()
    try:
        with gc_paused(promote=True):
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_cycles_made_elsewhere_are_still_collected() -> None:
    """Promotion delays a cycle's collection to the next full pass; it never loses it."""
    assert gc.get_freeze_count() == 0

    class Cyclic:
        def __init__(self) -> None:
            self.me = self

    with gc_paused(promote=True):
        probe = weakref.ref(Cyclic())  # garbage at once, but only a collection frees it
    assert probe() is not None
    gc.collect()
    assert probe() is None


def test_a_caller_that_owns_the_freeze_gets_fresh_objects_frozen_uncounted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The app's idle collector owns the frozen set (`nodes.own_freezing`): a parse then
    never unfreezes it, and never counts it (``gc.get_freeze_count`` walks every frozen
    object, ~35 ms per parse in the app); what it built is frozen with the rest, for the
    owner's next collection."""
    from core.noma import nodes

    def counted() -> int:
        raise AssertionError("the frozen set was counted")

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        nodes.own_freezing(True)
        monkeypatch.setattr(gc, "get_freeze_count", counted)
        doc = parse('# A\n\n::note{id="n"}\nBody.\n::\n')
        with gc_paused(promote=True):
            held = [[k] for k in range(1000)]
        monkeypatch.undo()
        assert gc.get_freeze_count() >= frozen + 1000  # frozen, not unfrozen
        assert gc.is_tracked(held[0]) and len(held) == 1000 and doc.children
    finally:
        nodes.own_freezing(False)
        gc.unfreeze()
