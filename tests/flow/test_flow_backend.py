"""One flow backend protocol, two places: the same calls on the local store
(`LocalFlowBackend`) and on a live hub over HTTP (`HubClient`, requests built from the
route table) give equal records and equal refusals, once generated ids and times are set
aside; and the client's requests stay on the routes the table names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.flow import FlowContext, FlowRefusal
from core.flow.backend import FlowBackend, LocalFlowBackend, run_executions, start_fields
from core.hub.app import Hub
from core.hub.client import HubClient, build_request, path_names, route_for
from core.hub.routes import ROUTES
from core.workspace import Workspace

from .conftest import ACTOR, make_workspace, share_actor_key
from .test_hub_http import serving

F = "flow_weekly_review"
STEPS: list[tuple[str, dict[str, Any]]] = [
    ("advance", {"step_id": f"{F}#1", "to_status": "in_progress"}),
    ("evidence", {"step_id": f"{F}#1", "evidence_ref": "op_1", "pointer_kind": "artifact"}),
    ("advance", {"step_id": f"{F}#1", "to_status": "done"}),
    ("advance", {"step_id": f"{F}#2", "to_status": "skipped", "skip_reason": "not_applicable"}),
    ("evidence", {"step_id": f"{F}#3", "evidence_ref": "a" * 64, "pointer_kind": "hash"}),
    ("advance", {"step_id": f"{F}#3", "to_status": "done", "approve": True}),
    ("submit_review", {"intent": "Weekly review outcome"}),
]
GENERATED = {"run_id", "started", "proposal_id", "created", "external_ref", "etag"}


def comparable(value: Any) -> Any:
    """``value`` without what each store generates (ids, times) and refusals as data."""
    if isinstance(value, FlowRefusal):
        return ("refused", value.code, value.status, [(p.path, p.message) for p in value.problems])
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in GENERATED}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def script(backend: FlowBackend) -> list[Any]:
    """What the pane does on a manual run, call by call, and what each call answered."""
    out: list[Any] = [backend.call("flows")]
    started = backend.call("start", {"flow_id": F, "flow_version": "1.0.0"})
    assert isinstance(started, dict), started
    rid = started["run"]["run_id"]
    out.append(started)
    for action, body in STEPS:
        answer = backend.call(action, {"run_id": rid, **body})
        assert isinstance(answer, dict), (action, answer)
        out.append(answer)
    out.append(backend.call("get", {"run_id": rid}))
    out.append(backend.call("list", {"limit": 10}))
    out.append(backend.call("proposals", {"status": "pending"}))
    out.append(backend.call("flow", {"flow_id": F, "version": "1.0.0"}))
    pinned = backend.pinned_bundle(rid)
    out.append(pinned.to_json() if pinned is not None else None)
    out.append([i.model_dump() for i in backend.start_inputs(F, "1.0.0")])
    out.append(start_fields(backend, F, "1.0.0"))
    out.append(run_executions(backend, rid))
    missing = "run_" + "9" * 20  # well formed, but no such run
    out.append(backend.call("get", {"run_id": missing}))
    out.append(
        backend.call("advance", {"run_id": missing, "step_id": f"{F}#1", "to_status": "done"})
    )
    out.append(backend.call("start", {"flow_id": "flow_missing", "flow_version": "1.0.0"}))
    return [comparable(x) for x in out]


def test_the_same_calls_give_the_same_records_locally_and_on_a_hub(
    tmp_path: Path, clock: Any, pinned_ids: None
) -> None:
    local_root = make_workspace(tmp_path / "local")
    share_actor_key(local_root)
    local = LocalFlowBackend(FlowContext.open(Workspace.open(local_root)))
    try:
        here = script(local)
    finally:
        local.close()

    hub_root = make_workspace(tmp_path / "hub")
    share_actor_key(hub_root)  # the hub knows the same person under the same key
    hub = Hub.open(hub_root, require_tokens=True)
    token, _ = hub.tokens.create(ACTOR, human=True)
    try:
        with serving(hub) as (url, _):
            remote = HubClient.connect(url, token)
            try:
                assert remote.posture.gates == local.posture.gates
                there = script(remote)
            finally:
                remote.close()
    finally:
        hub.close()
    assert len(here) == len(there)
    for i, (a, b) in enumerate(zip(here, there, strict=True)):
        assert a == b, f"call {i} differs"
    assert here[-3][:3] == here[-2][:3] == ("refused", "unknown_run", 404)
    assert here[-1][:2] == ("refused", "unknown_flow")


def test_what_no_route_carries_is_refused_without_a_request(tmp_path: Path) -> None:
    client = HubClient("http://127.0.0.1:9", "")  # nothing listens: a request would fail
    try:
        assert client.serves("advance") and client.serves("review")
        assert not client.serves("consents") and not client.serves("revoke_consent")
        refused = client.call("consents", {"run_id": "frun_1"})
        assert isinstance(refused, FlowRefusal)
        assert [p.path for p in refused.problems] == ["action"]
    finally:
        client.close()


def test_every_row_of_the_route_table_is_reachable_by_its_action() -> None:
    for spec in ROUTES:
        values = {name: "x" for name in path_names(spec)}
        found = route_for(spec.action, values)
        assert found is not None and found.action == spec.action
        method, path, _, _ = build_request(found, values)
        assert method == found.method and path.startswith("/api/v1/")


@pytest.mark.parametrize(
    "hostile", ["../../flows", "a/b", "x?y=1", "%2e%2e", "#frag", " ", "..", "."]
)
def test_a_path_value_stays_one_segment_of_its_route(hostile: str) -> None:
    values = {"run_id": hostile, "flow_id": "flow_a"}
    spec = route_for("advance", values)
    assert spec is not None
    method, path, body, query = build_request(spec, values)
    assert method == "POST" and query is None and body == {}
    segment, _, rest = path.removeprefix("/api/v1/flows/flow_a/runs/").partition("/")
    assert rest == "advance"
    assert not any(c in segment for c in "/?# ") and segment not in (".", "..")


def test_the_token_rides_only_to_the_configured_origin() -> None:
    client = HubClient("http://127.0.0.1:9", "nhub_secret")
    try:
        assert client.client.follow_redirects is False  # a 30x cannot carry it elsewhere
        assert str(client.client.base_url) == "http://127.0.0.1:9"
        for spec in ROUTES:  # every request is a path on that origin, never a full URL
            _, path, _, _ = build_request(spec, {n: "x" for n in path_names(spec)})
            assert path.startswith("/") and not path.startswith("//")
    finally:
        client.close()
