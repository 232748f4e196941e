"""Tiers 4 and 6 of §9 for the catalog surfaces (list, get, project), on both run stores.

Stress: 10,000 flows in three scopes, and a 100-step flow, stay correct: every visible
flow listed once, none of another scope, each `get` the bundle written, each projection
all its steps in order. Performance as bounded work (never wall time; the figures live in
``bench/``): the catalog parses each bundle file once however often it is listed or read,
and again only when that file changes."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.flow import FlowContext, get_flow, list_flows, to_json
from core.flow import catalog as catalog_module
from core.flow.projection import project_flow

from .conftest import bundle, make_workspace, open_ctx, step

FLOWS = 10_000
SCOPES = ("personal", "project", "org")
SEEN = ("personal", "project")  # the workspace's actor holds these two


def _small(index: int) -> dict[str, Any]:
    flow_id = f"flow_s{index:05d}"
    return bundle(flow_id, [step(flow_id, 1)], scope=SCOPES[index % 3])


def _write(root: Path, data: dict[str, Any]) -> None:
    """A Knowtation-style ``flows/<flow_id>.json`` (JSON parses ~50x faster than YAML)."""
    flows = root / "flows"
    flows.mkdir(exist_ok=True)
    (flows / f"{data['flow']['flow_id']}.json").write_text(json.dumps(data), "utf-8")


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_workspace(
        tmp_path_factory.mktemp("many"), bundles=[], policy={"scopes": list(SCOPES)}
    )
    for index in range(FLOWS):
        _write(root, _small(index))
    return root


@pytest.fixture
def seen_ctx(many: Path, both_stores: str) -> Iterator[FlowContext]:
    ctx = open_ctx(many)
    ctx.actor = ctx.actor_named("tier-actor", SEEN)
    try:
        yield ctx
    finally:
        ctx.close()


def _answer(result: Any) -> dict[str, Any]:
    out = to_json(result)
    assert isinstance(out, dict)
    return out


def test_ten_thousand_flows_list_each_visible_flow_once(seen_ctx: FlowContext) -> None:
    listed = _answer(list_flows(seen_ctx))["flows"]
    ids = [f["flow_id"] for f in listed]
    expected = [f"flow_s{i:05d}" for i in range(FLOWS) if SCOPES[i % 3] in SEEN]
    assert ids == expected  # sorted by id, each once, none of the unseen scope
    assert {f["scope"] for f in listed} == set(SEEN)
    again = _answer(list_flows(seen_ctx))["flows"]
    assert again == listed


def test_ten_thousand_flows_get_returns_each_bundle_as_written(seen_ctx: FlowContext) -> None:
    for index in random.Random(5).sample(range(FLOWS), 20):
        flow_id = f"flow_s{index:05d}"
        answer = _answer(get_flow(seen_ctx, flow_id))
        if SCOPES[index % 3] in SEEN:
            written = json.loads((seen_ctx.catalog.flows_dir / f"{flow_id}.json").read_text())
            assert answer["bundle"] == written, flow_id
        else:  # out of scope answers exactly like a missing flow
            assert answer == _answer(get_flow(seen_ctx, "flow_nowhere"))
            assert answer["code"] == "unknown_flow"


def test_a_hundred_step_flow_gets_and_projects_every_step_in_order(
    tmp_path: Path, both_stores: str
) -> None:
    flow_id = "flow_long_procedure"
    steps = [step(flow_id, n, instruction=f"Carry out stage {n}.") for n in range(1, 101)]
    root = make_workspace(tmp_path / "ws", bundles=[bundle(flow_id, steps)])
    ctx = open_ctx(root)
    try:
        got = _answer(get_flow(ctx, flow_id))["bundle"]
        assert [s["ordinal"] for s in got["steps"]] == list(range(1, 101))
        for harness in ("cursor_rule", "cli_runbook", "agent_bundle"):
            record = _answer(project_flow(ctx, {"flow_id": flow_id, "harness": harness}))
            rendered = json.dumps(record)
            places = [rendered.find(f"Carry out stage {n}.") for n in range(1, 101)]
            assert -1 not in places, harness
            assert places == sorted(places), harness
    finally:
        ctx.close()


def test_each_bundle_is_parsed_once_however_often_it_is_read(
    tmp_path: Path, both_stores: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path / "ws", bundles=[])
    for index in range(0, 60, 3):
        _write(root, _small(index))
    loads: list[Path] = []
    real = catalog_module._load

    def counting(path: Path) -> Any:
        loads.append(path)
        return real(path)

    monkeypatch.setattr(catalog_module, "_load", counting)
    ctx = open_ctx(root)
    try:
        assert len(_answer(list_flows(ctx))["flows"]) == 20
        assert len(loads) == 20
        for _ in range(5):
            _answer(list_flows(ctx))
            _answer(get_flow(ctx, "flow_s00003"))
            _answer(project_flow(ctx, {"flow_id": "flow_s00006", "harness": "mcp_prompt"}))
        assert len(loads) == 20  # nothing parsed again while nothing changed
        changed = _small(9)
        changed["flow"]["title"] = "Retitled"
        _write(root, changed)
        assert _answer(get_flow(ctx, "flow_s00009"))["bundle"]["flow"]["title"] == "Retitled"
        assert loads[20:] == [root / "flows" / "flow_s00009.json"]  # only the changed file
    finally:
        ctx.close()
