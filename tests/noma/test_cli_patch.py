"""The ``noma patch``, ``noma proof`` and ``noma capabilities`` commands, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.noma.patch.capabilities import load_descriptor, validate_descriptor

DOC = '# Memo\n\n::claim{id="c1" confidence=0.5}\nbody.\n::\n'


def noma(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "memo.noma"
    path.write_text(DOC)
    return path


OP = '{"op": "update_attribute", "id": "c1", "key": "confidence", "value": 0.9}'


def test_patch_without_inplace_prints_the_result_and_writes_nothing(doc: Path) -> None:
    result = noma("patch", str(doc), "--op", OP)
    assert result.returncode == 0
    assert "confidence=0.9" in result.stdout
    assert doc.read_text() == DOC
    assert not Path(str(doc) + ".patches").exists()


def test_patch_inplace_writes_the_file_and_a_human_record(doc: Path) -> None:
    result = noma(
        "patch", str(doc), "--op", OP, "--inplace", "--actor", "human:ann", "--reason", "why"
    )
    assert result.returncode == 0 and "applied" in result.stdout
    assert "confidence=0.9" in doc.read_text()
    record = json.loads(Path(str(doc) + ".patches").read_text())
    assert record["actor"] == {"kind": "human", "name": "ann"} and record["reason"] == "why"


def test_patch_out_writes_elsewhere_and_records_there(doc: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy.noma"
    assert noma("patch", str(doc), "--op", OP, "--out", str(out)).returncode == 0
    assert doc.read_text() == DOC and "confidence=0.9" in out.read_text()
    assert Path(str(out) + ".patches").is_file()


def test_patch_ops_file_accepts_every_transaction_shape(doc: Path, tmp_path: Path) -> None:
    shapes = [
        {"op": "update_attribute", "id": "c1", "key": "a", "value": 1},
        [{"op": "update_attribute", "id": "c1", "key": "b", "value": 2}],
        {"ops": [{"op": "update_attribute", "id": "c1", "key": "c", "value": 3}]},
    ]
    for i, shape in enumerate(shapes):
        ops = tmp_path / f"ops{i}.json"
        ops.write_text(json.dumps(shape))
        assert noma("patch", str(doc), "--ops", str(ops), "--inplace").returncode == 0
    assert '::claim{id="c1" confidence=0.5 a=1 b=2 c=3}' in doc.read_text()
    stdin = json.dumps({"op": "remove_attribute", "id": "c1", "key": "a"})
    assert noma("patch", str(doc), "--ops", "-", "--inplace", stdin=stdin).returncode == 0
    assert " a=1" not in doc.read_text()


def test_rejected_patch_exits_1_with_its_code_and_json_envelope(doc: Path) -> None:
    bad = '{"op": "delete_block", "id": "nope"}'
    human = noma("patch", str(doc), "--op", bad, "--inplace")
    assert human.returncode == 1 and "target_missing" in human.stderr
    machine = noma("patch", str(doc), "--op", bad, "--inplace", "--json")
    assert machine.returncode == 1
    assert json.loads(machine.stdout) == {
        "ok": False,
        "error": "No block with id 'nope' in the document.",
        "code": "target_missing",
    }


def test_patch_json_success_has_the_patch_block_shape(doc: Path) -> None:
    result = noma("patch", str(doc), "--op", OP, "--inplace", "--json")
    payload = json.loads(result.stdout)
    assert payload["ok"] is True and payload["post_validation"] == "warn"
    assert payload["transcript_entry"]["patch_result"] == "applied"
    assert [d["code"] for d in payload["diagnostics"]] == ["claim-without-evidence"]


def test_bad_inputs_are_clear_errors_not_tracebacks(doc: Path, tmp_path: Path) -> None:
    for args in (
        ("patch", str(doc), "--op", "{not json"),
        ("patch", str(tmp_path / "absent.noma"), "--op", OP, "--inplace"),
        ("patch", str(doc), "--op", OP, "--actor", "robot:x"),
    ):
        result = noma(*args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, args


def test_proof_shows_the_diff_and_diagnostic_delta_and_writes_nothing(doc: Path) -> None:
    op = json.dumps(
        {
            "op": "add_block",
            "parent": "memo",
            "content": '::evidence{id="e1" for="c1"}\nsupport.\n::',
        }
    )
    result = noma("proof", str(doc), "--op", op)
    assert result.returncode == 0
    assert '+::evidence{id="e1" for="c1"}' in result.stdout
    assert "diagnostics that disappears:" in result.stdout
    assert "claim-without-evidence" in result.stdout
    assert doc.read_text() == DOC and not Path(str(doc) + ".patches").exists()
    payload = json.loads(noma("proof", str(doc), "--op", op, "--json").stdout)
    assert payload["ok"] and [d["code"] for d in payload["disappeared"]] == [
        "claim-without-evidence"
    ]


def test_proof_of_a_rejected_op_says_so(doc: Path) -> None:
    result = noma("proof", str(doc), "--op", '{"op": "rename_id", "from": "c1", "to": "memo"}')
    assert result.returncode == 1 and "REJECTED  id_conflict" in result.stdout


# -- capability sidecars (Annex A) -----------------------------------------------------------


def test_descriptor_validation_names_each_problem_with_its_path() -> None:
    problems = validate_descriptor(
        {
            "nomaAgent": {
                "version": 2,
                "extra": 1,
                "blocks": {
                    "claim": {"ops": ["replace_block", "fly"], "attrs": {"c": {"type": "x"}}}
                },
                "ids": {"rename": "yes"},
            }
        }
    )
    assert problems == [
        "nomaAgent.extra: unknown field",
        "nomaAgent.version: 2 is not 1; treated as no grants (A.5)",
        "nomaAgent.ids.rename: must be true or false",
        "nomaAgent.blocks.claim.ops: 'fly' is not a v1.0 op",
        "nomaAgent.blocks.claim.attrs.c.type: must be string, number or boolean",
    ]
    assert validate_descriptor({"nomaAgent": {"version": 1}}) == []


def test_capabilities_command_reports_validity(doc: Path) -> None:
    sidecar = Path(str(doc) + ".capabilities.yml")
    absent = json.loads(noma("capabilities", str(doc)).stdout)
    assert absent["exists"] is False and absent["grants"] == {}
    sidecar.write_text(
        "nomaAgent:\n  version: 1\n  blocks:\n    claim:\n      ops: [replace_block]\n"
    )
    good = noma("capabilities", str(doc))
    assert good.returncode == 0
    assert json.loads(good.stdout)["grants"] == {"claim": ["replace_block"]}
    sidecar.write_text("nomaAgent: [broken\n")
    assert noma("capabilities", str(doc)).returncode == 1
    assert load_descriptor(doc).usable is False
