"""core.noma.revert: the inverse of a recorded edit, computed from the record and the
pre-state. For every supported op, applying the op and then its inverse gives back the
original bytes exactly; a block that changed since is refused with sha_mismatch; a record
whose pre-state does not reproduce it is refused."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from core.noma.patch.engine import apply_ops_to_text
from core.noma.patch.errors import SHA_MISMATCH
from core.noma.revert import (
    NOT_APPLIED,
    PRE_STATE_UNKNOWN,
    RevertError,
    inverse,
    sha256_text,
)

DOC = Path(__file__).resolve().parents[2] / "noma_tui/demo_workspace/research-memo.noma"


def record_for(pre: str, op: dict[str, Any]) -> tuple[dict[str, Any], str]:
    post = apply_ops_to_text(pre, [op])
    record = {
        "op_id": str(uuid.uuid4()),
        "op": op,
        "patch_result": "applied",
        "pre_sha256": sha256_text(pre),
        "post_sha256": sha256_text(post),
    }
    return record, post


OPS: list[dict[str, Any]] = [
    {"op": "replace_body", "id": "note-method", "content": "New body.\nTwo lines."},
    {"op": "replace_block", "id": "risk-stale-prices",
     "content": '::risk{id="risk-stale-prices" severity="low" owner="ops"}\nShorter.\n::'},
    {"op": "replace_block", "id": "risk-stale-prices",
     "content": '::risk{id="risk-renamed"}\nNew id in the content.\n::'},
    {"op": "update_attribute", "id": "small-tenant-noise", "key": "owner",
     "value": "pricing-team"},
    {"op": "update_attribute", "id": "small-tenant-noise", "key": "confidence", "value": 0.7},
    {"op": "remove_attribute", "id": "ev-loadtest-march", "key": "source"},
    {"op": "update_heading", "id": "risks", "title": "Risks and mitigations"},
    {"op": "add_block", "parent": "risks",
     "content": '::risk{id="risk-new" severity="low"}\nA new risk.\n::'},
    {"op": "add_block", "parent": "claims", "position": 0,
     "content": '::note{id="note-first"}\nFirst.\n::'},
    {"op": "add_comment", "id": "cm-new", "target": "warm-cache-p95", "content": "Why?",
     "author": "ana"},
    {"op": "delete_block", "id": "cev-cold-start"},
    {"op": "delete_block", "id": "warm-cache-p95"},
    {"op": "rename_id", "from": "warm-cache-p95", "to": "warm-cache-p95-large"},
    {"op": "move_block", "id": "note-method", "parent": "risks"},
    {"op": "move_block", "id": "small-tenant-noise", "parent": "claims", "position": 0},
    {"op": "resolve_comment", "id": "cm-sample-size", "resolved_by": "bo"},
]  # fmt: skip


@pytest.mark.parametrize("op", OPS, ids=lambda op: f"{op['op']}-{op.get('id', op.get('from'))}")
def test_op_then_inverse_gives_back_the_bytes(op: dict[str, Any]) -> None:
    pre = DOC.read_text("utf-8")
    try:
        record, post = record_for(pre, op)
    except Exception as exc:  # an op the demo cannot take is a bad test, not a pass
        pytest.fail(f"the op itself failed: {exc}")
    revert = inverse(record, pre, post)
    assert revert.op_id == record["op_id"]
    assert all(len(o["baseHash"]) == 64 for o in revert.ops)
    restored = apply_ops_to_text(post, revert.ops)
    if op["op"] == "update_heading":
        # update_heading pins the section's id as an attribute so the id survives the new
        # title; reverting restores the title, and the (equal) pinned id stays.
        assert restored == pre.replace("## Risks\n", '## Risks {id="risks"}\n')
    else:
        assert restored == pre


def test_a_block_changed_since_is_refused_with_sha_mismatch() -> None:
    pre = DOC.read_text("utf-8")
    record, post = record_for(pre, OPS[0])
    later = apply_ops_to_text(post, [{"op": "replace_body", "id": "note-method", "content": "x"}])
    with pytest.raises(RevertError) as caught:
        inverse(record, pre, later)
    assert caught.value.code == SHA_MISMATCH
    assert "changed after this edit" in caught.value.message


def test_an_unrelated_later_edit_does_not_block_the_revert() -> None:
    pre = DOC.read_text("utf-8")
    record, post = record_for(pre, OPS[0])
    other = {"op": "update_attribute", "id": "small-tenant-noise", "key": "x", "value": 1}
    later = apply_ops_to_text(post, [other])
    revert = inverse(record, pre, later)
    assert apply_ops_to_text(later, revert.ops) == apply_ops_to_text(pre, [other])


def test_an_added_block_that_was_deleted_since_is_refused() -> None:
    pre = DOC.read_text("utf-8")
    record, post = record_for(pre, OPS[7])
    later = apply_ops_to_text(post, [{"op": "delete_block", "id": "risk-new"}])
    with pytest.raises(RevertError) as caught:
        inverse(record, pre, later)
    assert caught.value.code == SHA_MISMATCH


def test_wrong_pre_state_and_rejected_records_are_refused() -> None:
    pre = DOC.read_text("utf-8")
    record, post = record_for(pre, OPS[0])
    with pytest.raises(RevertError) as caught:
        inverse(record, post, post)  # not the pre-state
    assert caught.value.code == PRE_STATE_UNKNOWN
    with pytest.raises(RevertError) as caught:
        inverse({**record, "patch_result": "rejected"}, pre, post)
    assert caught.value.code == NOT_APPLIED
    with pytest.raises(RevertError) as caught:
        inverse({**record, "post_sha256": "0" * 64}, pre, post)  # does not reproduce
    assert caught.value.code == PRE_STATE_UNKNOWN
