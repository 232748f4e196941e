"""Pure pieces of the sandbox: log preview, the guest JSON writer, import boundaries."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.config import SandboxConfig
from sandbox.logs import LogCollector

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "noma_guest_jsonout", REPO / "sandbox" / "guest" / "runtime" / "_jsonout.py"
)
assert _spec is not None and _spec.loader is not None
_jsonout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_jsonout)


def test_log_preview_keeps_everything_when_small() -> None:
    logs = LogCollector(2048)
    logs.add(b"hello\n")
    logs.add(b"world\n")
    assert logs.preview() == "hello\nworld\n"
    assert logs.total == 12


def test_log_preview_keeps_head_and_tail_within_budget() -> None:
    logs = LogCollector(2048)
    logs.add(b"HEAD" + b"a" * 10_000)
    logs.add(b"b" * 10_000 + b"TAIL")
    preview = logs.preview()
    assert preview.startswith("HEAD") and preview.endswith("TAIL")
    assert "bytes of logs omitted" in preview
    assert len(preview.encode()) <= 2048
    assert logs.total == 20_008


def test_log_preview_never_splits_a_character() -> None:
    logs = LogCollector(64)
    logs.add("é".encode() * 1000)
    assert "\ufffd" not in logs.preview()


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -7,
        10**30,
        1.5,
        -0.0,
        "",
        'tab\t"q" é 😀 \x00',
        [1, [2, [3]]],
        {"a": {"b": [None]}},
        {1: "int", 2.5: "float", None: "none"},
        {True: "bool"},
        (1, 2),
    ],
)
def test_guest_json_writer_matches_json(value: object) -> None:
    assert json.loads(_jsonout.dumps(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize("value", [math.nan, math.inf, {1, 2}, object(), {(1, 2): 3}])
def test_guest_json_writer_rejects_what_json_cannot_carry(value: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        _jsonout.dumps(value)


def test_sandbox_imports_neither_core_nor_ui() -> None:
    probe = (
        "import sys, sandbox, sandbox.runner\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('core', 'noma_tui', 'textual')]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_guest_code_imports_only_the_standard_library() -> None:
    guest = REPO / "sandbox" / "guest"
    for path in guest.rglob("*.py"):
        text = path.read_text()
        assert "import sandbox" not in text and "from sandbox" not in text, path
        assert "from core" not in text and "import core" not in text, path


def test_config_reads_environment_overrides() -> None:
    cfg = SandboxConfig.from_env(
        {
            "NOMA_SANDBOX_TIER": "namespaces",
            "NOMA_SANDBOX_SLOTS": "3",
            "NOMA_SANDBOX_ALLOW_DEGRADED": "1",
        }
    )
    assert (cfg.tier, cfg.slots, cfg.allow_degraded) == ("namespaces", 3, True)
    with pytest.raises(ValueError):
        SandboxConfig.from_env({"NOMA_SANDBOX_TIER": "docker"})


def test_cgroups_of_dead_servers_are_swept_at_startup() -> None:
    from sandbox.cgroups import CgroupRoot

    probe = CgroupRoot.create()
    if probe is None:
        pytest.skip("no writable v1 memory+pids cgroup hierarchy on this host")
    parent = probe.bases["pids"].parent
    probe.remove()
    dead_pid = subprocess.Popen(["true"])  # a pid that has certainly exited
    dead_pid.wait()
    stale = parent / f"noma-sandbox-{dead_pid.pid}-dead00"
    (stale / "slot-1").mkdir(parents=True)
    try:
        fresh = CgroupRoot.create()
        assert fresh is not None
        fresh.remove()
        assert not stale.exists()
    finally:
        for d in (stale / "slot-1", stale):
            if d.exists():
                d.rmdir()
