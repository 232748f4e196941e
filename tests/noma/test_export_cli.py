"""``noma render --to markdown|html|llm`` and its synonym ``noma export``, as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from noma_tui.demo import DEMO_SOURCE

MEMO = DEMO_SOURCE / "research-memo.noma"
GOLDEN = Path(__file__).parent / "golden" / "export"


def noma(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", ["render", "export"])
@pytest.mark.parametrize(("fmt", "suffix"), [("markdown", ".md"), ("llm", ".llm.txt")])
def test_stdout_matches_the_golden(command: str, fmt: str, suffix: str) -> None:
    result = noma(command, str(MEMO), "--to", fmt)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / ("research-memo" + suffix)).read_text()


def test_html_with_diagnostics_and_out(tmp_path: Path) -> None:
    out = tmp_path / "memo.html"
    result = noma("export", str(MEMO), "--to", "html", "--with-diagnostics", "--out", str(out))
    assert result.returncode == 0 and result.stdout == ""
    page = out.read_text()
    assert page == (GOLDEN / "research-memo.html").read_text()
    plain = noma("render", str(MEMO), "--to", "html").stdout
    assert 'class="diagnostics"' in page and 'class="diagnostics"' not in plain


def test_noma_and_json_still_work_and_take_out(tmp_path: Path) -> None:
    assert noma("render", str(MEMO)).stdout.startswith("---\ntitle:")
    assert noma("render", str(MEMO), "--to", "json").stdout.startswith("{")
    out = tmp_path / "n.noma"
    assert noma("render", str(MEMO), "--out", str(out)).returncode == 0
    assert out.read_text().startswith("---\ntitle:")


def test_budget(tmp_path: Path) -> None:
    result = noma("render", str(MEMO), "--to", "llm", "--budget", "100")
    assert result.returncode == 0 and "omitted to fit a budget of 100 tokens" in result.stdout
    for bad in ("-1", "many"):
        assert noma("render", str(MEMO), "--to", "llm", "--budget", bad).returncode == 2


def test_options_for_another_format_are_refused() -> None:
    wrong = noma("render", str(MEMO), "--to", "markdown", "--budget", "10")
    assert wrong.returncode == 2 and "--budget applies to --to llm" in wrong.stderr
    wrong = noma("render", str(MEMO), "--to", "llm", "--with-diagnostics")
    assert wrong.returncode == 2 and "--with-diagnostics" in wrong.stderr


def test_render_never_overwrites_its_source(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    doc.write_text("*  a\n")
    for fmt in ("noma", "markdown"):
        result = noma("render", str(doc), "--to", fmt, "--out", str(doc))
        assert result.returncode == 2 and "fmt --inplace" in result.stderr
    assert doc.read_text() == "*  a\n"


def test_missing_input_and_unwritable_out(tmp_path: Path) -> None:
    assert noma("export", str(tmp_path / "nope.noma"), "--to", "html").returncode == 2
    result = noma("export", str(MEMO), "--to", "html", "--out", str(tmp_path / "no" / "x.html"))
    assert result.returncode == 2 and "cannot write" in result.stderr


def test_invalid_utf8_becomes_replacement_characters_in_exports(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    doc.write_bytes(b"# T\n\nbad \xff byte\n")
    result = subprocess.run(
        [sys.executable, "-m", "core.cli", "render", str(doc), "--to", "html"],
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0
    assert "bad \ufffd byte" in result.stdout.decode("utf-8")  # strict decode: valid UTF-8


def test_help_lists_the_new_commands_and_an_unknown_format_is_refused() -> None:
    from core.noma import parse
    from core.noma.export import export

    listing = noma("--help").stdout
    for command in ("render", "export", "ingest", "fmt", "schema"):
        assert command in listing
    with pytest.raises(ValueError, match="unknown export format"):
        export(parse("x\n"), "docx")
    assert noma("render", str(MEMO), "--to", "docx").returncode == 2
