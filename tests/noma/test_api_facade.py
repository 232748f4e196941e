"""`core.noma.api`, the engine's facade: its three lists agree (the names it exports, the
table that says where each lives and why, the imports type checkers read), every name is
the very object its module holds, and importing it loads nothing behind it.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import core.noma.api as api
from tests.facade_testlib import type_checking_names

REPO = Path(__file__).resolve().parents[2]


def test_the_exports_the_table_and_the_typed_imports_name_the_same_things() -> None:
    assert len(api.__all__) == len(set(api.__all__))
    assert (
        set(api.__all__)
        == set(api._NAMES)
        == type_checking_names(REPO / "core" / "noma" / "api.py")
    )
    assert all(why.strip() for _, why in api._NAMES.values())  # each name says why


def test_every_name_is_the_object_its_module_holds() -> None:
    for name, (home, _) in api._NAMES.items():
        module = importlib.import_module(home, "core.noma")
        expected = module if name == "patch_models" else getattr(module, name)
        assert getattr(api, name) is expected, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="not_a_name"):
        api.not_a_name  # noqa: B018


def test_importing_the_facade_loads_nothing_behind_it() -> None:
    probe = (
        "import sys, core.noma, core.noma.api\n"
        "from core.noma.api import Document, visible\n"
        "print(sorted(m for m in ('core.noma.export', 'core.noma.revert', "
        "'core.noma.patch.pipeline', 'core.noma.proof') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
