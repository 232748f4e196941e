"""The op catalog (`core.noma.patch.ops_catalog`): one record per op, the only place the
surfaces learn an op's facts.

An op added to the models without a record (or a record without a model) fails here; so does
a consumer that keeps its own list of op names instead of reading the records: each test
below changes one record under a consumer and sees the consumer's decision follow it.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any, get_args

import pytest

from core.noma.nodes import Directive, Node, Section
from core.noma.parser import parse
from core.noma.patch import applicable, capabilities, guard, registry
from core.noma.patch.catalog import check_op
from core.noma.patch.models import MODELS, PatchOp
from core.noma.patch.ops_catalog import (
    ALL_OPS,
    CATALOG,
    CORE_OPS,
    TARGET_FIELD,
    Capability,
    Fits,
    Inverse,
    Outline,
)
from core.noma.revert import UNSUPPORTED, RevertError, inverse, sha256_text

PATCH = Path(__file__).resolve().parents[2] / "core/noma/patch"


def _changed(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str, **facts: Any) -> None:
    """``module`` sees ``name``'s record with ``facts`` changed (the rest unchanged)."""
    table = dict(CATALOG)
    table[name] = dataclasses.replace(CATALOG[name], **facts)
    monkeypatch.setattr(module, "CATALOG", MappingProxyType(table))


# -- one record per model, one model per record ------------------------------------------


def test_every_model_has_a_record_and_every_record_a_model() -> None:
    assert list(CATALOG) == list(MODELS)  # same ops, same (wire schema) order
    assert tuple(MODELS) == ALL_OPS
    union = {get_args(model.model_fields["op"].annotation)[0]: model for model in get_args(
        get_args(PatchOp)[0])}  # fmt: skip
    assert union == {name: record.model for name, record in CATALOG.items()}
    for name, record in CATALOG.items():
        assert record.name == name
        assert get_args(record.model.model_fields["op"].annotation) == (name,)
        wire = {f.alias or k: f for k, f in record.model.model_fields.items()}
        assert wire[record.target].is_required(), name  # the target is a required field
    assert len(CATALOG) == 25
    assert CORE_OPS == ("replace_block", "add_block", "delete_block", "update_attribute",
                        "rename_id")  # fmt: skip


def test_every_record_has_an_implementation_in_its_family() -> None:
    assert list(registry.OPS) == list(ALL_OPS)
    for name, record in CATALOG.items():
        module = importlib.import_module(f"core.noma.patch.{record.family}")
        assert registry.OPS[name] is getattr(module, name)
    with pytest.raises(KeyError):
        registry.OPS["no_such_op"]


def test_the_catalog_decides_which_op_names_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    op = {"op": "delete_block", "id": "a"}
    assert check_op(op) == "delete_block"
    table = {k: v for k, v in CATALOG.items() if k != "delete_block"}
    monkeypatch.setattr("core.noma.patch.catalog.CATALOG", table)
    with pytest.raises(Exception, match=r"not in the v1\.0 op catalog"):
        check_op(op)


