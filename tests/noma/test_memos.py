"""Each typed cache kept on a document (`core.noma.memo`) is owned by one module.

The owner makes its key at import and is the only module that names it; every other
module asks the owner. Only `core.noma.memo` touches the document's private table.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

import pytest

from core.noma.memo import MEMOS, Memo
from core.noma.parser import parse

ROOT = Path(__file__).resolve().parents[2]
# The modules that own the caches (importing them makes their keys).
OWNERS = (
    "core.noma.ids",
    "core.noma.scan_facts",
    "core.noma.validate.scan",
    "core.noma.validate.kept_findings",
    "core.noma.validate.incremental_rules",
    "core.noma.patch.guard",
)


@cache
def _sources() -> dict[str, ast.Module]:
    """Every core module's syntax tree (read once: the tests only look)."""
    out = {}
    for path in sorted((ROOT / "core").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        out[".".join(rel.parts).removesuffix(".__init__")] = ast.parse(path.read_text())
    return out


def _module_level_memos(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Memo":
                targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_every_memo_is_named_by_its_owner_module_only() -> None:
    for owner in OWNERS:
        importlib.import_module(owner)
    assert {m.owner for m in MEMOS.values()} >= set(OWNERS)
    sources = _sources()
    made: dict[str, str] = {}
    for module, tree in sources.items():
        for name in _module_level_memos(tree):
            assert name.startswith("_"), f"{module}.{name}: a memo key stays private"
            made[name] = module
    assert len(made) == len(MEMOS), (sorted(made), sorted(MEMOS))
    used: dict[str, set[str]] = {}  # every module's names and attribute names, walked once
    for module, tree in sources.items():
        nodes = list(ast.walk(tree))
        used[module] = {n.id for n in nodes if isinstance(n, ast.Name)}
        used[module] |= {n.attr for n in nodes if isinstance(n, ast.Attribute)}
    for name, owner in made.items():
        for module in sources:
            if module != owner:
                assert name not in used[module], f"{module} reads {owner}'s memo {name}"


def test_only_the_memo_module_touches_the_documents_table() -> None:
    for module, tree in _sources().items():
        touches = any(isinstance(n, ast.Attribute) and n.attr == "_memos" for n in ast.walk(tree))
        assert not touches or module in ("core.noma.memo", "core.noma.nodes"), module


def test_a_memo_name_has_one_owner_and_values_stay_on_their_document() -> None:
    with pytest.raises(ValueError, match="already owned"):
        Memo[int]("validator scan")
    key: Memo[int] = Memo("test: a number")
    try:
        one, two = parse("# A\n"), parse("# A\n")
        assert key.get(one) is None
        assert key.put(one, 3) == 3
        assert key.get(one) == 3 and key.get(two) is None
        key.clear(one)
        assert key.get(one) is None
    finally:
        del MEMOS["test: a number"]
