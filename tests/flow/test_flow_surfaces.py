"""Flow definitions on every surface (Flow v0 §3): list, get and propose give deep-equal
records (refusals included) on direct calls, the MCP tools, the CLI and the REST routes, on
SQLite and PostgreSQL; proposals are shown (with what they change) and decided by a human
on the CLI, REST and the app, never by an agent; read-only commands and refused starts write
nothing; and the whole story an agent with no prior knowledge tells over MCP: list, get,
propose an edit, a human approves it in the app, the agent runs the new version.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from textual.widgets import Static

from core import cli
from core.flow import FlowContext, ids, run_action, to_json
from core.mcp.server import build_server
from core.workspace import Workspace
from noma_tui.screens.proposal import ProposalReviewScreen

from .conftest import (
    ACTOR,
    bundle,
    make_workspace,
    owner_headers,
    share_actor_key,
    starter_bundle,
    step,
)
from .test_integration import RestSurface
from .test_pane import SIZE, PaneApp, press, settle

Surface = Callable[[Path, str, dict[str, Any]], dict[str, Any]]
WR = "flow_weekly_review"


@pytest.fixture
def reset_ids(monkeypatch: pytest.MonkeyPatch, clock: Any) -> Callable[[], None]:
    """Pinned ids that start again at 1 for each surface's fresh workspace."""
    state = {"counter": itertools.count(1)}

    def token(nbytes: int = 10) -> str:
        return f"{next(state['counter']):0{nbytes * 2}d}"

    def reset() -> None:
        state["counter"] = itertools.count(1)

    monkeypatch.setattr(ids, "new_token", token)
    return reset


def edited(version: str = "1.1.0") -> dict[str, Any]:
    """The starter flow with step 2 reworded and the summary changed: an edit."""
    out = starter_bundle(version)
    out["flow"]["summary"] = "A test flow, with the reason written down."
    out["steps"][1]["instruction"] = "Do part 2, and write down why it applies."
    return out


def team_only() -> dict[str, Any]:
    """A project-scoped flow: invisible to a workspace whose policy lists only personal."""
    return bundle("flow_team_only", [step("flow_team_only", 1)], scope="project")


def broken() -> dict[str, Any]:
    """Not a flow step: no trigger, no verification (the anatomy rule)."""
    out = bundle("flow_broken", [step("flow_broken", 1)])
    del out["steps"][0]["trigger"], out["steps"][0]["verification"]
    return out


def workspace(root: Path) -> Path:
    made = make_workspace(root, bundles=[starter_bundle(), team_only()])
    share_actor_key(made)  # one person in every workspace: the same keyed hash
    return made


# ------------------------------------------------------------------------- surfaces


