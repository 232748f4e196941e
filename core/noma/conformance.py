"""The ``noma verify`` harness (Annex C): run every fixture of a conformance corpus.

A fixture is any directory holding ``input.noma``; every expected file present is checked
(§C.3). Output is deterministic (§C.4): fixtures sorted by path, one line each, then the
summary line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .ids import index
from .nodes import Document
from .parser import parse
from .render import render_noma, structure

EXPECTED_FILES = (
    "expected.ids.json",
    "expected.diagnostics.json",
    "expected.roundtrip.noma",
    "expected.spans.json",
    "expected.post.noma",
    "expected.error.json",
    "patch.json",
)


@dataclass(slots=True)
class FixtureResult:
    path: str  # as displayed: the corpus argument joined with the fixture's relative path
    status: str  # PASS | FAIL | SKIP
    reason: str = ""

    def line(self) -> str:
        if self.status == "FAIL" and self.reason:
            return f"FAIL  {self.path}  — {self.reason}"
        return f"{self.status}  {self.path}"


def discover(root: Path) -> list[Path]:
    """Every fixture directory: a directory with ``input.noma`` or any expected file."""
    found = set()
    for name in ("input.noma", *EXPECTED_FILES):
        for path in root.rglob(name):
            if path.is_file():
                found.add(path.parent)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def verify_fixture(fixture: Path, shown: str) -> FixtureResult:
    source_path = fixture / "input.noma"
    if not source_path.is_file():
        return FixtureResult(shown, "SKIP")
    try:
        reason = _check(fixture, source_path.read_bytes())
    except Exception as exc:  # a harness must report, never crash
        reason = f"unexpected {type(exc).__name__}: {exc}"
    return FixtureResult(shown, "FAIL" if reason else "PASS", reason or "")


def verify(root: Path, shown_root: str) -> tuple[list[FixtureResult], int]:
    results = []
    for fixture in discover(root):
        rel = fixture.relative_to(root).as_posix()
        shown = f"{shown_root.rstrip('/')}/{rel}" if rel != "." else shown_root
        results.append(verify_fixture(fixture, shown))
    results.sort(key=lambda r: r.path)
    failed = any(r.status != "PASS" for r in results)
    return results, 1 if failed else 0


def summary_line(results: list[FixtureResult]) -> str:
    passed = sum(1 for r in results if r.status == "PASS")
    return f"{len(results)} fixtures, {passed} passed"


def _load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _check(fixture: Path, source: bytes) -> str | None:
    """The first failed expectation as a one-line reason, or None when all hold."""
    doc = parse(source)
    checks = (_check_ids, _check_diagnostics, _check_roundtrip, _check_spans, _check_patch)
    for check in checks:
        reason = check(fixture, doc, source)
        if reason:
            return reason
    return None


def _check_ids(fixture: Path, doc: Document, source: bytes) -> str | None:
    path = fixture / "expected.ids.json"
    if not path.is_file():
        return None
    expected = _load_json(path)
    idx = index(doc)
    got_ids = sorted(idx.canonical)
    want_ids = sorted(expected.get("canonical", []))
    if got_ids != want_ids:
        return f"canonical ids: got {got_ids}, expected {want_ids}"
    got_aliases = {k: sorted(v) for k, v in idx.alias_map().items() if v}
    want_aliases = {k: sorted(v) for k, v in expected.get("aliases", {}).items() if v}
    if got_aliases != want_aliases:
        return f"aliases: got {got_aliases}, expected {want_aliases}"
    return None


def _check_diagnostics(fixture: Path, doc: Document, source: bytes) -> str | None:
    path = fixture / "expected.diagnostics.json"
    if not path.is_file():
        return None
    from .validate import validate

    got = sorted((d.code, d.severity) for d in validate(doc, base_dir=fixture))
    want = sorted((d["code"], d["severity"]) for d in _load_json(path))
    if got != want:
        return f"diagnostics: got {_pairs(got)}, expected {_pairs(want)}"
    return None


def _pairs(pairs: Sequence[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{c}/{s}" for c, s in pairs) + "]"


def _check_roundtrip(fixture: Path, doc: Document, source: bytes) -> str | None:
    path = fixture / "expected.roundtrip.noma"
    if not path.is_file():
        return None
    rendered = render_noma(doc)
    if rendered.encode("utf-8", errors="surrogateescape") != path.read_bytes():
        return "roundtrip bytes differ from expected.roundtrip.noma"
    if structure(parse(rendered)) != structure(doc):
        return "parse(render(parse(x))) is not structurally equal to parse(x)"
    return None


def _check_spans(fixture: Path, doc: Document, source: bytes) -> str | None:
    path = fixture / "expected.spans.json"
    if not path.is_file():
        return None
    expected = _load_json(path)
    for ident, node in index(doc).entries:
        want = expected.get(ident)
        if want is None:
            continue
        got = [node.line, node.end_line]
        if got != [want["startLine"], want["endLine"]]:
            return (
                f'span mismatch for "{ident}": got {got}, '
                f"expected [{want['startLine']}, {want['endLine']}]"
            )
    missing = sorted(set(expected) - {i for i, _ in index(doc).entries})
    if missing:
        return f"span ids not found: {missing}"
    return None


def _check_patch(fixture: Path, doc: Document, source: bytes) -> str | None:
    patch_path = fixture / "patch.json"
    post_path = fixture / "expected.post.noma"
    error_path = fixture / "expected.error.json"
    if not patch_path.is_file():
        if post_path.is_file() or error_path.is_file():
            return "expected.post.noma/expected.error.json without patch.json"
        return None
    if post_path.is_file() and error_path.is_file():
        return "fixture declares both expected.post.noma and expected.error.json"
    if not post_path.is_file() and not error_path.is_file():
        return "patch.json without expected.post.noma or expected.error.json"
    try:
        from .patch import PatchError, apply_ops_to_bytes
    except ImportError:
        return "patch engine not available"
    ops = _load_json(patch_path)
    if isinstance(ops, dict):
        ops = [ops]
    try:
        result = apply_ops_to_bytes(source, ops)
    except PatchError as exc:
        if error_path.is_file():
            want = _load_json(error_path).get("code")
            if exc.code == want:
                return None
            return f"rejected with {exc.code}, expected {want}"
        return f"rejected with {exc.code}: {exc}"
    if error_path.is_file():
        return f"patch applied, expected rejection with {_load_json(error_path).get('code')}"
    if result != post_path.read_bytes():
        return "patched bytes differ from expected.post.noma"
    return None
