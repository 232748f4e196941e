"""Human review is human (issue 24 item 3): a `human_review` step is finished, done or
skipped, only by a human actor. An agent (MCP, an agent hub token, the server's own local
token, which speaks for the workspace's actor as an agent) asking to skip it, or to mark it
done without the human's approval, gets ``FLOW_HUMAN_APPROVAL_REQUIRED`` (403) and the run is
unchanged; every surface answers with the same refusal, deep-equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from core import cli
from core.flow import FlowContext, to_json
from core.flow.runs import advance_step, get_run
from core.hub.app import Hub, create_hub_app
from core.netauth.local_token import read_local_token

from .conftest import (
    ACTOR,
    FakeLane,
    bundle,
    make_workspace,
    open_ctx,
    started,
    step,
)
from .test_security import _weekly_at_review

REFUSED = {
    "ok": False,
    "code": "FLOW_HUMAN_APPROVAL_REQUIRED",
    "status": 403,
    "error": "approving a human review is a human's act, not an agent's",
}
SKIP = {"step_id": "flow_weekly_review#3", "to_status": "skipped", "skip_reason": "policy"}
WR = "/api/v1/flows/flow_weekly_review/runs"


def _lanes() -> dict[str, Any]:
    from core.flow.lanes import ProviderLane

    return {"local_default": FakeLane(), "cloud_premium": ProviderLane("cloud_premium")}


def _state(ctx: FlowContext, rid: str) -> dict[str, Any]:
    return to_json(get_run(ctx, {"run_id": rid}))["run"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("reason", ["policy", "not_applicable", "blocked_dependency"])
def test_an_agent_cannot_skip_a_human_review_step(tmp_path: Path, reason: str) -> None:
    root = make_workspace(tmp_path / "ws")
    ctx = open_ctx(root)
    try:
        rid = _weekly_at_review(ctx)
        before = _state(ctx, rid)
        agent = ctx.as_actor(ctx.actor.as_agent())
        body = {**SKIP, "run_id": rid, "skip_reason": reason}
        assert to_json(advance_step(agent, body)) == REFUSED
        after = _state(ctx, rid)
        assert after == before and after["status"] == "in_progress"
    finally:
        ctx.close()


def test_an_agent_cannot_finish_an_unrequired_human_review_without_the_human(
    tmp_path: Path,
) -> None:
    """Evidence not required: `done` would still finish the run with nobody's sign-off."""
    f = "flow_soft_review"
    soft = bundle(f, [step(f, 1, kind="human_review", evidence_required=False)])
    root = make_workspace(tmp_path / "ws", bundles=[soft])
    ctx = open_ctx(root)
    try:
        rid = started(ctx, f)["run_id"]
        agent = ctx.as_actor(ctx.actor.as_agent())
        sid = f"{f}#1"
        ok = advance_step(agent, {"run_id": rid, "step_id": sid, "to_status": "in_progress"})
        assert isinstance(ok, dict)  # an agent may still work on it
        for body in (
            {"to_status": "done"},
            {"to_status": "skipped", "skip_reason": "not_applicable"},
        ):
            got = to_json(advance_step(agent, {"run_id": rid, "step_id": sid, **body}))
            assert got == REFUSED
        assert _state(ctx, rid)["status"] == "in_progress"
        done = advance_step(ctx, {"run_id": rid, "step_id": sid, "to_status": "done"})
        assert isinstance(done, dict) and done["run"]["status"] == "done"  # the human may
    finally:
        ctx.close()


def test_every_surface_refuses_the_agent_skip_alike_and_the_human_may(tmp_path: Path) -> None:
    from core.mcp.flow_tool import call

    root = make_workspace(tmp_path / "ws")
    ctx = open_ctx(root)
    hub = Hub.open(root, lanes=_lanes())
    try:
        rid = _weekly_at_review(ctx)
        before = _state(ctx, rid)
        body = {**SKIP, "run_id": rid}
        answers: dict[str, Any] = {}
        answers["handler"] = to_json(advance_step(ctx.as_actor(ctx.actor.as_agent()), body))
        answers["mcp"] = call(root, "advance", body)
        agent, _ = hub.tokens.create(ACTOR)  # the same person, as an agent
        client = TestClient(create_hub_app(hub), base_url="http://127.0.0.1:8765")
        local = read_local_token()
        assert local is not None
        path = f"{WR}/{rid}/advance"
        for name, token in (("rest_agent", agent), ("rest_local", local)):
            r = client.post(path, json=SKIP, headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 403
            answers[name] = r.json()
        for name, got in answers.items():
            assert got == REFUSED, name
        assert _state(ctx, rid) == before
        # The human (the CLI's actor, or a human token) may skip it, with a bounded reason.
        human, _ = hub.tokens.create(ACTOR, human=True)
        r = client.post(path, json=SKIP, headers={"Authorization": f"Bearer {human}"})
        assert r.status_code == 200, r.text
        assert r.json()["run"]["step_states"][2]["status"] == "skipped"
    finally:
        hub.close()
        ctx.close()


def test_the_cli_human_may_skip_a_human_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace(tmp_path / "ws")
    ctx = open_ctx(root)
    try:
        rid = _weekly_at_review(ctx)
    finally:
        ctx.close()
    argv = ["flow", "run", "advance", rid, SKIP["step_id"], "skipped", "--skip-reason", "policy"]
    capsys.readouterr()
    assert cli.main([*argv, "--root", str(root), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["run"]["step_states"][2]["status"] == "skipped"
    assert out["run"]["status"] == "done"