def test_no_consumer_keeps_its_own_list_of_op_names() -> None:
    """The duplicated tables (two ``IN_PLACE``s, the review ops five times) stay gone: no
    module of the patch package, nor revert, spells two op names in one collection."""
    names = set(ALL_OPS)
    files = [*PATCH.glob("*.py"), PATCH.parent / "revert.py"]
    for path in files:
        if path.name in ("ops_catalog.py", "models.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Set | ast.Tuple | ast.List | ast.Dict):
                items = node.keys if isinstance(node, ast.Dict) else node.elts
                spelled = [
                    n.value for n in items if isinstance(n, ast.Constant) and n.value in names
                ]
                assert len(spelled) < 2, (path.name, node.lineno, spelled)


# -- the structure guard reads `Outline` ---------------------------------------------------

BEFORE = '# Top {#top}\n\n::note{id="a"}\nBody.\n::\n'
ONE_MORE = BEFORE + '\n::note{id="n"}\nNew.\n::\n'


def _guard_allows(name: str) -> bool:
    op = {"op": name, "id": "a", "target": "a", "parent": "a", "from": "a", "to": "b",
          "content": '::note{id="n"}\nNew.\n::'}  # fmt: skip
    return guard.check_structure(op, parse(BEFORE), parse(ONE_MORE)) is None


def test_guard_decisions_follow_each_record() -> None:
    """One block more after the op: only an op whose content may add exactly that block
    (add_block; replace_body of a one-block target) passes, for all 25 ops."""
    allowed = {name for name in ALL_OPS if _guard_allows(name)}
    assert allowed == {
        name
        for name, record in CATALOG.items()
        if record.outline in (Outline.ADDS, Outline.REPLACES_BODY)
    }
    assert allowed == {"add_block", "replace_body"}


def test_guard_reads_the_record_not_its_own_table(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not _guard_allows("update_attribute")
    _changed(monkeypatch, guard, "update_attribute", outline=Outline.ADDS)
    assert _guard_allows("update_attribute")
    _changed(monkeypatch, guard, "add_block", outline=Outline.IN_PLACE)
    assert not _guard_allows("add_block")


# -- revert reads `Inverse` ----------------------------------------------------------------

REVERT_DOC = '# Top {#top}\n\n::note{id="a" k="1"}\nBody.\n::\n'


def _record(op: dict[str, Any]) -> tuple[dict[str, Any], str]:
    from core.noma.patch.engine import apply_ops_to_text

    post = apply_ops_to_text(REVERT_DOC, [op])
    record = {"op_id": "x", "op": op, "patch_result": "applied",
              "pre_sha256": sha256_text(REVERT_DOC), "post_sha256": sha256_text(post)}  # fmt: skip
    return record, post


def test_revert_inverse_follows_each_record(monkeypatch: pytest.MonkeyPatch) -> None:
    op = {"op": "update_attribute", "id": "a", "key": "k", "value": "2"}
    record, post = _record(op)
    assert inverse(record, REVERT_DOC, post).ops[0]["op"] == "replace_block"
    _changed(monkeypatch, importlib.import_module("core.noma.revert"), "update_attribute",
             inverse=Inverse.RETITLE)  # fmt: skip
    with pytest.raises(RevertError) as refused:
        inverse(record, REVERT_DOC, post)  # a retitle needs a heading: 'a' is a directive
    assert refused.value.code == UNSUPPORTED


def test_every_op_has_the_inverse_its_record_names() -> None:
    heading = {name for name, r in CATALOG.items() if r.inverse is Inverse.RETITLE}
    adding = {name for name, r in CATALOG.items() if r.inverse is Inverse.DELETE_ADDED}
    assert heading == {"update_heading"}
    assert adding == {"add_block", "add_comment", "add_footnote", "add_endnote",
                      "add_change_request"}  # fmt: skip
    assert {r.inverse for r in CATALOG.values()} == set(Inverse)


# -- applicable_ops reads `Fits` -------------------------------------------------------------

FITS_DOC = """# Top {#top}

::note{id="bare"}
Body.
::

::note{id="attrs" k="1"}
Body.
::

::comment{id="c1" target="bare"}
Why?
::

::comment{id="c2" target="bare" status="resolved"}
Done.
::

::table{id="t1"}
| a |
|---|
| 1 |
::

::dataset{id="d1" format="csv"}
```csv
a
1
```
::
"""
REVIEW = ["add_comment", "add_footnote", "add_endnote", "add_change_request"]
DIRECTIVE = ["replace_block", "add_block", "delete_block", "update_attribute", "rename_id",
             "replace_body", "move_block"]  # fmt: skip


def _node(doc: Any, ident: str) -> Node:
    return next(n for n, _ in doc.walk() if n.id == ident)


@pytest.mark.parametrize(
    ("ident", "extra"),
    [
        ("top", ["update_heading", "add_block"]),
        ("bare", DIRECTIVE),
        ("attrs", [*DIRECTIVE, "remove_attribute"]),
        ("c1", [*DIRECTIVE, "remove_attribute", "resolve_comment"]),
        ("c2", [*DIRECTIVE, "remove_attribute"]),
        ("t1", [*DIRECTIVE, *(n for n in ALL_OPS if "_table_" in n)]),
        ("d1", [*DIRECTIVE, "remove_attribute", *(n for n in ALL_OPS if "_dataset_" in n)]),
    ],
)
def test_applicable_ops_are_the_records_that_fit(ident: str, extra: list[str]) -> None:
    doc = parse(FITS_DOC)
    node = _node(doc, ident)
    want = set(REVIEW) | set(extra)
    assert applicable.applicable_ops(doc, node) == [n for n in ALL_OPS if n in want]
    assert isinstance(node, Section | Directive)


def test_applicable_ops_read_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = parse(FITS_DOC)
    node = _node(doc, "bare")
    assert "update_heading" not in applicable.applicable_ops(doc, node)
    _changed(monkeypatch, applicable, "update_heading", fits=Fits.DIRECTIVE)
    assert "update_heading" in applicable.applicable_ops(doc, node)
    assert {r.fits for r in CATALOG.values()} == set(Fits)


# -- capabilities read `Capability` and the catalog's names ---------------------------------


def _advice(tmp_path: Path, op: dict[str, Any]) -> list[str]:
    doc = tmp_path / "d.noma"
    doc.write_text(REVERT_DOC, encoding="utf-8")
    (tmp_path / "d.noma.capabilities.yml").write_text(
        "nomaAgent:\n  version: 1\n  blocks:\n    note:\n      ops: [delete_block]\n",
        encoding="utf-8",
    )
    return capabilities.op_advisories(doc, [op], parse(REVERT_DOC))


def test_capability_rule_follows_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    op = {"op": "delete_block", "id": "a"}
    assert _advice(tmp_path, op) == []  # granted, no extra rule
    _changed(monkeypatch, capabilities, "delete_block", capability=Capability.RENAME)
    assert _advice(tmp_path, op) == [
        "advisory (not enforced in v1.0): rename_id needs nomaAgent.ids.rename: true"
    ]
    rules = {name: r.capability for name, r in CATALOG.items() if r.capability is not
             Capability.TARGET}  # fmt: skip
    assert rules == {"add_block": Capability.NEW_BLOCK, "rename_id": Capability.RENAME,
                     "update_attribute": Capability.ATTRIBUTE}  # fmt: skip


def test_descriptor_ops_are_checked_against_the_catalog() -> None:
    data = {"nomaAgent": {"version": 1, "blocks": {"note": {"ops": [*ALL_OPS, "nope"]}}}}
    assert capabilities.validate_descriptor(data) == [
        "nomaAgent.blocks.note.ops: 'nope' is not a v1.0 op"
    ]


def test_target_fields_are_the_records() -> None:
    assert dict(TARGET_FIELD) == {name: r.target for name, r in CATALOG.items()}
    assert {n for n, f in TARGET_FIELD.items() if f == "target"} == set(REVIEW)
    assert TARGET_FIELD["rename_id"] == "from" and TARGET_FIELD["add_block"] == "parent"
