"""``noma fmt``: normal form, idempotent, atomic, and never lossy or silent about a
document's transcript."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.noma.fmt import FormatError, format_in_place, format_source
from core.noma.parser import parse
from core.noma.render import render_noma
from core.noma.source import decode
from noma_tui.demo import DEMO_SOURCE, SKIP


def noma(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(DEMO_SOURCE, root, ignore=SKIP)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_check_passes_on_the_demo_workspace_after_inplace_and_is_idempotent(
    workspace: Path,
) -> None:
    before = noma("fmt", str(workspace), "--check")
    assert before.returncode == 1 and "would reformat" in before.stdout
    forced = noma("fmt", str(workspace), "--inplace", "--force")
    assert forced.returncode == 0, forced.stderr
    assert noma("fmt", str(workspace), "--check").returncode == 0
    first = _snapshot(workspace)
    again = noma("fmt", str(workspace), "--inplace", "--force")
    assert again.returncode == 0 and "formatted" not in again.stderr
    assert _snapshot(workspace) == first  # a second pass changes no byte


def test_formatting_keeps_the_tree(workspace: Path) -> None:
    from core.noma.render import structure

    for path in sorted(workspace.glob("*.noma")):
        before = structure(parse(path.read_bytes()))
        result = format_source(decode(path.read_bytes()))
        assert structure(parse(result.formatted)) == before


def test_a_document_with_a_transcript_is_refused_without_force(workspace: Path) -> None:
    doc = workspace / "decision-record.noma"
    assert (workspace / "decision-record.noma.patches").stat().st_size > 0
    before = doc.read_bytes()
    result = noma("fmt", str(doc), "--inplace")
    assert result.returncode == 1
    assert "has_transcript" in result.stderr and "--force" in result.stderr
    assert doc.read_bytes() == before
    forced = noma("fmt", str(doc), "--inplace", "--force")
    assert forced.returncode == 0
    assert "no longer chains" in forced.stderr
    assert doc.read_bytes() != before


def test_an_already_formatted_document_with_a_transcript_is_left_alone(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    doc.write_text("# T\n\ntext\n")
    (tmp_path / "d.noma.patches").write_text("{}\n")
    assert noma("fmt", str(doc), "--inplace").returncode == 0


ROUND_TRIP_BREAKER = "# Use {braces} {}\n\ntext\n"
"""A title ending in a brace group, kept as the title by an empty ``{}``: the normal form
drops the empty group, so it would re-read as a ``braces`` attribute."""


def test_a_rewrite_that_would_change_the_tree_is_refused_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The renderer keeps every tree the property tests throw at it, so a faulty one is
    # simulated: it drops the empty group that keeps "{braces}" in the title.
    import core.noma.fmt as fmt_module

    assert parse(render_noma(parse(ROUND_TRIP_BREAKER))).children[0].title == "Use {braces}"  # type: ignore[attr-defined]
    monkeypatch.setattr(fmt_module, "render_noma", lambda doc: render_noma(doc).replace(" {}", ""))
    doc = tmp_path / "d.noma"
    doc.write_text(ROUND_TRIP_BREAKER)
    stamp = doc.stat().st_mtime_ns
    with pytest.raises(FormatError) as info:
        format_in_place(doc)
    assert info.value.code == "not_roundtrip" and "would become" in info.value.message
    assert doc.read_text() == ROUND_TRIP_BREAKER and doc.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.noma"]  # no temp file left


def test_a_recovered_document_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    doc.write_text('::claim{id="c"}\nnever closed\n')
    result = noma("fmt", str(doc), "--inplace")
    assert result.returncode == 1 and "needs_recovery" in result.stderr
    assert doc.read_text() == '::claim{id="c"}\nnever closed\n'


def test_invalid_utf8_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    doc.write_bytes(b"# T\n\nbad \xff byte\n")
    result = noma("fmt", str(doc), "--check")
    assert result.returncode == 1 and "invalid_utf8" in result.stderr


def test_stdout_mode_prints_the_normal_form_and_writes_nothing(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    doc.write_text("*  a\n* b\n\n::x{a='1'}\n::\n")
    result = noma("fmt", str(doc))
    assert result.returncode == 0
    assert result.stdout == "- a\n- b\n\n::x{a=1}\n::\n"
    assert doc.read_text() == "*  a\n* b\n\n::x{a='1'}\n::\n"


def test_inplace_keeps_mode_and_the_bom_and_refuses_symlinks(tmp_path: Path) -> None:
    """A document that is a symlink is refused, not followed (the file boundary: a cloned
    ``doc.noma -> ~/.bashrc`` must not be rewritten); a real one keeps its mode and BOM."""
    from core.noma.boundary import BoundaryError

    real = tmp_path / "real.noma"
    real.write_bytes(b"\xef\xbb\xbf* a\r\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.noma"
    link.symlink_to(real)
    with pytest.raises(BoundaryError):
        format_in_place(link)
    assert real.read_bytes() == b"\xef\xbb\xbf* a\r\n"
    format_in_place(real)
    assert link.is_symlink()
    assert real.read_bytes() == b"\xef\xbb\xbf- a\n"
    assert real.stat().st_mode & 0o777 == 0o640


def test_a_crash_before_the_rename_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "d.noma"
    doc.write_text("* a\n")

    def boom(*args: object, **kwargs: object) -> None:  # renames now pass dir fds
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        format_in_place(doc)
    assert doc.read_text() == "* a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.noma"]


def test_usage_errors(tmp_path: Path) -> None:
    assert noma("fmt", str(tmp_path)).returncode == 2  # no documents in the folder
    (tmp_path / "a.noma").write_text("# A\n")
    (tmp_path / "b.noma").write_text("# B\n")
    several = noma("fmt", str(tmp_path))
    assert several.returncode == 2 and "--check or --inplace" in several.stderr
    assert noma("fmt", str(tmp_path / "missing.noma"), "--check").returncode == 2
    both = noma("fmt", str(tmp_path), "--check", "--inplace")
    assert both.returncode == 2
