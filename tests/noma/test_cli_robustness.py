"""``noma check`` on malformed input: never a traceback, exit 0/1 by error presence."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest


def check(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", "check", str(path), *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )


MALFORMED = {
    "unclosed-fence": b'# A\n\n```python\n::claim{id="x"}\n',
    "mismatched-colons": b'::section{id="s"}\n::claim{id="c"}\nx\n::\n::\n:::\n',
    "truncated-frontmatter": b"---\ntitle: cut off\nprofile: research\n",
    "broken-frontmatter-yaml": b"---\nkey: [unclosed\n---\n# A\n",
    "empty": b"",
    "only-newlines": b"\n\n\n",
    "invalid-utf8": b"# Caf\xe9\n\nbad \xff\xfe bytes\n",
    "nul-bytes": b"# A\x00B\n\x00\x00\n",
    "unclosed-directive": b'::claim{id="c"}\nnever closed\n',
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_check_never_crashes_on_malformed_input(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.noma"
    path.write_bytes(MALFORMED[name])
    result = check(path, "--json")
    assert "Traceback" not in result.stderr
    payload = json.loads(result.stdout)
    has_error = any(d["severity"] == "error" for d in payload["diagnostics"] + payload["recovery"])
    assert result.returncode == (1 if has_error else 0)
    assert payload["ok"] is (not has_error)
    human = check(path)
    assert "Traceback" not in human.stderr and human.returncode == result.returncode


def test_invalid_utf8_is_reported_as_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "bad.noma"
    path.write_bytes(MALFORMED["invalid-utf8"])
    payload = json.loads(check(path, "--json").stdout)
    codes = [d["code"] for d in payload["recovery"]]
    assert "invalid-utf8" in codes


def test_binary_garbage_never_crashes(tmp_path: Path) -> None:
    rng = random.Random(1234)
    path = tmp_path / "garbage.noma"
    path.write_bytes(bytes(rng.randrange(256) for _ in range(200_000)))
    result = check(path)
    assert "Traceback" not in result.stderr
    assert result.returncode in (0, 1)


def test_ten_megabyte_document_is_checked(tmp_path: Path) -> None:
    chunk = (
        "## Section\n\nSome prose with [[missing-link]] and more words.\n\n"
        '::claim{id="c"}\nA claim.\n::\n\n```\n::inside\n```\n\n- a\n- b\n\n'
    )
    path = tmp_path / "big.noma"
    path.write_text(chunk * (10 * 1024 * 1024 // len(chunk) + 1))
    assert path.stat().st_size >= 10 * 1024 * 1024
    result = check(path, "--json")
    assert "Traceback" not in result.stderr
    payload = json.loads(result.stdout)
    assert result.returncode == 1  # broken wikilinks and duplicate ids are errors
    assert any(d["code"] == "duplicate-id" for d in payload["diagnostics"])


def test_missing_file_is_a_clear_error_with_exit_2(tmp_path: Path) -> None:
    result = check(tmp_path / "absent.noma")
    assert result.returncode == 2
    assert "no such file" in result.stderr and "Traceback" not in result.stderr


def test_ignore_rule_and_unknown_rule(tmp_path: Path) -> None:
    path = tmp_path / "doc.noma"
    path.write_text('::risk{id="r"}\nno owner\n::\n')
    payload = json.loads(check(path, "--json").stdout)
    assert [d["code"] for d in payload["diagnostics"]] == ["risk-without-owner"]
    payload = json.loads(check(path, "--json", "--ignore-rule", "risk-without-owner,nope").stdout)
    assert [(d["code"], d["severity"]) for d in payload["diagnostics"]] == [
        ("unknown-ignore-rule", "info")
    ]


def test_profile_option_overrides_frontmatter(tmp_path: Path) -> None:
    path = tmp_path / "doc.noma"
    path.write_text('---\nprofile: research\n---\n::hero{id="h"}\n::\n')
    research = json.loads(check(path, "--json").stdout)
    technical = json.loads(check(path, "--json", "--profile", "technical").stdout)
    assert "out-of-profile-directive" in [d["code"] for d in research["diagnostics"]]
    assert "out-of-profile-directive" not in [d["code"] for d in technical["diagnostics"]]
