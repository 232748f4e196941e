"""The official corpus, run through ``noma verify`` exactly as a user runs it (Annex C)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def noma(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_noma_verify_passes_every_fixture(conformance_dir: Path) -> None:
    result = noma("verify", str(conformance_dir))
    lines = result.stdout.splitlines()
    fixtures = [line for line in lines if line[:4] in ("PASS", "FAIL", "SKIP")]
    assert len(fixtures) == 40
    assert [line for line in fixtures if not line.startswith("PASS")] == []
    assert lines[-1] == "40 fixtures, 40 passed"
    assert result.returncode == 0


def test_verify_output_is_sorted_and_deterministic(conformance_dir: Path) -> None:
    first = noma("verify", str(conformance_dir)).stdout
    second = noma("verify", str(conformance_dir)).stdout
    assert first == second
    paths = [line.split(None, 1)[1] for line in first.splitlines() if line[:4] in ("PASS", "FAIL")]
    assert paths == sorted(paths)


def test_verify_exit_codes_for_missing_paths(tmp_path: Path) -> None:
    assert noma("verify").returncode == 2
    assert noma("verify", str(tmp_path / "nope")).returncode == 2


def test_verify_reports_a_failing_and_a_skipped_fixture(tmp_path: Path) -> None:
    good = tmp_path / "valid" / "ok"
    good.mkdir(parents=True)
    (good / "input.noma").write_text("# Risks\n")
    (good / "expected.ids.json").write_text('{"canonical": ["risks"], "aliases": {}}')
    bad = tmp_path / "valid" / "wrong-span"
    bad.mkdir()
    (bad / "input.noma").write_text("# Intro\n\ntext\n")
    (bad / "expected.spans.json").write_text('{"intro": {"startLine": 1, "endLine": 2}}')
    lonely = tmp_path / "patch" / "no-input"
    lonely.mkdir(parents=True)
    (lonely / "patch.json").write_text("{}")
    result = noma("verify", str(tmp_path))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"SKIP  {tmp_path}/patch/no-input"
    assert lines[1] == f"PASS  {tmp_path}/valid/ok"
    assert lines[2] == (
        f"FAIL  {tmp_path}/valid/wrong-span  — "
        'span mismatch for "intro": got [1, 3], expected [1, 2]'
    )
    assert lines[-1] == "3 fixtures, 1 passed"


def test_patch_fixture_without_expectations_fails(tmp_path: Path) -> None:
    fx = tmp_path / "patch" / "incomplete"
    fx.mkdir(parents=True)
    (fx / "input.noma").write_text('::claim{id="c"}\nx\n::\n')
    (fx / "patch.json").write_text('{"op": "delete_block", "id": "c"}')
    result = noma("verify", str(tmp_path))
    assert result.returncode == 1
    assert "patch.json without expected.post.noma or expected.error.json" in result.stdout
