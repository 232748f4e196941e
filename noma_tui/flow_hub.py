"""Which flow backend the app talks to: the workspace's own store, or its team hub.

With ``[hub] url = "http://hub.example:8765"`` in ``noma-workbench.toml`` (read through the
workspace's trust check) and the bearer token in ``NOMA_HUB_TOKEN`` (for a hub on this
machine, a loopback URL, the owner's own server token is found by itself; it is never sent
to any other address: `core.hub.client.token_for`), `open_flow_backend` returns a
`HubClient`; else the local store, opened lazily so that opening a workspace writes
nothing. Either is a `core.flow.backend.FlowBackend`: the pane makes the same calls and
renders the same records and refusal lines on both.
"""

from __future__ import annotations

import os

from core.flow.backend import FlowBackend, LocalFlowBackend
from core.flow.context import FlowContext
from core.workspace import Workspace


def hub_url(workspace: Workspace) -> str | None:
    url = workspace.section("hub").get("url")
    return url.rstrip("/") if isinstance(url, str) and url.strip() else None


def open_flow_backend(workspace: Workspace) -> FlowBackend:
    """The hub named by ``[hub] url`` (token from ``NOMA_HUB_TOKEN``), else the local store
    (`FlowContext.open` with ``lazy``: nothing is written until a run is)."""
    url = hub_url(workspace)
    if url is None:
        return LocalFlowBackend(FlowContext.open(workspace, lazy=True))
    # Only a workspace with a hub pays for the route table and the client (app open time).
    from core.hub.client import TOKEN_ENV, HubClient, token_for

    return HubClient.connect(url, token_for(url, os.environ.get(TOKEN_ENV, "")))
