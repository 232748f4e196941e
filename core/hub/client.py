"""The flow backend on a remote team hub: `core.flow.backend.FlowBackend` over REST.

Every request is built from the hub's route table (`core.hub.routes.ROUTES`): the row for
the action whose path the request's values fill, path values percent-encoded into their
segments, the rest as the JSON body (POST) or the query (GET). So the client cannot call a
route the hub does not have, and a route that moves moves here too. The hub's record, or
its refusal as the same `FlowRefusal` value, is what `call` returns.

Where the token goes (`docs/security.md`): only to the configured hub URL, as a bearer
header of one `httpx.Client` bound to that base URL, with redirects not followed; the
owner's own server token (`core.netauth.local_token`) is used only for an http(s) URL to
a loopback address (`token_for`). A hub that cannot be reached, or that refuses the token
(401), is a ``BAD_REQUEST`` whose problem says which, so a surface shows a line instead of
failing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from ..flow.bundle import parse_bundle
from ..flow.errors import CODES, FlowRefusal, FlowResult, Problem
from ..flow.models import FlowBundle, FlowInput
from ..flow.posture import Posture
from ..netauth.bind import is_loopback
from ..netauth.local_token import read_local_token
from .route_spec import RouteSpec
from .routes import ROUTES

TOKEN_ENV = "NOMA_HUB_TOKEN"
TIMEOUT_SECONDS = 60.0
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
# What a caller may ask that no route carries: the human's consent ledger lives on the
# hub's machine (``noma flow`` there).
_NOT_SERVED = "not a route of the hub: review and consents live on its machine"


def path_names(spec: RouteSpec) -> tuple[str, ...]:
    """The names a route's path holds (``{run_id}`` -> ``run_id``), in order."""
    return tuple(_PLACEHOLDER.findall(spec.path))


def route_for(action: str, known: Mapping[str, Any]) -> RouteSpec | None:
    """The row for ``action`` whose path ``known`` fills; of several, the one with the
    fewest path values (a run by its id rather than under its flow)."""
    rows = [
        r
        for r in ROUTES
        if r.action == action and all(known.get(n) is not None for n in path_names(r))
    ]
    return min(rows, key=lambda r: len(path_names(r)), default=None)


def build_request(
    spec: RouteSpec, values: Mapping[str, Any]
) -> tuple[str, str, dict[str, Any] | None, dict[str, str] | None]:
    """``(method, path, body, query)`` for one row: each path value percent-encoded whole
    (a ``/``, ``?`` or ``..`` in an id cannot reach another route), ``None`` values
    dropped, the other values as the body (POST) or as query strings (GET)."""
    names = path_names(spec)
    path = _PLACEHOLDER.sub(lambda m: _segment(str(values[m.group(1)])), spec.path)
    rest = {k: v for k, v in values.items() if k not in names and v is not None}
    if spec.method == "GET":
        return "GET", path, None, {k: str(v) for k, v in rest.items()}
    return "POST", path, rest, None


def _segment(value: str) -> str:
    """``value`` as one path segment: every reserved byte encoded, and a dot segment
    (``.``, ``..``) encoded too, so no URL normalisation can climb out of the route."""
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


def token_for(url: str, configured: str) -> str:
    """``configured`` (the user's ``NOMA_HUB_TOKEN``) if set; else the owner's server token
    when ``url`` is a hub on this machine (http(s) to a loopback address), else nothing:
    the owner's secret never travels to a host the config names."""
    if configured:
        return configured
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return ""
    if parsed.scheme not in ("http", "https") or not is_loopback(parsed.host):
        return ""
    return read_local_token() or ""


def _fault(where: str, message: str) -> FlowRefusal:
    return FlowRefusal("BAD_REQUEST", (Problem(where, message),))


class HubClient:
    """A remote hub as a `FlowBackend`: where it is, how to call it, its posture."""

    def __init__(self, url: str, token: str) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url
        # Bound to the hub's base URL; httpx follows no redirect unless asked, so the bearer
        # header goes to this origin only.
        self.client = httpx.Client(base_url=url, headers=headers, timeout=TIMEOUT_SECONDS)
        self._posture = Posture.from_config({}, None)  # closed until the hub says otherwise
        self.flows: dict[str, str] = {}  # run_id -> flow_id, learnt from the hub's records

    @classmethod
    def connect(cls, url: str, token: str) -> HubClient:
        """A client for the hub at ``url``, its posture read from the hub's flow listing
        (a hub that cannot be read keeps every gate closed)."""
        client = cls(url, token)
        listing = client.call("flows")
        if isinstance(listing, dict):
            p = listing["posture"]
            client._posture = Posture.from_config(
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
        return client

    @property
    def posture(self) -> Posture:
        return self._posture

    def serves(self, action: str) -> bool:
        return any(r.action == action for r in ROUTES)

    def call(self, action: str, payload: Mapping[str, Any] | None = None) -> FlowResult:
        values = {k: v for k, v in (payload or {}).items() if v is not None}
        spec = route_for(action, values)
        if spec is None and self.serves(action) and "run_id" in values:
            flow_id = self._flow_of(str(values["run_id"]))  # a run route under its flow
            if flow_id is None:
                return FlowRefusal("unknown_run")
            values = {**values, "flow_id": flow_id}
            spec = route_for(action, values)
        if spec is None:
            return _fault("action", _NOT_SERVED)
        return self._send(*build_request(spec, values))

    def pinned_bundle(self, run_id: str) -> FlowBundle | None:
        """The run's flow at its pinned version, from the hub's catalog."""
        got = self.call("get", {"run_id": run_id})
        if isinstance(got, FlowRefusal):
            return None
        return self._bundle(got["run"]["flow_id"], got["run"]["flow_version"])

    def start_inputs(self, flow_id: str, version: str) -> list[FlowInput]:
        bundle = self._bundle(flow_id, version)
        return list(bundle.flow.inputs or ()) if bundle is not None else []

    def settled(self, *, write: bool) -> HubClient:
        return self

    def release(self) -> None:
        return None  # no store connection on this side

    def close(self) -> None:
        self.client.close()

    def _bundle(self, flow_id: str, version: str) -> FlowBundle | None:
        got = self.call("flow", {"flow_id": flow_id, "version": version})
        if isinstance(got, FlowRefusal):
            return None
        return parse_bundle(got["bundle"])

    def _flow_of(self, run_id: str) -> str | None:
        if run_id not in self.flows:
            self.call("get", {"run_id": run_id})  # learns the run's flow if it is visible
        return self.flows.get(run_id)

    def _send(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        query: dict[str, str] | None,
    ) -> FlowResult:
        try:
            response = self.client.request(method, path, json=body, params=query)
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
        self._learn(out)
        return out

    def _learn(self, out: dict[str, Any]) -> None:
        """Remember each run's flow from a record (the run routes sit under their flow)."""
        runs = [out["run"]] if isinstance(out.get("run"), dict) else []
        if isinstance(out.get("runs"), list):
            runs += [r for r in out["runs"] if isinstance(r, dict)]
        for run in runs:
            run_id, flow_id = run.get("run_id"), run.get("flow_id")
            if isinstance(run_id, str) and isinstance(flow_id, str):
                self.flows[run_id] = flow_id
