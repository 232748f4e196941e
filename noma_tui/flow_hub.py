"""The flow pane on a remote team hub: the same calls, over the hub's REST routes.

With ``[hub] url = "http://hub.example:8765"`` in ``noma-workbench.toml`` and the bearer
token in ``NOMA_HUB_TOKEN`` (for a hub on this machine, a loopback URL, the owner's own
server token is found by itself: `core.netauth.local_token`; it is never sent to any other
address), `open_flow_context` returns a `HubContext` instead of a local
`FlowContext`, and every function here (named and shaped like the `core.flow` handler it
stands for) sends the request to the hub and returns the hub's record, or its refusal as
the same `FlowRefusal` value. The pane calls these names either way, so its keys, its
rendering and its refusal lines are the same on a local store and on a hub.

Reviewing proposals and listing or revoking consents are not REST routes of the contract;
on a hub they answer ``BAD_REQUEST`` saying so (use ``noma flow`` on the hub's machine). A
hub that cannot be reached, or that refuses the token (401), is also a ``BAD_REQUEST``
whose problem says which, so the pane shows a line instead of failing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import httpx

from core.flow import FlowContext, FlowRefusal, FlowResult
from core.flow import actions as local_actions
from core.flow import definitions as local_definitions
from core.flow import run_inputs as local_inputs
from core.flow import runs as local_runs
from core.flow.bundle import parse_bundle
from core.flow.consent import mint_consent as local_mint
from core.flow.errors import CODES, Problem
from core.flow.execute import execute_automatable as local_execute
from core.flow.models import FlowBundle, FlowInput
from core.flow.posture import Posture
from core.netauth.bind import is_loopback
from core.netauth.local_token import read_local_token
from core.workspace import Workspace

TOKEN_ENV = "NOMA_HUB_TOKEN"
TIMEOUT_SECONDS = 60.0
ROUTES = {
    "advance": "advance",
    "evidence": "evidence",
    "consent": "consent",
    "execute_automatable": "execute-automatable",
    "submit_review": "submit-review",
}


class _NoStore:
    """The pane releases its worker's store connection; a hub has none to release."""

    def release(self) -> None:
        return None

    def close(self) -> None:
        return None


@dataclass
class HubContext:
    """A remote hub as the pane sees it: where it is, how to call it, its posture."""

    url: str
    client: httpx.Client
    posture: Posture
    store: _NoStore = field(default_factory=_NoStore)
    flows: dict[str, str] = field(default_factory=dict)  # run_id -> flow_id

    def close(self) -> None:
        self.client.close()


def hub_url(workspace: Workspace) -> str | None:
    url = workspace.section("hub").get("url")
    return url.rstrip("/") if isinstance(url, str) and url.strip() else None


def open_flow_context(workspace: Workspace) -> FlowContext | HubContext:
    """The hub named by ``[hub] url`` (token from ``NOMA_HUB_TOKEN``), else the local store
    (`FlowContext.open` with ``lazy``, so opening a workspace writes nothing)."""
    url = hub_url(workspace)
    if url is None:  # the local store, opened lazily: nothing is written until a run is
        return FlowContext.open(workspace, lazy=True)
    token = os.environ.get(TOKEN_ENV, "") or _local_token_for(url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = httpx.Client(base_url=url, headers=headers, timeout=TIMEOUT_SECONDS)
    ctx = HubContext(url, client, Posture.from_config({}, None))
    listing = _call(ctx, "GET", "/api/v1/flows")
    if isinstance(listing, dict):
        p = listing["posture"]
        ctx.posture = Posture.from_config(
            {
                "run_writes_enabled": p["run_writes_enabled"],
                "automatable_execution_enabled": p["automatable_execution_enabled"],
                "why": p.get("why", {}),
            },
            {
                "automatable_forbidden": p["automatable_forbidden"],
                "allowed_lanes": p["allowed_lanes"],
                "cost_cap_units": p["cost_cap_units"],
            },
        )
    return ctx


def _local_token_for(url: str) -> str:
    """The owner's server token if ``url`` is a hub on this machine (http(s) to a loopback
    address), else nothing: the secret never travels to a host the config names."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return ""
    if parsed.scheme not in ("http", "https") or not is_loopback(parsed.host):
        return ""
    return read_local_token() or ""


def _fault(where: str, message: str) -> FlowRefusal:
    return FlowRefusal("BAD_REQUEST", (Problem(where, message),))


def _call(
    ctx: HubContext,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> FlowResult:
    try:
        response = ctx.client.request(method, path, json=body, params=params)
    except httpx.HTTPError:
        return _fault("hub", "the hub cannot be reached")
    if response.status_code == 401:
        return _fault("Authorization", f"the hub refused the token: set {TOKEN_ENV}")
    try:
        out = response.json()
    except ValueError:
        return _fault("hub", f"the hub answered {response.status_code} without a record")
    if isinstance(out, dict) and out.get("ok") is False and out.get("code") in CODES:
        problems = tuple(
            Problem(str(p.get("path", "")), str(p.get("message", "")))
            for p in out.get("problems") or ()
            if isinstance(p, dict)
        )
        return FlowRefusal(out["code"], problems)
    if not isinstance(out, dict) or response.status_code >= 400:
        return _fault("hub", f"the hub answered {response.status_code}")
    if isinstance(out.get("run"), dict):
        ctx.flows[out["run"]["run_id"]] = out["run"]["flow_id"]
    return out


def _flow_of(ctx: HubContext, run_id: str) -> str | None:
    if run_id not in ctx.flows:
        got = _call(ctx, "GET", f"/api/v1/flow-runs/{run_id}")
        if isinstance(got, FlowRefusal):
            return None
    return ctx.flows.get(run_id)


def _run_write(ctx: HubContext, action: str, request: dict[str, Any]) -> FlowResult:
    body = {k: v for k, v in request.items() if v is not None}
    run_id = str(body.pop("run_id", ""))
    flow_id = _flow_of(ctx, run_id)
    if flow_id is None:
        return FlowRefusal("unknown_run")
    return _call(ctx, "POST", f"/api/v1/flows/{flow_id}/runs/{run_id}/{ROUTES[action]}", body)


# -------------------------------------------------- the handler names the pane calls


def list_flows(ctx: FlowContext | HubContext) -> FlowResult:
    if isinstance(ctx, FlowContext):
        return local_definitions.list_flows(ctx)
    return _call(ctx, "GET", "/api/v1/flows")


def list_runs(ctx: FlowContext | HubContext, request: dict[str, Any]) -> FlowResult:
    if isinstance(ctx, FlowContext):
        return local_runs.list_runs(ctx, request)
    params = {k: str(v) for k, v in request.items() if v is not None}
    out = _call(ctx, "GET", "/api/v1/flow-runs", params=params)
    if isinstance(out, dict):
        for run in out["runs"]:
            ctx.flows[run["run_id"]] = run["flow_id"]
    return out


def run_executions(ctx: FlowContext | HubContext, run_id: str) -> list[dict[str, Any]]:
    """The run's executions (``get_run``'s additive ``executions``); reading them settles
    an execution whose lease ran out, so a crashed one shows as ``interrupted``."""
    if isinstance(ctx, FlowContext):
        got = local_runs.get_run(ctx, {"run_id": run_id})
    else:
        got = _call(ctx, "GET", f"/api/v1/flow-runs/{run_id}")
    if isinstance(got, FlowRefusal):
        return []
    return list(got.get("executions") or [])


def _bundle(ctx: HubContext, flow_id: str, version: str) -> FlowBundle | None:
    got = _call(ctx, "GET", f"/api/v1/flows/{flow_id}", params={"version": version})
    if isinstance(got, FlowRefusal):
        return None
    return parse_bundle(got["bundle"])


def pinned_bundle(ctx: FlowContext | HubContext, run_id: str) -> FlowBundle | None:
    """The run's flow at its pinned version (on a hub: that version from its catalog)."""
    if isinstance(ctx, FlowContext):
        return local_runs.pinned_bundle(ctx, run_id)
    got = _call(ctx, "GET", f"/api/v1/flow-runs/{run_id}")
    if isinstance(got, FlowRefusal):
        return None
    return _bundle(ctx, got["run"]["flow_id"], got["run"]["flow_version"])


