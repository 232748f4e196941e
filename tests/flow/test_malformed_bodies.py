"""Every malformed HTTP body gets a coded 4xx (issue 24 item 7), on the hub's REST routes
and on the Skills ``/rpc`` alike: numbers out of range (a 4,000-digit integer, ``1e999``,
``NaN``), bad UTF-8 and nesting deeper than the interpreter recurses; never a 500, and the
number's text is never echoed back.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from core.hub.app import Hub, create_hub_app
from core.json_numbers import MESSAGE
from core.netauth.local_token import read_local_token
from core.skills_runtime.app import create_app
from core.skills_runtime.service import SkillsRuntime

from .conftest import make_workspace

WR = "/api/v1/flows/flow_weekly_review/runs"
HUGE = "1" + "0" * 4000
NUMBERS = [HUGE, "-" + HUGE, "9223372036854775808", "1e999", "-1e999", "NaN", "Infinity"]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    root = make_workspace(tmp_path / "ws")
    hub = Hub.open(root)
    app = create_hub_app(hub, create_app(SkillsRuntime(root)))
    token = read_local_token()
    assert token is not None
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        yield TestClient(
            app, base_url="http://127.0.0.1:8765", headers=headers, raise_server_exceptions=False
        )
    finally:
        hub.close()


@pytest.mark.parametrize("number", NUMBERS)
def test_a_number_out_of_range_is_bad_request_on_rest(client: TestClient, number: str) -> None:
    run = client.post(WR, json={"flow_version": "1.0.0"}).json()["run"]["run_id"]
    for path, body in [
        (WR, f'{{"flow_version": "1.0.0", "task_ref": {number}}}'),
        (f"{WR}/{run}/consent", f'{{"allowed_lanes": [], "cost_cap_units": {number}}}'),
        (f"{WR}/{run}/advance", f'{{"step_id": "x#1", "to_status": "blocked", "n": {number}}}'),
    ]:
        r = client.post(path, content=body.encode())
        assert r.status_code == 400, (path, r.text)
        assert r.json()["code"] == "BAD_REQUEST"
        [problem] = r.json()["problems"]
        assert problem["path"] == "" and problem["message"].endswith(MESSAGE)
        assert number.lstrip("-")[:20] not in r.text


@pytest.mark.parametrize("number", NUMBERS)
def test_a_number_out_of_range_is_an_invalid_request_on_rpc(
    client: TestClient, number: str
) -> None:
    for body in [
        f'{{"jsonrpc": "2.0", "id": {number}, "method": "list_skills"}}',
        f'{{"jsonrpc": "2.0", "id": 1, "method": "list_skills", "params": {{"limit": {number}}}}}',
        f'{{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {{"timeout_ms": {number}}}}}',
        f'[{{"jsonrpc": "2.0", "id": 1, "method": "list_skills"}}, {number}]',
    ]:
        r = client.post("/rpc", content=body.encode())
        assert r.status_code == 400, r.text
        reply = r.json()
        assert reply["id"] is None and reply["error"]["code"] == -32600
        assert reply["error"]["data"]["reason"] == "number_out_of_range"
        assert "Infinity" not in r.text and "NaN" not in r.text


def test_bad_utf8_and_deep_nesting_are_coded_4xx(client: TestClient) -> None:
    deep = b"[" * 60_000 + b"]" * 60_000  # under the REST body cap, past the recursion limit
    for body in (b'{"flow_version": "\xff\xfe"}', deep, b'{"flow_version": '):
        r = client.post(WR, content=body)
        assert (r.status_code, r.json()["code"]) == (400, "BAD_REQUEST"), r.text[:200]
        r = client.post("/rpc", content=body)
        assert r.status_code == 400 and r.json()["error"]["code"] == -32700, r.text[:200]
    assert client.get(WR).json()["runs"] == []
    fine = client.post("/rpc", json={"jsonrpc": "2.0", "id": 2**63 - 1, "method": "list_skills"})
    assert fine.status_code == 200 and fine.json()["id"] == 2**63 - 1
