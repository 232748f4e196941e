"""``bench vs``: finds the reference by ``NOMA_REFERENCE`` and says why when it cannot."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import vs_bench
from tests.conftest import REPO


def test_unset_means_our_column_only() -> None:
    ref, why = vs_bench.find_reference({})
    assert ref is None and "NOMA_REFERENCE is not set" in why


def test_a_folder_without_a_build_is_named(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "noma.mjs").write_text("", encoding="utf-8")
    ref, why = vs_bench.find_reference({"NOMA_REFERENCE": str(tmp_path)})
    assert ref is None and "dist/index.js" in why and "bin/noma.mjs" not in why


def test_a_built_folder_is_used(tmp_path: Path) -> None:
    for name in ("dist/index.js", "bin/noma.mjs"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    ref, why = vs_bench.find_reference({"NOMA_REFERENCE": str(tmp_path)})
    if shutil.which("node") is None:
        assert ref is None and "no node" in why
    else:
        assert ref is not None and ref.root == tmp_path and why.endswith(str(tmp_path))


def test_rows_without_the_reference() -> None:
    # Run as `./dev bench vs` runs it, in a process of its own: its full collection before
    # each sample walks the whole heap, and the suite's worker holds a large one.
    env = {k: v for k, v in os.environ.items() if k != "NOMA_REFERENCE"}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "vs", "--sizes", "20", "--scale", "", "--repeat", "1"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    assert out[0] == "reference: not measured (NOMA_REFERENCE is not set)"
    rows = {line.split()[0]: line.split() for line in out[3:]}
    assert set(rows) == {"parse", "parse+validate", "export", "render", "check", "patch"}
    check = rows["check"]
    assert check[1] == "20" and float(check[2]) > 0 and check[3] == "-" and check[4] == "-"
    assert float(check[-2]) > 0 and check[-1] == "-"  # our peak memory, none for the reference
    parse = rows["parse"]
    assert float(parse[5]) > 0 and parse[6] == "-"  # our CPU ms, none for the reference


def test_our_executable_runs_with_its_bytecode_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    # Where PYTHONDONTWRITEBYTECODE is set, an editable install would compile every module
    # from source on every run; a user's install (a wheel pip compiled) never does.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("NOMA_BENCH_PROBE", "kept")
    env = vs_bench.installed_env()
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["NOMA_BENCH_PROBE"] == "kept" and env["PATH"] == os.environ["PATH"]
