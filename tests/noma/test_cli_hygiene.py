"""The CLI never prints a document's terminal escapes raw; ``--json`` stays exact.

Each test runs the real command on a document (or flow bundle, or transcript) carrying
the whole attack corpus and asserts the text output holds no character a terminal acts on,
shows the visible marker instead, and leaves the JSON output byte-for-byte as before.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hygiene_testlib import ESC, PAYLOADS, dangerous, evil_document

from core.cli import main
from core.commands.docs import _human, check_payload, ids_payload
from core.noma.diagnostics import Diagnostic
from core.noma.files import read_document
from core.noma.validate import validate


def noma(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        capture_output=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


def text_of(result: subprocess.CompletedProcess[bytes]) -> str:
    """stdout + stderr, decoded strictly: the CLI writes valid UTF-8."""
    return result.stdout.decode("utf-8") + result.stderr.decode("utf-8")


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    path = tmp_path / "evil.noma"
    path.write_text(evil_document(), encoding="utf-8")
    return path


def test_check_text_output_shows_escapes_and_emits_none(evil: Path) -> None:
    result = noma("check", str(evil))
    out = text_of(result)
    assert result.returncode == 1  # broken references: the verdict is unchanged
    assert dangerous(out) == []
    assert "⟨U+001B⟩]0;pwned⟨U+0007⟩" in out  # the claim id, quoted by a warning
    assert "⟨U+001B⟩]52;c;cHduZWQ=⟨U+0007⟩" in out  # the for= value
    assert "[ev⟨U+009B⟩31m]" in out  # C1 CSI in an id


def test_check_text_line_cannot_be_forged_by_a_newline_in_a_field() -> None:
    # Each diagnostic is one line: a newline in a quoted value or an id would otherwise
    # print a fake verdict ("0 error(s)") on a line of its own.
    fake = "x\nforge.noma: 0 error(s), 0 warning(s), 0 info"
    d = Diagnostic("error", "broken-reference", f'for="{fake}"', 3, 1, node_id=fake)
    line = _human("forge.noma", d, "")
    assert "\n" not in line and line.count("⟨U+000A⟩") == 2


def test_check_json_bytes_are_exact(evil: Path) -> None:
    result = noma("check", str(evil), "--json")
    _source, doc = read_document(str(evil))
    expected = check_payload(str(evil), doc, validate(doc, base_dir=evil.parent))
    assert result.stdout == (json.dumps(expected, ensure_ascii=False) + "\n").encode("utf-8")
    ids = {d.get("nodeId") or d.get("node_id") for d in json.loads(result.stdout)["diagnostics"]}
    assert "c" + PAYLOADS["osc0-title"] in ids  # the real id, escape and all


def test_ids_json_bytes_are_exact(evil: Path) -> None:
    result = noma("ids", str(evil))
    _source, doc = read_document(str(evil))
    assert result.stdout == (json.dumps(ids_payload(doc), ensure_ascii=False) + "\n").encode()


def test_proof_text_shows_escapes_and_json_keeps_them(evil: Path) -> None:
    # The diff quotes the block's opener line: its parent= holds cursor moves, author= C1.
    op = json.dumps({"op": "update_attribute", "id": "cm1", "key": "status", "value": "open"})
    text = noma("proof", str(evil), "--op", op)
    assert text.returncode == 0
    assert dangerous(text_of(text)) == []
    assert "nope⟨U+001B⟩[1A⟨U+001B⟩[999D" in text_of(text)
    assert "a⟨U+009D⟩0;pwned⟨U+009C⟩" in text_of(text)
    data = noma("proof", str(evil), "--op", op, "--json")
    raw = data.stdout.decode("utf-8")
    for payload in (PAYLOADS["csi-cursor-up"], PAYLOADS["c1-osc"]):  # JSON's exact escaping
        assert json.dumps(payload, ensure_ascii=False)[1:-1] in raw
    assert ESC.encode() not in data.stdout  # JSON escapes C0 itself (\u001b)


def test_error_messages_quoting_an_id_show_escapes(evil: Path) -> None:
    result = noma("ops", str(evil), "al" + PAYLOADS["csi-erase-line"])  # an alias, not an id
    err = result.stderr.decode("utf-8")
    assert result.returncode == 1 and "target_missing" in err
    assert dangerous(err) == [] and "al⟨U+001B⟩[2K" in err


def test_transcript_verify_text_shows_escapes(tmp_path: Path) -> None:
    doc = tmp_path / "d.noma"
    doc.write_text("# A\n", encoding="utf-8")
    record = {"protocol_version": PAYLOADS["osc0-title"], "actor": {"name": PAYLOADS["bel"]}}
    (tmp_path / "d.noma.patches").write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = noma("transcript", "verify", str(tmp_path / "d.noma.patches"))
    assert result.returncode == 1
    assert dangerous(text_of(result)) == []


EVIL_FLOW = """\
flow:
  schema: knowtation.flow/v0
  flow_id: flow_evil
  title: "Evil \\x9b2K\\x9d0;pwned\\x9c title \\u202eexe.txt"
  version: 1.0.0
  scope: personal
  summary: "s"
  tags: []
  steps: [flow_evil#1]
  updated: "2026-06-20T12:00:00Z"
  truncated: false
steps:
  - schema: knowtation.flow_step/v0
    step_id: flow_evil#1
    flow_id: flow_evil
    ordinal: 1
    owned_job: "Job \\x9b31m \\u2066exe\\u2069"
    instruction: Do it.
    trigger: Always.
    when_not_to_run: Never.
    requires: []
    boundaries: []
    skill_refs: []
    inputs: []
    outputs: []
    output_shape: Nothing.
    verification:
      kind: human_review
      evidence_required: false
      description: A person looks.
    automatable: manual
"""


def test_flow_list_and_get_text_show_bundle_escapes(tmp_path: Path) -> None:
    # Bundle names refuse C0 controls already; C1 controls and bidi overrides get through.
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "evil.flow.yaml").write_text(EVIL_FLOW, encoding="utf-8")
    listed = noma("flow", "list", "--root", str(tmp_path))
    out = text_of(listed)
    assert dangerous(out) == []
    assert "Evil ⟨U+009B⟩2K⟨U+009D⟩0;pwned⟨U+009C⟩ title ⟨U+202E⟩exe.txt" in out, out
    got = noma("flow", "get", "flow_evil", "--root", str(tmp_path))
    out = text_of(got)
    assert dangerous(out) == [] and "Job ⟨U+009B⟩31m ⟨U+2066⟩exe⟨U+2069⟩" in out, out


class _Terminal(io.TextIOWrapper):
    """A stdout that says it is a terminal (what `render` checks), bytes kept for asserts."""

    def __init__(self, tty: bool) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8")
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("fmt", ["noma", "markdown"])
def test_render_shows_escapes_on_a_terminal_and_keeps_bytes_in_a_pipe(
    evil: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs: dict[bool, bytes] = {}
    for tty in (True, False):
        stream: Any = _Terminal(tty)
        monkeypatch.setattr(sys, "stdout", stream)
        assert main(["render", str(evil), "--to", fmt]) == 0
        outputs[tty] = stream.buffer.getvalue()
    assert PAYLOADS["osc52-clipboard"].encode() in outputs[False]  # exact into a pipe
    shown = outputs[True].decode("utf-8")
    assert dangerous(shown) == [] and "⟨U+001B⟩]52;c;" in shown


def test_hub_token_list_shows_a_tampered_name_with_markers(tmp_path: Path) -> None:
    # Names are typed by whoever mints a token (an operator's script, a shared admin): the
    # list shows them, never acts on them.
    import sqlite3

    from core.netauth.tokens import token_store_path

    (tmp_path / "flows").mkdir()
    created = noma("hub", "token", "create", "--name", "ana", "--workspace", str(tmp_path))
    assert created.returncode == 0
    db = token_store_path(tmp_path.resolve())
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE hub_tokens SET name = ?", ("ana" + PAYLOADS["osc52-clipboard"],))
    listed = noma("hub", "token", "list", "--workspace", str(tmp_path))
    out = text_of(listed)
    assert dangerous(out) == [] and "ana⟨U+001B⟩]52;c;cHduZWQ=⟨U+0007⟩" in out