def start_fields(
    ctx: FlowContext | HubContext, flow_id: str, version: str
) -> list[tuple[str, str]]:
    if isinstance(ctx, FlowContext):
        return local_definitions.start_fields(ctx, flow_id, version)
    bundle = _bundle(ctx, flow_id, version)
    if bundle is None:
        return []
    return [
        (i.name, f"{i.name} ({i.type}{', required' if i.required else ''})")
        for i in bundle.flow.inputs or ()
    ]


def start_inputs(ctx: FlowContext | HubContext, flow_id: str, version: str) -> list[FlowInput]:
    """The flow's declared inputs, for the start form's own check (`run_inputs`)."""
    if isinstance(ctx, FlowContext):
        return local_inputs.start_inputs(ctx, flow_id, version)
    bundle = _bundle(ctx, flow_id, version)
    return list(bundle.flow.inputs or ()) if bundle is not None else []


def start_run(ctx: FlowContext | HubContext, request: dict[str, Any]) -> FlowResult:
    if isinstance(ctx, FlowContext):
        return local_runs.start_run(ctx, request)
    body = {k: v for k, v in request.items() if v is not None}
    return _call(ctx, "POST", f"/api/v1/flows/{body.get('flow_id', '')}/runs", body)


def advance_step(ctx: FlowContext | HubContext, request: dict[str, Any]) -> FlowResult:
    if isinstance(ctx, FlowContext):
        return local_runs.advance_step(ctx, request)
    return _run_write(ctx, "advance", request)


def record_evidence(ctx: FlowContext | HubContext, request: dict[str, Any]) -> FlowResult:
    if isinstance(ctx, FlowContext):
        return local_runs.record_evidence(ctx, request)
    return _run_write(ctx, "evidence", request)


def mint_consent(ctx: FlowContext | HubContext, request: dict[str, Any]) -> FlowResult:
    if isinstance(ctx, FlowContext):
        return local_mint(ctx, request)
    return _run_write(ctx, "consent", request)


def execute_automatable(ctx: FlowContext | HubContext, request: dict[str, Any]) -> FlowResult:
    if isinstance(ctx, FlowContext):
        return local_execute(ctx, request)
    return _run_write(ctx, "execute_automatable", request)


def submit_review(ctx: FlowContext | HubContext, request: dict[str, Any]) -> FlowResult:
    if isinstance(ctx, FlowContext):
        return local_runs.submit_review(ctx, request)
    return _run_write(ctx, "submit_review", request)


def run_action(ctx: FlowContext | HubContext, action: str, payload: dict[str, Any]) -> FlowResult:
    """`core.flow.actions.run_action`; on a hub, only the contract's run actions exist."""
    if isinstance(ctx, FlowContext):
        return local_actions.run_action(ctx, action, payload)
    if action in ROUTES:
        return _run_write(ctx, action, payload)
    return _fault("action", "not a route of the hub: review and consents live on its machine")
