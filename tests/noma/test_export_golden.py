"""Golden tests: each export format of each shipped demo document, byte for byte.

The goldens under ``tests/noma/golden/export`` were reviewed by hand. After an intended
change to a renderer, regenerate them with ``NOMA_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.noma.export import FORMATS, SUFFIXES, export
from core.noma.files import read_document
from core.noma.validate import validate
from noma_tui.demo import DEMO_SOURCE

GOLDEN = Path(__file__).parent / "golden" / "export"
DEMO_DOCS = sorted(p.name for p in DEMO_SOURCE.glob("*.noma"))
CASES = [(doc, fmt) for doc in DEMO_DOCS for fmt in FORMATS]


def _render(name: str, fmt: str) -> str:
    path = DEMO_SOURCE / name
    _source, doc = read_document(path)
    diagnostics = validate(doc, base_dir=path.parent) if fmt == "html" else None
    return export(doc, fmt, source_name=name, diagnostics=diagnostics)


def test_the_demo_workspace_has_documents() -> None:
    assert len(DEMO_DOCS) >= 3


@pytest.mark.parametrize(("name", "fmt"), CASES)
def test_golden(name: str, fmt: str) -> None:
    golden = GOLDEN / (name.removesuffix(".noma") + SUFFIXES[fmt])
    text = _render(name, fmt)
    if os.environ.get("NOMA_UPDATE_GOLDEN") == "1":
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"{golden} missing: run with NOMA_UPDATE_GOLDEN=1 and review"
    assert text == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "fmt"), CASES)
def test_exports_are_deterministic(name: str, fmt: str) -> None:
    assert _render(name, fmt) == _render(name, fmt)
