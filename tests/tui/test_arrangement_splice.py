"""The app's block arrangement spliced from the previous version equals one built whole,
after every step of random edits (the engine's own splice property test, seen from the app:
`noma_tui.arrangement.splice` relies on which nodes the engine shares)."""

from __future__ import annotations

import random

import pytest
from edit_testlib import random_edit, sample_texts

from bench.generate import generate
from core.noma.incremental import reparse
from core.noma.parser import parse
from noma_tui.arrangement import Arrangement, Region, arrange, splice


def _same(got: Arrangement, want: Arrangement) -> None:
    assert [id(n) for n in got.blocks] == [id(n) for n in want.blocks]
    assert got.parents == want.parents
    assert got.children == want.children
    assert got.roots == want.roots
    assert got.positions == want.positions


def _region_holds(old: Arrangement, new: Arrangement, region: Region) -> None:
    """Outside the region and its path, the blocks are the same nodes, shifted by d."""
    at, x0, x1, d, path = region
    assert len(new.blocks) == len(old.blocks) + d
    assert not path or path[-1] == at
    for i in range(x0):
        if i not in path:
            assert new.blocks[i] is old.blocks[i]
    for i in range(x1, len(old.blocks)):
        assert new.blocks[i + d] is old.blocks[i]


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
