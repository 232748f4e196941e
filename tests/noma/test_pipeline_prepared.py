"""A proof's post-state is the one the apply uses (`DocumentCache.prepare`): applying the
edit just previewed does not splice and validate the same text again, and a post-state is
never taken for other bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import core.noma.patch.pipeline as pipeline
from core.noma.patch.pipeline import Actor, DocumentCache, PatchRequest, patch_file

DOC = """# Memo

::claim{id="c1" confidence=0.5}
Warm caches are faster.
::

::claim{id="c2" confidence=0.5}
Cold caches are slower.
::
"""
ACTOR = Actor("human", "writer")


def _op(ident: str, value: float) -> dict[str, Any]:
    return {"op": "update_attribute", "id": ident, "key": "confidence", "value": value}


@pytest.fixture
def analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = pipeline.analyse

    def spy(text: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(pipeline, "analyse", spy)
    return calls


def test_apply_after_its_proof_reuses_the_post_state(tmp_path: Path, analyses: list[str]) -> None:
    path = tmp_path / "memo.noma"
    path.write_text(DOC, encoding="utf-8")
    cache = DocumentCache()
    dry = patch_file(
        path, PatchRequest(ops=[_op("c1", 0.7)], actor=ACTOR), write=False, cache=cache
    )
    assert dry.ok and not path.read_text("utf-8").count("0.7")
    prepared = cache.prepared(path, dry.post_sha256)
    assert prepared is not None
    built = len(analyses)
    done = patch_file(path, PatchRequest(ops=[_op("c1", 0.7)], actor=ACTOR), cache=cache)
    assert done.ok and done.written and done.post_sha256 == dry.post_sha256
    assert len(analyses) == built, "the apply built no post-state of its own"
    state = cache.get(path, done.post_sha256)
    assert state is not None and state.doc is prepared.doc
    assert [d.code for d in done.post_diagnostics] == [d.code for d in dry.post_diagnostics]


def test_a_prepared_state_is_not_taken_for_other_bytes(tmp_path: Path, analyses: list[str]) -> None:
    path = tmp_path / "memo.noma"
    path.write_text(DOC, encoding="utf-8")
    cache = DocumentCache()
    dry = patch_file(
        path, PatchRequest(ops=[_op("c1", 0.7)], actor=ACTOR), write=False, cache=cache
    )
    # Someone else changes the other claim before the apply: the result differs.
    path.write_text(DOC.replace('id="c2" confidence=0.5', 'id="c2" confidence=0.9'), "utf-8")
    built = len(analyses)
    done = patch_file(path, PatchRequest(ops=[_op("c1", 0.7)], actor=ACTOR), cache=cache)
    assert done.ok and done.post_sha256 != dry.post_sha256
    assert len(analyses) > built
    text = path.read_text("utf-8")
    assert 'id="c1" confidence=0.7' in text and 'id="c2" confidence=0.9' in text
    state = cache.get(path, done.post_sha256)
    assert state is not None and state.text == text
