"""Moved blocks are copied lazily, and a spliced version is validated without a walk.

An edit that changes the line count moves every later block. The splice copies only the
blocks directly in the changed containers (`core.noma.nodes.shifted`); what is below them
is made when first read. Whole-document rules take the base version's findings, moved,
when the run's facts are unchanged (`core.noma.validate.incremental_rules`). These tests
pin what that saves (nothing below a moved block is made by a splice or a validation) and
that it never shows: read early, late, from two threads, or after a chain of unread
versions, every version equals a fresh parse and a full validation.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_incremental_properties import (
    TODAY,
    _diags,
    heading_edit,
    line_edit,
    snapshot,
    start_text,
)
from test_trust_properties import SEEDS, TRIED, _ids, op_for, run

from bench.generate import generate
from core.noma import nodes as N
from core.noma.ids import built_index
from core.noma.incremental import reparse, try_reparse
from core.noma.nodes import Directive, Document, ListNode, Section
from core.noma.parser import parse
from core.noma.patch import PatchError
from core.noma.patch.engine import apply_one
from core.noma.patch.guard import outline, outline_entries
from core.noma.patch.pipeline import DocumentCache, PatchRequest
from core.noma.proof import build_proof
from core.noma.validate import validate
from core.noma.validate.kept_findings import document_findings, has_recipes


def _unread(node: Any) -> bool:
    """Is ``node`` a moved copy whose children were not made yet?"""
    return N.unread(node)


def _grow_first_risk(text: str) -> str:
    lines = text.split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("The effect may not hold"))
    lines[k : k + 1] = ["First line.", "Second line.", "Third line."]
    return "\n".join(lines)


def test_every_slot_is_copied_by_the_written_out_copiers() -> None:
    """A field added to a node kind must not be dropped by its copier."""
    for kind, slots in N._SLOTS.items():
        node = N._new(kind)
        for k, slot in enumerate(slots):
            object.__setattr__(node, slot, k + 1000 if slot in ("line", "end_line") else (k,))
        if kind in (Section, Directive):
            node.children = []
            node._lazy = None
        elif kind is ListNode:
            node.items = []
            node._lazy = None
        copy = N.shifted(node, 7)
        assert type(copy) is kind
        for k, slot in enumerate(slots):
            want = k + 1007 if slot in ("line", "end_line") else (k,)
            assert getattr(copy, slot) == want, f"{kind.__name__}.{slot}"


def test_a_line_count_change_copies_only_the_top_of_the_moved_blocks() -> None:
    text = generate(60, seed=7)
    doc = parse(text)
    validate(doc, today=TODAY)
    new_text = _grow_first_risk(text)
    spliced = try_reparse(doc, text, new_text)
    assert spliced is not None
    top = spliced.children[-1]  # the memo's one H1: its findings are the moved blocks
    moved = [n for n in top.children if n.line > 30]
    assert moved and all(_unread(n) for n in moved if isinstance(n, Section))
    assert spliced._id_nodes is None, "the block list is made from the tree when asked"
    # Validation takes the base version's findings: it does not read below a moved block.
    found = validate(spliced, today=TODAY)
    assert all(_unread(n) for n in moved if isinstance(n, Section))
    assert document_findings(spliced) is not None
    # Read now: equal to a fresh parse, and the base version is as it was.
    before = snapshot(doc)
    fresh = parse(new_text)
    assert _diags(found) == _diags(validate(fresh, today=TODAY))
    assert snapshot(spliced) == snapshot(fresh)
    assert not any(_unread(n) for n, _ in spliced.walk())
    assert snapshot(doc) == before


def test_a_chain_of_unread_versions_resolves_to_the_original_blocks() -> None:
    text = generate(30, seed=2)
    doc = parse(text)
    versions: list[tuple[Document, str]] = [(doc, text)]
    for n in range(4):
        lines = text.split("\n")
        k = next(i for i, line in enumerate(lines) if line.startswith("The effect may not hold"))
        lines[k:k] = [f"Added {n}."]
        new_text = "\n".join(lines)
        doc = reparse(doc, text, new_text)
        versions.append((doc, new_text))
        text = new_text
    last = doc.children[-1].children[-1]
    assert _unread(last)
    source, delta = last._lazy
    assert not _unread(source), "a copy of an unread copy points at the original"
    assert delta == 4
    for version, version_text in reversed(versions):  # read the newest first, then older
        assert snapshot(version) == snapshot(parse(version_text))


def test_two_threads_reading_one_moved_block_get_the_same_children() -> None:
    text = generate(200, seed=4)
    doc = parse(text)
    spliced = reparse(doc, text, _grow_first_risk(text))
    targets = [n for n in spliced.children[-1].children if _unread(n)]
    assert len(targets) > 100
    seen: list[list[int]] = [[], []]
    barrier = threading.Barrier(2)

    def read(slot: int) -> None:
        barrier.wait()
        seen[slot] = [id(n.children) for n in targets]

    threads = [threading.Thread(target=read, args=(k,)) for k in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen[0] == seen[1]


def test_the_next_op_finds_its_target_without_making_the_moved_blocks() -> None:
    text = generate(60, seed=9)
    doc = parse(text)
    new_text = _grow_first_risk(text)
    spliced = reparse(doc, text, new_text)
    top = spliced.children[-1]
    assert spliced._id_nodes is None and built_index(spliced) is None
    op = {"op": "update_attribute", "id": "claim-50", "key": "k", "value": 1}
    after = apply_one(new_text, op, spliced)
    assert after == apply_one(new_text, op, parse(new_text))
    moved = [n for n in top.children if isinstance(n, Section) and n.line > 30]
    made = [n for n in moved if not _unread(n)]
    assert len(made) == 1, "only the finding that holds claim-50 was read"
    assert spliced._id_nodes is None, "no block list was made"


def test_a_proof_after_an_outside_edit_that_moved_lines_reads_only_its_target(
    tmp_path: Path,
) -> None:
    """The app's path: a document opened whole, changed outside (a line added near the
    top: every later block moves), then a guarded dry run (the proof) of an attribute edit.
    The structure guard compares outlines: the splice must have carried one from the opened
    version, or listing the moved version's blocks would make every moved block (at 20,000
    sections, 0.4 s of the first proof after such an edit)."""
    path = tmp_path / "doc.noma"
    text = generate(60, seed=9)
    path.write_text(text, encoding="utf-8")
    cache = DocumentCache()
    cache.load(path)  # opened: a whole parse, nothing guarded yet
    path.write_text(_grow_first_risk(text), encoding="utf-8")
    _source, state = cache.load(path)  # the outside edit, spliced from the opened version
    top = state.doc.children[-1]
    moved = [n for n in top.children if isinstance(n, Section) and n.line > 30]
    assert moved and all(_unread(n) for n in moved)
    op = {"op": "update_attribute", "id": "claim-50", "key": "confidence", "value": 0.9}
    proof = build_proof(path, PatchRequest(ops=[op]), cache=cache)
    assert proof.ok, proof.outcome.error
    made = [n for n in moved if not _unread(n)]
    assert len(made) == 1, f"{len(made)} moved sections were read; only claim-50's should be"
    # What the guard compared is what a whole parse gives.
    assert outline_entries(state.doc) == outline(parse(path.read_text("utf-8")))[0]


def test_a_changed_reference_in_the_run_recomputes_the_whole_document_rules() -> None:
    text = generate(20, seed=1)
    doc = parse(text)
    validate(doc, today=TODAY)
    new_text = text.replace('for="claim-3"', 'for="claim-missing"', 1)
    assert new_text != text
    spliced = try_reparse(doc, text, new_text)
    assert spliced is not None
    assert not has_recipes(spliced)[1], "the run's facts changed"
    found = _diags(validate(spliced, today=TODAY))
    assert found == _diags(validate(parse(new_text), today=TODAY))
    assert any(d[1] == "broken-reference" for d in found)


@pytest.mark.parametrize("which", SEEDS)
def test_versions_read_late_equal_a_full_parse(which: int) -> None:
    """Edits in sequence with nothing read between them (validation only), then every
    version read, newest first: lazy copies of lazy copies must all resolve right."""

    @given(st.data())
    def prop(data: st.DataObject) -> None:
        TRIED["lazy"] = TRIED.get("lazy", 0) + 1
        text = data.draw(start_text())
        doc = parse(text)
        validate(doc, today=TODAY)
        versions: list[tuple[Document, str, list[Any]]] = []
        for _ in range(data.draw(st.integers(1, 6))):
            if data.draw(st.booleans()):
                op = data.draw(op_for(_ids(text.encode("utf-8", "surrogateescape"))))
                # The op finds its target on the unread version (`ids.find_block`) and
                # must do exactly what it does on a fresh parse, or fail the same way.
                try:
                    new_text = apply_one(text, op, doc)
                except PatchError as exc:
                    with pytest.raises(PatchError) as again:
                        apply_one(text, op, parse(text))
                    assert (again.value.code, again.value.message) == (exc.code, exc.message)
                    continue
                assert new_text == apply_one(text, op, parse(text))
            elif data.draw(st.booleans()):
                new_text = data.draw(line_edit(text))
            else:
                new_text = data.draw(heading_edit(text))
            doc = reparse(doc, text, new_text)
            if doc._id_nodes is None:
                TRIED["lazy-shifted"] = TRIED.get("lazy-shifted", 0) + 1
            versions.append((doc, new_text, _diags(validate(doc, today=TODAY))))
            text = new_text
        for version, version_text, found in reversed(versions):
            fresh = parse(version_text)
            assert found == _diags(validate(fresh, today=TODAY))
            assert snapshot(version) == snapshot(fresh)

    run("lazy", prop, which)


# Run in a fresh process: the hook's state before and after the first line-moving splice,
# whether that splice left moved copies unread, and whether reading them all gives a fresh
# parse's tree.
HOOK_LIFE = """
import json, sys
from core.noma import nodes as N
from core.noma.incremental import try_reparse
from core.noma.parser import parse
from core.noma.validate import validate

