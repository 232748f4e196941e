"""Acceptance: a strictly typed client (tests/mcp/typed_client.py) drives all four tools
over stdio on every official patch and patch-error fixture, one op per ``patch_block``,
with no validation error and byte-exact results."""

from __future__ import annotations

import json

from typed_client import PatchFailed, PatchOk, SystemErrorBody
from typed_run import TypedRun


def test_the_models_are_strict() -> None:
    """The client refuses what a typed SDK refuses: a fractional or string integer."""
    import pytest
    from pydantic import ValidationError
    from typed_client import Pos, TranscriptLine

    with pytest.raises(ValidationError):
        Pos.model_validate_json('{"line": 1.5, "column": 1}')
    with pytest.raises(ValidationError):
        Pos.model_validate_json('{"line": "1", "column": 1}')
    with pytest.raises(ValidationError):
        TranscriptLine.model_validate_json('{"elapsed_ms": 4.923}')


def test_every_fixture_runs_through_the_typed_client(typed_run: TypedRun) -> None:
    names = [run.name for run in typed_run.fixtures]
    assert len([n for n in names if n.startswith("patch/")]) == 26
    assert len([n for n in names if n.startswith("patch-error/")]) == 6
    # Every body the server sent parsed into the strict models (a failure would have raised
    # inside the run); here every result is one of the two typed patch shapes.
    for run in typed_run.fixtures:
        assert run.results and all(isinstance(r, PatchOk | PatchFailed) for r in run.results)


def test_patch_fixtures_are_byte_exact(typed_run: TypedRun) -> None:
    for run in typed_run.fixtures:
        if run.expected_post is None:
            continue
        assert all(isinstance(r, PatchOk) for r in run.results), run.name
        assert run.doc.read_bytes() == run.expected_post, run.name
        for result in run.results:
            assert isinstance(result, PatchOk)
            entry = result.transcript_entry
            assert entry.patch_result in ("applied", "noop")
            assert isinstance(entry.elapsed_ms, int)
            assert entry.actor.name == "typed-sdk"


def test_patch_error_fixtures_give_their_code_and_write_nothing(typed_run: TypedRun) -> None:
    for run in typed_run.fixtures:
        if run.expected_code is None:
            continue
        last = run.results[-1]
        assert isinstance(last, PatchFailed), run.name
        assert last.code == run.expected_code, run.name
        assert run.doc.read_bytes() == run.input_bytes, run.name


def test_book_manifest_is_an_error_with_the_reference_json_body(typed_run: TypedRun) -> None:
    body = SystemErrorBody.model_validate_json(typed_run.extra["book"])
    assert body.code == "unsupported_op" and "book manifest" in body.error


def test_outside_root_error_says_how_to_widen_the_root(typed_run: TypedRun) -> None:
    text = typed_run.extra["outside"]
    assert "outside the server's root" in text and "--root" in text
    assert not text.startswith("{")  # a plain-text system error
    json.dumps(text)
