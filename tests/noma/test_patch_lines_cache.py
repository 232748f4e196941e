"""A cached version's source lines are split once and copied for each edit
(`DocumentState.source_lines`, `SourceLines.copy`): ops mutate their copy, never the
cached lines, and every result equals the engine's without a cache. Also the lines an op
left are handed to the post-state, so the next edit of that version splits nothing."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bench.generate import generate
from core.noma.patch.engine import apply_ops_to_text
from core.noma.patch.pipeline import DocumentCache, PatchRequest, patch_file
from core.noma.patch.text import SourceLines


def _ops(rng: random.Random, text: str) -> list[dict[str, object]]:
    risks = [n for n in range(40) if f'id="risk-{n}"' in text]
    claims = [n for n in range(40) if f'id="claim-{n}"' in text]
    body = "Changed.\n" + ("Two lines now.\n" if rng.random() < 0.5 else "")
    pool: list[dict[str, object]] = [
        {"op": "replace_body", "id": f"risk-{rng.choice(risks)}", "content": body},
        {"op": "update_attribute", "id": f"claim-{rng.choice(claims)}", "key": "confidence",
         "value": f"0.{rng.randrange(10, 99)}"},
        {"op": "add_block", "parent": "synthetic-research-memo",
         "content": f'::note{{id="n-{rng.randrange(10**6)}"}}\nAdded.\n::'},
    ]  # fmt: skip
    return [rng.choice(pool) for _ in range(rng.randrange(1, 4))]


@pytest.mark.parametrize("seed", range(3))
def test_edits_of_a_cached_version_equal_uncached_ones_and_leave_its_lines(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    path = tmp_path / "memo.noma"
    path.write_text(generate(40, seed=seed), encoding="utf-8")
    cache = DocumentCache()
    applied = 0
    for _ in range(12):
        text = path.read_text("utf-8")
        _source, state = cache.load(path)
        ops = _ops(rng, text)
        try:
            want = apply_ops_to_text(text, [dict(op) for op in ops])
        except Exception:
            want = None
        cached = state.source_lines()
        assert cached is not None
        before = list(cached.lines)
        proof = patch_file(path, PatchRequest(ops=[dict(op) for op in ops]), write=False,
                           record=False, cache=cache)  # fmt: skip
        assert cached.lines == before, "an op mutated the cached lines"
        if want is None:
            assert not proof.ok
            continue
        assert proof.ok and proof.new_text == want
        done = patch_file(path, PatchRequest(ops=[dict(op) for op in ops]), cache=cache)
        assert done.ok and path.read_text("utf-8") == want
        assert cached.lines == before
        applied += 1
        # The new version's lines came from the op: equal to a split of its text.
        _source, post = cache.load(path)
        kept = post.source_lines()
        assert kept is not None and kept.text() == want
        assert kept.lines == SourceLines(want).lines
    assert applied >= 6


def test_a_copy_is_independent() -> None:
    lines = SourceLines("a\r\nb\r\n")
    copy = lines.copy()
    copy.set(1, "changed")
    assert lines.text() == "a\r\nb\r\n"
    assert copy.text() == "changed\r\nb\r\n"
    assert (copy.bom, copy.crlf, copy.final_newline) == (lines.bom, lines.crlf, True)
