"""Tier 2 — integration: the CLI, the MCP ``flow_run`` tool, the hub's REST routes and
direct handler calls produce deep-equal records for start, get, list, advance, evidence,
consent, execute and submit; each sub-gate off gives the identical disabled code on every surface.

In-process surfaces run under pinned ids and a pinned clock, so four fresh, identical
workspaces driven the same way must agree byte for byte. A second test drives the real
``noma mcp`` stdio server and the ``noma`` CLI as subprocesses against one workspace.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest

from core import cli
from core.flow import FlowContext, ids, mint_consent, run_action, to_json
from core.flow.lanes import ProviderLane
from core.mcp.server import build_server
from core.workspace import Workspace

from .conftest import (
    GATE_MATRIX,
    SHEET_URL,
    STARTER_FILES,
    FakeLane,
    expected_execute_code,
    make_workspace,
    share_actor_key,
    starter_dir,
)

pytestmark = pytest.mark.usefixtures("both_stores")

REPO = Path(__file__).resolve().parents[2]
Surface = Callable[[Path, str, dict[str, Any]], dict[str, Any]]


@pytest.fixture(autouse=True)
def fake_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every surface opens its own context; give them all the same deterministic lane."""
    monkeypatch.setattr(
        "core.flow.context.default_lanes",
        lambda root: {"local_default": FakeLane(), "cloud_premium": ProviderLane("cloud_premium")},
    )


@pytest.fixture
def reset_ids(monkeypatch: pytest.MonkeyPatch, clock) -> Callable[[], None]:
    state = {"counter": itertools.count(1)}

    def token(nbytes: int = 10) -> str:
        return f"{next(state['counter']):0{nbytes * 2}d}"

    def reset() -> None:
        state["counter"] = itertools.count(1)

    monkeypatch.setattr(ids, "new_token", token)
    return reset


# ------------------------------------------------------------------------- surfaces


