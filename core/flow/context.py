"""What every handler is called with: the store, the catalog, posture, actor and lanes.

Surfaces build one `FlowContext` per workspace (`FlowContext.open`) and pass it to the
handler family; nothing else about a surface reaches the engine, which is why the CLI, the
MCP tool and the pane produce the same records. A surface that only opens a folder (the
app) opens it ``lazy``: nothing is written until a run is (`lazy_store`).

An untrusted folder (`core.trust`) is opened with its covered settings off (no store URL, gates
off, default policy) and without its ``actor.key``: a key that came with the folder is known
to whoever shipped it, so actors are hashed with a key of this process only (nothing shipped
reads as yours, and no key file is written). No run store is created in it either.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ..workspace import Workspace
from .actor_key import load_actor_key
from .catalog import FlowCatalog
from .lanes import ExecutionLane, default_lanes
from .lazy_store import LazyRunStore, has_run_store
from .posture import Actor, Posture, workspace_actor
from .rekey import rekey_workspace_actor
from .store import RunStore
from .store_pg import open_run_store

VAULT_ID = "default"
UNKEYED = "unkeyed"  # the actor of a lazy context: no key file is made until a write


def looks_like_workspace(workspace: Workspace) -> bool:
    """A folder with a config or a ``flows/`` folder; anything else gets no state dir."""
    return workspace.config_path.is_file() or workspace.flows_dir.is_dir()


@dataclass
class FlowContext:
    store: RunStore
    catalog: FlowCatalog
    posture: Posture
    actor: Actor
    lanes: Mapping[str, ExecutionLane] = field(default_factory=dict)
    root: Path | None = None
    vault_id: str = VAULT_ID
    actor_key: bytes = field(default=b"", repr=False)

    @classmethod
    def open(
        cls,
        workspace: Workspace,
        *,
        actor: Actor | None = None,
        lanes: Mapping[str, ExecutionLane] | None = None,
        lazy: bool = False,
    ) -> FlowContext:
        """Open the workspace's run store and key its actor (creating the state dir, the
        database and ``actor.key`` where missing). With ``lazy``, a workspace that has no
        run store yet is left untouched: the store is a `LazyRunStore` and the actor is
        not keyed until `settled` swaps in the real context."""
        posture = Posture.from_workspace(workspace)
        if not workspace.trusted:
            key = secrets.token_bytes(32)  # never the folder's own actor.key, never saved
            store = (
                open_run_store(workspace.state_dir, workspace.section("store").get("url"))
                if has_run_store(workspace)
                else cast(RunStore, LazyRunStore(workspace))
            )
            default_actor = workspace_actor(workspace, posture.policy, key)
        elif lazy and not has_run_store(workspace):
            key = b""
            store = cast(RunStore, LazyRunStore(workspace))
            default_actor = Actor(UNKEYED, frozenset(posture.policy.scopes))
        else:
            key = load_actor_key(workspace.state_dir)
            store = open_run_store(workspace.state_dir, workspace.section("store").get("url"))
            rekey_workspace_actor(store, workspace.actor_name, key)
            default_actor = workspace_actor(workspace, posture.policy, key)
        return cls(
            store=store,
            catalog=FlowCatalog(workspace.flows_dir),
            posture=posture,
            actor=actor or default_actor,
            lanes=lanes if lanes is not None else default_lanes(workspace.root),
            root=workspace.root,
            actor_key=key,
        )

    @property
    def is_lazy(self) -> bool:
        """True for a context opened ``lazy`` whose workspace had no run store yet."""
        return isinstance(self.store, LazyRunStore)

    def settled(self, *, write: bool) -> FlowContext:
        """This context, or the real one in its place (this one closed) once the workspace
        has a run store or this call is a write that the gates allow. A context that is not
        lazy is returned as it is."""
        store = self.store
        if not isinstance(store, LazyRunStore):
            return self
        workspace = store.workspace
        if has_run_store(workspace) or (write and self.posture.gates.run_writes_enabled):
            real = FlowContext.open(workspace, lanes=self.lanes)
            self.close()
            return real
        return self

    def close(self) -> None:
        self.store.close()

    def as_actor(self, actor: Actor) -> FlowContext:
        """The same workspace seen by another caller (tests of scope and separation use it)."""
        return dataclasses.replace(self, actor=actor)

    def actor_named(self, actor_id: str, scopes: list[str] | tuple[str, ...]) -> Actor:
        """Another actor of this workspace, hashed with its key."""
        return Actor.named(actor_id, scopes, key=self.actor_key)
