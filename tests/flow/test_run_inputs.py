"""Required run inputs are required, and typed, on every surface (`core.flow.run_inputs`).

A start without a required value, or with a value that is not of the declared type, is
``BAD_REQUEST`` with one problem per bad input (``inputs.<name>``), the same body over the
CLI, MCP and REST, and no run is created; valid inputs still start.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.flow import ids
from core.flow.models import FlowInput
from core.flow.run_inputs import input_problems, problems_text

from .conftest import SHEET_URL, make_workspace, share_actor_key
from .test_integration import RestSurface, direct, make_cli, mcp

LEAD = {"flow_id": "flow_lead_import", "flow_version": "1.0.0"}
MISSING = {"ok": False, "status": 400, "code": "BAD_REQUEST"}


def declared(*specs: tuple[str, str, bool]) -> list[FlowInput]:
    return [FlowInput(name=n, type=t, required=r) for n, t, r in specs]


def problems(decl: list[FlowInput], given: dict[str, Any] | None) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in input_problems(decl, given)]


URL = "must be an http or https URL"
BAD_URLS = [
    "notaurl",
    "ftp://h/x",
    "https://",
    "https://a b",
    "javascript:alert(1)",
    "https://h/\x1b",
]
NOT_NUMBERS = ["nan", "inf", "1_000", "one", "1.2.3"]


@pytest.mark.parametrize(
    ("kind", "good", "bad", "message"),
    [
        ("url", ["https://a.example/x?y=1", "http://h"], BAD_URLS, URL),
        ("number", ["1", "-2.5", "3e4", ".5"], NOT_NUMBERS, "must be a number"),
        ("integer", ["0", "-12", "+7"], ["1.0", "x", "1e3"], "must be an integer"),
        ("int", ["5"], ["5.5"], "must be an integer"),
        ("boolean", ["true", "false"], ["yes", "True", "1"], "must be true or false"),
        ("enum:low|high", ["low", "high"], ["LOW", "mid"], "must be one of low, high"),
        ("string", ["anything at all"], [], ""),
        ("URL", ["https://h"], ["h"], URL),
    ],
)
def test_each_declared_type_accepts_its_values_and_refuses_others(
    kind: str, good: list[str], bad: list[str], message: str
) -> None:
    decl = declared(("v", kind, True))
    for value in good:
        assert problems(decl, {"v": value}) == [], value
    for value in bad:
        assert problems(decl, {"v": value}) == [("inputs.v", message)], value


def test_required_and_optional_inputs() -> None:
    decl = declared(("sheet_url", "url", True), ("note", "string", False), ("n", "integer", False))
    assert problems(decl, None) == [("inputs.sheet_url", "is required (url)")]
    assert problems(decl, {"sheet_url": "   "}) == [("inputs.sheet_url", "is required (url)")]
    assert problems(decl, {"sheet_url": SHEET_URL, "note": "", "n": ""}) == []  # blank = absent
    # Every bad input is listed, an unknown name first, values never quoted.
    listed = problems(decl, {"sheet_url": "notaurl", "n": "x", "zzz": "secret-token"})
    assert listed == [
        ("inputs", "names an input the flow does not declare"),
        ("inputs.sheet_url", "must be an http or https URL"),
        ("inputs.n", "must be an integer"),
    ]
    assert "secret" not in str(listed) and "notaurl" not in str(listed)
    text = problems_text(input_problems(decl, {"n": "x"}))
    assert text == "sheet_url is required (url); n must be an integer"


# ---------------------------------------------------------------- every surface


@pytest.fixture
def reset_ids(monkeypatch: pytest.MonkeyPatch, clock: Any) -> Callable[[], None]:
    state = {"counter": itertools.count(1)}

    def token(nbytes: int = 10) -> str:
        return f"{next(state['counter']):0{nbytes * 2}d}"

    def reset() -> None:
        state["counter"] = itertools.count(1)

    monkeypatch.setattr(ids, "new_token", token)
    return reset


def _script(surface: Any, root: Path) -> list[dict[str, Any]]:
    return [
        surface(root, "start", dict(LEAD)),
        surface(root, "start", {**LEAD, "inputs": {"sheet_url": ""}}),
        surface(root, "start", {**LEAD, "inputs": {"sheet_url": "notaurl"}}),
        surface(root, "list", {}),
        surface(root, "start", {**LEAD, "inputs": {"sheet_url": SHEET_URL}}),
        surface(root, "list", {}),
    ]


@pytest.mark.usefixtures("both_stores")
def test_cli_mcp_and_rest_refuse_bad_inputs_alike_and_create_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reset_ids: Any, fresh_store: Any
) -> None:
    results = {}
    with RestSurface() as rest:
        surfaces = (("direct", direct), ("mcp", mcp), ("cli", make_cli(capsys)), ("rest", rest))
        for name, surface in surfaces:
            reset_ids()
            fresh_store()
            root = make_workspace(tmp_path / name)
            share_actor_key(root)
            results[name] = _script(surface, root)
    assert results["direct"] == results["mcp"] == results["cli"] == results["rest"]
    missing, blank, wrong, listed, started, after = results["cli"]
    required = [{"path": "inputs.sheet_url", "message": "is required (url)"}]
    assert {k: missing[k] for k in MISSING} == MISSING and missing["problems"] == required
    assert blank == missing
    assert wrong["code"] == "BAD_REQUEST" and wrong["problems"] == [
        {"path": "inputs.sheet_url", "message": "must be an http or https URL"}
    ]
    assert listed["runs"] == []  # nothing was written by the three refusals
    assert started["run"]["flow_id"] == "flow_lead_import"
    assert [r["run_id"] for r in after["runs"]] == [started["run"]["run_id"]]
