"""`diff_versions` names every tree row that can look different between two versions (so
the tree may relabel only those), and calls a change of shape a change of structure."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
from edit_generators import random_edit, sample_texts

from core.noma.patch.pipeline import analyse
from noma_tui.document import LoadedDocument, from_state
from noma_tui.labels import label_for
from noma_tui.styles import Styles
from noma_tui.versions import diff_versions


def _version(path: Path, text: str, previous: LoadedDocument | None) -> LoadedDocument:
    sha = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
    base = previous.state() if previous is not None else None
    state = analyse(text, path.parent, sha, previous=base)
    return from_state(path, text, sha, state, previous=previous)


@pytest.mark.parametrize("seed", [2026, 14, 5])
def test_every_row_that_looks_different_is_named(tmp_path: Path, seed: int) -> None:
    palette = Styles.defaults()
    rng = random.Random(seed)
    path = tmp_path / "doc.noma"
    checked = 0
    regions = 0
    for text in sample_texts():
        shown = _version(path, text, None)
        for _ in range(40):
            new_text = random_edit(rng, text)
            new = _version(path, new_text, shown)
            changes = diff_versions(shown, new)
            if changes.same_structure:
                for block in range(len(new.blocks)):
                    if block in changes.rows:
                        continue
                    before = label_for(shown, block, palette)
                    after = label_for(new, block, palette)
                    assert before == after, (block, new.blocks[block].id)
                    checked += 1
            elif changes.region is not None:
                _at, x0, x1, d, _path = changes.region
                regions += 1
                for block in range(len(new.blocks)):
                    if block in changes.rows:
                        continue
                    assert not x0 <= block < x1 + d
                    was = block if block < x0 else block - d
                    before = label_for(shown, was, palette)
                    assert before == label_for(new, block, palette), (block, new.blocks[block].id)
                    checked += 1
            else:
                assert (
                    len(shown.blocks) != len(new.blocks)
                    or shown.parents != new.parents
                    or [n.id for n in shown.blocks] != [n.id for n in new.blocks]
                )
            text, shown = new_text, new
    assert checked > 1000
    assert regions > 5, "changes of structure were diffed by region"
