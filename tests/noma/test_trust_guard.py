"""The structure guard: on a Tier-1 document an op changes only the structure it asked for.
Untouched blocks keep their ids, new blocks appear only inside what the op wrote, and the
result parses without recovery; otherwise ``invalid_content`` and no byte changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.noma.parser import parse
from core.noma.patch import PatchError, apply_ops_to_text
from core.noma.patch.guard import check_structure, outline
from core.noma.patch.pipeline import PatchRequest, patch_file

STEPS = "# Intro\n\n## Step\n\nOne.\n\n## Step\n\nTwo.\n"


def guarded(tmp_path: Path, text: str, *ops: dict[str, Any]) -> tuple[Any, bytes, bytes]:
    path = tmp_path / "d.noma"
    path.write_text(text)
    before = path.read_bytes()
    outcome = patch_file(path, PatchRequest(ops=list(ops)))
    return outcome, before, path.read_bytes()


def ids(text: str) -> list[str | None]:
    return [e[0] for e in outline(parse(text))[0]]


def test_an_edit_that_would_renumber_another_headings_id_is_refused(tmp_path: Path) -> None:
    # Renaming the first "Step" pins its id explicitly; explicit ids leave the suffix pool,
    # so the second heading's id would silently change from step-2 to step.
    assert ids(STEPS) == ["intro", "step", "step-2"]
    outcome, before, after = guarded(
        tmp_path, STEPS, {"op": "update_heading", "id": "step", "title": "Setup"}
    )
    assert outcome.code == "invalid_content"
    assert "step-2" in (outcome.error or "")
    assert after == before


def test_added_content_that_would_shift_later_heading_ids_is_refused() -> None:
    # add_block's own id check refuses content ids already taken (id_conflict); behind it,
    # the guard refuses any result in which an untouched heading's id moved.
    content = '::note{id="n1"}\n# Step\n::'
    op = {"op": "add_block", "parent": "intro", "position": 0, "content": content}
    before = parse(STEPS)
    after = parse(STEPS.replace("## Step\n\nOne.", content + "\n\n## Step\n\nOne.", 1))
    assert ids(STEPS) == ["intro", "step", "step-2"]
    err = check_structure(op, before, after)
    assert err is not None and err.code == "invalid_content"
    assert "beyond its content" in err.message or "would become" in err.message


def test_content_that_adds_its_own_blocks_is_fine(tmp_path: Path) -> None:
    op = {
        "op": "add_block",
        "parent": "intro",
        "content": '::note{id="n1"}\n:::tip{id="t1"}\nx\n:::\n::',
    }
    outcome, _before, after = guarded(tmp_path, STEPS, op)
    assert outcome.ok, outcome.error
    assert {"n1", "t1"} <= set(ids(after.decode()))


def test_rename_id_may_change_a_heading_whose_link_it_retargets(tmp_path: Path) -> None:
    text = '# See [[c1]]\n\n::claim{id="c1"}\nx\n::\n'
    outcome, _before, after = guarded(tmp_path, text, {"op": "rename_id", "from": "c1", "to": "c2"})
    assert outcome.ok, outcome.error
    assert "# See [[c2]]" in after.decode()


@pytest.mark.parametrize(
    "op",
    [
        {"op": "delete_block", "id": "n1"},
        {"op": "move_block", "id": "n1", "parent": "step-2"},
        {"op": "replace_block", "id": "n1", "content": '::note{id="n1"}\nnew\n::'},
        {"op": "replace_body", "id": "n1", "content": ':::tip{id="t9"}\ny\n:::'},
        {"op": "add_comment", "id": "cm", "target": "n1", "content": "why?"},
    ],
    ids=lambda op: op["op"],
)
def test_ordinary_structural_ops_pass_the_guard(tmp_path: Path, op: dict[str, Any]) -> None:
    text = STEPS.replace("One.\n", 'One.\n\n::note{id="n1"}\n:::tip{id="t1"}\nx\n:::\n::\n')
    outcome, _before, _after = guarded(tmp_path, text, op)
    assert outcome.ok, outcome.error


def test_the_guard_catches_a_new_block_an_in_place_op_would_inject() -> None:
    # The net behind the value checks: even if an attribute edit produced extra lines, an
    # in-place op may not add a block.
    before = parse('::claim{id="k1"}\nx\n::\n')
    after = parse('::claim{id="k1" a="x"}\n::evil{id="e"}\n::\nx\n::\n')
    err = check_structure(
        {"op": "update_attribute", "id": "k1", "key": "a", "value": "x"}, before, after
    )
    assert isinstance(err, PatchError) and err.code == "invalid_content"
    assert "evil" in err.message or "recovery" in err.message


def test_the_guard_refuses_a_result_that_needs_recovery() -> None:
    before = parse('::claim{id="k1"}\nx\n::\n')
    after = parse('::claim{id="k1"}\n```\nx\n::\n')
    err = check_structure({"op": "replace_body", "id": "k1", "content": "```\nx"}, before, after)
    assert err is not None and "recovery" in err.message


def test_a_tier_2_document_keeps_todays_behaviour() -> None:
    # Already recovered (an unclosed directive): spans are hints, the guard stands aside.
    text = '::note{id="n"}\ny\n::\n\n::claim{id="k1"}\nx\n'
    assert parse(text).recovered
    out = apply_ops_to_text(text, [{"op": "update_attribute", "id": "n", "key": "a", "value": 1}])
    assert "a=1" in out


def test_a_multi_op_list_is_guarded_op_by_op(tmp_path: Path) -> None:
    ops = [
        {"op": "update_heading", "id": "intro", "title": "Welcome"},
        {"op": "update_heading", "id": "step", "title": "Setup"},
    ]
    outcome, before, after = guarded(tmp_path, STEPS, *ops)
    assert outcome.code == "invalid_content" and after == before
    assert [r["patch_result"] for r in outcome.records] == ["rejected", "rejected"]
