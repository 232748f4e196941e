"""One projection contract on every surface (§3): the handler, ``noma flow project
--json``, the MCP tool ``flow_project`` and ``GET /api/v1/flows/{id}/projection`` answer
deep-equal records and the same refusals, on the SQLite and the PostgreSQL run store; and
the author -> review -> project round trip (§9 e2e) through the store's proposals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from core.flow import to_json
from core.flow.projection import project_flow
from core.hub.app import Hub, create_hub_app
from core.mcp.server import build_server

from .conftest import bundle, owner_headers, step, write_bundle
from .projection_helpers import HARNESSES, cli_json, open_ctx, starter_workspace

pytestmark = pytest.mark.usefixtures("both_stores")

LOCAL = "http://127.0.0.1:8765"
PROJECTION = "/api/v1/flows/{}/projection"


def direct(root: Path, request: dict[str, Any]) -> dict[str, Any]:
    ctx = open_ctx(root)
    try:
        return to_json(project_flow(ctx, request))
    finally:
        ctx.close()


def mcp(root: Path, request: dict[str, Any]) -> dict[str, Any]:
    result = asyncio.run(build_server(root).call_tool("flow_project", request))
    assert not result.is_error, result
    data: dict[str, Any] = json.loads(result.content[0].text)
    return data


def cli(capsys: pytest.CaptureFixture[str], root: Path, request: dict[str, Any]) -> Any:
    argv = ["flow", "project", request["flow_id"], "--harness", request["harness"]]
    if "version" in request:
        argv += ["--version", request["version"]]
    rc, out = cli_json(capsys, *argv, "--root", str(root))
    assert rc == (1 if out.get("ok") is False else 0)
    return out


class Rest:
    def __init__(self, root: Path) -> None:
        self.hub = Hub.open(root)
        self.client = TestClient(create_hub_app(self.hub), base_url=LOCAL)
        self.client.headers.update(owner_headers())
        self.statuses: list[int] = []

    def __call__(self, request: dict[str, Any], **headers: str) -> dict[str, Any]:
        query = {k: v for k, v in request.items() if k != "flow_id"}
        r = self.client.get(PROJECTION.format(request["flow_id"]), params=query, headers=headers)
        self.statuses.append(r.status_code)
        data: dict[str, Any] = r.json()
        return data

    def close(self) -> None:
        self.client.close()
        self.hub.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return starter_workspace(tmp_path / "ws")


@pytest.fixture
def rest(root: Path) -> Any:
    surface = Rest(root)
    yield surface
    surface.close()


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_surface_returns_the_same_record(
    root: Path, rest: Rest, capsys: pytest.CaptureFixture[str], harness: str
) -> None:
    request = {"flow_id": "flow_multi_repo_change", "harness": harness}
    expected = direct(root, request)
    assert expected["schema"] == "knowtation.flow_projection/v0"
    assert expected["flow_id"] == "flow_multi_repo_change" and expected["harness"] == harness
    assert cli(capsys, root, request) == expected
    assert mcp(root, request) == expected
    assert rest(request) == expected and rest.statuses == [200]


@pytest.mark.parametrize(
    ("request_", "code", "status"),
    [
        ({"flow_id": "flow_research_brief", "harness": "cursor"}, "BAD_REQUEST", 400),
        ({"flow_id": "flow_research_brief", "harness": "AGENT_BUNDLE"}, "BAD_REQUEST", 400),
        ({"flow_id": "flow_nothere", "harness": "cursor_rule"}, "unknown_flow", 404),
        (
            {"flow_id": "flow_research_brief", "harness": "cursor_rule", "version": "9.9.9"},
            "unknown_flow",
            404,
        ),
    ],
)
def test_every_surface_refuses_alike(
    root: Path,
    rest: Rest,
    capsys: pytest.CaptureFixture[str],
    request_: dict[str, Any],
    code: str,
    status: int,
) -> None:
    expected = direct(root, request_)
    assert (expected["ok"], expected["code"], expected["status"]) == (False, code, status)
    if code == "BAD_REQUEST":
        assert [p["path"] for p in expected["problems"]] == ["harness"]
    assert cli(capsys, root, request_) == expected
    assert mcp(root, request_) == expected
    assert rest(request_) == expected and rest.statuses == [status]


def test_the_rest_route_checks_its_query_and_the_token_scope(root: Path, rest: Rest) -> None:
    url = PROJECTION.format("flow_research_brief")
    missing = rest.client.get(url)
    assert missing.status_code == 400 and missing.json()["problems"][0]["path"] == "harness"
    extra = rest.client.get(url, params={"harness": "cursor_rule", "write": "1"})
    assert extra.status_code == 400 and extra.json()["problems"][0]["path"] == "write"
    twice = rest.client.get(url + "?harness=cursor_rule&harness=cli_runbook")
    assert twice.status_code == 400 and twice.json()["problems"][0]["path"] == "harness"
    # A personal-scope token cannot see a project flow: the same 404 as a missing one.
    token, _ = rest.hub.tokens.create("bob@example.org", "personal", human=True)
    hidden = rest(
        {"flow_id": "flow_overseer_handover", "harness": "cli_runbook"},
        Authorization=f"Bearer {token}",
    )
    assert hidden["code"] == "unknown_flow" and rest.statuses[-1] == 404
    seen = rest(
        {"flow_id": "flow_research_brief", "harness": "cli_runbook"},
        Authorization=f"Bearer {token}",
    )
    assert seen["flow_id"] == "flow_research_brief" and rest.statuses[-1] == 200


def test_the_route_is_in_the_openapi_document(rest: Rest) -> None:
    doc = rest.client.get("/openapi.json").json()
    op = doc["paths"]["/api/v1/flows/{flow_id}/projection"]["get"]
    params = {p["name"]: p for p in op["parameters"]}
    assert params["harness"]["required"] is True
    assert params["harness"]["schema"]["enum"] == list(HARNESSES)
    assert params["version"]["required"] is False and params["flow_id"]["in"] == "path"
    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    record = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert {"schema", "flow_version", "harness", "rendered", "fidelity", "stale"} <= set(
        record["required"]
    )
    assert "400" in op["responses"] and "404" in op["responses"]


def test_the_mcp_tool_is_listed_beside_flow_run(root: Path) -> None:
    tools = asyncio.run(build_server(root).list_tools())
    names = {t.name for t in tools}
    assert {"flow_run", "flow_project"} <= names
    [tool] = [t for t in tools if t.name == "flow_project"]
    assert set(tool.input_schema["required"]) == {"flow_id", "harness"}


def test_author_review_project_round_trip_and_staleness_through_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = "flow_weekly_review"
    root = tmp_path / "ws"
    write_bundle(root / "flows", bundle(f, [step(f, 1), step(f, 2)], version="1.0.0"))
    from .conftest import write_config

    write_config(root)
    r = str(root)
    rc, out = cli_json(
        capsys, "flow", "project", f, "--harness", "cursor_rule", "--write", "--root", r
    )
    assert rc == 0 and out["projection"]["flow_version"] == "1.0.0"

    # Author a new version as an import: a proposal in the run store, inert until reviewed.
    newer = bundle(f, [step(f, 1, instruction="Reconcile first."), step(f, 2)], version="1.1.0")
    draft = tmp_path / "newer.flow.json"
    draft.write_text(json.dumps(newer), encoding="utf-8")
    rc, proposed = cli_json(capsys, "flow", "import", str(draft), "--root", r)
    assert rc == 0
    assert cli_json(capsys, "flow", "project", "--check", "--root", r)[0] == 0  # still inert
    pid = proposed["proposal"]["proposal_id"]
    rc, _ = cli_json(capsys, "flow", "review", pid, "--approve", "--root", r)
    assert rc == 0

    rc, status = cli_json(capsys, "flow", "project", "--check", "--root", r)
    assert rc == 1 and status["files"][0]["status"] == "stale"
    assert status["files"][0]["flows"][0]["latest_version"] == "1.1.0"
    rc, out = cli_json(
        capsys, "flow", "project", f, "--harness", "cursor_rule", "--write", "--root", r
    )
    assert out["action"] == "replaced" and out["projection"]["flow_version"] == "1.1.0"
    written = Path(out["path"]).read_text(encoding="utf-8")
    assert "Reconcile first." in written
    assert direct(root, {"flow_id": f, "harness": "cursor_rule"})["rendered"] in written
    assert cli_json(capsys, "flow", "project", "--check", "--root", r)[0] == 0
