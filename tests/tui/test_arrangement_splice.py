"""The app's block arrangement spliced from the previous version equals one built whole,
after every step of random edits (the engine's own splice property test, seen from the app:
`noma_tui.arrangement.splice` relies on which nodes the engine shares)."""

from __future__ import annotations

import random

import pytest
from edit_generators import random_edit, sample_texts, unread_count

from bench.generate import generate
from core.noma.incremental import reparse
from core.noma.nodes import Document, origin
from core.noma.parser import parse
from noma_tui.arrangement import Arrangement, Region, arrange, splice


def _same(got: Arrangement, want: Arrangement) -> None:
    assert got.parents == want.parents
    assert got.children == want.children
    assert got.roots == want.roots
    assert got.starts == want.starts
    assert got.names == want.names
    # Read last: the lists above were made without reading a moved block.
    assert [id(n) for n in got.blocks] == [id(n) for n in want.blocks]


def _region_holds(old: Arrangement, new: Arrangement, region: Region) -> None:
    """Outside the region and its path, the blocks are the same nodes, or after the run
    copies of them all moved by one line delta (one origin each), at index + d."""
    at, x0, x1, d, path = region
    assert len(new.blocks) == len(old.blocks) + d
    assert not path or path[-1] == at
    for i in range(x0):
        if i not in path:
            assert new.blocks[i] is old.blocks[i]
    deltas = set()
    for i in range(x1, len(old.blocks)):
        was, now = old.blocks[i], new.blocks[i + d]
        assert now is was or origin(now) is origin(was)
        deltas.add(now.line - was.line)
    assert len(deltas) <= 1


@pytest.mark.parametrize("case", range(4))
def test_spliced_arrangement_equals_a_whole_one(case: int) -> None:
    rng = random.Random(1400 + case)
    spliced_steps = 0
    structural = 0
    for text in sample_texts():
        doc = parse(text)
        arranged = arrange(doc)
        for _ in range(40):
            new_text = random_edit(rng, text)
            new_doc = reparse(doc, text, new_text)
            spliced = splice(arranged, doc, new_doc)
            want = arrange(new_doc)
            if spliced is not None:
                got, region = spliced
                spliced_steps += 1
                _same(got, want)
                _region_holds(arranged, got, region)
                structural += region.d != 0
            text, doc, arranged = new_text, new_doc, want
    assert spliced_steps > 20, "the splice path ran"
    assert structural > 5, "blocks were added or removed in spliced steps"


@pytest.mark.parametrize("case", range(3))
def test_a_chain_of_spliced_arrangements_reads_no_moved_block(case: int) -> None:
    """Each version is spliced from the previous spliced one, nothing read in between:
    the splice makes none of the moved blocks, and every version, read at the end (newest
    first, then older ones), equals one arranged whole."""
    rng = random.Random(2400 + case)
    kept = 0
    for text in sample_texts():
        doc = parse(text)
        arranged = arrange(doc)
        versions: list[tuple[Document, Arrangement]] = []
        for _ in range(25):
            new_text = random_edit(rng, text)
            new_doc = reparse(doc, text, new_text)
            before = unread_count(new_doc)
            spliced = splice(arranged, doc, new_doc)
            if spliced is None:
                arranged = arrange(new_doc)
            else:
                arranged = spliced[0]
                assert unread_count(new_doc) == before, "the splice read a moved block"
                kept += before > 0
            versions.append((new_doc, arranged))
            text, doc = new_text, new_doc
        for version, got in reversed(versions):
            _same(got, arrange(version))
    assert kept > 5, "moved blocks were left unread by some splices"


def test_a_line_added_at_the_top_moves_every_later_block_unread() -> None:
    """The bench's "outside +/- line (top)": one line added to the first body of a
    5,000-section memo. The arrangement is spliced in the size of the change: no moved
    block is read, the region is the one section re-parsed, rows after it keep their
    indexes (no block added) and lines move by one."""
    text = generate(400, seed=3)
    doc = parse(text)
    arranged = arrange(doc)
    body = "The effect may not hold for larger tenants.\n"
    new_text = text.replace(body, body + "A second line.\n", 1)
    new_doc = reparse(doc, text, new_text)
    before = unread_count(new_doc)
    assert before > 300
    got, region = splice(arranged, doc, new_doc) or (None, None)
    assert got is not None and region is not None
    assert unread_count(new_doc) == before
    assert region.d == 0 and region.x1 - region.x0 <= 8
    first_moved = region.x1
    assert got.starts[first_moved] == arranged.starts[first_moved] + 1
    assert got.names == arranged.names
    _same(got, arrange(new_doc))


def test_an_attribute_edit_is_spliced_sharing_every_other_block() -> None:
    text = generate(200, seed=5)
    doc = parse(text)
    arranged = arrange(doc)
    new_text = text.replace('::claim{id="claim-120" ', '::claim{id="claim-120" reviewed=true ', 1)
    assert new_text != text
    new_doc = reparse(doc, text, new_text)
    spliced = splice(arranged, doc, new_doc)
    assert spliced is not None
    got, region = spliced
    assert region.d == 0
    _same(got, arrange(new_doc))
    changed = [
        i for i, (a, b) in enumerate(zip(arranged.blocks, got.blocks, strict=True)) if a is not b
    ]
    claim = next(i for i, n in enumerate(got.blocks) if n.id == "claim-120")
    assert claim in changed and len(changed) <= 4  # the claim and its ancestor sections
    assert got.children[-1] is arranged.children[-1]  # shared, not rebuilt
