"""The MCP tools read through the warm cache (issue 14): an unchanged file is read and
hashed, never parsed again; a changed one is spliced from the version seen last, and the
answer always equals what a fresh parse and validation of the file on disk gives."""

from __future__ import annotations

from pathlib import Path

import pytest

import core.noma.patch.pipeline as pipeline
from bench.generate import generate
from core.mcp.tools import ToolContext, list_ids, patch_block, read_doc, validate_doc
from core.noma.files import read_document
from core.noma.ids import index
from core.noma.validate import validate


def _fresh_validation(path: Path) -> list[dict[str, object]]:
    _source, doc = read_document(path)
    return [d.to_json() for d in [*validate(doc, base_dir=path.parent), *doc.notes]]


@pytest.fixture
def doc_path(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(generate(25, seed=4))
    return path


def test_an_unchanged_file_is_not_parsed_again(
    doc_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = ToolContext(doc_path.parent)
    first = validate_doc(ctx, str(doc_path))
    calls: list[str] = []
    real = pipeline.analyse

    def spy(*args: object, **kwargs: object) -> pipeline.DocumentState:
        calls.append("analyse")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "analyse", spy)
    assert validate_doc(ctx, str(doc_path)) == first
    list_ids(ctx, str(doc_path))
    read_doc(ctx, str(doc_path))
    assert calls == []


def test_an_outside_edit_is_spliced_and_answers_like_a_fresh_parse(doc_path: Path) -> None:
    ctx = ToolContext(doc_path.parent)
    validate_doc(ctx, str(doc_path))
    old_state = ctx.cache.latest(doc_path)
    assert old_state is not None
    text = doc_path.read_text()
    # Another editor breaks a wikilink and adds a heading in the middle of the file.
    text = text.replace("See [[claim-2]]", "See [[nowhere]]", 1)
    marker = "## Finding 12:"
    text = text.replace(marker, "## Inserted\n\nNew words.\n\n" + marker, 1)
    doc_path.write_text(text)
    answer = validate_doc(ctx, str(doc_path))
    assert answer["diagnostics"] == _fresh_validation(doc_path)
    assert any(d["code"] == "broken-reference" for d in answer["diagnostics"])
    new_state = ctx.cache.latest(doc_path)
    assert new_state is not None and new_state.doc is not old_state.doc
    _source, fresh = read_document(doc_path)
    assert list_ids(ctx, str(doc_path))["ids"] == index(fresh).canonical
    # Spliced, not parsed whole: the unchanged front of the tree is the same objects.
    first = "finding-0-pricing-under-load"
    assert index(new_state.doc).first[first] is index(old_state.doc).first[first]


def test_patches_through_the_tools_keep_the_cache_equal_to_the_file(doc_path: Path) -> None:
    ctx = ToolContext(doc_path.parent)
    for k in range(5):
        result = patch_block(
            ctx,
            str(doc_path),
            {"op": "update_attribute", "id": f"claim-{k * 4}", "key": "seq", "value": k},
        )
        assert result["ok"], result
        assert validate_doc(ctx, str(doc_path))["diagnostics"] == _fresh_validation(doc_path)
    blocks = read_doc(ctx, str(doc_path))["blocks"]
    assert any(b.get("attrs", {}).get("seq") == 4 for b in blocks)


def test_a_dataset_source_file_is_checked_again_even_when_the_document_is_unchanged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "d.noma"
    (tmp_path / "rows.csv").write_text("a,b\n1,2\n")
    path.write_text('# D\n\n::dataset{id="ds" src="rows.csv" format="csv"}\n::\n')
    ctx = ToolContext(tmp_path)
    before = validate_doc(ctx, str(path))["diagnostics"]
    (tmp_path / "rows.csv").unlink()
    after = validate_doc(ctx, str(path))["diagnostics"]
    assert after == _fresh_validation(path)
    assert before != after
