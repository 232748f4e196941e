"""Posture from ``noma-workbench.toml``: the two sub-gates, org policy, and the actor.

Both gates are off unless the config turns them on (§7), and a config section that does
not validate fails closed: the gates read as off and policy as the most restrictive, with
the problems kept for the surfaces to show. The actor's name is hashed here (keyed with the
workspace's actor key) and never travels further into the engine.

    [gates]
    run_writes_enabled = true
    automatable_execution_enabled = true

    [gates.why]   # optional: what each gate that is on is on for (shown by the surfaces)
    run_writes_enabled = "the tour runs both demo flows"

    [policy]
    automatable_forbidden = false
    allowed_lanes = ["local_default"]
    cost_cap_units = 100
    consent_ttl_max_seconds = 86400
    scopes = ["personal"]
    candidate_capture = false   # opt-in: may agents propose flow candidates (§5.3)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..workspace import Workspace
from .enums import Lane, Scope
from .errors import Problem
from .ids import actor_hash

MAX_WHY_CHARS = 200
TTL_CEILING_SECONDS = 86_400
TTL_DEFAULT_SECONDS = 3_600
HARNESS = "noma-workbench"


def _lanes(*names: Lane) -> list[Lane]:
    return list(names)


def _scopes(*names: Scope) -> list[Scope]:
    return list(names)


class Gates(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    run_writes_enabled: bool = False
    automatable_execution_enabled: bool = False


class Policy(BaseModel):
    """Org policy. ``scopes`` are the scopes this workspace's actor may see (deny by default)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    automatable_forbidden: bool = False
    allowed_lanes: list[Lane] = Field(default_factory=lambda: _lanes("local_default"))
    cost_cap_units: Annotated[int, Field(ge=0, le=10_000_000)] = 100
    consent_ttl_max_seconds: Annotated[int, Field(ge=1)] = TTL_CEILING_SECONDS
    scopes: list[Scope] = Field(default_factory=lambda: _scopes("personal"))
    candidate_capture: bool = False

    @property
    def ttl_max(self) -> int:
        return min(self.consent_ttl_max_seconds, TTL_CEILING_SECONDS)


CLOSED_POLICY = Policy(
    automatable_forbidden=True, allowed_lanes=[], cost_cap_units=0, scopes=["personal"]
)


@dataclass(frozen=True, slots=True)
class Actor:
    """Who is calling: only the hash of their id, and the scopes they may see.

    ``human`` is False on agent surfaces (MCP, any agent-authenticated caller): they may
    not approve a ``human_review`` step, which the contract keeps a manual, human act.
    """

    hash: str
    scopes: frozenset[str]
    harness: str = HARNESS
    human: bool = True

    def as_agent(self) -> Actor:
        return Actor(self.hash, self.scopes, self.harness, human=False)

    @classmethod
    def named(
        cls, actor_id: str, scopes: list[str] | tuple[str, ...] = ("personal",), *, key: bytes
    ) -> Actor:
        """The actor ``actor_id`` as the workspace keyed by ``key`` knows them."""
        return cls(actor_hash(key, actor_id), frozenset(scopes))

    def can_see(self, scope: str, owner_hash: str | None = None) -> bool:
        """Scope is authorization: personal records are the owner's alone."""
        if scope not in self.scopes:
            return False
        return scope != "personal" or owner_hash is None or owner_hash == self.hash


@dataclass(frozen=True, slots=True)
class Posture:
    gates: Gates
    policy: Policy
    problems: tuple[Problem, ...] = field(default=())
    # Why each gate that is on is on (``[gates.why]``), so a surface can say it, not only
    # that it is on; text from the config, shortened, for gates that are on only.
    why: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_config(cls, gates: Any, policy: Any) -> Posture:
        problems: list[Problem] = []
        parsed_gates = _parse(Gates, gates, "gates", problems) or Gates()
        parsed_policy = _parse(Policy, policy, "policy", problems) or CLOSED_POLICY
        return cls(parsed_gates, parsed_policy, tuple(problems), _why(gates, parsed_gates))

    @classmethod
    def from_workspace(cls, workspace: Workspace) -> Posture:
        return cls.from_config(workspace.section("gates"), workspace.section("policy"))


def _why(raw: Any, gates: Gates) -> dict[str, str]:
    why = raw.get("why") if isinstance(raw, dict) else None
    if not isinstance(why, dict):
        return {}
    out = {}
    for name, on in gates.model_dump().items():
        text = why.get(name)
        if on and isinstance(text, str) and text.strip():
            text = " ".join(text.split())
            out[name] = text if len(text) <= MAX_WHY_CHARS else text[: MAX_WHY_CHARS - 1] + "…"
    return out


def _parse(model: Any, raw: Any, section: str, problems: list[Problem]) -> Any:
    try:
        return model.model_validate(raw if isinstance(raw, dict) else {})
    except ValidationError as exc:
        for err in exc.errors():
            path = ".".join(str(p) for p in (section, *err["loc"]))
            problems.append(Problem(path, err["msg"]))
        return None


def workspace_actor(workspace: Workspace, policy: Policy, key: bytes) -> Actor:
    return Actor.named(workspace.actor_name, list(policy.scopes), key=key)
