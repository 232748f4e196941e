"""Flow candidates on every surface, on SQLite and PostgreSQL: the CLI (``noma flow
candidates ... --json``), the MCP tools (``flow_candidate_*``) and the hub's REST routes
return deep-equal records and refusals for the same request; review is a human's act on
each (no MCP tool, an agent token and the owner's local token refused); the route table,
the OpenAPI document and the README name the new routes, tools and commands."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from core import cli
from core.flow import FlowContext, to_json
from core.flow.candidates import candidate_action
from core.hub.app import Hub, create_hub_app
from core.hub.openapi import openapi_document
from core.hub.routes import ROUTES
from core.mcp.server import build_server
from core.netauth.local_token import read_local_token
from core.workspace import Workspace

from .conftest import ACTOR, make_workspace, starter_bundle
from .test_candidates import JOBS, five_step_flow, proposal

pytestmark = pytest.mark.usefixtures("both_stores")

REPO = Path(__file__).resolve().parents[2]
BASE = "/api/v1/flow-candidates"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path / "ws",
        [starter_bundle(), five_step_flow()],
        policy={"candidate_capture": True, "scopes": ["personal", "project"]},
    )


class Rest:
    def __init__(self, root: Path) -> None:
        self.hub = Hub.open(root)
        app = create_hub_app(self.hub)
        human, _ = self.hub.tokens.create(ACTOR, "project", human=True)
        bot, _ = self.hub.tokens.create(ACTOR, "project", human=False)
        local = read_local_token()
        assert local is not None
        self.clients = {
            who: TestClient(app, base_url="http://127.0.0.1", headers=self._auth(token))
            for who, token in (("human", human), ("agent", bot), ("owner", local))
        }

    @staticmethod
    def _auth(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    def call(self, method: str, path: str, who: str = "human", **kw: Any) -> dict[str, Any]:
        r = self.clients[who].request(method, path, **kw)
        body: dict[str, Any] = r.json()
        expected = (
            body["status"]
            if body.get("ok") is False
            else (201 if method == "POST" and path == BASE else 200)
        )
        assert r.status_code == expected, r.text
        return body

    def close(self) -> None:
        self.hub.close()


@pytest.fixture
def rest(root: Path) -> Iterator[Rest]:
    r = Rest(root)
    yield r
    r.close()


def mcp_call(server: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = asyncio.run(server.call_tool(tool, args))
    assert not result.is_error, result
    return json.loads(result.content[0].text)


def cli_json(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> dict[str, Any]:
    capsys.readouterr()
    code = cli.main(["flow", "candidates", *args, "--root", str(root), "--json"])
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == (1 if out.get("ok") is False else 0)
    return out


def direct(root: Path, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = FlowContext.open(Workspace.open(root))
    try:
        return to_json(candidate_action(ctx, action, payload))
    finally:
        ctx.close()


def mcp_args(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "session_ref"}


def test_list_get_and_refusals_are_deep_equal_on_every_surface(root, rest, capsys):
    server = build_server(root)
    low = mcp_call(server, "flow_candidate_propose", mcp_args(proposal(confidence="low")))
    high = mcp_call(server, "flow_candidate_propose", mcp_args(proposal(scope_hint="project")))
    assert low["candidate"]["status"] == high["candidate"]["status"] == "pending_review"
    capped = mcp_call(server, "flow_candidate_propose", mcp_args(proposal()))
    assert capped["code"] == "FLOW_CANDIDATE_CAP_REACHED"  # the server is one session
    by_rest = rest.call("POST", BASE, json=proposal(draft_steps=JOBS[:4], session_ref="s9"))
    assert by_rest["candidate"]["provenance"] == low["candidate"]["provenance"]

    for query, mcp_q, cli_q in (
        ({}, {}, []),
        ({"include_low": "true"}, {"include_low": True}, ["--include-low"]),
        (
            {"status": "pending_review", "limit": "2"},
            {"status": "pending_review", "limit": 2},
            ["--status", "pending_review", "--limit", "2"],
        ),
        ({"status": "finished"}, {"status": "finished"}, None),  # a refusal, equal everywhere
    ):
        by_mcp = mcp_call(server, "flow_candidate_list", mcp_q)
        by_http = rest.call("GET", BASE, params=query)
        assert by_mcp == by_http == direct(root, "candidate_list", mcp_q)
        if cli_q is not None:
            assert cli_json(capsys, root, "list", *cli_q) == by_mcp
    listed = rest.call("GET", BASE, params={"include_low": "true"})["candidates"]
    assert [c["candidate_id"] for c in listed] == [
        low["candidate"]["candidate_id"],
        high["candidate"]["candidate_id"],
        by_rest["candidate"]["candidate_id"],
    ]

    for cid in [c["candidate_id"] for c in listed] + ["cand_zzzz", "cand_NOPE"]:
        by_mcp = mcp_call(server, "flow_candidate_get", {"candidate_id": cid})
        assert by_mcp == rest.call("GET", f"{BASE}/{cid}") == cli_json(capsys, root, "get", cid)
    offers = rest.call("GET", f"{BASE}/{by_rest['candidate']['candidate_id']}")["merge_offers"]
    assert offers == [{"flow_id": "flow_monthly_report", "version": "1.0.0", "overlap": 0.8}]


def test_propose_refusals_are_equal_over_mcp_and_rest(root, rest, tmp_path):
    server = build_server(root)
    for bad in (
        proposal(trigger_signal="repetition"),
        proposal(evidence_refs=["the user's whole prompt"]),
        proposal(scope_hint="org"),
        proposal(draft_steps=["one\ntwo"]),
    ):
        by_mcp = mcp_call(server, "flow_candidate_propose", mcp_args(bad))
        assert by_mcp["ok"] is False
        assert by_mcp == rest.call("POST", BASE, json=bad)
    off = make_workspace(tmp_path / "off")
    refused = mcp_call(build_server(off), "flow_candidate_propose", mcp_args(proposal()))
    assert refused["code"] == "FLOW_CANDIDATE_CAPTURE_DISABLED"
    assert rest.call("GET", BASE, params={"include_low": "true"})["candidates"] == []


def test_review_is_human_only_and_equal_on_cli_and_rest(root, rest, capsys):
    a = rest.call("POST", BASE, json=proposal(session_ref="s1"))["candidate"]
    b = rest.call("POST", BASE, json=proposal(session_ref="s2"))["candidate"]
    merge = {"decision": "merge", "flow_id": "flow_monthly_report"}

    server = build_server(root)
    tools = {t.name for t in asyncio.run(server.list_tools())}
    assert {"flow_candidate_propose", "flow_candidate_list", "flow_candidate_get"} <= tools
    assert not any("candidate" in t and "review" in t for t in tools)  # no agent review
    for who in ("agent", "owner"):
        out = rest.call("POST", f"{BASE}/{a['candidate_id']}/review", who=who, json=merge)
        assert out["code"] == "FLOW_HUMAN_APPROVAL_REQUIRED" and out["status"] == 403

    widen = {"decision": "approve", "flow_id": "flow_x", "scope": "org"}
    by_http = rest.call("POST", f"{BASE}/{a['candidate_id']}/review", json=widen)
    by_cli = cli_json(
        capsys,
        root,
        "review",
        a["candidate_id"],
        "--approve",
        "--flow-id",
        "flow_x",
        "--scope",
        "org",
    )
    assert by_http == by_cli and by_http["code"] == "BAD_REQUEST"
    mismatch = rest.call(
        "POST",
        f"{BASE}/{a['candidate_id']}/review",
        json={**merge, "candidate_id": b["candidate_id"]},
    )
    assert mismatch["code"] == "BAD_REQUEST" and mismatch["problems"][0]["path"] == "candidate_id"

    by_cli = cli_json(
        capsys, root, "review", a["candidate_id"], "--merge-into", "flow_monthly_report"
    )
    by_http = rest.call("POST", f"{BASE}/{b['candidate_id']}/review", json=merge)
    assert by_cli["candidate"].pop("candidate_id") == a["candidate_id"]
    assert by_http["candidate"].pop("candidate_id") == b["candidate_id"]
    assert by_cli == by_http
    assert by_cli["candidate"]["status"] == "merged_into:flow_monthly_report"


def test_the_cli_approves_into_a_pending_import(root, capsys):
    ctx = FlowContext.open(Workspace.open(root))
    try:
        made = to_json(
            candidate_action(ctx.as_actor(ctx.actor.as_agent()), "candidate_propose", proposal())
        )
    finally:
        ctx.close()
    cid = made["candidate"]["candidate_id"]
    capsys.readouterr()
    assert (
        cli.main(
            [
                "flow",
                "candidates",
                "review",
                cid,
                "--approve",
                "--flow-id",
                "flow_report",
                "--root",
                str(root),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "promoted" in text and "noma flow review prop_" in text
    listed = cli_json(capsys, root, "list", "--status", "promoted")
    assert [c["candidate_id"] for c in listed["candidates"]] == [cid]
    assert not (root / "flows" / "flow_report.0.1.0.flow.yaml").exists()


async def _stdio(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    import os
    import sys

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "core.cli", "mcp", "--root", str(root)],
        cwd=str(REPO),
        env=dict(os.environ),
    )
    out: list[Any] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out.append(sorted(t.name for t in (await session.list_tools()).tools))
        for tool, args in calls:
            result = await session.call_tool(tool, args)
            assert not result.is_error, result
            out.append(json.loads(result.content[0].text))
    return out


def test_the_real_stdio_server_is_one_session_and_agrees_with_direct_calls(root):
    propose = ("flow_candidate_propose", mcp_args(proposal()))
    tools, first, second, third, listing = asyncio.run(
        _stdio(root, [propose, propose, propose, ("flow_candidate_list", {})])
    )
    assert {"flow_candidate_propose", "flow_candidate_list", "flow_candidate_get"} <= set(tools)
    assert first["candidate"]["status"] == second["candidate"]["status"] == "pending_review"
    assert third["code"] == "FLOW_CANDIDATE_CAP_REACHED"
    assert listing == direct(root, "candidate_list", {})
    assert [c["candidate_id"] for c in listing["candidates"]] == [
        first["candidate"]["candidate_id"],
        second["candidate"]["candidate_id"],
    ]


def test_the_cli_summary_shows_untrusted_text_as_markers(root, rest, capsys):
    title = "Report \u202egnp.exe"  # a bidi override: reads reversed on a terminal
    made = rest.call(
        "POST", BASE, json=proposal(suggested_title=title, draft_steps=["Send \u202eit"])
    )
    cid = made["candidate"]["candidate_id"]
    capsys.readouterr()
    assert cli.main(["flow", "candidates", "list", "--root", str(root)]) == 0
    listing = capsys.readouterr().out
    assert "Report ⟨U+202E⟩gnp.exe" in listing and "\u202e" not in listing
    assert cli.main(["flow", "candidates", "get", cid, "--root", str(root)]) == 0
    shown = capsys.readouterr().out
    assert "1. Send ⟨U+202E⟩it" in shown and "evidence run_2026w25" in shown
    assert "\u202e" not in shown


def test_every_candidate_route_needs_a_token(root, rest):
    app = create_hub_app(rest.hub)
    anonymous = TestClient(app, base_url="http://127.0.0.1")
    for method, path in (
        ("GET", BASE),
        ("POST", BASE),
        ("GET", f"{BASE}/cand_0000"),
        ("POST", f"{BASE}/cand_0000/review"),
    ):
        r = anonymous.request(method, path, json={} if method == "POST" else None)
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"


def test_the_route_table_openapi_and_readme_name_the_candidate_surfaces():
    table = {(r.method, r.path, r.action) for r in ROUTES}
    assert {
        ("GET", BASE, "candidate_list"),
        ("POST", BASE, "candidate_propose"),
        ("GET", BASE + "/{candidate_id}", "candidate_get"),
        ("POST", BASE + "/{candidate_id}/review", "candidate_review"),
    } <= table
    doc = openapi_document()
    review = doc["paths"][BASE + "/{candidate_id}/review"]["post"]
    body = doc["components"]["schemas"][
        review["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    ]
    assert "candidate_id" not in body["required"] and "decision" in body["required"]
    listing = doc["paths"][BASE]["get"]
    assert {p["name"] for p in listing["parameters"]} == {"status", "include_low", "limit"}
    assert "201" in doc["paths"][BASE]["post"]["responses"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in (
        "noma flow candidates list",
        "noma flow candidates get",
        "noma flow candidates review",
        "flow_candidate_propose",
        "flow_candidate_list",
        "flow_candidate_get",
        "/api/v1/flow-candidates",
        "candidate_capture",
    ):
        assert name in readme, name
