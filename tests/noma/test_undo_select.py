"""Which record undo reverts and redo re-applies: a pure function of the transcript's
records and their kinds (read as data, never from the reason text)."""

from __future__ import annotations

from typing import Any

from core.noma.undo_select import own_applied, record_kinds, redo_target, undo_target

ME = {"kind": "human", "name": "ana"}


def rec(
    op_id: str, parent: str | None = None, *, who: dict[str, str] = ME, **extra: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "op_id": op_id,
        "patch_result": "applied",
        "pre_sha256": f"pre-{op_id}",
        "post_sha256": f"post-{op_id}",
        "actor": dict(who),
        "reason": "revert everything",  # never read: a writer may type anything here
    }
    if parent is not None:
        record["parent_op_id"] = parent
    record.update(extra)
    return record


def test_only_the_actors_applied_changing_records_count() -> None:
    mine = rec("a")
    records = [
        mine,
        rec("b", who={"kind": "agent", "name": "ana"}),
        rec("c", patch_result="rejected"),
        rec("d", pre_sha256="same", post_sha256="same"),
        None,
        {"op_id": "e", "patch_result": "applied", "actor": "ana"},
    ]
    assert own_applied(records, ME) == [mine]


def test_kinds_follow_the_causation_chain_when_nobody_said() -> None:
    records = [rec("a"), rec("b", "a"), rec("c", "b"), rec("d")]
    assert record_kinds(records, {}) == {"a": "edit", "b": "revert", "c": "redo", "d": "edit"}


def test_the_writers_own_word_wins_and_an_unknown_word_is_an_edit() -> None:
    records = [rec("a"), rec("b", "a"), rec("c")]
    kinds = record_kinds(records, {"b": "edit", "c": "bogus"})
    assert kinds == {"a": "edit", "b": "edit", "c": "edit"}


def test_undo_takes_the_latest_edit_not_yet_reverted() -> None:
    records = [rec("a"), rec("b"), rec("r", "b")]
    kinds = record_kinds(records, {})
    assert undo_target(records, kinds) == records[0]
    assert undo_target([], {}) is None


def test_redo_takes_the_latest_revert_not_redone_until_a_new_edit() -> None:
    records = [rec("a"), rec("r", "a")]
    assert redo_target(records, record_kinds(records, {})) == records[1]
    redone = [*records, rec("x", "r")]
    assert redo_target(redone, record_kinds(redone, {})) is None
    newer = [*records, rec("n")]
    assert redo_target(newer, record_kinds(newer, {})) is None


def test_a_redo_is_undone_like_an_edit() -> None:
    records = [rec("a"), rec("r", "a"), rec("x", "r")]
    kinds = record_kinds(records, {})
    assert undo_target(records, kinds) == records[2]