def direct(root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = FlowContext.open(Workspace.open(root))
    try:
        return to_json(run_action(ctx, action, payload))
    finally:
        ctx.close()


MCP_TOOLS = {"flows": "flow_list", "flow": "flow_get", "propose": "flow_propose"}


def mcp(root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    server = build_server(root)
    result = asyncio.run(server.call_tool(MCP_TOOLS[action], payload))
    assert not result.is_error, result
    return cast(dict[str, Any], json.loads(result.content[0].text))


def make_cli(capsys: pytest.CaptureFixture[str], scratch: Path) -> Surface:
    def run(root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
        if action == "flows":
            argv = ["list"] + [
                a for k in ("scope", "tag") if k in payload for a in (f"--{k}", payload[k])
            ]
        elif action == "flow":
            argv = ["get", payload["flow_id"]]
            argv += ["--version", payload["version"]] if "version" in payload else []
        elif action == "propose":
            scratch.mkdir(exist_ok=True)
            path = scratch / f"bundle{len(list(scratch.iterdir()))}.json"
            path.write_text(json.dumps(payload["bundle"]), encoding="utf-8")
            argv = ["propose", str(path), "--intent", payload["intent"]]
        elif action == "proposal":
            argv = ["review", payload["proposal_id"]]
        elif action == "review":
            decision = "--approve" if payload["approve"] else "--reject"
            argv = ["review", payload["proposal_id"], decision]
        else:
            raise AssertionError(action)
        capsys.readouterr()
        rc = cli.main(["flow", *argv, "--root", str(root), "--json"])
        out = json.loads(capsys.readouterr().out)
        assert rc == (1 if out.get("ok") is False else 0)
        return cast(dict[str, Any], out)

    return run


class Rest(RestSurface):
    """The definition and proposal routes, with the human token of the workspace's actor."""

    def __call__(self, root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
        client, token = self._client(root)
        auth = {"Authorization": f"Bearer {token}"}
        body = dict(payload)
        if action == "flows":
            r = client.get("/api/v1/flows", params=body, headers=auth)
        elif action == "flow":
            flow_id = body.pop("flow_id")
            r = client.get(f"/api/v1/flows/{flow_id}", params=body, headers=auth)
        elif action == "propose":
            r = client.post("/api/v1/flows", json=body, headers=auth)
        elif action == "proposal":
            r = client.get(f"/api/v1/flow-proposals/{body['proposal_id']}", headers=auth)
        elif action == "review":
            pid = body.pop("proposal_id")
            r = client.post(f"/api/v1/flow-proposals/{pid}/review", json=body, headers=auth)
        else:
            raise AssertionError(action)
        out = cast(dict[str, Any], r.json())
        if out.get("ok") is False:
            assert r.status_code == out["status"]
        else:
            assert r.status_code == (201 if action == "propose" else 200)
        return out


def definitions_script(surface: Surface, root: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def call(action: str, **payload: Any) -> dict[str, Any]:
        result = surface(root, action, payload)
        out.append(result)
        return result

    call("flows")
    call("flows", scope="personal", tag="test")
    call("flows", tag="no-such-tag")
    call("flow", flow_id=WR)
    call("flow", flow_id=WR, version="1.0.0")
    call("flow", flow_id=WR, version="9.9.9")
    call("flow", flow_id="flow_team_only")  # exists, but not in the caller's scopes
    call("flow", flow_id="flow_nowhere")
    call("propose", bundle=edited(), intent="Say why step 2 applies")
    call("propose", bundle=starter_bundle(), intent="The same again")
    call("propose", bundle=edited("1.0.0"), intent="Rewrite 1.0.0 in place")
    call("propose", bundle=edited("0.9.0"), intent="Older than the newest")
    call("propose", bundle=broken(), intent="Not a flow")
    call(
        "propose",
        bundle=bundle("flow_x", [step("flow_x", 1)], scope="project"),
        intent="x",
    )
    call("propose", bundle=bundle("flow_fresh", [step("flow_fresh", 1)]), intent="A new one")
    call("flows")
    return out


@pytest.mark.usefixtures("both_stores")
def test_list_get_propose_are_deep_equal_on_every_surface(
    tmp_path,
    capsys,
    reset_ids,
    fresh_store,
):
    results = {}
    with Rest() as rest:
        surfaces = (
            ("direct", direct),
            ("mcp", mcp),
            ("cli", make_cli(capsys, tmp_path / "bundles")),
            ("rest", rest),
        )
        for name, surface in surfaces:
            reset_ids()
            fresh_store()
            results[name] = definitions_script(surface, workspace(tmp_path / name))
    assert results["direct"] == results["mcp"] == results["cli"] == results["rest"]
    got = results["direct"]
    assert [f["flow_id"] for f in got[0]["flows"]] == [WR]  # the project flow is not listed
    assert got[1]["flows"] == got[0]["flows"] and got[2]["flows"] == []
    assert got[3]["bundle"]["flow"]["version"] == "1.0.0" and got[4] == got[3]
    assert [r["code"] for r in got[5:8]] == ["unknown_flow"] * 3
    proposal = got[8]["proposal"]
    assert got[8]["active"] is False and proposal["kind"] == "flow_change"
    assert (proposal["status"], proposal["base_version"]) == ("pending", "1.0.0")
    assert proposal["intent"] == "Say why step 2 applies"
    assert [r.get("code") for r in got[9:14]] == [
        "BAD_REQUEST",
        "FLOW_VERSION_CONFLICT",
        "BAD_REQUEST",
        "BAD_REQUEST",
        "FLOW_IMPORT_SCOPE_DENIED",
    ]
    assert {p["path"] for p in got[12]["problems"]} >= {
        "bundle.steps[0].trigger",
        "bundle.steps[0].verification",
    }
    assert got[14]["proposal"]["base_version"] is None
    pending = got[15]["pending_changes"]
    assert [(p["flow_id"], p["version"], p["base_version"]) for p in pending] == [
        (WR, "1.1.0", "1.0.0"),
        ("flow_fresh", "1.0.0", None),
    ]
    assert [f["version"] for f in got[15]["flows"]] == ["1.0.0"]  # nothing went live


def review_script(surface: Surface, root: Path) -> list[dict[str, Any]]:
    """A human sees what a proposal changes, approves it; the new version is the newest."""
    out: list[dict[str, Any]] = []

    def call(action: str, **payload: Any) -> dict[str, Any]:
        result = surface(root, action, payload)
        out.append(result)
        return result

    pid = call("propose", bundle=edited(), intent="Say why")["proposal"]["proposal_id"]
    call("proposal", proposal_id=pid)
    call("proposal", proposal_id="prop_nope")
    call("proposal", proposal_id="not a proposal")
    call("review", proposal_id=pid, approve=True)
    call("review", proposal_id=pid, approve=False)  # decided already
    call("flow", flow_id=WR)
    call("flows")
    return out


@pytest.mark.usefixtures("both_stores")
def test_review_shows_the_change_and_approval_makes_it_the_newest_version(
    tmp_path,
    capsys,
    reset_ids,
    fresh_store,
):
    results = {}
    with Rest() as rest:
        surfaces = (
            ("direct", direct),
            ("cli", make_cli(capsys, tmp_path / "bundles")),
            ("rest", rest),
        )
        for name, surface in surfaces:
            reset_ids()
            fresh_store()
            results[name] = review_script(surface, workspace(tmp_path / name))
    assert results["direct"] == results["cli"] == results["rest"]
    got = results["direct"]
    shown = got[1]
    assert shown["base_version"] == "1.0.0" and shown["bundle"] == edited()
    assert shown["changes"] == {
        "new_flow": False,
        "flow_fields": ["summary", "version"],
        "steps_added": [],
        "steps_removed": [],
        "steps_changed": [{"step_id": f"{WR}#2", "fields": ["instruction"]}],
    }
    assert "+  instruction: Do part 2, and write down why it applies.\n" in shown["diff"]
    assert "-  instruction: Do part 2 of the procedure.\n" in shown["diff"]
    assert [r.get("code") for r in got[2:4]] == ["unknown_proposal", "BAD_REQUEST"]
    assert got[4]["proposal"]["status"] == "approved" and got[4]["active"] is True
    assert got[5]["code"] == "BAD_REQUEST"
    assert got[6]["bundle"] == edited()  # the newest version now
    assert [f["version"] for f in got[7]["flows"]] == ["1.0.0", "1.1.0"]
    assert got[7]["pending_changes"] == []


def test_cli_review_without_a_decision_prints_the_change(tmp_path, capsys):
    root = workspace(tmp_path / "ws")
    path = tmp_path / "edit.flow.yaml"
    import yaml

    path.write_text(yaml.safe_dump(edited(), sort_keys=False), encoding="utf-8")
    assert cli.main(["flow", "propose", str(path), "--root", str(root), "--intent", "why"]) == 0
    pid = capsys.readouterr().out.split()[0]
    assert cli.main(["flow", "list", "--root", str(root)]) == 0
    assert f"{pid}  proposed {WR}@1.1.0 (after 1.0.0)" in capsys.readouterr().out
    assert cli.main(["flow", "review", pid, "--root", str(root)]) == 0
    shown = capsys.readouterr().out
    assert (
        f"changes against 1.0.0:\n  flow fields: summary, version\n"
        f"  step {WR}#2 changed: instruction" in shown
    )
    assert "+  instruction: Do part 2, and write down why it applies." in shown
    assert cli.main(["flow", "propose", str(tmp_path / "missing.json"), "--root", str(root)]) == 2
    (tmp_path / "bad.yaml").write_text("flow: [", encoding="utf-8")
    assert cli.main(["flow", "propose", str(tmp_path / "bad.yaml"), "--root", str(root)]) == 1
    assert "BAD_REQUEST (400)" in capsys.readouterr().err


def test_an_agent_may_propose_but_never_approve(tmp_path):
    from starlette.testclient import TestClient

    from core.hub.app import Hub, create_hub_app

    root = workspace(tmp_path / "ws")
    server = build_server(root)
    tools = {t.name for t in asyncio.run(server.list_tools())}
    assert {"flow_list", "flow_get", "flow_propose"} <= tools
    assert not any("review" in t or "approve" in t for t in tools)
    refused = asyncio.run(
        server.call_tool("flow_run", {"action": "review", "proposal_id": "prop_1", "approve": True})
    )
    assert json.loads(refused.content[0].text)["code"] == "BAD_REQUEST"
    hub = Hub.open(root)
    try:
        client = TestClient(create_hub_app(hub), base_url="http://127.0.0.1")
        made = client.post(
            "/api/v1/flows", json={"bundle": edited(), "intent": "why"}, headers=owner_headers()
        )
        assert made.status_code == 201
        pid = made.json()["proposal"]["proposal_id"]
        url = f"/api/v1/flow-proposals/{pid}/review"
        agent = client.post(url, json={"approve": True}, headers=owner_headers())
        assert agent.status_code == 403
        assert agent.json()["code"] == "FLOW_HUMAN_APPROVAL_REQUIRED"
        seen = client.get(f"/api/v1/flow-proposals/{pid}", headers=owner_headers())
        assert seen.json()["proposal"]["status"] == "pending"  # the refusal changed nothing
        token, _ = hub.tokens.create(ACTOR, human=True)
        human = client.post(
            url, json={"approve": True}, headers={"Authorization": f"Bearer {token}"}
        )
        assert human.status_code == 200 and human.json()["proposal"]["status"] == "approved"
        body = client.post(
            url, json={"approve": "yes please"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert body.status_code == 400 and body.json()["code"] == "BAD_REQUEST"
    finally:
        hub.close()


def test_rest_propose_refuses_what_is_not_a_proposal(tmp_path):
    from starlette.testclient import TestClient

    from core.hub.app import Hub, create_hub_app

    root = workspace(tmp_path / "ws")
    hub = Hub.open(root)
    try:
        client = TestClient(create_hub_app(hub), base_url="http://127.0.0.1")
        for body in ({}, {"bundle": "flow: x"}, {"bundle": edited(), "extra": 1}, [edited()]):
            r = client.post("/api/v1/flows", json=body, headers=owner_headers())
            assert r.status_code == 400 and r.json()["code"] == "BAD_REQUEST", body
        r = client.post(
            "/api/v1/flows",
            content=b'{"bundle": {',
            headers={**owner_headers(), "Content-Type": "application/json"},
        )
        assert r.status_code == 400
        listed = client.get("/api/v1/flow-proposals?status=pending", headers=owner_headers())
        assert listed.status_code == 200 and listed.json()["proposals"] == []
        assert client.get("/api/v1/flows?scope=galaxy", headers=owner_headers()).status_code == 400
    finally:
        hub.close()


# ---------------------------------------------------------------- nothing written


def tree(root: Path) -> list[tuple[str, int]]:
    return sorted((p.relative_to(root).as_posix(), p.stat().st_size) for p in root.rglob("*"))


def test_read_only_commands_and_refused_starts_write_nothing(tmp_path, capsys):
    root = make_workspace(tmp_path / "ws", writes=False, automatable=False)
    before = tree(root)
    assert not (root / ".noma-workbench").exists()
    calls = [
        (["flow", "list"], 0),
        (["flow", "list", "--json"], 0),
        (["flow", "get", WR], 0),
        (["flow", "get", WR, "--json"], 0),
        (["flow", "export", WR], 0),
        (["flow", "proposals"], 0),
        (["flow", "run", "list"], 0),
        (["flow", "run", "get", "run_nothere"], 1),
        (["flow", "run", "start", WR, "--version", "1.0.0"], 1),
        (["flow", "run", "start", WR, "--latest", "--json"], 1),
        (["flow", "project", WR, "--harness", "cursor_rule"], 0),
        (["flow", "candidates", "list"], 0),
    ]
    for argv, rc in calls:
        assert cli.main([*argv, "--root", str(root)]) == rc, argv
    assert "FLOW_RUN_WRITES_DISABLED" in capsys.readouterr().err
    server = build_server(root)
    for tool, args in (
        ("flow_list", {}),
        ("flow_get", {"flow_id": WR}),
        ("flow_run", {"action": "start", "flow_id": WR, "flow_version": "1.0.0"}),
        ("flow_run", {"action": "list"}),
        ("flow_project", {"flow_id": WR, "harness": "mcp_prompt"}),
        ("flow_candidate_list", {}),
    ):
        result = asyncio.run(server.call_tool(tool, args))
        assert not result.is_error
    assert tree(root) == before
    assert not (root / ".noma-workbench" / "actor.key").exists()
    assert not (root / ".noma-workbench" / "runs.sqlite3").exists()


# ------------------------------------------------------------ the agent's story


def agent_call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    async def go() -> dict[str, Any]:
        result = await server.call_tool(tool, args)
        assert not result.is_error, result
        return cast(dict[str, Any], json.loads(result.content[0].text))

    return go()


@pytest.fixture
def story_root(tmp_path: Path) -> Iterator[Path]:
    yield make_workspace(tmp_path / "ws", bundles=[starter_bundle()])  # gates on, trusted


async def test_an_agent_edits_a_flow_a_human_approves_it_in_the_app_the_agent_runs_it(
    story_root, clock, pinned_ids
):
    """No prior knowledge: the agent finds the flow, reads it, proposes an edit (a new
    version); it cannot run it yet; the human opens the proposal in the app, sees the
    change, approves it; the agent starts a run pinned to the new version."""
    server = build_server(story_root)
    listing = await agent_call(server, "flow_list", {})
    flow_id = listing["flows"][0]["flow_id"]
    got = await agent_call(server, "flow_get", {"flow_id": flow_id})
    edit = copy.deepcopy(got["bundle"])
    edit["flow"]["version"] = "1.1.0"
    edit["steps"][1]["instruction"] = "Do part 2, and write down why it applies."
    proposed = await agent_call(
        server, "flow_propose", {"bundle": edit, "intent": "Record why step 2 applies"}
    )
    assert proposed["active"] is False and proposed["proposal"]["status"] == "pending"
    early = await agent_call(
        server, "flow_run", {"action": "start", "flow_id": flow_id, "flow_version": "1.1.0"}
    )
    assert early["code"] == "unknown_flow"  # a proposal is never a live definition

    app = PaneApp(story_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "P", "enter")  # the one pending proposal, opened
        screen = app.screen
        assert isinstance(screen, ProposalReviewScreen)
        summary = "\n".join(screen.summary)
        assert (
            f"changes against 1.0.0:\n  flow fields: version\n"
            f"  step {flow_id}#2 changed: instruction" in summary
        )
        diff = str(screen.query_one("#proposal-diff", Static).render())
        assert "+  instruction: Do part 2, and write down why it applies." in diff
        await press(pilot, "a")
        assert app.pane.last_status.endswith("approved"), app.pane.last_status

    run = await agent_call(
        server, "flow_run", {"action": "start", "flow_id": flow_id, "flow_version": "1.1.0"}
    )
    assert run["run"]["flow_version"] == "1.1.0" and run["run"]["status"] in (
        "pending",
        "in_progress",
    )
    listing = await agent_call(server, "flow_list", {})
    assert [f["version"] for f in listing["flows"]] == ["1.0.0", "1.1.0"]


async def test_the_review_screen_rejects_and_goes_back_without_deciding(
    story_root, clock, pinned_ids
):
    ctx = FlowContext.open(Workspace.open(story_root))
    try:
        new = bundle("flow_fresh", [step("flow_fresh", 1, instruction="[b]not markup[/b]")])
        made = run_action(ctx, "propose", {"bundle": new, "intent": "A new one"})
        assert isinstance(made, dict)
    finally:
        ctx.close()
    app = PaneApp(story_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "P", "enter", "escape")  # looked, decided nothing
        assert not isinstance(app.screen, ProposalReviewScreen)
        await press(pilot, "P", "enter")
        screen = app.screen
        assert isinstance(screen, ProposalReviewScreen)
        assert "a new flow: every step below is added" in screen.summary
        diff = str(screen.query_one("#proposal-diff", Static).render())
        assert "[b]not markup[/b]" in diff  # shown as text, never interpreted
        await press(pilot, "r")
        assert app.pane.last_status.endswith("rejected")
    assert not (story_root / "flows" / "flow_fresh.1.0.0.flow.yaml").exists()


# ------------------------------------------------------------------------ the demo


async def test_the_demo_turns_on_what_its_tour_needs_and_says_why(tmp_path, capsys):
    from core.flow.posture import Posture
    from noma_tui.demo import ensure_demo_copy

    root = ensure_demo_copy(tmp_path / "demo")  # the product's own copy: trusted
    posture = Posture.from_workspace(Workspace.open(root))
    on = {k for k, v in posture.gates.model_dump().items() if v}
    assert on == {"run_writes_enabled", "automatable_execution_enabled"}
    assert set(posture.why) == on  # every gate the demo turns on says what for
    assert posture.policy.allowed_lanes == ["local_default"]
    assert posture.policy.scopes == ["personal"]
    assert cli.main(["flow", "list", "--root", str(root)]) == 0
    listing = capsys.readouterr().out
    assert "  run writes is on: the demo tour starts and advances both flows" in listing
    assert "  automatable is on: the demo tour executes lead_import step 1" in listing
    app = PaneApp(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        writes = app.pane.query_one("#flow-why-writes", Static)
        auto = app.pane.query_one("#flow-why-automatable", Static)
        assert writes.display and auto.display
        assert str(writes.render()).startswith("writes ON: the demo tour starts")
        assert str(auto.render()).startswith("automatable ON: the demo tour executes")


async def test_a_workspace_without_reasons_shows_no_why_line(tmp_path):
    root = make_workspace(tmp_path / "ws")
    app = PaneApp(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not any(line.display for line in app.pane.query(".flow-why"))
        assert "writes ON" in str(app.pane.query_one("#flow-header", Static).render())
