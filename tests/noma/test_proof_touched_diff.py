"""`touched_diff` cuts the two texts on their characters (`text_ends.line_cut`) and splits
only what is left. Its output must be exactly the diff of the whole texts' lines with the
common head and tail cut line by line (the slow, obviously right way), or the proof would
show the wrong lines or number them wrongly."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.noma.proof as proof
import core.noma.text_ends as text_ends
from core.noma.patch.pipeline import PatchRequest
from core.noma.patch.text import SourceLines, line_change
from core.noma.proof import build_proof, touched_diff
from core.noma.source import BOM
from core.noma.text_ends import common_ends, common_prefix, common_suffix, lf_lines, line_cut


def _line_by_line(old: list[str], new: list[str]) -> tuple[int, int]:
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def _reference(before: str, after: str, name: str, context: int) -> list[str]:
    """Split both texts whole (LF lines, as the parser reads them), cut line by line; the
    difflib call and hunk renumbering are `proof._diff`'s (not what is under test here)."""
    old, new = before.split("\n"), after.split("\n")
    old = [line + "\n" for line in old[:-1]] + ([old[-1]] if old[-1] else [])
    new = [line + "\n" for line in new[:-1]] + ([new[-1]] if new[-1] else [])
    head, tail = _line_by_line(old, new)
    start, keep = max(0, head - context), max(0, tail - context)
    old, new = old[start : len(old) - keep], new[start : len(new) - keep]
    return proof._diff(old, new, start, name, context)


@pytest.mark.parametrize("chunk", [1, 2, 3, 1024])
def test_common_ends_match_a_line_by_line_scan(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_ends, "_LINES", chunk)
    rng = random.Random(chunk)
    for _ in range(2000):
        old = [rng.choice("ab") for _ in range(rng.randrange(0, 14))]
        new = list(old)
        for _ in range(rng.randrange(0, 3)):
            i = rng.randrange(0, len(new) + 1)
            new[i : i + rng.randrange(0, 3)] = [
                rng.choice("abc") for _ in range(rng.randrange(0, 3))
            ]
        assert common_ends(old, new) == _line_by_line(old, new), (old, new)


@pytest.mark.parametrize("chunk", [1, 2, 5, 4096])
def test_common_prefix_and_suffix_are_exact(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_ends, "_CHARS", chunk)
    rng = random.Random(chunk)
    for _ in range(2000):
        a = "".join(rng.choice("ab\n") for _ in range(rng.randrange(0, 30)))
        b = "".join(rng.choice("ab\n") for _ in range(rng.randrange(0, 30)))
        p = common_prefix(a, b)
        assert a[:p] == b[:p] and (p == min(len(a), len(b)) or a[p] != b[p])
        limit = min(len(a), len(b)) - p
        q = common_suffix(a, b, limit)
        assert q <= limit and a[len(a) - q :] == b[len(b) - q :]
        assert q == limit or a[len(a) - q - 1] != b[len(b) - q - 1]


def test_lf_lines_keep_every_character_and_break_only_at_lf() -> None:
    for text in ["", "a", "a\n", "a\n\n", "\n", "a\r\nb", "a\u2028b\x0cc\rd\n"]:
        lines = lf_lines(text)
        assert "".join(lines) == text
        assert all(line.endswith("\n") for line in lines[:-1])
        assert all("\n" not in line[:-1] for line in lines)
    assert lf_lines("a\u2028b\n") == ["a\u2028b\n"]  # splitlines would make two lines


def _random_text(rng: random.Random, most: int) -> tuple[str, list[str], str]:
    """An alphabet, up to ``most`` short lines of it (CRs and U+2028 included), and their
    text with or without a final newline."""
    alphabet = rng.choice(["a", "ab", "ab\r", "a\u2028", "abc"])
    lines = [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 3)))
        for _ in range(rng.randrange(0, most))
    ]
    return alphabet, lines, "\n".join(lines) + rng.choice(["", "\n"])


def _edit(rng: random.Random, lines: list[str], alphabet: str) -> list[str]:
    new = list(lines)
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(0, len(new) + 1)
        if rng.random() < 0.3 and new:
            j = rng.randrange(0, len(new))
            new[i:i] = new[j : j + rng.randrange(1, 4)]  # a copy of nearby lines
        else:
            new[i : i + rng.randrange(0, 3)] = [
                "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 3)))
                for _ in range(rng.randrange(0, 3))
            ]
    return new


@pytest.mark.parametrize("context", [0, 1, 2, 3])
def test_touched_diff_is_the_whole_text_cut(context: int) -> None:
    rng = random.Random(context)
    for _ in range(3000):
        alphabet, lines, before = _random_text(rng, 40)
        after = "\n".join(_edit(rng, lines, alphabet)) + rng.choice(["", "\n"])
        got = touched_diff(before, after, "x", context)
        assert got == _reference(before, after, "x", context), (before, after)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "", "a\r", "\u2028"]), max_size=30),
    st.lists(st.sampled_from(["a", "b", "", "c"]), max_size=4),
    st.integers(0, 40),
    st.integers(0, 3),
    st.integers(0, 3),
    st.booleans(),
    st.booleans(),
)
def test_touched_diff_property(
    lines: list[str],
    insert: list[str],
    at: int,
    cut: int,
    context: int,
    final_before: bool,
    final_after: bool,
) -> None:
    at = min(at, len(lines))
    new = lines[:at] + insert + lines[at + cut :]
    before = "\n".join(lines) + ("\n" if final_before else "")
    after = "\n".join(new) + ("\n" if final_after else "")
    assert touched_diff(before, after, "x", context) == _reference(before, after, "x", context)


