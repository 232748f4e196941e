"""`core.flow`'s names are imported on first use: its three lists agree (the exports, the
table of where each lives, the imports type checkers read), each name is the object its
module holds, and opening a run store loads none of the flow models (a store opener, as
in the first-open race test, started in ~0.1 s instead of ~0.5 s of CPU)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import core.flow as flow
from tests.facade_testlib import type_checking_names

REPO = Path(__file__).resolve().parents[2]


def test_the_exports_the_table_and_the_typed_imports_name_the_same_things() -> None:
    assert len(flow.__all__) == len(set(flow.__all__))
    assert (
        set(flow.__all__)
        == set(flow._HOMES)
        == type_checking_names(REPO / "core" / "flow" / "__init__.py")
    )


def test_every_name_is_the_object_its_module_holds() -> None:
    for name, home in flow._HOMES.items():
        assert getattr(flow, name) is getattr(importlib.import_module(home, "core.flow"), name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="not_a_name"):
        flow.not_a_name  # noqa: B018


def test_opening_a_run_store_loads_no_flow_models(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from core.flow.store import RunStore\n"
        "RunStore.open(Path(sys.argv[1])).close()\n"
        "print(sorted(m for m in ('core.flow.models', 'core.flow.context', 'pydantic') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"
