"""The flow pane on a remote hub (``[hub] url`` + ``NOMA_HUB_TOKEN``): the same keyboard
scripts as the local pane tests, against a live hub over HTTP, give the same run records
(deep-equal after removing generated ids and timestamps); the hub holds the run, the
pane's own workspace holds nothing; what the hub does not serve is a clear refusal line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.flow import FlowContext, run_action
from core.flow.lanes import ProviderLane
from core.hub.app import Hub
from core.hub.client import HubClient
from core.workspace import Workspace
from noma_tui.screens.picker import PickerScreen
from tests.workspace_trust import trust_folder

from .conftest import ACTOR, FakeLane, make_workspace, share_actor_key
from .test_hub_http import serving
from .test_pane import (
    SIZE,
    PaneApp,
    drive_automatable_run,
    drive_manual_run,
    finish_manual_run,
    press,
    settle,
    states,
    workspace_with_document,
)


@pytest.fixture(autouse=True)
def fake_lane(monkeypatch: pytest.MonkeyPatch) -> FakeLane:
    lane = FakeLane()
    monkeypatch.setattr(
        "core.flow.context.default_lanes",
        lambda root: {"local_default": lane, "cloud_premium": ProviderLane("cloud_premium")},
    )
    return lane


def point_at_hub(root: Path, url: str) -> None:
    with (root / "noma-workbench.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[hub]\nurl = "{url}"\n')
    trust_folder(root)  # the user trusts the folder with this hub (core.trust)


def comparable(run: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if k not in ("run_id", "started")}


def hub_runs(root: Path) -> list[dict[str, Any]]:
    ctx = FlowContext.open(Workspace.open(root))
    try:
        out = run_action(ctx, "list", {})
        assert isinstance(out, dict)
        return list(out["runs"])
    finally:
        ctx.close()


@pytest.mark.long(29)
async def test_the_pane_on_a_hub_matches_the_local_pane(
    tmp_path: Path, clock, pinned_ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_root, local_doc = workspace_with_document(tmp_path / "local")
    share_actor_key(local_root)
    app = PaneApp(local_root, local_doc)
    async with app.run_test(size=SIZE) as pilot:
        await drive_manual_run(pilot)
        await finish_manual_run(pilot)
        await drive_automatable_run(pilot)
        local = {r.flow_id: r.to_json() for r in app.pane.runs}

    hub_root = make_workspace(tmp_path / "hub")
    share_actor_key(hub_root)  # the hub knows the same person under the same key
    hub = Hub.open(hub_root, require_tokens=True)
    token, _ = hub.tokens.create(ACTOR, human=True)
    client_root, client_doc = workspace_with_document(tmp_path / "client")
    try:
        with serving(hub) as (url, _):
            point_at_hub(client_root, url)
            monkeypatch.setenv("NOMA_HUB_TOKEN", token)
            app = PaneApp(client_root, client_doc)
            async with app.run_test(size=SIZE) as pilot:
                assert isinstance(app.pane.backend, HubClient)
                await settle(pilot)
                header = str(app.pane.query_one("#flow-header").render())
                assert "writes ON" in header and "automatable ON" in header
                await drive_manual_run(pilot)
                await finish_manual_run(pilot)
                await drive_automatable_run(pilot)
                remote = {r.flow_id: r.to_json() for r in app.pane.runs}
                await press(pilot, "P")  # the hub's pending proposals, over its review routes
                assert isinstance(app.screen, PickerScreen), app.pane.last_status
                await press(pilot, "escape", "C")  # consents live on the hub's machine: no route
                assert app.pane.last_status.startswith("✗ BAD_REQUEST (400)")
    finally:
        hub.close()
    assert set(local) == set(remote) == {"flow_weekly_review", "flow_lead_import"}
    for flow_id in local:
        assert comparable(local[flow_id]) == comparable(remote[flow_id])
    on_hub = {r["flow_id"]: r for r in hub_runs(hub_root)}
    assert {f: r["run_id"] for f, r in on_hub.items()} == {
        f: r["run_id"] for f, r in remote.items()
    }
    assert hub_runs(client_root) == []  # the pane's own workspace store holds nothing


async def test_a_refused_token_is_a_line_not_a_crash(
    tmp_path: Path, clock, pinned_ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub_root = make_workspace(tmp_path / "hub")
    hub = Hub.open(hub_root, require_tokens=True)
    client_root, client_doc = workspace_with_document(tmp_path / "client")
    try:
        with serving(hub) as (url, _):
            point_at_hub(client_root, url)
            monkeypatch.setenv("NOMA_HUB_TOKEN", "nhub_" + "0" * 12 + "_" + "A" * 43)
            app = PaneApp(client_root, client_doc)
            async with app.run_test(size=SIZE) as pilot:
                await settle(pilot)
                assert app.pane.runs == []
                assert app.pane.last_status == (
                    "✗ BAD_REQUEST (400) Authorization: the hub refused the token: set "
                    "NOMA_HUB_TOKEN"
                )
                await pilot.press("n")
                await settle(pilot)
    finally:
        hub.close()
    assert hub_runs(hub_root) == []


async def test_an_agent_token_cannot_approve_from_the_pane(
    tmp_path: Path, clock, pinned_ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub_root = make_workspace(tmp_path / "hub")
    hub = Hub.open(hub_root, require_tokens=True)
    token, _ = hub.tokens.create(ACTOR)  # an agent's token
    client_root, client_doc = workspace_with_document(tmp_path / "client")
    try:
        with serving(hub) as (url, _):
            point_at_hub(client_root, url)
            monkeypatch.setenv("NOMA_HUB_TOKEN", token)
            app = PaneApp(client_root, client_doc)
            async with app.run_test(size=SIZE) as pilot:
                await drive_manual_run(pilot)
                await press(pilot, "v")
                assert app.pane.last_status.startswith("✗ FLOW_HUMAN_APPROVAL_REQUIRED (403)")
                assert states(app) == ["done", "skipped", "in_progress"]
    finally:
        hub.close()


async def test_the_pane_and_the_cli_and_rest_write_the_same_records(
    tmp_path: Path, clock, pinned_ids, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pane's keyboard run, replayed request by request through the CLI and the REST
    routes on fresh workspaces: the same run record and the same outcome proposal."""
    from core.flow.evidence import pointer_kind_for

    from .test_integration import RestSurface, make_cli
    from .test_pane import OP_ID, POST

    root, doc = workspace_with_document(tmp_path / "pane")
    share_actor_key(root)
    app = PaneApp(root, doc)
    async with app.run_test(size=SIZE) as pilot:
        await drive_manual_run(pilot)
        await finish_manual_run(pilot)
        assert app.pane.run is not None
        pane_run = app.pane.run.to_json()
    ctx = FlowContext.open(Workspace.open(root))
    try:
        proposals = run_action(ctx, "proposals", {})
    finally:
        ctx.close()
    assert isinstance(proposals, dict)
    [pane_proposal] = proposals["proposals"]

    def replay(surface: Any, where: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        f = "flow_weekly_review"
        rid = surface(where, "start", {"flow_id": f, "flow_version": "1.0.0"})["run"]["run_id"]
        steps: list[tuple[str, dict[str, Any]]] = [
            ("advance", {"step_id": f"{f}#1", "to_status": "in_progress"}),
            ("advance", {"step_id": f"{f}#1", "to_status": "done"}),
            ("evidence", {"step_id": f"{f}#1", "evidence_ref": OP_ID,
                          "pointer_kind": pointer_kind_for(OP_ID)}),
            ("advance", {"step_id": f"{f}#1", "to_status": "done"}),
            ("advance", {"step_id": f"{f}#2", "to_status": "skipped",
                         "skip_reason": "blocked_dependency"}),
            ("evidence", {"step_id": f"{f}#3", "evidence_ref": POST,
                          "pointer_kind": pointer_kind_for(POST)}),
            ("advance", {"step_id": f"{f}#3", "to_status": "in_progress"}),
            ("advance", {"step_id": f"{f}#3", "to_status": "done"}),
            ("advance", {"step_id": f"{f}#3", "to_status": "done", "approve": True}),
        ]  # fmt: skip
        for action, body in steps:
            surface(where, action, {"run_id": rid, **body})
        out = surface(where, "submit_review", {"run_id": rid, "intent": "Weekly review outcome"})
        run = surface(where, "get", {"run_id": rid})["run"]
        return run, out["proposal"]

    def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
        drop = ("run_id", "started", "proposal_id", "created", "external_ref")
        return {k: v for k, v in a.items() if k not in drop} == {
            k: v for k, v in b.items() if k not in drop
        }

    cli_root, _ = workspace_with_document(tmp_path / "cli")
    share_actor_key(cli_root)
    cli_run, cli_proposal = replay(make_cli(capsys), cli_root)
    rest_root, _ = workspace_with_document(tmp_path / "rest")
    share_actor_key(rest_root)
    with RestSurface() as rest:
        rest_run, rest_proposal = replay(rest, rest_root)
    assert same(pane_run, cli_run) and same(pane_run, rest_run)
    assert same(pane_proposal, cli_proposal) and same(pane_proposal, rest_proposal)
    assert pane_run["status"] == "done" and pane_proposal["kind"] == "flow_run_outcome"


def test_the_app_finds_the_owners_token_for_a_hub_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick start: `noma serve`, then the app on a folder pointing at it; nobody types
    a token (the app reads the owner's, for a loopback URL only)."""
    from noma_tui.flow_hub import open_flow_backend

    monkeypatch.delenv("NOMA_HUB_TOKEN", raising=False)
    hub = Hub.open(make_workspace(tmp_path / "hub"))
    client_root, _ = workspace_with_document(tmp_path / "client")
    try:
        with serving(hub) as (url, _):
            point_at_hub(client_root, url)
            backend = open_flow_backend(Workspace.open(client_root))
            assert isinstance(backend, HubClient)
            try:
                listed = backend.call("flows")
                assert isinstance(listed, dict), listed
                assert listed["schema"] == "noma.flow_list/v0"
            finally:
                backend.close()
    finally:
        hub.close()
