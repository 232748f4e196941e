"""The app's block arrangement reads where a version changed from the engine's change value
(`core.noma.change`) and compares the trees only for versions that are not one re-parse
apart; both ways give the arrangement built whole."""

from __future__ import annotations

import random

import pytest
from edit_generators import random_edit, sample_texts

import noma_tui.arrangement as arrangement
from core.noma.change import ChangeKind
from core.noma.incremental import revise
from core.noma.parser import parse
from noma_tui.arrangement import Arrangement, arrange, splice


def _same(got: Arrangement, want: Arrangement) -> None:
    assert (got.parents, got.children, got.roots) == (want.parents, want.children, want.roots)
    assert (got.starts, got.names) == (want.starts, want.names)
    assert [id(n) for n in got.blocks] == [id(n) for n in want.blocks]


def test_a_spliced_version_is_arranged_from_its_change(monkeypatch: pytest.MonkeyPatch) -> None:
    def compared(*_args: object) -> None:
        raise AssertionError("the trees were compared though the change was known")

    monkeypatch.setattr(arrangement, "_compared", compared)
    rng = random.Random(26)
    from_change = 0
    for text in sample_texts():
        doc = parse(text)
        arranged = arrange(doc)
        for _ in range(30):
            new_text = random_edit(rng, text)
            new_doc, change = revise(doc, text, new_text)
            spliced = splice(arranged, doc, new_doc)
            want = arrange(new_doc)
            if change.kind is ChangeKind.WHOLE:
                assert spliced is None
            else:
                assert spliced is not None
                _same(spliced[0], want)
                from_change += change.kind is ChangeKind.SPLICE
            text, doc, arranged = new_text, new_doc, want
    assert from_change > 20, "the change value was read"


def test_versions_more_than_one_reparse_apart_are_compared() -> None:
    rng = random.Random(27)
    compared = 0
    for text in sample_texts():
        doc = parse(text)
        arranged = arrange(doc)
        for _ in range(20):
            middle_text = random_edit(rng, text)
            middle = revise(doc, text, middle_text).doc
            if middle is doc:
                continue  # no line changed: one re-parse apart after all
            new_text = random_edit(rng, middle_text)
            new_doc, change = revise(middle, middle_text, new_text)
            assert not change.leads(doc.serial, new_doc.serial)
            spliced = splice(arranged, doc, new_doc)
            want = arrange(new_doc)
            if spliced is not None:
                compared += 1
                _same(spliced[0], want)
            text, doc, arranged = new_text, new_doc, want
    assert compared > 10, "the level-by-level comparison ran"
