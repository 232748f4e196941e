"""The house rules, enforced where every change is tested: ruff clean, formatted, and
mypy strict on core and the app (style.md)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


def test_ruff_check_is_clean() -> None:
    result = run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied() -> None:
    result = run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.long(15)
def test_core_and_app_are_mypy_strict_clean() -> None:
    result = run("mypy", "core", "noma_tui")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success"), result.stdout


def test_mypy_checks_both_packages_by_default() -> None:
    """A bare `mypy` (the editor's, the CI's) covers the app too, not only core."""
    with (REPO / "pyproject.toml").open("rb") as handle:
        packages = tomllib.load(handle)["tool"]["mypy"]["packages"]
    assert {"core", "noma_tui"} <= set(packages)
