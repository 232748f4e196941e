"""``noma-tui --theme`` names a theme that exists, or the command says which do (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from noma_tui.__main__ import main, theme_names


def test_an_unknown_theme_fails_clearly(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--theme", "bogus", str(demo)]) == 2
    err = capsys.readouterr().err
    assert "unknown theme 'bogus'" in err
    assert "noma-dark" in err and "noma-light" in err
    assert {"noma-dark", "noma-light"} <= set(theme_names())
