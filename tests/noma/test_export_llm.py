"""``render --to llm``: every id addressable, deterministic, and an honest budget."""

from __future__ import annotations

import re

import pytest

from core.noma import parse
from core.noma.export import export
from core.noma.export.llm import estimate_tokens, render_llm
from noma_tui.demo import DEMO_SOURCE

MEMO = (DEMO_SOURCE / "research-memo.noma").read_text()


def test_every_canonical_id_is_written_out() -> None:
    doc = parse(MEMO)
    out = render_llm(doc)
    for node, _ in doc.walk():
        if node.id:
            assert f'id="{node.id}"' in out, node.id


def test_suffixed_heading_ids_are_explicit() -> None:
    out = render_llm(parse("## Notes\n\nA\n\n## Notes\n\nB\n"))
    assert '## Notes {id="notes"}' in out and '## Notes {id="notes-2"}' in out


def test_header_counts_blocks_and_tokens() -> None:
    out = render_llm(parse(MEMO), source_name="research-memo.noma")
    head = out.split("\n", 1)[0]
    assert head.startswith("noma-context v1 · source: research-memo.noma · blocks: 15 of 15")
    assert "omitted" not in out


def _kept_ids(out: str) -> list[str]:
    return re.findall(r'^(?:#+ .*?|:+\w+)\{id="([^"]+)"', out, re.MULTILINE)


def test_budget_keeps_whole_blocks_in_priority_order_and_lists_the_rest() -> None:
    doc = parse(MEMO)
    out = render_llm(doc, budget=200)
    kept = _kept_ids(out)
    # The outline and the claims come first; comments and notes are dropped before them.
    assert "warm-cache-p95" in kept and "claims" in kept
    assert "cm-sample-size" not in kept
    tail = out.rstrip("\n").rsplit("\n\n", 1)[1]
    assert tail.startswith("omitted to fit a budget of 200 tokens:")
    assert "#cm-sample-size (comment)" in tail
    # Every block is either kept whole or named as omitted.
    for ident in ("ev-loadtest-march", "cev-cold-start", "risk-stale-prices", "note-method"):
        assert (ident in kept) != (f"#{ident} (" in tail), ident
    # Whole blocks: a kept directive has its whole body.
    for node, _ in doc.walk():
        if node.id in kept and hasattr(node, "body"):
            assert node.body in out


def test_budget_is_respected() -> None:
    doc = parse(MEMO)
    for budget in (0, 30, 120, 250, 400, 10_000):
        out = render_llm(doc, budget=budget)
        blocks = out.rstrip("\n").split("\n\n")[1:]
        if "omitted" in blocks[-1]:
            blocks = blocks[:-1]
        assert sum(estimate_tokens(b) for b in blocks) <= budget


def test_kept_blocks_stay_in_document_order() -> None:
    out = render_llm(parse(MEMO), budget=250)
    positions = [MEMO.find(f'id="{i}"') for i in _kept_ids(out) if f'id="{i}"' in MEMO]
    assert positions == sorted(positions)


def test_zero_budget_omits_everything_and_says_so() -> None:
    out = render_llm(parse(MEMO), budget=0)
    assert "blocks: 0 of 15" in out and "omitted to fit a budget of 0 tokens: 15 block(s)" in out


def test_same_document_same_bytes() -> None:
    assert export(parse(MEMO), "llm", budget=300) == export(parse(MEMO), "llm", budget=300)


@pytest.mark.parametrize("name", ["a\nb.noma", "x\x1b[31m.noma"])
def test_source_name_cannot_inject_lines(name: str) -> None:
    head = render_llm(parse("x\n"), source_name=name).split("\n", 1)[0]
    assert "\x1b" not in head and head.count("source:") == 1
    assert head.startswith("noma-context v1 · source: ")
