"""One flow backend protocol: what a surface calls on a flow store, wherever the store is.

The app's flow pane (and any other client) talks to a `FlowBackend`: a local store through
the one handler family (`LocalFlowBackend`, here) or a remote team hub over its REST
routes (`core.hub.client.HubClient`, whose requests are built from the hub's route table).
Both take the action names of `core.flow.actions.RUN_ACTIONS` and return the same records,
or the same `FlowRefusal` values, so a caller renders them the same way either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .actions import RUN_ACTIONS, run_action
from .context import FlowContext
from .errors import FlowRefusal, FlowResult
from .models import FlowBundle, FlowInput
from .posture import Posture
from .run_inputs import start_inputs
from .runs import pinned_bundle


class FlowBackend(Protocol):
    """The calls a surface makes on a flow store; `LocalFlowBackend` and the hub client."""

    @property
    def posture(self) -> Posture:
        """The gates and policy in force (the header shows them, forms respect them)."""
        ...

    def serves(self, action: str) -> bool:
        """Whether `call` can carry ``action`` here (a hub serves only its routes)."""
        ...

    def call(self, action: str, payload: Mapping[str, Any] | None = None) -> FlowResult:
        """One action of `RUN_ACTIONS` with its §2 request: the record or a refusal."""
        ...

    def pinned_bundle(self, run_id: str) -> FlowBundle | None:
        """The flow a visible run is pinned to (for its step names and kinds)."""
        ...

    def start_inputs(self, flow_id: str, version: str) -> list[FlowInput]:
        """The inputs a visible flow version declares (what a start form asks for)."""
        ...

    def settled(self, *, write: bool) -> FlowBackend:
        """The backend to make this call on: a lazy local store becomes real for a write."""
        ...

    def release(self) -> None:
        """Let go of this thread's store connection (a worker calls it when done)."""
        ...

    def close(self) -> None: ...


class LocalFlowBackend:
    """The workspace's own store, through the handler family the CLI and MCP call."""

    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx

    @property
    def posture(self) -> Posture:
        return self.ctx.posture

    def serves(self, action: str) -> bool:
        return action in RUN_ACTIONS

    def call(self, action: str, payload: Mapping[str, Any] | None = None) -> FlowResult:
        return run_action(self.ctx, action, payload)

    def pinned_bundle(self, run_id: str) -> FlowBundle | None:
        return pinned_bundle(self.ctx, run_id)

    def start_inputs(self, flow_id: str, version: str) -> list[FlowInput]:
        return start_inputs(self.ctx, flow_id, version)

    def settled(self, *, write: bool) -> LocalFlowBackend:
        ctx = self.ctx.settled(write=write)
        if ctx is not self.ctx:
            self.ctx = ctx  # the lazy context closed itself; this backend now holds the real one
        return self

    def release(self) -> None:
        self.ctx.store.release()

    def close(self) -> None:
        self.ctx.close()


def run_executions(backend: FlowBackend, run_id: str) -> list[dict[str, Any]]:
    """The run's executions (``get``'s additive ``executions``); reading them settles an
    execution whose lease ran out, so a crashed one shows as ``interrupted``."""
    got = backend.call("get", {"run_id": run_id})
    if isinstance(got, FlowRefusal):
        return []
    return list(got.get("executions") or [])


def start_fields(backend: FlowBackend, flow_id: str, version: str) -> list[tuple[str, str]]:
    """The flow inputs a start may give values for, as ``(name, label)`` (for forms)."""
    return [
        (i.name, f"{i.name} ({i.type}{', required' if i.required else ''})")
        for i in backend.start_inputs(flow_id, version)
    ]
