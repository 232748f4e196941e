"""The hub's REST routes (in-process, through Starlette's test client): every route of the
contract's table, refusals with their §8 status, one 404 for missing / invisible / other
flow, tokens (hash-only storage, 401 with no detail, the token's actor as provenance,
agents refused human acts), `/openapi.json`, `/docs`, and `noma serve`'s bind refusal.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from core import cli
from core.commands.hub import is_loopback
from core.flow import ids
from core.flow.errors import CODES
from core.hub.app import Hub, create_hub_app
from core.hub.routes import ROUTES
from core.netauth.local_token import read_local_token
from core.netauth.tokens import TokenStore, token_store_path
from core.workspace import Workspace

from .conftest import ACTOR, OTHER, FakeLane, bundle, make_workspace, starter_bundle, step

pytestmark = pytest.mark.usefixtures("both_stores")

LOCAL = "http://127.0.0.1:8765"  # a loopback Host: a loopback-bound hub answers no other
JSON = {"Content-Type": "application/json"}
WR = "/api/v1/flows/flow_weekly_review/runs"
LEAD = "/api/v1/flows/flow_lead_import/runs"


def lanes(lane: FakeLane | None = None) -> dict[str, Any]:
    from core.flow.lanes import ProviderLane

    return {"local_default": lane or FakeLane(), "cloud_premium": ProviderLane("cloud_premium")}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def hub(root: Path) -> Iterator[Hub]:
    h = Hub.open(root, lanes=lanes())
    yield h
    h.close()


def owner_client(app: Any) -> TestClient:
    """A client carrying the owner's local token, found where the server made it (the
    owner's clients never type it; there is no token-less caller any more)."""
    token = read_local_token()
    assert token is not None
    return TestClient(app, base_url=LOCAL, headers=bearer(token))