def hooked():
    return [k.__name__ for k in (N.Section, N.Directive, N.ListNode) if "__getattr__" in vars(k)]

def shape(doc):
    return [(type(n).__name__, n.line, n.end_line, n.id) for n, _ in doc.walk()]

text, new_text = json.load(sys.stdin)
old = parse(text)
validate(old)
before = hooked()
spliced = try_reparse(old, text, new_text)
after = hooked()
moved = any(N.unread(n) for n in spliced.children[-1].children)
print(json.dumps([before, after, moved, shape(spliced) == shape(parse(new_text))]))
"""


def test_the_unset_children_hook_comes_with_the_first_moved_copy() -> None:
    """A process that never splices keeps the classes without ``__getattr__`` (so CPython
    specialises their attribute reads); the first moved copy installs it, and the copy's
    children are then made on first read, equal to a fresh parse's. In a fresh process:
    this one has spliced long before."""
    import subprocess
    import sys

    from tests.conftest import REPO

    text = generate(40)
    done = subprocess.run(
        [sys.executable, "-c", HOOK_LIFE],
        cwd=REPO,
        input=json.dumps([text, _grow_first_risk(text)]),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    before, after, moved, same = json.loads(done.stdout)
    assert before == []
    assert after == ["Section", "Directive", "ListNode"]
    assert moved and same
