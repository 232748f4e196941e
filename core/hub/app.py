"""The team hub: the contract's REST routes over the one flow handler family, on Starlette.

Every route resolves its caller to an `Actor` (a hub token's, or for the server's own
local token the workspace's actor as an agent; `core.netauth` authenticates every request
before any route sees it, and there is no token-less caller), opens nothing per request but the
workspace config (so posture is current, as on every other surface), and calls the same
handler the CLI, the MCP tool and the pane call. The handler's record is the response
body; a refusal is ``{ok: false, code, status, error}`` with the §8 status.

Order of checks matches the other surfaces: the route's sub-gate first (a handler is
unreachable while its gate is off, so no body parsing and no store access before it), then
the body, then the run's visibility: a run that does not exist, one the caller may not
see, and one that belongs to another flow than the path names are the same 404.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from .. import strict_json
from ..flow import FlowContext, FlowRefusal, FlowResult, to_json
from ..flow.actions import run_action
from ..flow.errors import Problem, Refused
from ..flow.handlers import require_automatable, require_run_writes
from ..flow.lanes import ExecutionLane
from ..flow.posture import Actor, Posture, workspace_actor
from ..netauth.bind import LOOPBACK_ONLY, HostPolicy
from ..netauth.gate import Authenticator, AuthGate, Caller, bearer, caller_in
from ..netauth.local_token import load_or_create_local_token
from ..netauth.tokens import HubToken, TokenStore
from ..workspace import Workspace
from . import projection_route
from .candidate_routes import dispatch_candidate, is_candidate_action
from .openapi import docs_html, openapi_document
from .route_spec import RouteSpec
from .routes import ROUTES

MAX_BODY_BYTES = 256 * 1024
SCOPE_LADDER = {
    "personal": ("personal",),
    "project": ("personal", "project"),
    "org": ("personal", "project", "org"),
}


@dataclass
class Hub:
    """One workspace served over HTTP: the shared store/catalog/lanes, and the token table."""

    root: Path
    base: FlowContext
    tokens: TokenStore
    require_tokens: bool = True  # kept for callers; every caller needs a token now

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        require_tokens: bool = True,
        lanes: Mapping[str, ExecutionLane] | None = None,
    ) -> Hub:
        workspace = Workspace.open(root)
        base = FlowContext.open(workspace, lanes=lanes)
        return cls(workspace.root, base, TokenStore.for_workspace(workspace.root), require_tokens)

    def close(self) -> None:
        self.base.close()

    # ------------------------------------------------------------------ callers

    def workspace(self) -> Workspace:
        return Workspace.open(self.root)

    def authenticate(self, authorization: str | None) -> Actor | None:
        """The actor of a hub token, or None for a 401 (missing, malformed, unknown, revoked
        alike). The server's local token is checked by `core.netauth`, not here."""
        presented = bearer(authorization)
        token = None if presented is None else self.tokens.verify(presented)
        return None if token is None else self.token_actor(token)

    def actor_for(self, caller: Caller) -> Actor:
        """The actor an authenticated caller speaks as: the owner's local token is the
        workspace's actor as an agent (an HTTP caller is as likely a local agent)."""
        if caller.name is None:
            ws = self.workspace()
            policy = Posture.from_workspace(ws).policy
            return workspace_actor(ws, policy, self.base.actor_key).as_agent()
        policy = Posture.from_workspace(self.workspace()).policy
        scopes: list[str] = [s for s in SCOPE_LADDER[caller.scope] if s in policy.scopes]
        actor = Actor.named(caller.name, scopes, key=self.base.actor_key)
        return actor if caller.human else actor.as_agent()

    def token_actor(self, token: HubToken) -> Actor:
        """A token speaks for the actor it is named for, keyed-hashed like every actor."""
        policy = Posture.from_workspace(self.workspace()).policy
        scopes: list[str] = [s for s in SCOPE_LADDER[token.scope] if s in policy.scopes]
        actor = Actor.named(token.name, scopes, key=self.base.actor_key)
        return actor if token.human else actor.as_agent()

    def context(self, actor: Actor) -> FlowContext:
        """The shared store seen by ``actor`` under the posture the config says now."""
        posture = Posture.from_workspace(self.workspace())
        return dataclasses.replace(self.base, posture=posture, actor=actor)


