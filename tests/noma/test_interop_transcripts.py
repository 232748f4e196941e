"""Replay and verify read other implementations' transcripts (issue 13, Build 3): rejected
and noop records are skipped whatever their summaries say, inconsistencies are warnings,
and the exit code is kept for real chain breaks and hash mismatches."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from trust_testlib import run_noma

from core.noma.patch import apply_ops_to_bytes
from core.noma.replay import replay
from core.noma.transcript import audit

BASE = b'# Memo\n\n::claim{id="c1" confidence=0.5}\nThe claim.\n::\n'
OPS = [
    ("applied", {"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.8}),
    # The reference's rejected record: summary "warn" beside an error-severity pre diagnostic.
    ("rejected", {"op": "delete_block", "id": "nope"}),
    ("applied", {"op": "rename_id", "from": "c1", "to": "c2"}),
    ("noop", {"op": "remove_attribute", "id": "c2", "key": "absent"}),
]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def reference_transcript(doc: Path, *, chain: bool = True) -> list[bytes]:
    """Records written the way another implementation writes them (float elapsed_ms, its
    own tool_version, summaries that do not derive from the diagnostics)."""
    data = BASE
    lines: list[bytes] = []
    for result, op in OPS:
        pre = sha(data)
        if result == "applied":
            data = apply_ops_to_bytes(data, [op])
        diagnostics: list[dict[str, Any]] = []
        pre_summary = "ok"
        if result == "rejected":
            diagnostics.append(
                {"phase": "pre", "severity": "error", "code": "target_missing", "message": "x"}
            )
            pre_summary = "warn"
        record: dict[str, Any] = {
            "protocol_version": "1.0",
            "tool_version": "0.17.0",
            "op_id": str(uuid.uuid4()),
            "ts": "2026-05-11T14:32:00.000Z",
            "actor": {"kind": "agent", "name": "ref"},
            "doc_uri": doc.resolve().as_uri(),
            "pre_sha256": pre,
            "post_sha256": sha(data),
            "pre_sha": pre[:8],
            "post_sha": sha(data)[:8],
            "op": op,
            "patch_result": result,
            "pre_validation": pre_summary,
            "post_validation": "warn" if result == "noop" else "ok",
            "diagnostics": diagnostics,
            "elapsed_ms": 4.923,
            "signature": None,
        }
        if chain and lines:
            record["prev_entry_sha256"] = sha(lines[-1])
        lines.append(json.dumps(record).encode() + b"\n")
    doc.write_bytes(data)
    Path(str(doc) + ".patches").write_bytes(b"".join(lines))
    return lines


def test_replay_skips_rejected_and_noop_whatever_their_summaries(tmp_path: Path) -> None:
    doc = tmp_path / "memo.noma"
    reference_transcript(doc)
    result = replay(Path(str(doc) + ".patches"), BASE)
    assert result.applied == 2 and result.skipped == 2
    assert result.matches and result.data == doc.read_bytes()
    assert any("derive" in w for w in result.warnings)


def test_verify_accepts_it_with_warnings(tmp_path: Path) -> None:
    doc = tmp_path / "memo.noma"
    reference_transcript(doc)
    report = audit(Path(str(doc) + ".patches"))
    assert report.problems == [] and report.chain_tip == sha(doc.read_bytes())
    assert [n for n, _ in report.warnings] == [2, 4]


def test_cli_replay_and_verify_exit_zero_with_a_warning(tmp_path: Path) -> None:
    doc = tmp_path / "memo.noma"
    reference_transcript(doc, chain=False)
    (tmp_path / "base.noma").write_bytes(BASE)
    patches = str(doc) + ".patches"
    replayed = run_noma("replay", patches, "--base", str(tmp_path / "base.noma"), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert "matches" in replayed.stdout and "skipped 2" in replayed.stdout
    assert "warning" in replayed.stderr and "pre_validation" in replayed.stderr
    verified = run_noma("transcript", "verify", patches, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "warning" in verified.stderr
    as_json = run_noma("transcript", "verify", patches, "--json", cwd=tmp_path)
    payload = json.loads(as_json.stdout)
    assert payload["ok"] is True and [w["line"] for w in payload["warnings"]] == [2, 4]


def test_real_breaks_keep_the_exit_code(tmp_path: Path) -> None:
    doc = tmp_path / "memo.noma"
    lines = reference_transcript(doc)
    patches = Path(str(doc) + ".patches")
    # A changed line breaks the chain at the next one.
    tampered = lines[1].replace(b'"name": "ref"', b'"name": "eve"')
    patches.write_bytes(lines[0] + tampered + b"".join(lines[2:]))
    assert run_noma("transcript", "verify", str(patches), cwd=tmp_path).returncode == 1
    # A replay onto the wrong base, or to a different final hash, fails.
    patches.write_bytes(b"".join(lines))
    (tmp_path / "other.noma").write_bytes(BASE + b"\n")
    wrong = run_noma("replay", str(patches), "--base", str(tmp_path / "other.noma"), cwd=tmp_path)
    assert wrong.returncode == 1
    record = json.loads(lines[-2])
    record["post_sha256"] = "0" * 64
    record["post_sha"] = "0" * 8
    patches.write_bytes(b"".join(lines[:2]) + json.dumps(record).encode() + b"\n")
    (tmp_path / "base.noma").write_bytes(BASE)
    bad = run_noma("replay", str(patches), "--base", str(tmp_path / "base.noma"), cwd=tmp_path)
    assert bad.returncode == 1 and "DOES NOT match" in bad.stdout
