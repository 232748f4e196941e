"""The change value a re-parse hands back (`core.noma.change`) is the difference between full
parses of the two versions: outside its line ranges the lines are equal, outside its block
ranges the blocks (kind, id, aliases, depth and lines, moved by the delta) are equal, and
the ids it says were gained and lost are those the full parses gain and lose."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.generate import generate
from core.noma.change import Change, ChangeKind, Span, id_difference
from core.noma.ids import id_nodes_of
from core.noma.incremental import Reparsed, revise
from core.noma.nodes import Document, Section
from core.noma.parser import parse
from core.noma.source import split_lines


def _blocks(doc: Document) -> list[tuple[object, ...]]:
    return [
        (
            type(n).__name__,
            n.id,
            tuple(n.aliases),
            n.depth,
            n.title if isinstance(n, Section) else n.name,  # type: ignore[attr-defined]
            n.line,
            n.end_line,
        )
        for n in id_nodes_of(doc)
    ]


def _moved(rows: list[tuple[object, ...]], delta: int) -> list[tuple[object, ...]]:
    return [(*r[:5], r[5] + delta, r[6] + delta) for r in rows]  # type: ignore[operator]


def _lines_agree(old: list[str], new: list[str], was: Span, now: Span, delta: int) -> None:
    assert 0 <= was.start == now.start and was.end <= len(old) and now.end <= len(new)
    assert now.end - was.end == delta == len(new) - len(old)
    assert old[: was.start] == new[: now.start], "a line before the range differs"
    assert old[was.end :] == new[now.end :], "a line after the range differs"


def assert_change_is_the_difference(old_text: str, new_text: str, reparsed: Reparsed) -> None:
    """``reparsed.change`` against full parses of ``old_text`` and ``new_text``."""
    doc, change = reparsed
    assert isinstance(change, Change)
    old_full, new_full = parse(old_text), parse(new_text)
    old_blocks, new_blocks = _blocks(old_full), _blocks(new_full)
    assert (change.gained, change.lost) == id_difference(
        (b[1] for b in old_blocks),  # type: ignore[misc]
        (b[1] for b in new_blocks),  # type: ignore[misc]
    )
    if change.kind is ChangeKind.SAME:
        assert change.base == change.version == doc.serial
        assert old_blocks == new_blocks
        return
    assert doc.change is change and change.version == doc.serial
    old_lines, new_lines = (
        split_lines(old_full_body(old_text)),
        split_lines(old_full_body(new_text)),
    )
    if change.kind is ChangeKind.WHOLE:
        assert change.old_lines == Span(0, old_full.line_count)
        assert change.new_lines == Span(0, new_full.line_count)
        assert change.new_blocks == Span(0, len(new_blocks))
        return
    delta = change.line_delta
    _lines_agree(old_lines, new_lines, change.old_lines, change.new_lines, delta)
    _lines_agree(old_lines, new_lines, change.edited_old, change.edited_new, delta)
    assert change.old_lines.start <= change.edited_old.start
    assert change.edited_old.end <= change.old_lines.end
    ob, nb = change.old_blocks, change.new_blocks
    assert ob.start == nb.start and ob.end <= len(old_blocks) and nb.end <= len(new_blocks)
    assert len(old_blocks) - ob.end == len(new_blocks) - nb.end
    # Before the range: the same blocks, the containers' ends moved with the run.
    held = set(change.container)
    before = [
        (*r[:6], r[6] + delta) if r[5] in held else r  # type: ignore[operator]
        for r in old_blocks[: ob.start]
    ]
    assert before == new_blocks[: nb.start], "a block before the range differs"
    assert _moved(old_blocks[ob.end :], delta) == new_blocks[nb.end :], (
        "a block after the range differs"
    )
    for line in change.container:  # sections holding the run, in both versions
        for full, run in ((old_full, change.old_lines), (new_full, change.new_lines)):
            (holder,) = [n for n in id_nodes_of(full) if n.line == line]
            assert isinstance(holder, Section)
            assert holder.line - 1 < run.start and run.end <= holder.end_line


def old_full_body(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


BASE = generate(6, seed=3)


def _edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def _revised(before: str, after: str) -> Change:
    reparsed = revise(parse(before), before, after)
    assert_change_is_the_difference(before, after, reparsed)
    return reparsed.change


def _a_paragraph(text: str) -> str:
    lines = text.split("\n")
    return next(
        line for line in lines[5:] if line and line[0].isalpha() and not line.startswith("::")
    )


def test_an_in_place_edit_changes_lines_but_no_block() -> None:
    para = _a_paragraph(BASE)
    change = _revised(BASE, _edit(BASE, para, para + " More words."))
    assert change.kind is ChangeKind.SPLICE and change.line_delta == 0
    assert len(change.edited_old) == len(change.edited_new) == 1
    assert (change.gained, change.lost) == ((), ())
    assert len(change.old_blocks) == len(change.new_blocks)


def test_adding_a_section_gains_its_id_and_moves_later_lines() -> None:
    para = _a_paragraph(BASE)
    change = _revised(BASE, _edit(BASE, para, para + "\n\n### Quite new heading\n\nBody."))
    assert change.kind is ChangeKind.SPLICE and change.line_delta == 4
    assert change.gained == ("quite-new-heading",) and change.lost == ()
    assert len(change.new_blocks) == len(change.old_blocks) + 1
    assert change.container, "the run sits inside a section"


def test_removing_a_section_loses_its_id() -> None:
    text = _edit(BASE, _a_paragraph(BASE), "Intro.\n\n### Doomed heading\n\nBody.")
    change = _revised(text, _edit(text, "\n### Doomed heading\n\nBody.", ""))
    assert change.kind is ChangeKind.SPLICE and change.line_delta == -3
    assert change.lost == ("doomed-heading",) and change.gained == ()


def test_moving_a_section_keeps_its_id_and_says_which_blocks_moved() -> None:
    text = "# Doc\n\n## One\n\nA.\n\n## Two\n\nB.\n\n## Three\n\nC.\n"
    moved = "# Doc\n\n## Two\n\nB.\n\n## One\n\nA.\n\n## Three\n\nC.\n"
    change = _revised(text, moved)
    assert change.kind is not ChangeKind.SAME
    assert (change.gained, change.lost) == ((), ())
    assert change.old_blocks.start <= 1 and change.old_blocks.end >= 3


def test_an_edit_the_splice_cannot_hold_is_a_whole_change() -> None:
    text = "---\ntitle: T\n---\n\n# Doc\n\n## One\n\nA.\n"
    change = _revised(text, text.replace("title: T", "title: U"))
    assert change.whole and change.kind is ChangeKind.WHOLE
    assert change.old_lines == Span(0, 9) and change.new_lines == Span(0, 9)


def test_an_unchanged_text_is_the_same_version() -> None:
    doc = parse(BASE)
    reparsed = revise(doc, BASE, BASE)
    assert reparsed.doc is doc and reparsed.change.kind is ChangeKind.SAME
    assert doc.change is None, "the base version is never written to"


def test_a_change_names_its_pair_of_versions() -> None:
    doc = parse(BASE)
    para = _a_paragraph(BASE)
    new = revise(doc, BASE, _edit(BASE, para, para + "!"))
    assert new.change.leads(doc.serial, new.doc.serial)
    assert not new.change.leads(parse(BASE).serial, new.doc.serial)


_LINES = [
    "",
    "## Step",
    "### Deep",
    "Some text.",
    '::note{id="n1"}',
    "::",
    "- item",
    "text with [[step]] link",
]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 30),
    size=st.integers(1, 8),
    at=st.floats(0, 1),
    cut=st.integers(0, 3),
    insert=st.lists(st.sampled_from(_LINES), max_size=4),
)
def test_the_change_value_is_the_difference_of_full_parses(
    seed: int, size: int, at: float, cut: int, insert: list[str]
) -> None:
    text = generate(size, seed=seed)
    lines = text.split("\n")
    pos = int(at * len(lines))
    lines[pos : pos + cut] = insert
    new_text = "\n".join(lines)
    doc = parse(text)
    assert_change_is_the_difference(text, new_text, revise(doc, text, new_text))
