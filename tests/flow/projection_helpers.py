"""Plumbing shared by the projection tests: a workspace of the six starter bundles (both
scopes visible), the CLI as a function, and the fidelity table the tests hold the
generator to (written out here, not imported, so the two can disagree)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from core import cli
from core.flow import FlowContext
from core.workspace import Workspace

from .conftest import STARTER_FILES, starter_dir, write_config

HARNESSES = ("cursor_rule", "cursor_skill", "mcp_prompt", "cli_runbook", "agent_bundle")

ORDER = (
    "flow.title",
    "flow.summary",
    "flow.scope",
    "flow.tags",
    "flow.inputs",
    "flow.vault_mirror_path",
    "steps[].owned_job",
    "steps[].instruction",
    "steps[].trigger",
    "steps[].when_not_to_run",
    "steps[].requires",
    "steps[].boundaries",
    "steps[].skill_refs",
    "steps[].inputs",
    "steps[].outputs",
    "steps[].output_shape",
    "steps[].verification",
    "steps[].automatable",
)
LEAVES_OUT: dict[str, set[str]] = {
    "cursor_rule": {
        "flow.tags",
        "flow.inputs",
        "flow.vault_mirror_path",
        "steps[].requires",
        "steps[].skill_refs",
        "steps[].inputs",
        "steps[].outputs",
        "steps[].automatable",
    },
    "cursor_skill": {"flow.vault_mirror_path", "steps[].automatable"},
    "mcp_prompt": {
        "flow.tags",
        "flow.vault_mirror_path",
        "steps[].trigger",
        "steps[].when_not_to_run",
        "steps[].outputs",
        "steps[].automatable",
    },
    "cli_runbook": {"flow.vault_mirror_path"},
    "agent_bundle": set(),
}


def present(raw: dict[str, Any]) -> set[str]:
    """The content fields a raw bundle holds (an empty list holds nothing)."""

    def holds(value: Any) -> bool:
        return value not in (None, [], "")

    out = {f for f in ORDER if f.startswith("flow.") and holds(raw["flow"].get(f[5:]))}
    for step in raw["steps"]:
        out |= {f for f in ORDER if f.startswith("steps[].") and holds(step.get(f[8:]))}
    return out


def expected_dropped(harness: str, raw: dict[str, Any]) -> list[str]:
    held = present(raw)
    return [f for f in ORDER if f in LEAVES_OUT[harness] and f in held]


def starter_raw(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((starter_dir() / name).read_text(encoding="utf-8"))
    return data


def starter_workspace(root: Path, scopes: tuple[str, ...] = ("personal", "project")) -> Path:
    """The six starter bundles, byte for byte, in a trusted workspace seeing ``scopes``."""
    flows = root / "flows"
    flows.mkdir(parents=True)
    for name in STARTER_FILES:
        shutil.copyfile(starter_dir() / name, flows / name)
    write_config(root, writes=True, automatable=False, policy={"scopes": list(scopes)})
    return root


def open_ctx(root: Path) -> FlowContext:
    return FlowContext.open(Workspace.open(root))


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    rc, out, _ = run_cli(capsys, *argv, "--json")
    return rc, json.loads(out)