def direct(root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = FlowContext.open(Workspace.open(root))
    try:
        return to_json(run_action(ctx, action, payload))
    finally:
        ctx.close()


def mcp(root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    if action == "consent":  # not an MCP action: consent is the human's (CLI / app)
        return direct(root, action, payload)
    server = build_server(root)
    result = asyncio.run(server.call_tool("flow_run", {"action": action, **payload}))
    assert not result.is_error, result
    return json.loads(result.content[0].text)


class RestSurface:
    """The hub's REST routes, in process (pinned ids and clock apply), one hub per workspace.

    The caller holds a human token named for the workspace's actor: the same person as
    the CLI's, so records (provenance included) must be equal. A client knows the flow of
    a run it started; for any other run it asks ``GET /api/v1/flow-runs/{run_id}``.
    """

    ROUTE: ClassVar[dict[str, str]] = {
        "advance": "advance",
        "evidence": "evidence",
        "consent": "consent",
        "execute_automatable": "execute-automatable",
        "submit_review": "submit-review",
    }

    def __init__(self) -> None:
        self.hubs: dict[Path, tuple[Any, Any, str]] = {}
        self.flows: dict[str, str] = {}
        self.statuses: list[int] = []

    def __enter__(self) -> RestSurface:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for hub, _, _ in self.hubs.values():
            hub.close()
        self.hubs.clear()

    def _client(self, root: Path) -> tuple[Any, str]:
        from starlette.testclient import TestClient

        from core.hub.app import Hub, create_hub_app

        if root not in self.hubs:
            hub = Hub.open(root)
            token, _ = hub.tokens.create("ada@example.org", human=True)
            self.hubs[root] = (
                hub,
                TestClient(create_hub_app(hub), base_url="http://127.0.0.1"),
                token,
            )
        _, client, token = self.hubs[root]
        return client, token

    def __call__(self, root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
        client, token = self._client(root)
        auth = {"Authorization": f"Bearer {token}"}
        body = dict(payload)
        if action == "start":
            r = client.post(f"/api/v1/flows/{body['flow_id']}/runs", json=body, headers=auth)
        elif action == "list":
            params = {k: str(v) for k, v in body.items() if k != "flow_id"}
            path = (
                f"/api/v1/flows/{body['flow_id']}/runs"
                if "flow_id" in body
                else ("/api/v1/flow-runs")
            )
            r = client.get(path, params=params, headers=auth)
        elif action == "get":
            r = client.get(f"/api/v1/flow-runs/{body['run_id']}", headers=auth)
        else:
            rid = body.pop("run_id")
            flow = self.flows.get(rid)
            if flow is None:
                known = client.get(f"/api/v1/flow-runs/{rid}", headers=auth).json()
                flow = known["run"]["flow_id"] if "run" in known else "flow_weekly_review"
            url = f"/api/v1/flows/{flow}/runs/{rid}/{self.ROUTE[action]}"
            r = client.post(url, json=body, headers=auth)
        out = r.json()
        self.statuses.append(r.status_code)
        if out.get("ok") is False:
            assert r.status_code == out["status"]
        else:
            assert r.status_code == (201 if action in ("start", "consent") else 200)
        if "run" in out:
            self.flows[out["run"]["run_id"]] = out["run"]["flow_id"]
        return cast(dict[str, Any], out)


CLI_ARGS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "start": lambda p: (
        ["start", p["flow_id"], "--version", p["flow_version"]]
        + (["--task-ref", p["task_ref"]] if "task_ref" in p else [])
        + [arg for k, v in p.get("inputs", {}).items() for arg in ("--input", f"{k}={v}")]
    ),
    "get": lambda p: ["get", p["run_id"]],
    "list": lambda p: ["list"] + (["--flow", p["flow_id"]] if "flow_id" in p else []),
    "advance": lambda p: (
        ["advance", p["run_id"], p["step_id"], p["to_status"]]
        + (["--skip-reason", p["skip_reason"]] if "skip_reason" in p else [])
        + (["--approve"] if p.get("approve") else [])
    ),
    "evidence": lambda p: [
        "evidence",
        p["run_id"],
        p["step_id"],
        p["evidence_ref"],
        "--kind",
        p["pointer_kind"],
    ],
    "consent": lambda p: (
        ["consent", p["run_id"], "--cost-cap", str(p["cost_cap_units"])]
        + [arg for lane in p["allowed_lanes"] for arg in ("--lane", lane)]
    ),
    "execute_automatable": lambda p: (
        ["execute", p["run_id"], p["step_id"], "--consent", p["consent_id"]]
        + (["--dry-run"] if p.get("dry_run") else [])
    ),
    "submit_review": lambda p: ["submit-review", p["run_id"], "--intent", p["intent"]],
}


def make_cli(capsys: pytest.CaptureFixture[str]) -> Surface:
    def run(root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
        capsys.readouterr()
        argv = ["flow", "run", *CLI_ARGS[action](payload), "--root", str(root), "--json"]
        rc = cli.main(argv)
        out = json.loads(capsys.readouterr().out)
        assert rc == (1 if out.get("ok") is False else 0)
        return out

    return run


def script(surface: Surface, root: Path) -> list[dict[str, Any]]:
    """One whole run through a surface: every action, refusals included."""
    out = []

    def call(action: str, **payload: Any) -> dict[str, Any]:
        result = surface(root, action, payload)
        out.append(result)
        return result

    man = call("start", flow_id="flow_weekly_review", flow_version="1.0.0", task_ref="task_7")
    rid = man["run"]["run_id"]
    call("get", run_id=rid)
    call("advance", run_id=rid, step_id="flow_weekly_review#2", to_status="in_progress")
    call("advance", run_id=rid, step_id="flow_weekly_review#1", to_status="in_progress")
    call("advance", run_id=rid, step_id="flow_weekly_review#1", to_status="done")
    call(
        "evidence",
        run_id=rid,
        step_id="flow_weekly_review#1",
        evidence_ref="op_42",
        pointer_kind="artifact",
    )
    call("advance", run_id=rid, step_id="flow_weekly_review#1", to_status="done")
    call(
        "advance",
        run_id=rid,
        step_id="flow_weekly_review#2",
        to_status="skipped",
        skip_reason="not_applicable",
    )
    call(
        "evidence",
        run_id=rid,
        step_id="flow_weekly_review#3",
        evidence_ref="a" * 64,
        pointer_kind="hash",
    )
    # Approval of a human_review step is a human's act: MCP refuses it (see the security
    # tier), so the parity script leaves the step unapproved on every surface.
    call("advance", run_id=rid, step_id="flow_weekly_review#3", to_status="done")
    call("submit_review", run_id=rid, intent="Weekly review outcome")
    auto = call(
        "start", flow_id="flow_lead_import", flow_version="1.0.0", inputs={"sheet_url": SHEET_URL}
    )
    aid = auto["run"]["run_id"]
    consent = call("consent", run_id=aid, allowed_lanes=["local_default"], cost_cap_units=20)
    cid = consent["consent"]["consent_id"]
    call(
        "execute_automatable",
        run_id=aid,
        step_id="flow_lead_import#1",
        consent_id=cid,
        dry_run=True,
    )
    call("execute_automatable", run_id=aid, step_id="flow_lead_import#1", consent_id=cid)
    call("execute_automatable", run_id=aid, step_id="flow_lead_import#1", consent_id=cid)
    call("execute_automatable", run_id=aid, step_id="flow_lead_import#3", consent_id=cid)
    call("get", run_id="run_doesnotexist")
    call("list")
    call("list", flow_id="flow_lead_import")
    return out


def test_cli_mcp_rest_and_direct_calls_return_deep_equal_records(
    tmp_path, capsys, reset_ids, fresh_store
):
    results = {}
    with RestSurface() as rest:
        surfaces = (("direct", direct), ("mcp", mcp), ("cli", make_cli(capsys)), ("rest", rest))
        for name, surface in surfaces:
            reset_ids()
            fresh_store()
            root = make_workspace(tmp_path / name)
            share_actor_key(root)  # one person in four workspaces: the same keyed hash
            results[name] = script(surface, root)
    assert results["direct"] == results["mcp"] == results["cli"] == results["rest"]
    codes = [r.get("code") for r in results["direct"]]
    assert codes.count(None) == len(codes) - 5
    assert "FLOW_STEP_OUT_OF_ORDER" in codes and codes.count("FLOW_VERIFICATION_UNSATISFIED") == 2
    assert "FLOW_STEP_NOT_AUTOMATABLE" in codes and "unknown_run" in codes
    assert results["direct"][9]["code"] == "FLOW_VERIFICATION_UNSATISFIED"


@pytest.mark.parametrize(("writes", "automatable"), GATE_MATRIX)
def test_each_sub_gate_off_gives_the_identical_disabled_code_everywhere(
    tmp_path, capsys, reset_ids, writes, automatable
):
    root = make_workspace(tmp_path / "ws")
    lead = {
        "flow_id": "flow_lead_import",
        "flow_version": "1.0.0",
        "inputs": {"sheet_url": SHEET_URL},
    }
    run = direct(root, "start", lead)
    cid = direct(
        root,
        "consent",
        {"run_id": run["run"]["run_id"], "allowed_lanes": ["local_default"], "cost_cap_units": 9},
    )
    rid, consent_id = run["run"]["run_id"], cid["consent"]["consent_id"]
    make_workspace(tmp_path / "ws", writes=writes, automatable=automatable)
    requests = {
        "start": lead,
        "advance": {"run_id": rid, "step_id": "flow_lead_import#1", "to_status": "in_progress"},
        "evidence": {
            "run_id": rid,
            "step_id": "flow_lead_import#1",
            "evidence_ref": "x1",
            "pointer_kind": "artifact",
        },
        "execute_automatable": {
            "run_id": rid,
            "step_id": "flow_lead_import#1",
            "consent_id": consent_id,
            "dry_run": True,
        },
        "submit_review": {"run_id": rid, "intent": "outcome"},
    }
    cli_surface = make_cli(capsys)
    rest = RestSurface()
    for action, payload in requests.items():
        outs = [s(root, action, payload) for s in (direct, mcp, cli_surface, rest)]
        if action == "execute_automatable":
            expected = expected_execute_code(writes, automatable)
        else:
            expected = None if writes else "FLOW_RUN_WRITES_DISABLED"
        if expected is None:  # open: each call is a real write (parity proven above)
            assert all(o.get("ok") is not False for o in outs), (action, outs)
            assert len({o["schema"] for o in outs}) == 1
        else:
            assert outs[0] == outs[1] == outs[2] == outs[3], action
            assert rest.statuses[-1] == 403
            assert outs[0] == {
                "ok": False,
                "code": expected,
                "status": 403,
                "error": outs[0]["error"],
            }
    consent = direct(
        root, "consent", {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 9}
    )
    assert consent.get("code") == expected_execute_code(writes, automatable)
    rest_consent = rest(
        root, "consent", {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 9}
    )
    if consent.get("ok") is False:
        assert rest_consent == consent
    else:
        assert rest_consent["schema"] == consent["schema"]
    rest.close()


def test_mcp_has_no_consent_action(tmp_path):
    root = make_workspace(tmp_path / "ws")
    out = mcp_call(root, "consent", {"run_id": "run_x"})
    assert out["code"] == "BAD_REQUEST"


def mcp_call(root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    server = build_server(root)
    result = asyncio.run(server.call_tool("flow_run", {"action": action, **payload}))
    return json.loads(result.content[0].text)


# -------------------------------------------------------- real processes, one store


async def _stdio_session(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "core.cli", "mcp", "--root", str(root)],
        cwd=str(REPO),
        env=dict(os.environ),  # the stdio client passes a bare environment otherwise
    )
    out: list[Any] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out.append(sorted(t.name for t in (await session.list_tools()).tools))
        for action, payload in calls:
            result = await session.call_tool("flow_run", {"action": action, **payload})
            assert not result.is_error
            out.append(json.loads(result.content[0].text))
    return out


def test_stdio_mcp_server_and_cli_process_agree_with_direct_calls(tmp_path):
    root = make_workspace(tmp_path / "ws")
    ctx = FlowContext.open(Workspace.open(root))
    try:
        started = to_json(
            run_action(ctx, "start", {"flow_id": "flow_weekly_review", "flow_version": "1.0.0"})
        )
        rid = started["run"]["run_id"]
        cid = mint_consent(
            ctx, {"run_id": rid, "allowed_lanes": ["local_default"], "cost_cap_units": 5}
        )
        assert isinstance(cid, dict)
    finally:
        ctx.close()
    tools, advanced, got, missing = asyncio.run(
        _stdio_session(
            root,
            [
                (
                    "advance",
                    {"run_id": rid, "step_id": "flow_weekly_review#1", "to_status": "blocked"},
                ),
                ("get", {"run_id": rid}),
                ("get", {"run_id": "run_nothere"}),
            ],
        )
    )
    assert "flow_run" in tools
    assert advanced["run"]["status"] == "blocked"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "core.cli",
            "flow",
            "run",
            "get",
            rid,
            "--root",
            str(root),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    ctx = FlowContext.open(Workspace.open(root))
    try:
        direct_get = to_json(run_action(ctx, "get", {"run_id": rid}))
    finally:
        ctx.close()
    assert got == json.loads(proc.stdout) == direct_get
    assert got["run"]["etag"] == "r2"
    assert missing == {"ok": False, "code": "unknown_run", "status": 404, "error": "no such run"}


def test_cli_human_output_and_exit_codes(tmp_path, capsys):
    root = make_workspace(tmp_path / "ws", writes=False)
    assert cli.main(["flow", "list", "--root", str(root)]) == 0
    listing = capsys.readouterr().out
    assert "flow_weekly_review@1.0.0" in listing and "flow_lead_import@1.0.0" in listing
    rc = cli.main(["flow", "run", "start", "flow_weekly_review", "--latest", "--root", str(root)])
    assert rc == 1
    assert "FLOW_RUN_WRITES_DISABLED (403)" in capsys.readouterr().err
    assert cli.main(["flow", "run", "list", "--root", str(tmp_path / "missing")]) == 2


def test_cli_flow_definitions_match_direct_calls(tmp_path, capsys):
    from core.flow import get_flow, list_flows

    src = make_workspace(tmp_path / "src")
    dst = make_workspace(tmp_path / "dst", bundles=[])
    (dst / "flows").mkdir()

    def cli_json(*argv: str) -> tuple[int, dict[str, Any]]:
        capsys.readouterr()
        rc = cli.main(["flow", *argv, "--json"])
        return rc, json.loads(capsys.readouterr().out)

    ctx = FlowContext.open(Workspace.open(src))
    try:
        assert cli_json("list", "--root", str(src))[1] == to_json(list_flows(ctx))
        assert cli_json("get", "flow_lead_import", "--root", str(src))[1] == to_json(
            get_flow(ctx, "flow_lead_import")
        )
    finally:
        ctx.close()
    out = tmp_path / "lead.flow.yaml"
    assert (
        cli.main(["flow", "export", "flow_lead_import", "--root", str(src), "--out", str(out)]) == 0
    )
    rc, imported = cli_json("import", str(out), "--root", str(dst))
    assert rc == 0 and imported["active"] is False
    pid = imported["proposal"]["proposal_id"]
    rc, listing = cli_json("list", "--root", str(dst))
    assert listing["flows"] == [] and listing["pending_imports"][0]["proposal_id"] == pid
    rc, refused = cli_json(
        "run", "start", "flow_lead_import", "--version", "1.0.0", "--root", str(dst)
    )
    assert rc == 1 and refused["code"] == "unknown_flow"
    rc, reviewed = cli_json("review", pid, "--approve", "--root", str(dst))
    assert rc == 0 and reviewed["proposal"]["status"] == "approved"
    rc, listing = cli_json("list", "--root", str(dst))
    assert [f["flow_id"] for f in listing["flows"]] == ["flow_lead_import"]
    assert listing["posture"]["run_writes_enabled"] is True
    missing = str(out.with_name("nothing.yaml"))
    assert cli.main(["flow", "import", missing, "--root", str(dst)]) == 2


def test_surfaces_refuse_a_folder_that_is_not_a_workspace(tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    assert cli.main(["flow", "run", "list", "--root", str(bare)]) == 2
    assert "not a workspace" in capsys.readouterr().err
    from mcp.server.mcpserver.exceptions import ToolError

    server = build_server(bare)
    with pytest.raises(ToolError, match="not a workspace"):
        asyncio.run(server.call_tool("flow_run", {"action": "list"}))
    assert not (bare / ".noma-workbench").exists()


# ------------------------------------------------- discovery and the starter bundles


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    rc = cli.main(list(argv))
    return rc, json.loads(capsys.readouterr().out)


def test_list_finds_knowtation_named_bundles_and_lists_every_problem(tmp_path, capsys):
    starter = starter_dir() / "flow_session_to_flow.json"
    root = make_workspace(tmp_path / "ws")
    flows = root / "flows"
    (flows / "flow_session_to_flow.json").write_bytes(starter.read_bytes())
    (flows / "README.md").write_text("notes\n", encoding="utf-8")
    (flows / "weekly.yaml").write_text("flow: {}\n", encoding="utf-8")
    (flows / "flow_broken.json").write_text("{not json", encoding="utf-8")
    (flows / "drafts").mkdir()
    (flows / ".flow_x.json.tmp123").write_text("partial", encoding="utf-8")  # hidden: skipped
    (flows / "__init__.py").write_text("", encoding="utf-8")  # package marker: skipped
    rc, out = cli_json(capsys, "flow", "list", "--root", str(root), "--json")
    assert rc == 0
    assert "flow_session_to_flow" in {f["flow_id"] for f in out["flows"]}
    problems = {bad["file"]: bad["problems"] for bad in out["invalid"]}
    assert set(problems) == {"README.md", "weekly.yaml", "flow_broken.json", "drafts"}
    assert "not a bundle file" in problems["README.md"][0]["message"]
    assert "folder" in problems["drafts"][0]["message"]
    assert "not valid JSON" in problems["flow_broken.json"][0]["message"]
    capsys.readouterr()
    assert cli.main(["flow", "list", "--root", str(root)]) == 0
    human = capsys.readouterr().out
    assert "problem: README.md: (file): not a bundle file" in human
    assert "problem: flow_broken.json: (file): not valid JSON" in human


def test_cli_imports_every_starter_bundle_as_it_is_and_exports_it_back(tmp_path, capsys):
    root = make_workspace(tmp_path / "ws", bundles=[], policy={"scopes": ["personal", "project"]})
    for name in STARTER_FILES:
        source = starter_dir() / name
        rc, imported = cli_json(
            capsys, "flow", "import", str(source), "--root", str(root), "--json"
        )
        assert rc == 0, imported
        pid = imported["proposal"]["proposal_id"]
        rc, reviewed = cli_json(
            capsys, "flow", "review", pid, "--approve", "--root", str(root), "--json"
        )
        assert rc == 0 and reviewed["active"] is True, reviewed
        flow_id = json.loads(source.read_text(encoding="utf-8"))["flow"]["flow_id"]
        out = tmp_path / f"{flow_id}.exported.json"
        assert cli.main(["flow", "export", flow_id, "--root", str(root), "--out", str(out)]) == 0
        assert json.loads(out.read_text(encoding="utf-8")) == json.loads(source.read_text())
    rc, listing = cli_json(capsys, "flow", "list", "--root", str(root), "--json")
    assert rc == 0
    assert len(listing["flows"]) == 6 and listing["invalid"] == []


def test_cli_and_mcp_give_flow_inputs_at_start(tmp_path, capsys, reset_ids, fresh_store):
    results = {}
    for name, surface in (("direct", direct), ("mcp", mcp), ("cli", make_cli(capsys))):
        reset_ids()
        fresh_store()
        root = make_workspace(tmp_path / name)
        share_actor_key(root)
        payload = {
            "flow_id": "flow_lead_import",
            "flow_version": "1.0.0",
            "inputs": {"sheet_url": SHEET_URL},
        }
        started_run = surface(root, "start", payload)
        ctx = FlowContext.open(Workspace.open(root))
        try:
            with ctx.store.read() as tx:
                assert tx.run_inputs(started_run["run"]["run_id"]) == {"sheet_url": SHEET_URL}
        finally:
            ctx.close()
        unknown = surface(root, "start", {**payload, "inputs": {"nope": "x"}})
        assert unknown["code"] == "BAD_REQUEST" and unknown["problems"][0]["path"] == "inputs"
        results[name] = (started_run, unknown)
    assert results["direct"] == results["mcp"] == results["cli"]


def test_a_bundle_whose_scope_policy_does_not_allow_is_listed_not_hidden(tmp_path, capsys):
    root = make_workspace(tmp_path / "ws")
    starter = starter_dir() / "flow_multi_repo_change.json"  # project-scoped
    (root / "flows" / starter.name).write_bytes(starter.read_bytes())
    rc, out = cli_json(capsys, "flow", "list", "--root", str(root), "--json")
    assert rc == 0
    assert "flow_multi_repo_change" not in {f["flow_id"] for f in out["flows"]}
    problems = {bad["file"]: bad["problems"] for bad in out["invalid"]}
    assert problems[starter.name][0]["path"] == "flow.scope"
