"""Cold start of one-shot ``noma`` commands: a command imports what it runs, nothing more.

Each case runs in a fresh interpreter (the only honest way to see what a cold start
imports) and asserts on ``sys.modules``, never on time: timings live in the benchmarks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DOC = """# Memo

::claim{id="c1" confidence=0.5}
Text.
::
"""

PROBE = """
import json, sys
from core.cli import main
code = main(sys.argv[1:])
heavy = sorted(
    name for name in ("pydantic", "core.noma.patch", "core.noma.patch.models",
                      "core.noma.patch.datasets", "core.noma.patch.tables", "yaml")
    if name in sys.modules
)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def _run(tmp_path: Path, *args: str) -> tuple[dict[str, object], str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return report, proc.stdout


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(DOC, encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["check", "parse", "ids"])
def test_read_only_commands_do_not_import_the_patch_engine(
    tmp_path: Path, doc: Path, command: str
) -> None:
    report, out = _run(tmp_path, command, doc.name)
    assert report["code"] == 0
    assert report["heavy"] == []  # no pydantic, no op models, no YAML without frontmatter
    assert out  # the command still did its work


def test_patch_still_runs_the_typed_wire_check(tmp_path: Path, doc: Path) -> None:
    """The lazy imports keep the schema pre-check: a mistyped field is refused."""
    bad = json.dumps({"op": "update_attribute", "id": "c1", "key": "confidence", "value": []})
    report, _out = _run(tmp_path, "patch", doc.name, "--op", bad, "--json")
    assert report["code"] == 1
    assert "pydantic" in report["heavy"]
    assert doc.read_text(encoding="utf-8") == DOC


def test_patch_loads_only_the_op_family_it_applies(tmp_path: Path, doc: Path) -> None:
    op = json.dumps({"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9})
    report, _out = _run(tmp_path, "patch", doc.name, "--op", op, "--inplace")
    assert report["code"] == 0
    assert "confidence=0.9" in doc.read_text(encoding="utf-8")
    assert "core.noma.patch.datasets" not in report["heavy"]
    assert "core.noma.patch.tables" not in report["heavy"]


def test_lazy_op_registry_covers_the_catalog() -> None:
    """Every catalog op has an implementation, found by name in its family module."""
    from core.noma.patch.catalog import ALL_OPS
    from core.noma.patch.registry import OPS

    assert sorted(OPS) == sorted(ALL_OPS)
    assert len(OPS) == len(ALL_OPS)
    for name in ALL_OPS:
        assert callable(OPS[name]) and OPS[name].__name__ == name
    with pytest.raises(KeyError):
        OPS["no_such_op"]