def test_a_one_line_edit_in_a_long_text_splits_only_its_neighbourhood(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = [f"line {i}" for i in range(20_000)]
    before = "\n".join(lines) + "\n"
    lines[12_345] = "changed"
    after = "\n".join(lines) + "\n"
    start, head_lines, old_end, new_end = line_cut(before, after, 2)
    assert head_lines == 12_343 and before[start:].startswith("line 12343\n")
    assert before[old_end:].startswith("line 12348\n") and after[new_end:] == before[old_end:]
    split: list[int] = []
    real = text_ends.lf_lines
    monkeypatch.setattr(
        "core.noma.proof.lf_lines", lambda text: split.append(len(text)) or real(text)
    )
    diff = touched_diff(before, after, "x")
    assert diff[2] == "@@ -12344,5 +12344,5 @@\n"
    assert "-line 12345\n" in diff and "+changed\n" in diff
    assert max(split) < 100  # only the cut was split, never the 20,000 lines


def _edited(rng: random.Random, base: SourceLines, alphabet: str) -> list[SourceLines]:
    """One to three ops' worth of edits, each on a copy of the one before (as an op list
    runs), through `SourceLines`' own edits: set, splice, insert, delete."""
    steps: list[SourceLines] = []
    current = base
    alphabet = alphabet.replace("\r", "") or "a"  # a line break is never a value
    for _ in range(rng.randrange(1, 4)):
        lines = current.copy()
        n = len(lines)

        def word() -> str:
            return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 3)))

        kind = rng.randrange(4) if n else 2
        if kind == 0:
            lines.set(rng.randrange(1, n + 1), word())
        elif kind == 1:
            start = rng.randrange(1, n + 1)
            end = rng.randrange(start - 1, min(n, start + 2) + 1)
            lines.splice(start, end, [word() for _ in range(rng.randrange(0, 3))])
        elif kind == 2:
            lines.insert(rng.randrange(1, n + 2), [word() for _ in range(rng.randrange(1, 3))])
        else:
            start = rng.randrange(1, n + 1)
            lines.delete(start, min(n, start + rng.randrange(0, 2)))
        steps.append(lines)
        current = lines
    return steps


@pytest.mark.parametrize("context", [0, 1, 2, 3])
def test_touched_diff_from_the_ops_line_change_is_the_whole_text_cut(
    context: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cut read from the lines the ops left alone gives the same diff as the whole
    texts cut line by line; when that path is taken, the texts are never scanned."""
    rng = random.Random(100 + context)
    taken = 0
    real_cut = proof.line_cut
    scanned: list[int] = []
    monkeypatch.setattr(
        proof,
        "line_cut",
        lambda *a: scanned.append(1) or real_cut(*a),  # type: ignore[func-returns-value]
    )
    for _ in range(3000):
        alphabet, _lines, before = _random_text(rng, 30)
        if rng.random() < 0.1:
            before = BOM + before
        base = SourceLines(before)
        steps = _edited(rng, base, alphabet)
        after = steps[-1].text()
        change = line_change(base, steps)
        scanned.clear()
        got = touched_diff(before, after, "x", context, change)
        assert got == _reference(before, after, "x", context), (before, after)
        if change is not None and not scanned and before != after:
            taken += 1
    assert taken > 1500  # the line path is the common one, not a rare fallback


def test_a_proof_reads_its_diff_from_the_ops_line_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`build_proof` hands the engine's line change to the diff: a one-op and a three-op
    proof on a long document never compare the two texts, and show the same diff as the
    texts compared."""
    lines = ["# Doc", ""]
    for i in range(400):
        lines += [
            f"## Part {i}",
            "",
            f'::claim{{id="c{i}" confidence=0.5}}',
            f"Claim {i}.",
            "::",
            "",
        ]
    path = tmp_path / "doc.noma"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    requests = [
        [{"op": "update_attribute", "id": "c200", "key": "status", "value": "checked"}],
        [
            {"op": "update_attribute", "id": "c10", "key": "status", "value": "a"},
            {"op": "update_attribute", "id": "c390", "key": "status", "value": "b"},
            {"op": "delete_block", "id": "c200"},
        ],
    ]
    real_cut = proof.line_cut
    for ops in requests:
        scanned: list[int] = []
        monkeypatch.setattr(
            proof,
            "line_cut",
            lambda *a, s=scanned: s.append(1) or real_cut(*a),  # type: ignore[func-returns-value]
        )
        got = build_proof(path, PatchRequest(ops=ops))
        assert got.ok, got.outcome.error
        assert got.outcome.line_change is not None and not scanned
        o = got.outcome
        assert o.pre_text is not None and o.new_text is not None
        assert got.diff == touched_diff(o.pre_text, o.new_text, "doc.noma")
        assert scanned  # the comparison of the texts, for the check above
        assert got.diff == _reference(o.pre_text, o.new_text, "doc.noma", 2)
