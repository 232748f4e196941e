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
from core.noma.patch.errors import PatchError
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


@pytest.mark.parametrize("seed", range(3))
def test_an_exclusive_cache_edits_lines_in_place_and_undoes_every_refusal(
    tmp_path: Path, seed: int
) -> None:
    """The MCP server's cache (``exclusive``): a one-op write edits the cached version's
    lines in place (`SourceLines.adopt`). Applied, they are the new version's; refused (a
    missing target, a guard refusal, a stale base hash) or a noop, they are the old ones,
    still the cached version's, and equal to a split of its text."""
    rng = random.Random(seed)
    path = tmp_path / "memo.noma"
    path.write_text(generate(40, seed=seed), encoding="utf-8")
    cache = DocumentCache(exclusive=True)
    outcomes = {"applied": 0, "refused": 0, "noop": 0}
    for k in range(18):
        text = path.read_text("utf-8")
        _source, state = cache.load(path)
        lines = state.source_lines()
        assert lines is not None and lines.lines == SourceLines(text).lines
        (op,) = _ops(rng, text)[:1]
        if k % 3 == 1:  # refused: unknown target, or a base hash that no longer matches
            op = dict(op, id="nowhere") if "id" in op else dict(op, parent="nowhere")
        elif k % 3 == 2 and "id" in op:
            op = dict(op, baseHash="0123456789abcdef")
        want: str | None = None
        try:
            want = apply_ops_to_text(text, [dict(op)])
        except PatchError:
            want = None
        done = patch_file(path, PatchRequest(ops=[dict(op)]), cache=cache)
        _source, now = cache.load(path)
        kept = now.source_lines()
        assert kept is not None
        if want is None:
            assert not done.ok
            outcomes["refused"] += 1
            assert now is state and kept is lines  # handed back, undone
            assert lines.lines == SourceLines(text).lines and lines.text() == text
            assert path.read_text("utf-8") == text
            continue
        assert done.ok and path.read_text("utf-8") == want
        outcomes["applied" if want != text else "noop"] += 1
        assert kept.lines == SourceLines(want).lines and kept.text() == want
        # Edited again, the version splits nothing: the lines are the op's.
        assert kept.changed_span() is not None
    assert outcomes["applied"] >= 4 and outcomes["refused"] >= 4


def test_an_exclusive_cache_keeps_the_lines_when_the_guard_refuses(tmp_path: Path) -> None:
    path = tmp_path / "doc.noma"
    text = "# Intro\n\n## Step\n\nOne.\n\n## Step\n\nTwo.\n"
    path.write_text(text)
    cache = DocumentCache(exclusive=True)
    _source, state = cache.load(path)
    lines = state.source_lines()
    assert lines is not None
    # Retitling the first "Step" would renumber the second's id: the guard refuses it.
    op = {"op": "update_heading", "id": "step", "title": "Setup"}
    done = patch_file(path, PatchRequest(ops=[op]), cache=cache)
    assert not done.ok and "step-2" in (done.error or "")
    _source, now = cache.load(path)
    assert now is state and now.source_lines() is lines and lines.text() == text
    assert lines.lines == SourceLines(text).lines
    assert path.read_text() == text