@pytest.fixture
def client(hub: Hub) -> TestClient:
    return owner_client(create_hub_app(hub))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def start(client: TestClient, path: str = WR, **headers: str) -> dict[str, Any]:
    body: dict[str, Any] = {"flow_version": "1.0.0"}
    if path == LEAD:
        body["inputs"] = {"sheet_url": "https://docs.google.com/spreadsheets/d/demo"}
    r = client.post(path, json=body, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()["run"]


# ------------------------------------------------------------------------ the routes


def test_the_route_table_is_the_contracts(client: TestClient) -> None:
    table = {(s.method, s.path) for s in ROUTES}
    run = "/api/v1/flows/{flow_id}/runs/{run_id}"
    assert table == {
        ("GET", "/api/v1/flows"),
        ("GET", "/api/v1/flows/{flow_id}"),
        ("GET", "/api/v1/flows/{flow_id}/projection"),  # §3.3: the derived projection
        ("POST", "/api/v1/flows/{flow_id}/runs"),
        ("GET", "/api/v1/flows/{flow_id}/runs"),
        ("GET", run),
        ("POST", run + "/advance"),
        ("POST", run + "/evidence"),
        ("POST", run + "/execute-automatable"),
        ("POST", run + "/submit-review"),
        ("POST", run + "/consent"),
        ("GET", "/api/v1/flow-runs/{run_id}"),
        ("GET", "/api/v1/flow-runs"),  # additive: every flow's runs
        # the capture flywheel's candidates (§5; tests/flow/test_candidate_surfaces.py)
        ("GET", "/api/v1/flow-candidates"),
        ("POST", "/api/v1/flow-candidates"),
        ("GET", "/api/v1/flow-candidates/{candidate_id}"),
        ("POST", "/api/v1/flow-candidates/{candidate_id}/review"),
        ("POST", "/api/v1/flows"),  # §3.3: propose (review-before-write)
        ("GET", "/api/v1/flow-proposals"),  # additive: the reviewer's routes
        ("GET", "/api/v1/flow-proposals/{proposal_id}"),
        ("POST", "/api/v1/flow-proposals/{proposal_id}/review"),
    }


def test_a_whole_manual_run_over_rest(client: TestClient) -> None:
    run = start(client)
    rid = run["run_id"]
    assert run["etag"] == "r1" and run["flow_version"] == "1.0.0"
    base = f"{WR}/{rid}"
    r = client.post(
        f"{base}/advance", json={"step_id": "flow_weekly_review#1", "to_status": "done"}
    )
    assert (r.status_code, r.json()["code"]) == (403, "FLOW_VERIFICATION_UNSATISFIED")
    r = client.post(
        f"{base}/evidence",
        json={
            "step_id": "flow_weekly_review#1",
            "evidence_ref": "op_1",
            "pointer_kind": "artifact",
        },
    )
    assert r.status_code == 200 and r.headers["etag"] == '"r2"'
    r = client.post(
        f"{base}/advance",
        json={"step_id": "flow_weekly_review#1", "to_status": "done"},
        headers={"If-Match": '"r2"'},
    )
    assert r.status_code == 200 and r.json()["run"]["etag"] == "r3"
    r = client.post(  # a stale If-Match is the optimistic-concurrency refusal
        f"{base}/advance",
        json={"step_id": "flow_weekly_review#2", "to_status": "in_progress"},
        headers={"If-Match": '"r2"'},
    )
    assert (r.status_code, r.json()["code"]) == (409, "FLOW_RUN_CONFLICT")
    r = client.post(
        f"{base}/advance", json={"step_id": "flow_weekly_review#3", "to_status": "in_progress"}
    )
    assert (r.status_code, r.json()["code"]) == (409, "FLOW_STEP_OUT_OF_ORDER")
    r = client.post(f"{base}/submit-review", json={"intent": "Weekly outcome"})
    assert r.status_code == 200 and r.json()["proposal"]["kind"] == "flow_run_outcome"
    got = client.get(base)
    assert got.status_code == 200 and got.json()["schema"] == "knowtation.flow_run_get/v0"
    assert client.get(f"/api/v1/flow-runs/{rid}").json() == got.json()
    listed = client.get(WR, params={"status": "in_progress", "limit": "5"}).json()
    assert [x["run_id"] for x in listed["runs"]] == [rid]
    assert client.get(LEAD).json()["runs"] == []


def test_consent_and_execute_over_rest_need_a_human_token_for_consent(
    client: TestClient, hub: Hub
) -> None:
    token, _ = hub.tokens.create(ACTOR, "personal", human=True)
    run = start(client, LEAD, **bearer(token))
    base = f"{LEAD}/{run['run_id']}"
    consent = {"allowed_lanes": ["local_default"], "cost_cap_units": 20}
    refused = client.post(f"{base}/consent", json=consent)  # the owner's token: an agent
    assert (refused.status_code, refused.json()["code"]) == (403, "FLOW_HUMAN_APPROVAL_REQUIRED")
    minted = client.post(f"{base}/consent", json=consent, headers=bearer(token))
    assert minted.status_code == 201
    cid = minted.json()["consent"]["consent_id"]
    body = {"step_id": "flow_lead_import#1", "consent_id": cid}
    dry = client.post(f"{base}/execute-automatable", json={**body, "dry_run": True})
    assert dry.status_code == 200 and dry.json()["dry_run"] is True
    first = client.post(f"{base}/execute-automatable", json=body, headers=bearer(token))
    again = client.post(f"{base}/execute-automatable", json=body, headers=bearer(token))
    assert first.status_code == again.status_code == 200
    e1, e2 = first.json()["execution"], again.json()["execution"]
    assert e1["status"] == "completed" and e1["execution_id"] == e2["execution_id"]
    manual = client.post(
        f"{base}/execute-automatable",
        json={"step_id": "flow_lead_import#3", "consent_id": cid},
        headers=bearer(token),
    )
    assert (manual.status_code, manual.json()["code"]) in {
        (400, "FLOW_STEP_NOT_AUTOMATABLE"),
        (409, "FLOW_STEP_OUT_OF_ORDER"),
    }


def test_missing_invisible_and_other_flow_runs_are_one_404(
    client: TestClient, hub: Hub, root: Path
) -> None:
    mine, _ = hub.tokens.create(ACTOR, human=True)
    theirs, _ = hub.tokens.create(OTHER, human=True)
    rid = start(client, **bearer(mine))["run_id"]
    missing = client.get(f"{WR}/run_doesnotexist", headers=bearer(theirs))
    invisible = client.get(f"{WR}/{rid}", headers=bearer(theirs))
    by_id = client.get(f"/api/v1/flow-runs/{rid}", headers=bearer(theirs))
    other_flow = client.get(f"{LEAD}/{rid}", headers=bearer(mine))
    write = client.post(
        f"{WR}/{rid}/advance",
        json={"step_id": "flow_weekly_review#1", "to_status": "blocked"},
        headers=bearer(theirs),
    )
    write_other_flow = client.post(
        f"{LEAD}/{rid}/advance",
        json={"step_id": "flow_weekly_review#1", "to_status": "blocked"},
        headers=bearer(mine),
    )
    outs = [missing, invisible, by_id, other_flow, write, write_other_flow]
    assert {r.status_code for r in outs} == {404}
    assert len({r.content for r in outs}) == 1
    assert missing.json() == {
        "ok": False,
        "code": "unknown_run",
        "status": 404,
        "error": "no such run",
    }
    assert set(missing.headers) == set(invisible.headers)
    # The owner's run is untouched by the refused writes.
    assert client.get(f"{WR}/{rid}", headers=bearer(mine)).json()["run"]["etag"] == "r1"


def test_unknown_flow_is_404_and_flows_are_readable(client: TestClient) -> None:
    r = client.post("/api/v1/flows/flow_nothere/runs", json={"flow_version": "1.0.0"})
    assert (r.status_code, r.json()["code"]) == (404, "unknown_flow")
    listing = client.get("/api/v1/flows").json()
    assert {f["flow_id"] for f in listing["flows"]} == {"flow_weekly_review", "flow_lead_import"}
    one = client.get("/api/v1/flows/flow_weekly_review", params={"version": "1.0.0"})
    assert one.status_code == 200 and one.json()["bundle"]["flow"]["version"] == "1.0.0"
    assert client.get("/api/v1/flows/flow_nothere").status_code == 404


@pytest.mark.parametrize(
    ("path_suffix", "body", "where"),
    [
        ("/advance", b"not json", ""),
        ("/advance", b"[1, 2]", ""),
        ("/advance", b'{"step_id": "flow_weekly_review#1", "to_status": "flying"}', "to_status"),
        ("/advance", b'{"run_id": "run_other", "step_id": "flow_weekly_review#1"}', "run_id"),
        (
            "/evidence",
            b'{"step_id": "flow_weekly_review#1", "evidence_ref": "x", "pointer_kind"'
            b': "artifact", "content": "raw"}',
            "content",
        ),
        ("/submit-review", b"{}", "intent"),
    ],
)
def test_malformed_bodies_are_bad_request_with_paths_never_values(
    client: TestClient, path_suffix: str, body: bytes, where: str
) -> None:
    rid = start(client)["run_id"]
    r = client.post(f"{WR}/{rid}{path_suffix}", content=body, headers=JSON)
    out = r.json()
    assert (r.status_code, out["code"]) == (400, "BAD_REQUEST")
    assert any(p["path"] == where for p in out["problems"])
    assert "flying" not in r.text and "raw" not in r.text and "run_other" not in r.text


def test_query_parameters_are_checked(client: TestClient) -> None:
    assert client.get(WR + "?limit=2&limit=3").json()["code"] == "BAD_REQUEST"
    assert client.get(WR + "?colour=red").json()["code"] == "BAD_REQUEST"
    assert client.get(WR + "?limit=9999").json()["code"] == "BAD_REQUEST"
    assert client.get("/api/v1/flows?x=1").status_code == 400


def test_an_oversized_body_is_refused_without_reading_it_all(client: TestClient) -> None:
    rid = start(client)["run_id"]
    r = client.post(
        f"{WR}/{rid}/submit-review", content=b'{"intent": "' + b"x" * 400_000 + b'"}', headers=JSON
    )
    assert (r.status_code, r.json()["code"]) == (400, "BAD_REQUEST")


@pytest.mark.parametrize(("writes", "automatable"), [(False, False), (False, True), (True, False)])
def test_a_gate_off_answers_its_code_before_anything_else(
    tmp_path: Path, writes: bool, automatable: bool
) -> None:
    root = make_workspace(tmp_path / "ws", writes=writes, automatable=automatable)
    hub = Hub.open(root, lanes=lanes())
    client = owner_client(create_hub_app(hub))
    try:
        # Even a missing run and a body that is not JSON get the gate's code first.
        r = client.post(f"{WR}/run_missing/advance", content=b"nope", headers=JSON)
        if not writes:
            assert (r.status_code, r.json()["code"]) == (403, "FLOW_RUN_WRITES_DISABLED")
        r = client.post(f"{LEAD}/run_missing/execute-automatable", content=b"nope", headers=JSON)
        code = (
            "FLOW_AUTOMATABLE_EXECUTION_DISABLED"
            if not automatable
            else ("FLOW_RUN_WRITES_DISABLED")
        )
        assert (r.status_code, r.json()["code"]) == (403, code)
        assert client.get(f"{WR}/run_missing").status_code == 404  # reads stay open
    finally:
        hub.close()


# ------------------------------------------------------------------------------ tokens


def test_tokens_are_stored_as_hashes_only(tmp_path: Path, root: Path, capsys) -> None:
    rc = cli.main(
        [
            "hub",
            "token",
            "create",
            "--name",
            "ci-bot",
            "--scope",
            "project",
            "--workspace",
            str(root),
            "--json",
        ]
    )
    assert rc == 0
    made = json.loads(capsys.readouterr().out)
    token = made["token"]
    assert token.startswith("nhub_") and made["kind"] == "agent" and made["scope"] == "project"
    state = Workspace.open(root).state_dir
    blob = b"".join(p.read_bytes() for p in state.iterdir() if p.is_file())
    assert token.encode() not in blob and token[18:].encode() not in blob
    assert cli.main(["hub", "token", "list", "--workspace", str(root), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["tokens"]
    assert [t["token_id"] for t in listed] == [made["token_id"]]
    assert "token" not in listed[0] and token not in json.dumps(listed)
    assert cli.main(["hub", "token", "revoke", made["token_id"], "--workspace", str(root)]) == 0
    assert TokenStore.for_workspace(Workspace.open(root).root).verify(token) is None
    assert cli.main(["hub", "token", "revoke", "deadbeef0000", "--workspace", str(root)]) == 2
    assert (
        cli.main(["hub", "token", "create", "--name", "bad name!", "--workspace", str(root)]) == 2
    )
    table = token_store_path(Workspace.open(root).root)
    assert table.stat().st_mode & 0o077 == 0 and not (state / "hub.sqlite3").exists()
    plain = tmp_path / "not-a-workspace"
    plain.mkdir()
    assert cli.main(["hub", "token", "list", "--workspace", str(plain)]) == 2
    assert list(plain.iterdir()) == []  # nothing written there


def test_no_wrong_revoked_or_malformed_token_is_one_bare_401(root: Path) -> None:
    hub = Hub.open(root, require_tokens=True, lanes=lanes())
    client = TestClient(create_hub_app(hub), base_url=LOCAL)
    try:
        token, row = hub.tokens.create("ada", human=True)
        assert client.get(WR, headers=bearer(token)).status_code == 200
        hub.tokens.revoke(row.token_id)
        wrong = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
        answers = [
            client.get(WR),
            client.get(WR, headers=bearer(wrong)),
            client.get(WR, headers=bearer(token)),
            client.get(WR, headers={"Authorization": f"Basic {token}"}),
            client.get(WR, headers={"Authorization": "Bearer "}),
            client.post(f"{WR}", json={"flow_version": "1.0.0"}),
            client.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "list_skills"}),
        ]
        assert {r.status_code for r in answers} == {401}
        assert len({r.content for r in answers}) == 1
        assert answers[0].json() == {"ok": False, "status": 401, "error": "unauthorized"}
        assert answers[0].headers["www-authenticate"] == "Bearer"
        assert client.get("/openapi.json").status_code == 200  # the docs stay public
    finally:
        hub.close()


def test_the_tokens_actor_is_the_hashed_provenance_actor(client: TestClient, hub: Hub) -> None:
    token, _ = hub.tokens.create("grace@example.org", human=True)
    run = start(client, **bearer(token))
    expected = ids.actor_hash(hub.base.actor_key, "grace@example.org")
    assert run["provenance"]["actor"] == expected
    assert "grace" not in json.dumps(run)
    # The same name through another token is the same person (token rotation).
    again, _ = hub.tokens.create("grace@example.org", human=True)
    assert client.get(f"{WR}/{run['run_id']}", headers=bearer(again)).status_code == 200
    # The owner's local token: the workspace's own actor (as an agent).
    local = start(client)
    assert local["provenance"]["actor"] == ids.actor_hash(hub.base.actor_key, ACTOR)


def test_an_agent_token_may_not_approve_a_human_review(client: TestClient, hub: Hub) -> None:
    agent, _ = hub.tokens.create(ACTOR)
    human, _ = hub.tokens.create(ACTOR, human=True)
    rid = start(client, **bearer(human))["run_id"]
    base = f"{WR}/{rid}"
    steps = [
        (
            "evidence",
            {"step_id": "flow_weekly_review#1", "evidence_ref": "op_1", "pointer_kind": "artifact"},
        ),
        ("advance", {"step_id": "flow_weekly_review#1", "to_status": "done"}),
        (
            "advance",
            {
                "step_id": "flow_weekly_review#2",
                "to_status": "skipped",
                "skip_reason": "not_applicable",
            },
        ),
        (
            "evidence",
            {"step_id": "flow_weekly_review#3", "evidence_ref": "a" * 64, "pointer_kind": "hash"},
        ),
    ]
    for action, body in steps:
        assert client.post(f"{base}/{action}", json=body, headers=bearer(agent)).status_code == 200
    approve = {"step_id": "flow_weekly_review#3", "to_status": "done", "approve": True}
    refused = client.post(f"{base}/advance", json=approve, headers=bearer(agent))
    assert (refused.status_code, refused.json()["code"]) == (403, "FLOW_HUMAN_APPROVAL_REQUIRED")
    done = client.post(f"{base}/advance", json=approve, headers=bearer(human))
    assert done.status_code == 200 and done.json()["run"]["status"] == "done"


def test_token_scope_limits_what_it_sees(tmp_path: Path) -> None:
    org = bundle("flow_org_wide", [step("flow_org_wide", 1)], scope="org")
    root = make_workspace(
        tmp_path / "ws",
        bundles=[starter_bundle(), org],
        policy={"scopes": ["personal", "project", "org"]},
    )
    hub = Hub.open(root, lanes=lanes())
    client = owner_client(create_hub_app(hub))
    try:
        personal, _ = hub.tokens.create("pat", "personal", human=True)
        wide, _ = hub.tokens.create("olga", "org", human=True)
        r = client.post(
            "/api/v1/flows/flow_org_wide/runs", json={"flow_version": "1.0.0"}, headers=bearer(wide)
        )
        assert r.status_code == 201
        rid = r.json()["run"]["run_id"]
        seen = client.get(f"/api/v1/flow-runs/{rid}", headers=bearer(personal))
        assert (seen.status_code, seen.json()["code"]) == (404, "unknown_run")
        flows = client.get("/api/v1/flows", headers=bearer(personal)).json()["flows"]
        assert [f["flow_id"] for f in flows] == ["flow_weekly_review"]
        again, _ = hub.tokens.create("otto", "org")
        assert client.get(f"/api/v1/flow-runs/{rid}", headers=bearer(again)).status_code == 200
    finally:
        hub.close()


# ------------------------------------------------------------------ docs and serving


def test_openapi_is_built_from_the_models(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    for spec in ROUTES:
        op = doc["paths"][spec.path][spec.method.lower()]
        assert str(spec.success) in op["responses"] and "401" in op["responses"]
    start_op = doc["paths"]["/api/v1/flows/{flow_id}/runs"]["post"]
    ref = start_op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert body["required"] == ["flow_version"]  # flow_id comes from the path
    assert body["additionalProperties"] is False
    schemas = doc["components"]["schemas"]
    assert {"FlowRun", "Consent", "Execution", "Refusal"} <= set(schemas)
    statuses = {s for s, _, _ in CODES.values()}
    assert {str(s) for s in statuses} <= set(start_op["responses"])
    ids_seen = [op["operationId"] for p in doc["paths"].values() for op in p.values()]
    assert len(ids_seen) == len(set(ids_seen)) == len(ROUTES)
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for spec in ROUTES:
        assert spec.path in page.text
    assert "FLOW_STEP_OUT_OF_ORDER" in page.text and "<script" not in page.text


def test_serve_refuses_a_public_address_without_tokens(root: Path, capsys) -> None:
    assert cli.main(["serve", "--host", "0.0.0.0", "--port", "0", "--workspace", str(root)]) == 2
    err = capsys.readouterr().err
    assert "refusing to bind 0.0.0.0 without tokens" in err
    assert cli.main(["serve", "--workspace", str(root / "missing")]) == 2
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("::")


def test_one_app_serves_rest_and_the_skills_rpc(root: Path) -> None:
    from core.skills_runtime.app import create_app
    from core.skills_runtime.service import SkillsRuntime

    hub = Hub.open(root, lanes=lanes())
    app = create_hub_app(hub, create_app(SkillsRuntime(root)))
    try:
        with owner_client(app) as client:
            rpc = client.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "list_skills"})
            assert rpc.status_code == 200 and "result" in rpc.json(), rpc.text
            assert client.get(WR).json()["schema"] == "knowtation.flow_run_list/v0"
    finally:
        hub.close()