# ---------------------------------------------------------------------- plumbing


def _refusal(code: Any, path: str = "", message: str = "") -> FlowRefusal:
    return FlowRefusal(code, (Problem(path, message),) if message else ())


def _gate(ctx: FlowContext, gate: str) -> FlowRefusal | None:
    try:
        if gate == "writes":
            require_run_writes(ctx)
        elif gate == "automatable":
            require_automatable(ctx)
    except Refused as exc:
        return exc.refusal
    return None


def respond(result: FlowResult, success: int) -> Response:
    body = to_json(result)
    status = result.status if isinstance(result, FlowRefusal) else success
    headers = {}
    run = body.get("run") if isinstance(body, dict) else None
    if isinstance(run, dict) and isinstance(run.get("etag"), str):
        headers["ETag"] = f'"{run["etag"]}"'
    return JSONResponse(body, status_code=status, headers=headers)


async def read_body(request: Request) -> dict[str, Any] | FlowRefusal:
    """The JSON object the request carries (an empty body is ``{}``), size-capped."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY_BYTES:
            return _refusal("BAD_REQUEST", "", f"the body is over {MAX_BODY_BYTES} bytes")
    if not data.strip():
        return {}
    try:
        value = strict_json.loads(bytes(data))
    except strict_json.NotJsonText as exc:  # not UTF-8, not JSON, too deep, lone surrogate
        return _refusal("BAD_REQUEST", "", f"the body is not JSON text: {exc}")
    if not isinstance(value, dict):
        return _refusal("BAD_REQUEST", "", "the request must be an object")
    return value


def _merge_path(
    payload: dict[str, Any], params: Mapping[str, str], names: tuple[str, ...]
) -> dict[str, Any] | FlowRefusal:
    """Path parameters win; a body that names a different one is malformed, not ignored."""
    out = dict(payload)
    for name in names:
        if name in out and out[name] != params[name]:
            return _refusal("BAD_REQUEST", name, "differs from the path")
        out[name] = params[name]
    return out


def _if_match(request: Request, payload: dict[str, Any]) -> dict[str, Any] | FlowRefusal:
    header = request.headers.get("if-match")
    if header is None:
        return payload
    etag = header.strip().removeprefix("W/").strip('"')
    if "expected_etag" in payload and payload["expected_etag"] != etag:
        return _refusal("BAD_REQUEST", "expected_etag", "differs from If-Match")
    return {**payload, "expected_etag": etag}


def _run_in_flow(ctx: FlowContext, run_id: str, flow_id: str | None) -> FlowRefusal | None:
    """Refuse with ``unknown_run`` unless the run is visible and (if named) of ``flow_id``."""
    got = run_action(ctx, "get", {"run_id": run_id})
    if isinstance(got, FlowRefusal):
        return got
    if flow_id is not None and got["run"]["flow_id"] != flow_id:
        return FlowRefusal("unknown_run")
    return None


def _actor(hub: Hub, request: Request) -> Actor:
    caller = caller_in(request.scope)
    assert caller is not None  # the gate answered 401 otherwise
    return hub.actor_for(caller)


# ---------------------------------------------------------------------- endpoints


def _endpoint(hub: Hub, spec: RouteSpec) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        ctx = await run_in_threadpool(lambda: hub.context(_actor(hub, request)))
        params = dict(request.path_params)
        refused = _gate(ctx, spec.gate)
        if refused is not None:
            return respond(refused, spec.success)
        if spec.method == "POST":
            body = await read_body(request)
            if isinstance(body, FlowRefusal):
                return respond(body, spec.success)
            payload: dict[str, Any] | FlowRefusal = body
        else:
            payload = _query(request)
        if not isinstance(payload, FlowRefusal) and spec.action in (
            "advance",
            "evidence",
            "execute_automatable",
        ):
            payload = _if_match(request, payload)
        if isinstance(payload, FlowRefusal):
            return respond(payload, spec.success)
        result = await run_in_threadpool(_dispatch, ctx, spec, params, payload)
        return respond(result, spec.success)

    return endpoint


def _query(request: Request) -> dict[str, Any] | FlowRefusal:
    out: dict[str, Any] = {}
    for key, value in request.query_params.multi_items():
        if key in out:
            return _refusal("BAD_REQUEST", key, "given more than once")
        out[key] = value
    return out


def _dispatch(
    ctx: FlowContext, spec: RouteSpec, params: dict[str, str], payload: dict[str, Any]
) -> FlowResult:
    if is_candidate_action(spec.action):
        return dispatch_candidate(ctx, spec, params, payload)
    if spec.action == projection_route.ACTION:
        return projection_route.dispatch(ctx, params, payload)
    if spec.action in ("flows", "propose", "proposals"):
        return run_action(ctx, spec.action, payload)
    if spec.action in ("flow", "proposal", "review"):  # one definition or proposal: the path's
        key = "flow_id" if spec.action == "flow" else "proposal_id"
        merged = _merge_path(payload, params, (key,))
        if isinstance(merged, FlowRefusal):
            return merged
        return run_action(ctx, spec.action, merged)
    if spec.action == "list" and "flow_id" not in params:
        return run_action(ctx, "list", payload)
    if spec.action in ("list", "start"):
        merged = _merge_path(payload, params, ("flow_id",))
        if isinstance(merged, FlowRefusal):
            return merged
        return run_action(ctx, spec.action, merged)
    # Every other route addresses one run: the path's run (of the path's flow) or 404.
    run_params = {"run_id": params["run_id"]}
    merged = _merge_path(payload, run_params, ("run_id",))
    if isinstance(merged, FlowRefusal):
        return merged
    if spec.action == "get":
        got = run_action(ctx, "get", merged)
        wanted = params.get("flow_id")
        if isinstance(got, dict) and wanted is not None and got["run"]["flow_id"] != wanted:
            return FlowRefusal("unknown_run")
        return got
    if spec.action == "consent" and not ctx.actor.human:
        # Consent is the human's "yes" (MCP has no consent action for the same reason).
        return FlowRefusal("FLOW_HUMAN_APPROVAL_REQUIRED")
    mismatch = _run_in_flow(ctx, params["run_id"], params.get("flow_id"))
    if mismatch is not None:
        return mismatch
    return run_action(ctx, spec.action, merged)


def hub_routes(hub: Hub) -> list[BaseRoute]:
    routes: list[BaseRoute] = [
        Route(spec.path, _endpoint(hub, spec), methods=[spec.method]) for spec in ROUTES
    ]
    document = openapi_document()

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    async def docs(request: Request) -> Response:
        return HTMLResponse(docs_html(document))

    routes.append(Route("/openapi.json", openapi, methods=["GET"]))
    routes.append(Route("/docs", docs, methods=["GET"]))
    return routes


def create_hub_app(
    hub: Hub,
    extra: Starlette | None = None,
    *,
    hosts: HostPolicy = LOOPBACK_ONLY,
    local_token: str | None = None,
) -> ASGIApp:
    """The hub's ASGI app behind the one authentication layer; ``extra`` (the Skills
    runtime app) adds its routes and lifespan. The owner's local token is created (or
    found) here unless given, so the owner's clients find it before the first request."""
    routes = hub_routes(hub)
    lifespan = None
    if extra is not None:
        routes.extend(extra.routes)
        lifespan = extra.router.lifespan_context
    app = Starlette(routes=routes, lifespan=lifespan)
    local = local_token if local_token is not None else load_or_create_local_token()
    return AuthGate(app, Authenticator(hub.tokens, local), hosts)