def test_sqlite_rows_hold_no_raw_actor(client: TestClient, hub: Hub, root: Path) -> None:
    token, _ = hub.tokens.create("grace@example.org", human=True)
    start(client, **bearer(token))
    state = Workspace.open(root).state_dir
    tokens = token_store_path(Workspace.open(root).root)  # the user's state dir, not the folder
    for db in [*state.glob("*.sqlite3"), tokens]:
        conn = sqlite3.connect(db)
        try:
            dump = "\n".join(conn.iterdump())
        finally:
            conn.close()
        assert token not in dump
        if db != tokens:  # the token table names its actor; the run store never
            assert "grace" not in dump and ACTOR not in dump


def test_no_caller_is_tokenless_and_pages_cannot_act_as_the_owner(hub: Hub) -> None:
    """Every caller needs a token, loopback included; a web page gets neither a simple
    (text/plain or form) POST through nor a DNS-rebound Host, token or not."""
    app = create_hub_app(hub)
    bare = TestClient(app, base_url=LOCAL)
    client = owner_client(app)
    body = b'{"flow_version": "1.0.0"}'
    tokenless = [
        bare.get(WR),
        bare.post(WR, json={"flow_version": "1.0.0"}),
        bare.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "list_skills"}),
    ]
    assert {r.status_code for r in tokenless} == {401}
    plain = client.post(WR, content=body, headers={"Content-Type": "text/plain"})
    form = client.post(
        WR, content=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    untyped = client.post("/rpc", content=b'{"jsonrpc": "2.0", "id": 1, "method": "run_code"}')
    for r in (plain, form, untyped):
        assert r.status_code == 415, r.text
        assert r.json() == {"ok": False, "status": 415, "error": "unsupported_media_type"}
    rebound = client.post(WR, json={"flow_version": "1.0.0"}, headers={"Host": "evil.example:8765"})
    read = client.get(WR, headers={"Host": "evil.example"})
    for r in (rebound, read):
        assert r.status_code == 421, r.text
        assert r.json() == {"ok": False, "status": 421, "error": "host_not_allowed"}
    assert client.get(WR).json()["runs"] == []  # nothing was started
    assert client.get(WR, headers={"Host": "localhost:8765"}).status_code == 200
    assert client.get(WR, headers={"Host": "[::1]:8765"}).status_code == 200
    token, _ = hub.tokens.create("ada@example.org", human=True)
    ok = client.post(WR, json={"flow_version": "1.0.0"}, headers=bearer(token))
    assert ok.status_code == 201


HOSTILE_BODIES = [
    pytest.param(b'{"intent": "a\\ud800b"}', id="lone-surrogate"),
    pytest.param(b'{"intent": "a\xff\xfeb"}', id="not-utf8"),
    pytest.param(b'\xff\xfe{\x00"\x00i\x00"\x00:\x001\x00}\x00', id="utf16"),
    pytest.param(b'{"intent": ' + b"[" * 100 + b"]" * 100 + b"}", id="deep"),
    pytest.param(b'{"intent": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", id="deeper-than-python"),
]


@pytest.mark.parametrize("body", HOSTILE_BODIES)
def test_a_body_that_is_not_json_text_is_a_coded_refusal(client: TestClient, body: bytes) -> None:
    """Issue 29: every request gets its coded answer (a lone surrogate used to reach the
    handler; a body nested past Python's recursion limit was a 500)."""
    rid = start(client)["run_id"]
    r = client.post(f"{WR}/{rid}/submit-review", content=body, headers=JSON)
    assert (r.status_code, r.json()["code"]) == (400, "BAD_REQUEST"), r.text
    assert client.get(f"{WR}/{rid}").status_code == 200  # and the hub still serves


def test_an_interrupted_execution_over_rest(
    client: TestClient, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29 over REST: a hub that died mid-execution left a running row holding the
    whole cap; after the lease, GET shows it failed ``interrupted``, the consent's
    reservation is charged (not held), and the retry says why it cannot run."""
    from datetime import UTC, datetime, timedelta

    from core.flow.consent import consent_key
    from core.flow.store import StoredExecution

    token, _ = hub.tokens.create(ACTOR, "personal", human=True)
    run = start(client, LEAD, **bearer(token))
    base = f"{LEAD}/{run['run_id']}"
    consent = {"allowed_lanes": ["local_default"], "cost_cap_units": 10}
    cid = client.post(f"{base}/consent", json=consent, headers=bearer(token)).json()["consent"][
        "consent_id"
    ]
    now = datetime.now(UTC).replace(microsecond=0)
    lease = ids.iso(now + timedelta(seconds=121))
    with hub.base.store.write() as tx:
        assert tx.reserve_units(consent_key(cid), 10)
        tx.insert_execution(
            StoredExecution(
                "fexec_dead", run["run_id"], "flow_lead_import#1", consent_key(cid), "running",
                "local_default", 10, 0, None, None, ids.iso(now), lease, None,
            )
        )  # fmt: skip
    body = {"step_id": "flow_lead_import#1", "consent_id": cid}
    waiting = client.post(f"{base}/execute-automatable", json=body, headers=bearer(token))
    assert waiting.status_code == 200
    assert waiting.json()["execution"]["execution_id"] == "fexec_dead"
    assert waiting.json()["execution"]["status"] == "running"
    monkeypatch.setattr(ids, "now", lambda: now + timedelta(seconds=151))
    shown = client.get(base).json()["executions"]
    assert [(e["execution_id"], e["status"], e["failure"]) for e in shown] == [
        ("fexec_dead", "failed", "interrupted")
    ]
    retry = client.post(f"{base}/execute-automatable", json=body, headers=bearer(token))
    assert (retry.status_code, retry.json()["code"]) == (403, "FLOW_EXECUTION_COST_CAPPED")
    with hub.base.store.read() as tx:
        held = tx.load_consent(consent_key(cid))
    assert held is not None and (held.cost_consumed_units, held.cost_reserved_units) == (10, 0)
